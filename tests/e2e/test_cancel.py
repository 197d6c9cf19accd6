"""The three cancellation paths really stop a run, mid-stream and mid-tool:
the provider stream is closed, no further tool starts, a running command is
killed, and the run answers ``cancelled``."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.e2e.conftest import settings_for
from tests.e2e.editor_client import EditorClient, start_editor
from tests.e2e.test_clients import until
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

PATHS = ["cancelRequest", "progressCancel", "rhema.cancel"]


def start_turn(client: EditorClient, msg_id: str, args: dict[str, Any]) -> asyncio.Future[Any]:
    return asyncio.ensure_future(
        client.protocol.send_request_async(
            types.WORKSPACE_EXECUTE_COMMAND,
            types.ExecuteCommandParams(command="rhema.turn", arguments=[args]),
            msg_id=msg_id,
        )
    )


async def cancel_by(client: EditorClient, path: str, msg_id: str) -> None:
    if path == "cancelRequest":
        client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
    elif path == "progressCancel":
        token = next(iter(client.progress_reports))
        client.protocol.notify(
            types.WINDOW_WORK_DONE_PROGRESS_CANCEL, types.WorkDoneProgressCancelParams(token=token)
        )
    else:
        answer = await client.command("rhema.cancel", {})
        assert len(answer["cancelled"]) == 1


def processes_running(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if marker in cmdline:
                found.append(int(entry.name))
    return found


@pytest.mark.parametrize("path", PATHS)
async def test_cancelling_mid_stream_closes_the_stream_and_ends_cancelled(
    client: EditorClient, fake: FakeModelServer, path: str
) -> None:
    fake.script(text_reply("word " * 2000, chunk=5, delay=0.005))
    pending = start_turn(client, "turn-1", {"prompt": "talk"})
    await client.wait_for_event("text_delta")

    await cancel_by(client, path, "turn-1")
    result = await asyncio.wait_for(pending, 10)

    assert result["stopReason"] == "cancelled"
    assert result["steps"] == 1  # the step that was cut short counts
    assert await asyncio.to_thread(fake.client_closed.wait, 5)
    end = client.events_of("turn_end")
    assert [e["stopReason"] for e in end] == ["cancelled"]
    assert client.state.events[-1]["event"]["type"] == "turn_end"
    streamed = "".join(e["text"] for e in client.events_of("text_delta"))
    assert 0 < len(streamed) < len("word " * 2000)
    assert result["text"] == end[0]["text"] == streamed  # what the user saw
    progress = client.progress_reports[next(iter(client.progress_reports))]
    assert isinstance(progress[0], types.WorkDoneProgressBegin)
    assert progress[0].cancellable is True
    assert isinstance(progress[-1], types.WorkDoneProgressEnd)
    sessions = await client.command("rhema.sessions", {})
    assert sessions[0]["running"] is False


@pytest.mark.parametrize("path", PATHS)
async def test_cancelling_mid_tool_kills_the_command_and_starts_no_further_tool(
    editor: str, workspace: Path, fake: FakeModelServer, tmp_path: Path, path: str
) -> None:
    marker = f"{os.getpid()}.{len(path)}37"
    client = await start_editor(
        editor,
        [workspace],
        settings_for(fake, mode="agent", commandAllowlist=["sleep"]),
        env={"XDG_STATE_HOME": str(tmp_path / "state")},
    )
    try:
        fake.script(
            tool_reply(
                ("run_command", {"command": f"sleep {marker}"}),
                ("write_file", {"path": "after.txt", "content": "should never exist"}),
            ),
            text_reply("never asked"),
        )
        pending = start_turn(client, "turn-7", {"prompt": "run it"})
        for _ in range(100):
            if processes_running(f"sleep {marker}"):
                break
            await asyncio.sleep(0.05)
        assert processes_running(f"sleep {marker}")

        await cancel_by(client, path, "turn-7")
        result = await asyncio.wait_for(pending, 10)

        assert result["stopReason"] == "cancelled"
        # Killed: in the sandbox the command is the child of bwrap's own
        # session, and goes the moment bwrap does (its parent-death signal).
        await until("the command to be killed", lambda: processes_running(f"sleep {marker}") == [])
        assert not (workspace / "after.txt").exists()
        assert client.state.edits == []
        assert len(fake.requests) == 1
        results = client.events_of("tool_result")
        assert [r["name"] for r in results] == ["run_command", "write_file"]
        assert all(r["isError"] for r in results)
        assert "was not run" in results[1]["content"]
        opened = await client.command("rhema.openSession", {"session": result["session"]})
        roles = [m["role"] for m in opened["messages"]]
        assert roles == ["user", "assistant", "tool", "tool"]
    finally:
        await client.shutdown_session()
