"""``session/fork`` in process, its hostile and edge cases: an unknown
source is -32002 and a refused folder -32602, neither leaving a session
behind; a source never prompted forks into an empty session with its
choices; a stored one into a session holding its turns, the source
untouched."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import RequestError, text_block

from rhema_lsp.acp.agent import RhemaAcpAgent
from rhema_lsp.runs.settings import Settings
from rhema_lsp.sessions import SessionStore
from tests.acp.client import RecordingClient
from tests.fakes.model_server import FakeModelServer, text_reply


async def _agent(fake: FakeModelServer) -> RhemaAcpAgent:
    settings = Settings.model_validate(
        {"provider": "custom", "protocol": "openai", "baseUrl": fake.base_url, "model": "m"}
    )
    agent = RhemaAcpAgent(settings)
    agent.on_connect(RecordingClient())
    await agent.initialize(protocol_version=1)
    return agent


async def test_hostile_forks_are_refused_and_leave_nothing(
    project: Path, fake: FakeModelServer
) -> None:
    agent = await _agent(fake)
    try:
        with pytest.raises(RequestError) as unknown:
            await agent.fork_session(session_id="nope" * 100, cwd=str(project))
        assert unknown.value.code == -32002
        sid = (await agent.new_session(cwd=str(project))).session_id
        for cwd in ("/", "relative/path", str(project / "missing")):
            with pytest.raises(RequestError) as refused:
                await agent.fork_session(session_id=sid, cwd=cwd)
            assert refused.value.code == -32602
        assert list(agent.sessions) == [sid]
    finally:
        await agent.shutdown()


async def test_forks_of_a_new_and_of_a_stored_session(project: Path, fake: FakeModelServer) -> None:
    fake.script(text_reply("First answer."))
    agent = await _agent(fake)
    try:
        sid = (await agent.new_session(cwd=str(project))).session_id
        await agent.set_session_mode(mode_id="ask", session_id=sid)
        empty = await agent.fork_session(session_id=sid, cwd=str(project))
        assert empty.session_id != sid and empty.modes is not None
        assert empty.modes.current_mode_id == "ask"
        await agent.prompt(prompt=[text_block("remember")], session_id=sid)
        forked = await agent.fork_session(session_id=sid, cwd=str(project))
        assert forked.modes is not None and forked.modes.current_mode_id == "ask"
    finally:
        await agent.shutdown()
    store = await SessionStore.open(project)
    try:
        assert (await store.info(forked.session_id)).turns == 1
        assert (await store.info(sid)).turns == 1
        history = await store.load(forked.session_id)
        assert [m.role for m in history.history][:2] == ["user", "assistant"]
    finally:
        await store.close()
