"""The ACP door in process: the real agent on the real pipeline, a client
object of the SDK's client side (no child process), the fake model server.

What the door adds is checked here: an ACP turn's edits are checkpointed in
the store (so they rewind exactly), its prompt is stored with its turn, a
cancelled prompt keeps its partial answer and answers with its usage, the
session's context budget lives across prompts, and shutdown cancels a
prompt in flight, checkpoints it and closes the stores."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, text_block
from acp.schema import (
    AgentMessageChunk,
    ClientCapabilities,
    FileSystemCapabilities,
    Implementation,
)

from rhema_lsp.acp.agent import RhemaAcpAgent
from rhema_lsp.runs.driver import INTERRUPTED
from rhema_lsp.runs.rewind import rewind
from rhema_lsp.runs.settings import Settings
from rhema_lsp.sessions import SessionStore
from rhema_lsp.tools import DiskEditor
from tests.acp.client import RecordingClient
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply
from tests.unit.conftest import HELLO

EDIT = ("edit_file", {"path": "hello.py", "old_text": '"hello "', "new_text": '"hi "'})


class CancellingClient(RecordingClient):
    """Cancels the prompt once the answer starts streaming."""

    agent: RhemaAcpAgent | None = None

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        await super().session_update(session_id, update, **kwargs)
        if isinstance(update, AgentMessageChunk) and self.agent is not None:
            await self.agent.cancel(session_id)


async def connect(fake: FakeModelServer, client: RecordingClient) -> RhemaAcpAgent:
    settings = Settings.model_validate(
        {
            "provider": "custom",
            "protocol": "openai",
            "baseUrl": fake.base_url,
            "model": "fake-model",
            "mode": "edit",
        }
    )
    agent = RhemaAcpAgent(settings)
    agent.on_connect(client)
    no_fs = FileSystemCapabilities(read_text_file=False, write_text_file=False)
    await agent.initialize(
        protocol_version=1,
        client_capabilities=ClientCapabilities(fs=no_fs),
        client_info=Implementation(name="unit", version="1"),
    )
    return agent


@pytest.fixture
async def agent(fake: FakeModelServer) -> AsyncIterator[RhemaAcpAgent]:
    opened = await connect(fake, RecordingClient())
    try:
        yield opened
    finally:
        await opened.shutdown()


@pytest.mark.parametrize("asked", [0, 1, 2, 99])
async def test_the_answered_protocol_version_is_one_the_agent_speaks(
    fake: FakeModelServer, asked: int
) -> None:
    agent = RhemaAcpAgent(Settings())
    agent.on_connect(RecordingClient())
    try:
        answer = await agent.initialize(protocol_version=asked)
    finally:
        await agent.shutdown()
    assert answer.protocol_version == PROTOCOL_VERSION == 1


@pytest.mark.process
async def test_an_acp_turns_edit_is_checkpointed_and_rewinds_exactly(
    agent: RhemaAcpAgent, fake: FakeModelServer, folder: Path
) -> None:
    fake.script(tool_reply(EDIT), text_reply("Greets with hi now."))
    session = (await agent.new_session(cwd=str(folder))).session_id

    response = await agent.prompt(prompt=[text_block("say hi instead")], session_id=session)

    assert response.stop_reason == "end_turn"
    assert '"hi "' in (folder / "hello.py").read_text()
    store = await agent.stores.of(folder)
    assert (await store.info(session)).turns == 1
    [turn] = await store.checkpoints.turns(session)
    assert (turn.turn, turn.title) == (1, "say hi instead")
    assert [change.uri for change in turn.files] == [(folder / "hello.py").as_uri()]
    async with store.lease(session):
        report = await rewind(store, DiskEditor([folder]), [folder], session, 1, "code")
    assert report.conflicts == []
    assert (folder / "hello.py").read_text() == HELLO


async def test_a_cancelled_acp_prompt_keeps_its_partial_answer_and_its_usage(
    fake: FakeModelServer, folder: Path
) -> None:
    fake.script(text_reply("word " * 2000, chunk=5, delay=0.002))
    client = CancellingClient()
    agent = client.agent = await connect(fake, client)
    try:
        session = (await agent.new_session(cwd=str(folder))).session_id
        response = await agent.prompt(prompt=[text_block("talk")], session_id=session)
        store = await agent.stores.of(folder)
        stored = await store.load(session)
    finally:
        await agent.shutdown()

    assert response.stop_reason == "cancelled"
    assert response.usage is not None
    assert response.usage.input_tokens > 0 and response.usage.output_tokens > 0
    assert [str(m.role) for m in stored.history] == ["user", "assistant"]
    kept = stored.history[-1].text
    assert kept.endswith(INTERRUPTED)
    assert 0 < len(kept) - len(INTERRUPTED) < len("word " * 2000)

    replayed = RecordingClient()
    again = await connect(fake, replayed)
    try:
        await again.load_session(cwd=str(folder), session_id=session)
    finally:
        await again.shutdown()
    assert replayed.message_text() == kept


async def test_the_sessions_context_budget_lives_across_prompts(
    agent: RhemaAcpAgent, fake: FakeModelServer, folder: Path
) -> None:
    fake.script(text_reply("one"), text_reply("two"))
    session = (await agent.new_session(cwd=str(folder))).session_id
    await agent.prompt(prompt=[text_block("first")], session_id=session)
    backend = await agent.door.backends.of(agent.settings)
    budget = agent.turns.budget(session, backend, agent.settings)
    assert budget.estimator.calibrated  # the first prompt's call taught it

    await agent.prompt(prompt=[text_block("second")], session_id=session)

    assert agent.turns.budget(session, backend, agent.settings) is budget
    assert (await (await agent.stores.of(folder)).info(session)).turns == 2


async def test_shutdown_cancels_a_prompt_in_flight_checkpoints_it_and_closes_the_stores(
    fake: FakeModelServer, folder: Path
) -> None:
    fake.script(text_reply("word " * 2000, chunk=5, delay=0.002))
    client = RecordingClient()
    agent = await connect(fake, client)
    session = (await agent.new_session(cwd=str(folder))).session_id
    pending = asyncio.ensure_future(agent.prompt(prompt=[text_block("talk")], session_id=session))
    await client.wait_for(lambda: bool(client.of(AgentMessageChunk)))

    await agent.shutdown()
    response = await asyncio.wait_for(pending, 10)

    assert response.stop_reason == "cancelled"
    assert agent.stores.opened() == []
    store = await SessionStore.open(folder)
    try:
        info = await store.info(session)
        stored = await store.load(session)
    finally:
        await store.close()
    assert not info.running  # the lease was let go
    assert stored.history[-1].text.endswith(INTERRUPTED)
