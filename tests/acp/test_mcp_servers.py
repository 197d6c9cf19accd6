"""The MCP servers an ACP editor passes with ``session/new``: real servers
(the reference ``mcp-server-time`` over stdio, the SDK-written fake over
stdio and over Streamable HTTP on loopback) started by the real agent
process, their tools offered in ``agent`` mode, each call asked through
``session/request_permission``, the result handed to the model, and the
servers gone when the agent exits."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from acp.schema import EnvVariable, HttpHeader, HttpMcpServer, McpServerStdio, SseMcpServer

from tests.acp.client import RecordingClient, start_agent
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply
from tests.unit.mcp.conftest import ROOT, alive, eventually, http_server, marks

__all__ = ["http_server", "marks"]  # fixtures, shared with the MCP layer's tests

TIME_SERVER = McpServerStdio(
    name="time", command=sys.executable, args=["-m", "mcp_server_time"], env=[]
)


def fake_server(marks: Path, *extra: EnvVariable) -> McpServerStdio:
    """The SDK-written fake server over stdio, as an editor passes it."""
    env = [
        EnvVariable(name="FAKE_MCP_MARKS", value=str(marks)),
        EnvVariable(name="PYTHONPATH", value=str(ROOT)),
        *extra,
    ]
    return McpServerStdio(
        name="fake", command=sys.executable, args=["-m", "tests.fakes.mcp_server", "stdio"], env=env
    )


def offered(request: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in request["tools"]]


def tool_results(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def children_running(pid: int, marker: str) -> list[int]:
    """The live child processes of ``pid`` whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if int(stat.rpartition(")")[2].split()[1]) == pid and marker in command:
            found.append(int(entry.name))
    return [child for child in found if alive(child)]


async def test_a_stdio_server_from_the_editor_answers_the_model(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    fake.script(
        tool_reply(("time__get_current_time", {"timezone": "Etc/UTC"})),
        text_reply("It is now."),
    )
    client = RecordingClient(answers=["allow_once"])
    async with start_agent(client, fake, state, "--mode", "agent") as (conn, _init):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[TIME_SERVER])
        response = await conn.prompt(
            session_id=session.session_id, prompt=[text_block("what time is it?")]
        )
        servers = children_running(client.agent_pid, "mcp_server_time")
        assert len(servers) == 1

    assert response.stop_reason == "end_turn"
    assert {"time__get_current_time", "read_file"} <= set(offered(fake.requests[0]))
    [asked] = client.asked
    assert asked.tool_call.tool_call_id == "call_1"
    assert "get_current_time" in str(asked.tool_call.content)
    [result] = tool_results(fake.requests[1])
    assert '"timezone": "Etc/UTC"' in result
    assert client.tool_updates("call_1")[-1].status == "completed"
    await eventually(lambda: not alive(servers[0]))  # stopped with the agent


async def test_servers_start_with_the_session_their_tools_follow_the_mode_and_values_are_final(
    fake: FakeModelServer, state: Path, workspace: Path, marks: Path
) -> None:
    server = fake_server(marks, EnvVariable(name="FAKE_MCP_SECRET", value="${HOME}"))
    fake.script(text_reply("No tools needed."), tool_reply(("fake__whoami", {})), text_reply("ok"))
    client = RecordingClient(answers=["allow_once"])
    async with start_agent(client, fake, state) as (conn, _init):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[server])
        sid = session.session_id
        await eventually(lambda: (marks / "starts").exists())  # started at session/new
        await conn.prompt(session_id=sid, prompt=[text_block("edit mode")])

        await conn.set_session_mode(session_id=sid, mode_id="agent")
        await conn.prompt(session_id=sid, prompt=[text_block("who are you?")])

    assert not [name for name in offered(fake.requests[0]) if name.startswith("fake__")]
    assert "fake__whoami" in offered(fake.requests[1])
    # the editor's value is final: no ${NAME} expansion, and no provider key in the child
    assert tool_results(fake.requests[2]) == ["${HOME} False"]


async def test_an_http_server_is_used_and_an_sse_one_refused_in_the_log(
    fake: FakeModelServer, state: Path, workspace: Path, http_server: str
) -> None:
    servers: list[Any] = [
        HttpMcpServer(
            type="http",
            name="remote",
            url=http_server,
            headers=[HttpHeader(name="Authorization", value="Bearer literal-sekrit")],
        ),
        SseMcpServer(type="sse", name="legacy", url="http://127.0.0.1:9/sse", headers=[]),
    ]
    fake.script(tool_reply(("remote__echo", {"text": "over http"})), text_reply("Echoed."))
    client = RecordingClient(answers=["allow_once"])
    async with start_agent(client, fake, state, "--mode", "agent") as (conn, _init):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=servers)
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("echo it")])

    assert response.stop_reason == "end_turn"
    names = offered(fake.requests[0])
    assert "remote__echo" in names
    assert not [name for name in names if name.startswith("legacy__")]
    assert tool_results(fake.requests[1]) == ["echo: over http"]
    log = (state / "agent.log").read_text()
    assert "'legacy' from the editor is left out: its SSE transport is not supported" in log
    assert "literal-sekrit" not in log


async def test_two_mcp_calls_of_one_step_run_together_each_asked_by_its_own_id(
    fake: FakeModelServer, state: Path, workspace: Path, marks: Path
) -> None:
    # ``meet`` answers "met" only when a second call of it is running too
    # (else "alone", after 10 s): the ACP door's tools once ran them one by one.
    server = fake_server(marks)
    fake.script(tool_reply(("fake__meet", {}), ("fake__meet", {})), text_reply("They met."))
    client = RecordingClient(answers=["allow_once", "allow_once"])
    async with start_agent(client, fake, state, "--mode", "agent") as (conn, _init):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[server])
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("meet")])

    assert response.stop_reason == "end_turn"
    assert tool_results(fake.requests[1]) == ["met", "met"]
    asked = [permission.tool_call.tool_call_id for permission in client.asked]
    assert len(asked) == 2 and len(set(asked)) == 2, asked


async def test_a_servers_prompts_are_slash_commands_filled_from_the_typed_words(
    fake: FakeModelServer, state: Path, workspace: Path, marks: Path
) -> None:
    fake.script(text_reply("Reviewed."))
    client = RecordingClient()
    async with start_agent(client, fake, state, "--mode", "ask") as (conn, _init):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[fake_server(marks)])
        sid = session.session_id

        def review() -> Any:
            for _, update in reversed(client.updates):
                if getattr(update, "session_update", "") == "available_commands_update":
                    named = {c.name: c for c in update.available_commands}
                    return named.get("mcp__fake__review")
            return None

        await eventually(lambda: review() is not None)  # once the server started
        assert review().input.root.hint == "path [focus]"
        answer = await conn.prompt(
            session_id=sid, prompt=[text_block("/mcp__fake__review a.py security and style")]
        )
        assert answer.stop_reason == "end_turn"
        with pytest.raises(RequestError) as refused:  # path is required
            await conn.prompt(session_id=sid, prompt=[text_block("/mcp__fake__review")])
        assert refused.value.code == -32602 and "mcp__fake__review" in str(refused.value)
        listed = await conn.list_sessions(cwd=str(workspace))
    (request,) = fake.requests
    assert request["messages"][-1]["content"] == "Review a.py, looking for security and style."
    assert listed.sessions[0].title == "/mcp__fake__review a.py security and style"
