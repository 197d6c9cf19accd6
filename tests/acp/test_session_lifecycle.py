"""Session lifecycle over a real connection (the Python SDK's client):
``session/resume`` reattaches to a stored session without replaying it and
continues its history, ``session/close`` forgets a session on the connection
(cancelling its prompt) while the store keeps it, and ``session/list`` pages
through a folder's sessions with ``nextCursor``."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp import RequestError, text_block
from acp.schema import AgentMessageChunk, UserMessageChunk

from rhema_lsp.acp.sessions import LIST_PAGE
from rhema_lsp.sessions import SessionStore
from tests.acp.client import RecordingClient, start_agent
from tests.fakes.model_server import FakeModelServer, text_reply


async def test_resume_continues_a_stored_session_without_replaying_it(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    fake.script(text_reply("First answer."), text_reply("Second answer."))
    async with start_agent(RecordingClient(), fake, state) as (conn, init):
        caps = init.agent_capabilities.session_capabilities  # type: ignore[union-attr]
        assert caps is not None and caps.resume is not None and caps.close is not None
        sid = (await conn.new_session(cwd=str(workspace))).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("one")])

    client = RecordingClient()
    async with start_agent(client, fake, state) as (conn, _init):
        resumed = await conn.resume_session(session_id=sid, cwd=str(workspace))
        assert resumed.modes is not None and resumed.config_options
        assert client.updates == []  # nothing replayed
        answer = await conn.prompt(session_id=sid, prompt=[text_block("two")])
        with pytest.raises(RequestError, match="no session nope"):
            await conn.resume_session(session_id="nope", cwd=str(workspace))

    assert answer.stop_reason == "end_turn"
    assert not client.of(UserMessageChunk)
    assert [u.content.text for u in client.of(AgentMessageChunk)] == ["Second answer."]
    contents = [m["content"] for m in fake.requests[1]["messages"] if m["role"] != "system"]
    assert contents == ["one", "First answer.", "two"]


async def test_close_cancels_the_prompt_and_forgets_the_session_but_not_its_store(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    fake.script(text_reply("word " * 2000, chunk=5, delay=0.005))
    client = RecordingClient()
    async with start_agent(client, fake, state) as (conn, _init):
        sid = (await conn.new_session(cwd=str(workspace))).session_id
        pending = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("talk")]))
        await client.wait_for(lambda: bool(client.of(AgentMessageChunk)))
        await conn.close_session(session_id=sid)
        response = await asyncio.wait_for(pending, 10)
        with pytest.raises(RequestError, match=f"no session {sid}"):
            await conn.prompt(session_id=sid, prompt=[text_block("again")])
        with pytest.raises(RequestError, match="no session"):
            await conn.close_session(session_id=sid)

    assert response.stop_reason == "cancelled"
    store = await SessionStore.open(workspace)
    try:
        assert (await store.info(sid)).turns == 1
    finally:
        await store.close()


async def test_list_pages_through_the_sessions_with_next_cursor(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    count = LIST_PAGE + 3
    store = await SessionStore.open(workspace)
    try:
        for n in range(count):
            await store.create(f"session {n}", session_id=f"s{n:03d}")
    finally:
        await store.close()
    async with start_agent(RecordingClient(), fake, state) as (conn, _init):
        first = await conn.list_sessions(cwd=str(workspace))
        assert len(first.sessions) == LIST_PAGE and first.next_cursor is not None
        second = await conn.list_sessions(cwd=str(workspace), cursor=first.next_cursor)
        assert len(second.sessions) == 3 and second.next_cursor is None
        with pytest.raises(RequestError, match="not one session/list gave"):
            await conn.list_sessions(cwd=str(workspace), cursor="yesterday")
    ids = [s.session_id for s in first.sessions + second.sessions]
    assert sorted(ids) == [f"s{n:03d}" for n in range(count)]
    assert len(set(ids)) == count
