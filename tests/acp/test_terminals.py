"""``run_command`` in the client's terminal (a client that declared
``terminal: true``, on the Python SDK's client side, running each terminal
as a real process): approved as before, created with ``terminal/create`` in
the session's folder, shown as the tool call's terminal content, waited for,
its output read for the model, killed with ``terminal/kill`` when the
prompt is cancelled, and released with ``terminal/release`` every time. A
client without the capability gets no terminal request."""

from __future__ import annotations

import asyncio
import os
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import text_block
from acp.schema import (
    CreateTerminalResponse,
    EnvVariable,
    KillTerminalResponse,
    ReleaseTerminalResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    TerminalToolCallContent,
    ToolCallProgress,
    WaitForTerminalExitResponse,
)

from tests.acp.client import RecordingClient, start_agent
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply


@dataclass
class TerminalClient(RecordingClient):
    """A client whose terminals are real processes; every request recorded."""

    calls: list[str] = field(default_factory=list)
    created: list[tuple[str, list[str], str | None]] = field(default_factory=list)
    _procs: dict[str, asyncio.subprocess.Process] = field(default_factory=dict)
    _output: dict[str, bytearray] = field(default_factory=dict)
    _pumps: dict[str, asyncio.Task[None]] = field(default_factory=dict)

    async def create_terminal(
        self,
        command: str,
        session_id: str,
        args: list[str] | None = None,
        cwd: str | None = None,
        env: list[EnvVariable] | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        terminal = f"t{len(self.created)}"
        self.calls.append("create")
        self.created.append((command, list(args or []), cwd))
        proc = await asyncio.create_subprocess_exec(
            command,
            *(args or []),
            cwd=cwd,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,  # killed as a group, as an editor's terminal is
        )
        self._procs[terminal] = proc
        self._output[terminal] = bytearray()

        async def pump() -> None:
            assert proc.stdout is not None
            while chunk := await proc.stdout.read(4096):
                self._output[terminal] += chunk

        self._pumps[terminal] = asyncio.ensure_future(pump())
        self.changed.set()
        return CreateTerminalResponse(terminal_id=terminal)

    def _status(self, terminal: str) -> TerminalExitStatus | None:
        code = self._procs[terminal].returncode
        if code is None:
            return None
        return TerminalExitStatus(exit_code=code if code >= 0 else None)

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        self.calls.append("wait")
        await self._procs[terminal_id].wait()
        await self._pumps[terminal_id]
        code = self._procs[terminal_id].returncode
        return WaitForTerminalExitResponse(exit_code=code)

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> TerminalOutputResponse:
        self.calls.append("output")
        return TerminalOutputResponse(
            output=self._output[terminal_id].decode(),
            truncated=False,
            exit_status=self._status(terminal_id),
        )

    async def kill_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> KillTerminalResponse | None:
        self.calls.append("kill")
        proc = self._procs[terminal_id]
        if proc.returncode is None:
            os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
        return KillTerminalResponse()

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> ReleaseTerminalResponse | None:
        self.calls.append("release")
        proc = self._procs.pop(terminal_id)
        if proc.returncode is None:
            os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
        await self._pumps.pop(terminal_id)
        self.changed.set()
        return ReleaseTerminalResponse()


def _terminal_shown(client: RecordingClient) -> list[str]:
    return [
        item.terminal_id
        for update in client.of(ToolCallProgress)
        for item in update.content or []
        if isinstance(item, TerminalToolCallContent)
    ]


async def test_an_approved_command_runs_in_the_clients_terminal(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    fake.script(
        tool_reply(("run_command", {"command": "echo rhema-$((6*7))", "escalate": True})),
        text_reply("42."),
    )
    client = TerminalClient(answers=["allow_once"])
    async with start_agent(client, fake, state, "--mode", "agent", terminal=True) as (conn, _):
        sid = (await conn.new_session(cwd=str(workspace))).session_id
        answer = await conn.prompt(session_id=sid, prompt=[text_block("run it")])
    assert answer.stop_reason == "end_turn"
    assert len(client.asked) == 1  # approval first, as without a terminal
    assert client.created == [("/bin/sh", ["-c", "echo rhema-$((6*7))"], str(workspace))]
    assert client.calls == ["create", "wait", "output", "release"]
    assert set(_terminal_shown(client)) == {"t0"}  # live, and with the result
    result = next(m for m in fake.requests[1]["messages"] if m["role"] == "tool")["content"]
    assert "rhema-42" in result and "[exit code 0]" in result


async def test_an_agent_started_command_runs_sandboxed_in_the_terminal_without_asking(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    fake.script(
        tool_reply(("run_command", {"command": "touch in-ws && touch ../outside-terminal"})),
        text_reply("Denied."),
    )
    client = TerminalClient()
    async with start_agent(client, fake, state, "--mode", "agent", terminal=True) as (conn, _):
        sid = (await conn.new_session(cwd=str(workspace))).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("run it")])
    assert client.asked == []  # sandboxed: no question
    program, args, _cwd = client.created[0]
    assert any(word.endswith("/bwrap") for word in [program, *args]) and "--unshare-net" in args
    assert (workspace / "in-ws").exists()
    assert not (workspace.parent / "outside-terminal").exists()
    result = next(m for m in fake.requests[1]["messages"] if m["role"] == "tool")["content"]
    assert "Read-only file system" in result and "escalate: true" in result


async def test_a_cancelled_prompt_kills_and_releases_the_terminal(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    fake.script(tool_reply(("run_command", {"command": "sleep 60"})))
    client = TerminalClient()
    async with start_agent(
        client, fake, state, "--mode", "agent", "--allow", "sleep", terminal=True
    ) as (conn, _):
        sid = (await conn.new_session(cwd=str(workspace))).session_id
        pending = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("wait")]))
        await client.wait_for(lambda: "wait" in client.calls)
        await conn.cancel(session_id=sid)
        answer = await asyncio.wait_for(pending, 30)
        await client.wait_for(lambda: "release" in client.calls)
    assert answer.stop_reason == "cancelled"
    assert client.calls[0] == "create" and "kill" in client.calls
    assert client.calls[-1] == "release" and client.calls.count("release") == 1
    assert not client._procs  # nothing left running


async def test_without_the_capability_commands_run_in_the_agent(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    fake.script(tool_reply(("run_command", {"command": "echo here"})), text_reply("Done."))
    client = TerminalClient()
    async with start_agent(client, fake, state, "--mode", "agent", "--allow", "echo") as (conn, _):
        sid = (await conn.new_session(cwd=str(workspace))).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("run")])
    assert client.calls == []
    result = next(m for m in fake.requests[1]["messages"] if m["role"] == "tool")["content"]
    assert "here" in result
