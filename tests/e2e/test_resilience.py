"""A provider that keeps failing, several workspace folders, a server killed
mid-tool, and two servers on one folder."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from tests.e2e.conftest import settings_for
from tests.e2e.editor_client import EditorClient, start_editor
from tests.e2e.test_cancel import processes_running
from tests.fakes.model_server import FakeModelServer, error_reply, text_reply, tool_reply


async def test_a_provider_that_keeps_failing_retries_then_ends_with_a_clean_error(
    client: EditorClient, fake: FakeModelServer
) -> None:
    overloaded = error_reply(503, headers={"retry-after-ms": "20"})
    fake.script(overloaded, overloaded, overloaded, overloaded)

    result = await client.command("rhema.turn", {"prompt": "hello?"})

    assert result["stopReason"] == "error"
    waits = client.events_of("retry_wait")
    assert [(w["attempt"], w["total"]) for w in waits] == [(1, 4), (2, 4), (3, 4)]
    assert all(w["delaySeconds"] == pytest.approx(0.02) for w in waits)
    errors = client.events_of("error")
    assert len(errors) == 1
    assert "503" in errors[0]["message"]
    kinds = [e["event"]["type"] for e in client.state.events]
    assert kinds[-2:] == ["error", "turn_end"]
    assert len(fake.requests) == 4


async def test_each_folder_has_its_own_store_and_confinement(
    editor: str, tmp_path: Path, fake: FakeModelServer
) -> None:
    one = tmp_path / "one"
    two = tmp_path / "two"
    for folder in (one, two):
        folder.mkdir()
        (folder / "which.txt").write_text(f"I am {folder.name}\n")
    client = await start_editor(
        editor, [one, two], settings_for(fake), env={"XDG_STATE_HOME": str(tmp_path / "s")}
    )
    try:
        fake.script(
            tool_reply(("read_file", {"path": "which.txt"})),
            text_reply("two"),
            tool_reply(("read_file", {"path": str(one / "which.txt")})),
            text_reply("one, by absolute path"),
            tool_reply(("read_file", {"path": str(tmp_path / "outside.txt")})),
            text_reply("refused"),
        )
        (tmp_path / "outside.txt").write_text("secret\n")
        other = two / "which.txt"
        result = await client.command(
            "rhema.turn", {"prompt": "which?", "context": [{"uri": other.as_uri()}]}
        )
        assert "I am two" in fake.requests[1]["messages"][-1]["content"]
        await client.command("rhema.turn", {"prompt": "and one?", "session": result["session"]})
        assert "I am one" in fake.requests[3]["messages"][-1]["content"]
        await client.command("rhema.turn", {"prompt": "outside?", "folder": str(one)})
        refused = fake.requests[5]["messages"][-1]["content"]
        assert "secret" not in refused
        assert (two / ".rhema" / "sessions.sqlite3").exists()
        assert (one / ".rhema" / "sessions.sqlite3").exists()
        in_two = await client.command("rhema.sessions", {"folder": str(two)})
        in_one = await client.command("rhema.sessions", {"folder": str(one)})
        assert [s["session"] for s in in_two] == [result["session"]]
        assert len(in_one) == 1
        assert in_one[0]["session"] != result["session"]
    finally:
        await client.shutdown_session()


async def test_a_session_resumes_after_the_server_was_killed_mid_tool(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    env = {"XDG_STATE_HOME": str(tmp_path / "state")}
    settings = settings_for(fake, mode="agent", commandAllowlist=["sleep"])
    marker = f"{os.getpid() % 1000}.4321"
    first = await start_editor("visual_studio_code", [workspace], settings, env=env)
    fake.script(
        tool_reply(
            ("read_file", {"path": "hello.py"}),
            ("run_command", {"command": f"sleep {marker}"}),
        )
    )
    pending = asyncio.ensure_future(first.command("rhema.turn", {"prompt": "go"}))
    await first.wait_for_event("tool_result")
    await asyncio.sleep(0.3)  # the command is running now
    server = first._server
    assert server is not None
    os.kill(server.pid, signal.SIGKILL)
    await server.wait()
    pending.cancel()
    await first.stop()
    # The command died with the server: its watchdog saw the server go.
    for _ in range(100):
        if not processes_running(f"sleep {marker}"):
            break
        await asyncio.sleep(0.1)
    assert processes_running(f"sleep {marker}") == []

    second = await start_editor("neovim@v0.11", [workspace], settings, env=env)
    try:
        listed = await second.command("rhema.sessions", {})
        session = listed[0]["session"]
        opened = await second.command("rhema.openSession", {"session": session})
        # the read (safe) is run again; the command (unsafe) is reported
        assert opened["resumed"] == {"rerun": ["call_1"], "interrupted": ["call_2"]}
        results = [
            part
            for message in opened["messages"]
            for part in message["content"]
            if part["type"] == "tool_result"
        ]
        assert [r["id"] for r in results] == ["call_1", "call_2"]
        assert results[0]["is_error"] is False
        assert "hello" in results[0]["content"]
        assert results[1]["is_error"] is True
        assert "interrupted before its result was recorded" in results[1]["content"]
        fake.script(text_reply("checked, carrying on"))
        more = await second.command("rhema.turn", {"prompt": "continue", "session": session})
        assert more["stopReason"] == "end_turn"
    finally:
        await second.shutdown_session()


async def test_two_servers_on_one_folder_share_the_store_but_not_a_running_session(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    env = {"XDG_STATE_HOME": str(tmp_path / "state")}
    one = await start_editor("visual_studio_code", [workspace], settings_for(fake), env=env)
    two = await start_editor("neovim@v0.11", [workspace], settings_for(fake), env=env)
    try:
        fake.script(text_reply("slow " * 400, chunk=5, delay=0.01), text_reply("quick"))
        running = asyncio.ensure_future(one.command("rhema.turn", {"prompt": "long one"}))
        await one.wait_for_event("text_delta")
        session = one.state.events[0]["session"]

        listed = await two.command("rhema.sessions", {})
        assert [(s["session"], s["running"]) for s in listed] == [(session, True)]
        with pytest.raises(JsonRpcException) as raised:
            await two.command("rhema.turn", {"prompt": "me too", "session": session})
        assert "open in another window" in str(raised.value)

        other = await two.command("rhema.turn", {"prompt": "separate"})
        assert other["session"] != session
        assert (await running)["stopReason"] == "end_turn"
    finally:
        await one.shutdown_session()
        await two.shutdown_session()


async def test_hundreds_of_runs_leave_no_task_or_request_behind(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    client = await start_editor(
        "visual_studio_code",
        [workspace],
        settings_for(fake, logLevel="debug"),
        env={"XDG_STATE_HOME": str(tmp_path / "state")},
    )
    try:
        client.open(workspace / "hello.py")
        fake.script(text_reply("warm-up"))
        first = await client.command("rhema.turn", {"prompt": "warm up"})
        client.state.events.clear()
        runs = 300
        for index in range(runs):
            prompt = {"prompt": f"question {index}", "session": first["session"]}
            if index % 10 == 5:  # every tenth run is cancelled mid-stream
                fake.script(text_reply("long " * 500, chunk=5, delay=0.002))
                pending = asyncio.ensure_future(client.command("rhema.turn", prompt))
                await client.wait_for_event("text_delta")
                await client.command("rhema.cancel", {})
                assert (await pending)["stopReason"] == "cancelled"
            else:
                if index % 3 == 0:
                    fake.script(tool_reply(("read_file", {"path": "hello.py"})))
                fake.script(text_reply(f"answer {index}"))
                result = await client.command("rhema.turn", prompt)
                assert result["text"] == f"answer {index}"
                for keystroke in range(5):  # the user types between runs
                    client.type_text(workspace / "hello.py", f"# typed {index}.{keystroke}\n")
            client.state.events.clear()
        held = [
            m.message.split("ended; ")[1]
            for m in client.log_messages
            if "ended; holding" in m.message
        ]
        assert len(held) == runs + 1
        assert set(held[1:]) == {held[0]}, held[-1]
        assert "holding 0 runs, 1 open requests" in held[0]  # the request being answered
    finally:
        await client.shutdown_session()
