"""The language tools through ``rhema/language``, against the real server as a child
process: a client that declared ``language`` answers them (and an edit's problems, for the
edited version); one that errors, answers garbage or never answers costs one tool call a
clear, bounded message, and the turn and the server go on."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import settings_for
from tests.e2e.editor_client import OUR_CLIENTS, EditorClient, start_editor
from tests.editors.tool_results import tool_results
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

DECLARED = {**OUR_CLIENTS, "language": True}

Answer = Callable[[dict[str, Any]], Awaitable[Any]]


def span(line: int, start: int, end: int) -> dict[str, Any]:
    return {"start": {"line": line, "character": start}, "end": {"line": line, "character": end}}


@pytest.fixture
async def editor(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> AsyncIterator[tuple[EditorClient, list[dict[str, Any]], list[Answer]]]:
    """A client declaring ``language``; it answers ``rhema/language`` with the
    last function put in the list it yields, and records what it was asked."""
    settings = settings_for(fake, mode="edit", diagnosticsWait=5)
    client = await start_editor(
        "visual_studio_code",
        [workspace],
        settings,
        env={"XDG_STATE_HOME": str(tmp_path / "state"), "OPENAI_API_KEY": ""},
        initialization_options={
            **settings,
            "clientCapabilities": {**OUR_CLIENTS, "language": True},
        },
    )
    asked: list[dict[str, Any]] = []
    answers: list[Answer] = []

    @client.feature("rhema/language")
    async def on_language(params: Any) -> Any:
        plain = {"method": params.method, "params": _plain(params.params)}
        asked.append(plain)
        return await answers[-1](plain)

    yield client, asked, answers
    await client.shutdown_session()


def _plain(value: Any) -> Any:
    if hasattr(value, "_asdict"):
        return {key: _plain(item) for key, item in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


async def test_the_clients_answers_reach_the_model(
    editor: tuple[EditorClient, list[dict[str, Any]], list[Answer]],
    workspace: Path,
    fake: FakeModelServer,
) -> None:
    client, asked, answers = editor
    hello = workspace / "hello.py"
    client.open(hello)

    async def answer(request: dict[str, Any]) -> Any:
        if request["method"] == "textDocument/definition":
            location = {"uri": hello.as_uri(), "range": span(0, 4, 9)}
            return {"result": [location], "source": "VS Code"}
        version = request["params"]["version"]
        problems = []
        if version is not None and "42" in client.buffer(hello).text:
            problems = [{"range": span(1, 11, 18), "message": "no 42 here", "severity": 1}]
        return {"diagnostics": problems, "source": "VS Code", "complete": True}

    answers.append(answer)
    fake.script(
        tool_reply(("definition", {"path": "hello.py", "line": 1, "symbol": "greet"})),
        tool_reply(("edit_file", {"path": "hello.py", "old_text": '"hello "', "new_text": "42"})),
        text_reply("ok"),
    )
    result = await client.command("rhema.turn", {"prompt": "where is greet?"})

    assert result["stopReason"] == "end_turn"
    results = tool_results(fake.requests)
    assert "hello.py:1" in results["definition"], results
    assert "1 new error: hello.py:2: no 42 here (VS Code)" in results["edit_file"], results
    definition = next(a for a in asked if a["method"] == "textDocument/definition")
    assert definition["params"]["position"] == {"line": 0, "character": 4}
    # The edit's problems were asked for the version the edit produced.
    versions = [a["params"]["version"] for a in asked if a["method"] == "diagnostics"]
    assert versions[-1] == client.buffer(hello).version


async def _error(request: dict[str, Any]) -> Any:
    raise RuntimeError("the definition provider crashed")


async def _garbage(request: dict[str, Any]) -> Any:
    return {"result": [{"uri": 7}], "source": "VS Code"}


async def _never(request: dict[str, Any]) -> Any:
    await asyncio.Event().wait()


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (_error, "the editor's language features failed on textDocument/definition: "),
        (_garbage, "the editor answered textDocument/definition with something that is not a"),
        (_never, "the editor's language features did not answer textDocument/definition within"),
    ],
    ids=["error", "garbage", "never"],
)
async def test_a_failing_client_costs_one_tool_call_a_clear_message(
    editor: tuple[EditorClient, list[dict[str, Any]], list[Answer]],
    workspace: Path,
    fake: FakeModelServer,
    answer: Answer,
    said: str,
) -> None:
    client, _, answers = editor
    client.open(workspace / "hello.py")
    answers.append(answer)
    fake.script(
        tool_reply(("definition", {"path": "hello.py", "line": 1, "symbol": "greet"})),
        text_reply("ok"),
    )
    result = await client.command("rhema.turn", {"prompt": "where is greet?"})

    assert result["stopReason"] == "end_turn"
    outcome = client.events_of("tool_result")[0]
    assert outcome["isError"] is True
    assert said in outcome["content"], outcome["content"]
    # The server goes on serving.
    status = await client.command("rhema.status", {})
    assert status is not None
