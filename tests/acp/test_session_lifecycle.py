"""Session lifecycle over a real connection (the Python SDK's client):
``session/resume`` reattaches to a stored session without replaying it and
continues its history, ``session/close`` forgets a session on the connection
(cancelling its prompt) while the store keeps it, ``session/delete`` removes
it from its store (a route the SDK's router lacks, added at our boundary),
and ``session/list`` pages through a folder's sessions with ``nextCursor``
and, without ``cwd``, covers every folder the client named."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from acp.client.connection import ClientSideConnection
from acp.schema import AgentMessageChunk, SessionInfoUpdate, UserMessageChunk

from rhema_lsp.acp.sessions import LIST_PAGE
from rhema_lsp.sessions import SessionStore, UnknownSessionError
from tests.acp.client import RecordingClient, start_agent
from tests.fakes.model_server import FakeModelServer, text_reply


async def test_resume_continues_a_stored_session_without_replaying_it(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    fake.script(text_reply("First answer."), text_reply("Second answer."))
    first = RecordingClient()
    async with start_agent(first, fake, state) as (conn, init):
        caps = init.agent_capabilities.session_capabilities  # type: ignore[union-attr]
        assert caps is not None and caps.resume is not None and caps.close is not None
        sid = (await conn.new_session(cwd=str(workspace))).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("one")])

    client = RecordingClient()
    async with start_agent(client, fake, state) as (conn, _init):
        resumed = await conn.resume_session(session_id=sid, cwd=str(workspace))
        assert resumed.modes is not None and resumed.config_options
        # nothing replayed: the session's commands only
        assert [type(u).__name__ for _, u in client.updates] == ["AvailableCommandsUpdate"]
        answer = await conn.prompt(session_id=sid, prompt=[text_block("two")])
        with pytest.raises(RequestError, match="no session nope"):
            await conn.resume_session(session_id="nope", cwd=str(workspace))

    assert answer.stop_reason == "end_turn"
    # The first prompt titled the session; a later one does not again.
    assert [u.title for u in first.of(SessionInfoUpdate)] == ["one"]
    assert not client.of(SessionInfoUpdate)
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


async def delete(conn: ClientSideConnection, session_id: str) -> Any:
    """``session/delete``, which the SDK's client has no method for (0.12)."""
    return await conn._conn.send_request("session/delete", {"sessionId": session_id})


async def test_delete_removes_a_stored_session_the_connection_named_the_folder_of(
    fake: FakeModelServer, state: Path, workspace: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    store = await SessionStore.open(other)
    try:
        await store.create("kept elsewhere", session_id="elsewhere")
        await store.create("to delete", session_id="doomed")
    finally:
        await store.close()
    fake.script(text_reply("Hello."))
    async with start_agent(RecordingClient(), fake, state) as (conn, init):
        caps = init.agent_capabilities.session_capabilities  # type: ignore[union-attr]
        assert caps is not None and caps.delete is not None
        with pytest.raises(RequestError, match="no session doomed"):  # no folder named yet
            await delete(conn, "doomed")
        sid = (
            await conn.new_session(cwd=str(workspace), additional_directories=[str(other)])
        ).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("hi")])
        # without cwd: the sessions of cwd and of the additional directory
        listed = {s.session_id for s in (await conn.list_sessions()).sessions}
        assert listed == {sid, "elsewhere", "doomed"}
        assert await delete(conn, "doomed") == {}  # in the additional directory
        await delete(conn, sid)  # open on this connection
        with pytest.raises(RequestError, match=f"no session {sid}"):
            await conn.prompt(session_id=sid, prompt=[text_block("again")])
        with pytest.raises(RequestError, match="no session nope"):
            await delete(conn, "nope")
        left = {s.session_id for s in (await conn.list_sessions()).sessions}
    assert left == {"elsewhere"}
    for folder, gone in ((workspace, sid), (other, "doomed")):
        store = await SessionStore.open(folder)
        try:
            with pytest.raises(UnknownSessionError):
                await store.info(gone)
        finally:
            await store.close()
