"""Capability negotiation, once per recorded editor: who gets events, who gets
the transcript and the closing message, who gets detached turns, who is
offered the client-side ``rhema.editSelection``.

Every client capability set pytest-lsp ships is used (read from its
``clients`` folder, so a new recording joins by itself), plus eglot 1.9 as
Debian's Emacs 28 runs it (``clients/eglot_v1.9.json``, recorded from the
real thing: no ``window`` capabilities at all). Each runs twice: as the plain
editor, and as our own client inside it, which declares
``clientCapabilities: {events, editSelection}`` in ``initializationOptions``.

The rules: ``rhema/event`` goes to everyone. A client that did not declare
``events`` gets the transcript (``.rhema/transcripts/<session>.md``), a
``window/showMessage`` at turn end, and ``window/showDocument`` of the
transcript when it supports that. A turn detaches by itself when the client
has no ``window.workDoneProgress``, sent no ``workDoneToken`` and did not
declare ``events``. ``rhema.editSelection`` is offered only to clients that
declared it; everyone else gets server-side actions.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import client_capabilities

from tests.e2e.conftest import settings_for
from tests.e2e.editor_client import EditorClient, start_editor
from tests.fakes.model_server import FakeModelServer, text_reply

OWN_CLIENTS = Path(__file__).with_name("clients")


def recorded_clients() -> list[str]:
    """``name@vX.Y.Z`` of every recording pytest-lsp ships, and of ours."""
    shipped = resources.files("pytest_lsp") / "clients"
    names = [item.name for item in shipped.iterdir() if item.name.endswith(".json")]
    names += [item.name for item in OWN_CLIENTS.glob("*.json")]
    return sorted(name.removesuffix(".json").replace("_v", "@v") for name in names)


def capabilities_of(editor: str) -> types.ClientCapabilities:
    """The recorded capabilities of ``editor`` (pytest-lsp's, or ours)."""
    name, version = editor.split("@")
    own = OWN_CLIENTS / f"{name}_{version}.json"
    if own.exists():
        data = json.loads(own.read_text(encoding="utf-8"))
        recorded: types.ClientCapabilities = default_converter().structure(
            data["capabilities"], types.ClientCapabilities
        )
        return recorded
    return client_capabilities(editor)


def has_progress(capabilities: types.ClientCapabilities) -> bool:
    return bool(capabilities.window and capabilities.window.work_done_progress)


def has_show_document(capabilities: types.ClientCapabilities) -> bool:
    window = capabilities.window
    return bool(window and window.show_document and window.show_document.support)


DECLARED = {"plain": None, "rhema-client": {"events": True, "editSelection": True}}

ANSWER = "greet says hello to name.\nThat is all it does."


async def started(
    editor: str,
    declared: dict[str, bool] | None,
    workspace: Path,
    fake: FakeModelServer,
    tmp_path: Path,
    **settings: object,
) -> EditorClient:
    rhema = settings_for(fake, mode="edit", **settings)
    options = dict(rhema)
    if declared is not None:
        options["clientCapabilities"] = declared
    return await start_editor(
        editor,
        [workspace],
        rhema,
        env={"XDG_STATE_HOME": str(tmp_path / "state"), "OPENAI_API_KEY": ""},
        capabilities=capabilities_of(editor),
        initialization_options=options,
    )


async def until(what: str, condition: Callable[[], object]) -> None:
    """Wait (a guard of 30 s) until ``condition()`` holds (pytest-lsp records
    messages and shown documents in lists, with nothing to await)."""
    for _ in range(1500):
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def transcript_of(workspace: Path, session: str) -> Path:
    return workspace / ".rhema" / "transcripts" / f"{session}.md"


@pytest.mark.parametrize("declared", DECLARED.values(), ids=DECLARED.keys())
@pytest.mark.parametrize("editor", recorded_clients())
async def test_a_turn_reaches_each_client_the_way_it_can_show_it(
    editor: str,
    declared: dict[str, bool] | None,
    workspace: Path,
    fake: FakeModelServer,
    tmp_path: Path,
) -> None:
    capabilities = capabilities_of(editor)
    renders_events = declared is not None
    client = await started(editor, declared, workspace, fake, tmp_path)
    try:
        client.open(workspace / "hello.py")
        fake.script(text_reply(ANSWER, thinking="Look at greet."))

        result = await client.command("rhema.turn", {"prompt": "What does greet do?"})
        end = await client.wait_for_event("turn_end")

        # Detached by itself only where nothing else could show the run.
        detached = not has_progress(capabilities) and not renders_events
        session = result["session"]
        if detached:
            assert result == {"session": session, "turn": 1, "started": True}
        else:
            assert result["text"] == ANSWER
            assert result["stopReason"] == "end_turn"
        # Events: everyone.
        assert end["text"] == ANSWER
        assert end["stopReason"] == "end_turn"
        transcript = transcript_of(workspace, session)
        if renders_events:
            await client.command("rhema.status")  # anything still on its way has arrived
            assert not transcript.exists()
            assert not [m for m in client.messages if "greet says hello" in m.message]
            assert client.shown_documents == []
            return
        # Everyone else: the transcript, a closing message, and the transcript
        # opened (without focus) where the client can open documents.
        await until("the closing message", lambda: closing(client))
        message = closing(client)
        assert message is not None
        assert message.type == types.MessageType.Info
        assert "greet says hello to name." in message.message
        assert "end turn" in message.message.replace("_", " ")  # the stop reason
        assert transcript.name in message.message
        text = transcript.read_text(encoding="utf-8")
        assert "What does greet do?" in text
        assert "Look at greet." in text
        assert ANSWER in text
        if has_show_document(capabilities):
            await until("the transcript to be shown", lambda: client.shown_documents)
            [shown] = client.shown_documents
            assert shown.uri == transcript.as_uri()
            assert not shown.take_focus
        else:
            assert client.shown_documents == []
    finally:
        await client.shutdown_session()


def closing(client: EditorClient) -> types.ShowMessageParams | None:
    found = [m for m in client.messages if "greet says hello" in m.message]
    return found[-1] if found else None


@pytest.mark.parametrize("declared", DECLARED.values(), ids=DECLARED.keys())
@pytest.mark.parametrize("editor", recorded_clients())
async def test_code_actions_offer_edit_selection_only_to_clients_that_declared_it(
    editor: str,
    declared: dict[str, bool] | None,
    workspace: Path,
    fake: FakeModelServer,
    tmp_path: Path,
) -> None:
    path = workspace / "hello.py"
    client = await started(editor, declared, workspace, fake, tmp_path)
    try:
        client.open(path)
        diagnostic = types.Diagnostic(
            range=types.Range(start=types.Position(1, 4), end=types.Position(1, 10)),
            message="something is off here",
            severity=types.DiagnosticSeverity.Warning,
            code="W1",
            source="lint",
        )
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=path.as_uri()),
                range=types.Range(start=types.Position(0, 0), end=types.Position(2, 0)),
                context=types.CodeActionContext(diagnostics=[diagnostic]),
            )
        )
        titles = [action.title for action in actions or []]
        # pygls' client structures CodeActions as Commands (see test_commands):
        # the nested command survives as text.
        commands = " ".join(str(action.command) for action in actions or [])
        if declared is not None:
            assert "rhema.editSelection" in commands
        else:
            assert "rhema.editSelection" not in commands
            assert {"Rhema: add docstrings", "Rhema: simplify", "Rhema: explain"} <= set(titles)
            assert "Rhema: fix this" in titles
            assert "something is off here" in commands
    finally:
        await client.shutdown_session()


