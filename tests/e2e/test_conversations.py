"""A plain client's asks are one conversation (issue 42): an ask without a
``session`` continues the folder's latest session, so a follow-up is
answered with the earlier question in its context and the session's one
transcript grows; "Rhema: new conversation" makes the next ask start a new
session; an ask while that session is running a turn starts a new session
and says so. A client that renders events (headless ``ask``, our plugins)
keeps starting a new session per ask without ``session``."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from tests.e2e.conftest import settings_for
from tests.e2e.editor_client import EditorClient, start_editor
from tests.e2e.test_clients import capabilities_of, transcript_of, until
from tests.fakes.model_server import FakeModelServer, text_reply


def _said(request: dict[str, Any]) -> str:
    """Every user message the model got, joined."""
    return "\n".join(str(m["content"]) for m in request["messages"] if m["role"] == "user")


async def _client(
    workspace: Path, fake: FakeModelServer, tmp_path: Path, declared: dict[str, bool] | None
) -> EditorClient:
    rhema = settings_for(fake, mode="ask")
    options: dict[str, Any] = dict(rhema)
    if declared is not None:
        options["clientCapabilities"] = declared
    return await start_editor(
        "eglot@v1.9",
        [workspace],
        rhema,
        env={"XDG_STATE_HOME": str(tmp_path / "state"), "OPENAI_API_KEY": ""},
        capabilities=capabilities_of("eglot@v1.9"),
        initialization_options=options,
    )


async def _closed(client: EditorClient, answer: str) -> None:
    await until(answer, lambda: [m for m in client.messages if answer in m.message])


async def test_a_plain_client_s_asks_are_one_conversation_until_it_starts_a_new_one(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    client = await _client(workspace, fake, tmp_path, None)
    try:
        fake.script(text_reply("Hello Ann."), text_reply("Your name is Ann."))
        first = await client.command("rhema.turn", {"prompt": "My name is Ann."})
        await _closed(client, "Hello Ann.")
        second = await client.command("rhema.turn", {"prompt": "What is my name?"})
        await _closed(client, "Your name is Ann.")
        assert second == {"session": first["session"], "turn": 2, "started": True}
        assert "My name is Ann." in _said(fake.requests[1])
        transcripts = sorted((workspace / ".rhema" / "transcripts").glob("*.md"))
        assert transcripts == [transcript_of(workspace, first["session"])]
        text = transcripts[0].read_text()
        assert "My name is Ann." in text and "Your name is Ann." in text

        # The code action a plain client is offered starts over.
        actions = await client.text_document_code_action_async(
            _params((workspace / "hello.py").as_uri())
        )
        [new] = [a for a in actions or [] if a.title == "Rhema: new conversation"]
        # pytest-lsp's union structuring reads the action as a Command whose
        # `command` is the nested command's text
        command = ast.literal_eval(str(new.command))
        assert command["command"] == "rhema.newConversation" and command["arguments"] == [{}]
        started = await client.command(command["command"], command["arguments"][0])
        assert started == {"folders": [str(workspace)]}
        await _closed(client, f"next question starts a new conversation ({workspace.name})")
        fake.script(text_reply("Nice to meet you.", chunk=1, delay=0.1))
        third = await client.command("rhema.turn", {"prompt": "Hi, I am Bo."})
        assert third["session"] != first["session"] and third["turn"] == 1
        # While that session runs a turn, an ask starts another, and says so.
        fake.script(text_reply("Fresh."))
        fourth = await client.command("rhema.turn", {"prompt": "Another thing."})
        assert fourth["session"] not in (first["session"], third["session"])
        assert fourth["turn"] == 1
        await _closed(client, "is still running a turn; this question starts a new one.")
        await _closed(client, "Nice to meet you.")
        await _closed(client, "Fresh.")
        assert "Ann" not in _said(fake.requests[-1]) + _said(fake.requests[-2])
    finally:
        await client.shutdown_session()


async def test_a_client_that_renders_events_starts_a_session_per_ask(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    client = await _client(workspace, fake, tmp_path, {"events": True})
    try:
        fake.script(text_reply("One."), text_reply("Two."))
        first = await client.command("rhema.turn", {"prompt": "One?"})
        second = await client.command("rhema.turn", {"prompt": "Two?"})
        assert first["session"] != second["session"] and second["turn"] == 1
        assert "One?" not in _said(fake.requests[1])
        # Hostile: a folder that is no workspace folder, a wrong argument type.
        for bad in ({"folder": "/etc"}, {"folder": 7}, {"other": True}):
            with pytest.raises(JsonRpcInvalidParams):
                await client.command("rhema.newConversation", bad)
    finally:
        await client.shutdown_session()


def _params(uri: str) -> types.CodeActionParams:
    zero = types.Position(line=0, character=0)
    return types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(start=zero, end=zero),
        context=types.CodeActionContext(diagnostics=[]),
    )
