"""A client that answers the agent's own requests with something the
protocol does not allow (a read whose ``content`` is not text, a permission
outcome nobody defined) is a client mistake, handled where the agent asked:
the read falls back to the disk, the permission counts as declined, and the
prompt ends normally with the agent still serving."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp import text_block

from tests.acp.client import RecordingClient, start_agent
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply


class MistakenClient(RecordingClient):
    """Answers ``fs/read_text_file`` and ``session/request_permission`` with
    shapes the schema refuses."""

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> Any:
        self.reads.append(path)
        return {"content": 5}

    async def request_permission(
        self, session_id: str, tool_call: Any, options: Any, **kwargs: Any
    ) -> Any:
        self.asked.append(tool_call)
        return {"outcome": {"outcome": "maybe"}}


async def test_malformed_answers_to_the_agents_requests_are_handled_where_it_asked(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    fake.script(
        tool_reply(("read_file", {"path": "hello.py"})),
        tool_reply(("run_command", {"command": "echo rhema-ran", "escalate": True})),
        text_reply("Done."),
        text_reply("Still here."),
    )
    client = MistakenClient()
    async with start_agent(client, fake, state, "--mode", "agent") as (conn, _init):
        session = await conn.new_session(cwd=str(workspace))
        first = await conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
        second = await conn.prompt(session_id=session.session_id, prompt=[text_block("again")])

    assert (first.stop_reason, second.stop_reason) == ("end_turn", "end_turn")
    assert client.reads and client.asked
    results = [m["content"] for m in fake.requests[2]["messages"] if m["role"] == "tool"]
    # The read came from the disk; the command was not run (declined).
    assert "def greet" in results[0]
    assert results[1] == "the user did not approve running 'echo rhema-ran'; nothing was run"
    log = (state / "agent.log").read_text(errors="replace")
    assert "Traceback" not in log
