"""``rhema-lsp acp`` stops the same way when its stdin ends and on
``SIGTERM`` (CodeCompanion sends it when it exits): the running prompt is
cancelled and checkpointed (its partial answer kept, marked interrupted),
the session's lease let go and the store closed, and the process exits 0.
(The LSP door's twin is ``tests/e2e/test_shutdown.py``.)"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest
from acp import text_block
from acp.schema import AgentMessageChunk

from rhema_lsp.runs.driver import INTERRUPTED
from tests.acp.client import RecordingClient, start_agent
from tests.e2e.test_shutdown import stored_sessions
from tests.fakes.model_server import FakeModelServer, text_reply


@pytest.mark.parametrize("how", ["sigterm", "stdin closed"])
async def test_acp_checkpoints_a_running_prompt_and_exits_cleanly(
    fake: FakeModelServer, state: Path, workspace: Path, how: str
) -> None:
    fake.script(text_reply("word " * 4000, chunk=5, delay=0.005))
    client = RecordingClient()
    async with start_agent(client, fake, state) as (conn, _init):
        process = client.agent_process
        assert process is not None
        session = (await conn.new_session(cwd=str(workspace))).session_id
        pending = asyncio.ensure_future(
            conn.prompt(session_id=session, prompt=[text_block("talk")])
        )
        try:
            await client.wait_for(lambda: bool(client.of(AgentMessageChunk)))
            if how == "sigterm":
                os.kill(process.pid, signal.SIGTERM)
            else:
                assert process.stdin is not None
                process.stdin.close()
            code = await asyncio.wait_for(process.wait(), 30)
            if how == "sigterm":  # the client still listens: the prompt answers first
                response = await asyncio.wait_for(pending, 5)
                assert response.stop_reason == "cancelled"
        finally:
            pending.cancel()

    assert code == 0
    [(running, roles, last)] = await stored_sessions(workspace)
    assert not running
    assert roles == ["user", "assistant"]
    assert last.endswith(INTERRUPTED) and last.startswith("word")
