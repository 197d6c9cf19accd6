"""A whole turn through the real server process: read, edit (in the client's
own buffer, in its position encoding), answer; the event stream; and a
session continued by a second server process."""

from __future__ import annotations

from pathlib import Path

import pytest

from rhema_lsp.engine import ToolCall, ToolResult
from rhema_lsp.sessions import SessionStore
from tests.e2e.conftest import settings_for
from tests.e2e.editor_client import EDITORS, EditorClient, start_editor
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply
from tests.fakes.wire import Wire


async def test_a_turn_reads_edits_the_unsaved_buffer_and_answers(
    client: EditorClient, workspace: Path, fake: FakeModelServer
) -> None:
    path = workspace / "hello.py"
    unsaved = 'def greet(name):\n    return "héllo 🌍 " + name  # 未保存\n'
    client.open(path, unsaved)
    fake.script(
        tool_reply(("read_file", {"path": "hello.py"})),
        tool_reply(
            (
                "edit_file",
                {"path": "hello.py", "old_text": '"héllo 🌍 "', "new_text": '"bonjour 🌍 "'},
            )
        ),
        text_reply("Changed the greeting to bonjour.", thinking="The user wants French."),
    )

    result = await client.command("rhema.turn", {"prompt": "Make it French"})

    assert result["stopReason"] == "end_turn"
    assert result["text"] == "Changed the greeting to bonjour."
    assert result["steps"] == 3
    assert (
        client.buffer(path).text == 'def greet(name):\n    return "bonjour 🌍 " + name  # 未保存\n'
    )
    assert path.read_text() == 'def greet(name):\n    return "hello " + name\n'  # nothing on disk
    # the model read the unsaved text, not the file
    read_result = fake.requests[1]["messages"][-1]["content"]
    assert "héllo 🌍" in read_result
    edit = client.state.edits[0]
    assert "edit_file" in (edit.label or "")
    kinds = [e["event"]["type"] for e in client.state.events]
    assert kinds[0] == "step_start"
    assert kinds[-1] == "turn_end"
    assert kinds.count("step_start") == 3
    assert kinds.count("tool_result") == 2
    seqs = [e["seq"] for e in client.state.events]
    assert seqs == list(range(1, len(seqs) + 1))
    thinking = "".join(e["text"] for e in client.events_of("thinking_delta"))
    text = "".join(e["text"] for e in client.events_of("text_delta"))
    assert thinking == "The user wants French."
    assert text == "Changed the greeting to bonjour."
    end = client.events_of("turn_end")[0]
    assert end["stopReason"] == "end_turn"
    assert end["steps"] == 3


@pytest.mark.parametrize("wire", ["openai", "anthropic", "gemini"])
async def test_tool_call_ids_stay_unique_when_a_session_continues_in_a_new_server(
    wire: Wire, workspace: Path, tmp_path: Path
) -> None:
    """Each answer of the fake numbers its calls from call_1 (Gemini gives
    none, and its fallback counter starts again in every process)."""
    with FakeModelServer(wire=wire) as fake:
        fake.script(
            tool_reply(("read_file", {"path": "hello.py"})),
            text_reply("read it"),
            tool_reply(("read_file", {"path": "hello.py"}), ("list_dir", {})),
            text_reply("read it again"),
        )
        settings = {**settings_for(fake), "protocol": wire}
        env = {"XDG_STATE_HOME": str(tmp_path / "state"), "OPENAI_API_KEY": ""}
        session = None
        started: list[str] = []
        for prompt in ("read hello.py", "read it again and list the folder"):
            client = await start_editor(EDITORS[0], [workspace], settings, env=env)
            try:
                args = {"prompt": prompt, **({"session": session} if session else {})}
                result = await client.command("rhema.turn", args)
                assert result["stopReason"] == "end_turn"
                session = result["session"]
                started += [event["id"] for event in client.events_of("tool_call_start")]
            finally:
                await client.shutdown_session()
        assert session is not None

    store = await SessionStore.open(workspace)
    try:
        history = (await store.load(session)).history
    finally:
        await store.close()
    parts = [part for message in history for part in message.content]
    calls = [part.id for part in parts if isinstance(part, ToolCall)]
    results = [part.id for part in parts if isinstance(part, ToolResult)]
    assert len(calls) == 3 and len(set(calls)) == 3, calls
    assert results == calls
    assert started == calls  # the editor saw the ids the session keeps
