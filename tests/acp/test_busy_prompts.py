"""The door kit through the real ACP agent process: a prompt sent while its
session runs one is refused (-32602) and reserves no turn number, so the
next turn is numbered without a gap; ``session/new`` sent together on one
folder gives sessions of one store, each of which can prompt (that the
store is opened once is tests/unit/acp/test_door_kit.py's)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from acp import RequestError, text_block
from acp.schema import AgentMessageChunk

from rhema_lsp.sessions import SessionStore
from tests.acp.client import RecordingClient, start_agent
from tests.fakes.model_server import FakeModelServer, text_reply


async def test_a_prompt_refused_as_busy_leaves_no_gap_in_the_turn_numbers(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    fake.script(
        text_reply("One."), text_reply("word " * 3000, chunk=5, delay=0.002), text_reply("Three.")
    )
    client = RecordingClient()
    async with start_agent(client, fake, state) as (conn, _init):
        sid = (await conn.new_session(cwd=str(workspace))).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("one")])
        running = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("two")]))
        await client.wait_for(lambda: len(client.of(AgentMessageChunk)) > 1)

        refused = await asyncio.gather(
            *[conn.prompt(session_id=sid, prompt=[text_block(f"no {n}")]) for n in range(5)],
            return_exceptions=True,
        )
        assert all(isinstance(e, RequestError) and e.code == -32602 for e in refused)

        await conn.cancel(session_id=sid)
        assert (await asyncio.wait_for(running, 30)).stop_reason == "cancelled"
        await conn.prompt(session_id=sid, prompt=[text_block("three")])

    store = await SessionStore.open(workspace)
    try:
        assert (await store.info(sid)).turns == 3
        assert [t.turn for t in await store.checkpoints.turns(sid)] == [1, 2, 3]
    finally:
        await store.close()


async def test_new_sessions_sent_together_share_one_store_and_each_prompts(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    fake.script(*[text_reply("Done.")] * 4)
    client = RecordingClient()
    async with start_agent(client, fake, state) as (conn, _init):
        opened = await asyncio.gather(*[conn.new_session(cwd=str(workspace)) for _ in range(4)])
        sids = [new.session_id for new in opened]
        for sid in sids:
            answer = await conn.prompt(session_id=sid, prompt=[text_block("hi")])
            assert answer.stop_reason == "end_turn"
        listed = await conn.list_sessions(cwd=str(workspace))

    assert sorted(s.session_id for s in listed.sessions) == sorted(sids)
