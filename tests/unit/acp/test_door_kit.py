"""The door kit through the ACP door, in process (the real agent, a client
object of the SDK's client side, the fake model server): a prompt refused
because its session is busy reserves no turn number, however many are
refused together; ``session/new`` arriving together on a folder opens its
store once; deleting a session forgets what the pipeline keeps of it and
stops its language servers; every error leaves through the one boundary
as a JSON-RPC error with its code."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from acp.schema import AgentMessageChunk

from rhema_lsp.acp.agent import RhemaAcpAgent
from rhema_lsp.sessions import SessionStore, SessionStoreError
from tests.acp.client import RecordingClient
from tests.fakes.model_server import FakeModelServer, text_reply
from tests.unit.acp.test_prompt_turns import connect

LONG = "word " * 3000


@pytest.fixture
async def agent(fake: FakeModelServer) -> AsyncIterator[RhemaAcpAgent]:
    opened = await connect(fake, RecordingClient())
    try:
        yield opened
    finally:
        await opened.shutdown()


async def _turns(agent: RhemaAcpAgent, folder: Path, session: str) -> int:
    return (await (await agent.stores.of(folder)).info(session)).turns


async def test_a_prompt_refused_as_busy_reserves_no_turn_number(
    fake: FakeModelServer, folder: Path
) -> None:
    fake.script(text_reply("One."), text_reply(LONG, chunk=5, delay=0.002), text_reply("Three."))
    client = RecordingClient()
    agent = await connect(fake, client)
    try:
        session = (await agent.new_session(cwd=str(folder))).session_id
        await agent.prompt(prompt=[text_block("one")], session_id=session)
        running = asyncio.ensure_future(
            agent.prompt(prompt=[text_block("two")], session_id=session)
        )
        await client.wait_for(lambda: len(client.of(AgentMessageChunk)) > 1)

        with pytest.raises(RequestError) as refused:
            await agent.prompt(prompt=[text_block("refused")], session_id=session)
        assert refused.value.code == -32602
        assert "already running a turn" in str(refused.value)
        assert await _turns(agent, folder, session) == 2

        await agent.cancel(session_id=session)
        assert (await asyncio.wait_for(running, 10)).stop_reason == "cancelled"
        await agent.prompt(prompt=[text_block("three")], session_id=session)

        store = await agent.stores.of(folder)
        assert [turn.turn for turn in await store.checkpoints.turns(session)] == [1, 2, 3]
        assert await _turns(agent, folder, session) == 3
    finally:
        await agent.shutdown()


async def test_concurrent_prompts_refused_together_leave_the_count_equal_to_the_prompts_run(
    agent: RhemaAcpAgent, fake: FakeModelServer, folder: Path
) -> None:
    fake.script(text_reply("First."), *[text_reply("Again.", chunk=2, delay=0.01)] * 10)
    session = (await agent.new_session(cwd=str(folder))).session_id
    await agent.prompt(prompt=[text_block("first")], session_id=session)

    answers = await asyncio.gather(
        *[agent.prompt(prompt=[text_block(f"p{n}")], session_id=session) for n in range(10)],
        return_exceptions=True,
    )

    ran = [answer for answer in answers if not isinstance(answer, BaseException)]
    refused = [answer for answer in answers if isinstance(answer, BaseException)]
    assert ran and refused
    assert all(isinstance(error, RequestError) and error.code == -32602 for error in refused)
    assert await _turns(agent, folder, session) == 1 + len(ran)


async def test_concurrent_new_sessions_on_one_folder_open_one_store(
    agent: RhemaAcpAgent, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_open = SessionStore.open
    opened: list[Path] = []

    async def slow_open(where: Path, **options: Any) -> SessionStore:
        opened.append(where)
        await asyncio.sleep(0.05)  # the other session/new arrive meanwhile
        return await real_open(where, **options)

    monkeypatch.setattr(SessionStore, "open", slow_open)

    sessions = await asyncio.gather(*[agent.new_session(cwd=str(folder)) for _ in range(4)])

    assert opened == [folder]
    assert len(agent.stores.opened()) == 1
    assert len({s.session_id for s in sessions}) == 4
    assert len({agent.sessions[s.session_id].store for s in sessions}) == 1


async def test_deleting_a_session_forgets_its_budget_and_stops_its_language_servers(
    agent: RhemaAcpAgent, fake: FakeModelServer, folder: Path
) -> None:
    fake.script(text_reply("One."))
    session = (await agent.new_session(cwd=str(folder))).session_id
    await agent.prompt(prompt=[text_block("one")], session_id=session)
    backend = await agent.door.backends.of(agent.settings)
    budget = agent.turns.budget(session, backend, agent.settings)
    languages = agent.sessions[session].languages
    assert languages is not None
    stopped: list[bool] = []
    real_close = languages.aclose

    async def aclose() -> None:
        stopped.append(True)
        await real_close()

    languages.aclose = aclose  # type: ignore[method-assign]

    await agent.delete_session(session_id=session)

    assert stopped == [True]
    assert session not in agent.sessions
    assert agent.turns.budget(session, backend, agent.settings) is not budget  # forgotten
    with pytest.raises(RequestError) as unknown:
        await agent.prompt(prompt=[text_block("again")], session_id=session)
    assert unknown.value.code == -32002


async def test_lower_layers_errors_leave_through_the_boundary_with_their_codes(
    agent: RhemaAcpAgent, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(RequestError) as relative:
        await agent.new_session(cwd="not/absolute")
    assert relative.value.code == -32602
    with pytest.raises(RequestError) as unknown:
        await agent.load_session(cwd=str(folder), session_id="nope")
    assert unknown.value.code == -32002
    with pytest.raises(RequestError) as cursor:
        await agent.list_sessions(cwd=str(folder), cursor="x")
    assert cursor.value.code == -32602

    async def broken(self: SessionStore) -> list[Any]:
        raise SessionStoreError("the disk is on fire")

    monkeypatch.setattr(SessionStore, "list", broken)
    with pytest.raises(RequestError) as failed:
        await agent.list_sessions(cwd=str(folder))
    assert (failed.value.code, str(failed.value)) == (-32603, "the disk is on fire")


def test_every_method_the_sdk_calls_crosses_the_error_boundary() -> None:
    served = [
        name
        for cls in RhemaAcpAgent.__mro__  # its own methods and its bases' (lifecycle.py)
        for name, member in vars(cls).items()
        if inspect.iscoroutinefunction(member) and not name.startswith("_")
    ]
    unmapped = [
        name
        for name in served
        if name != "shutdown"  # the connection's, after the last answer
        and getattr(getattr(RhemaAcpAgent, name), "__wrapped__", None) is None
    ]
    assert {"prompt", "delete_session", "fork_session", "authenticate"} <= set(served)
    assert unmapped == []