@pytest.mark.parametrize(
    ("editor", "args", "token", "detached"),
    [
        # eglot 1.9 has no progress: a workDoneToken or detach: false keep the
        # request open; detach: true on a client with progress answers at once.
        ("eglot@v1.9", {}, "token-1", False),
        ("eglot@v1.9", {"detach": False}, None, False),
        ("eglot@v1.9", {"detach": True}, None, True),
        ("visual_studio_code@v1.65.2", {"detach": True}, None, True),
        ("neovim@v0.11.0", {"detach": True}, None, True),
    ],
    ids=["eglot-token", "eglot-detach-false", "eglot-detach-true", "vscode", "neovim"],
)
async def test_detach_follows_the_argument_and_the_work_done_token(
    editor: str,
    args: dict[str, Any],
    token: str | None,
    detached: bool,
    workspace: Path,
    fake: FakeModelServer,
    tmp_path: Path,
) -> None:
    client = await started(editor, None, workspace, fake, tmp_path)
    try:
        fake.script(text_reply(ANSWER))
        result: Any = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="rhema.turn",
                arguments=[{"prompt": "What does greet do?", **args}],
                work_done_token=token,
            )
        )
        end = await client.wait_for_event("turn_end")
        assert end["text"] == ANSWER
        if detached:
            assert result == {"session": result["session"], "turn": 1, "started": True}
        else:
            assert result["text"] == ANSWER
    finally:
        await client.shutdown_session()


async def test_rhema_cancel_stops_a_detached_turn(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    client = await started("eglot@v1.9", None, workspace, fake, tmp_path)
    try:
        fake.script(text_reply("x" * 200, delay=0.1))
        result = await client.command("rhema.turn", {"prompt": "Write a lot."})
        assert result["started"] is True
        await client.wait_for_event("text_delta")

        cancelled = await client.command("rhema.cancel", {"session": result["session"]})

        assert cancelled["cancelled"] == [result["session"]]
        end = await client.wait_for_event("turn_end")
        assert end["stopReason"] == "cancelled"
    finally:
        await client.shutdown_session()
