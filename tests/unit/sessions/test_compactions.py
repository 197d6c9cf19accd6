"""Compactions in the store: appended rows, never a rewrite; a loaded session
carries them, so it sends the compacted view, while every message stays."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from rhema_lsp.engine import Compaction, Message, Session
from rhema_lsp.sessions import SessionConflictError, SessionStore


def rows(path: Path, table: str) -> list[tuple[int, str]]:
    with sqlite3.connect(path) as conn:
        return conn.execute(f"SELECT seq, body FROM {table} ORDER BY seq").fetchall()


async def test_a_compaction_is_appended_and_the_messages_are_untouched(
    store: SessionStore, folder: Path
) -> None:
    info = await store.create("long one")
    session = Session(history=[Message.user(f"m{i}") for i in range(6)])
    await store.commit(info.id, session)
    before = rows(store.path, "messages")

    session.compactions.append(Compaction(upto=4, summary="S1", before=900, after=300))
    session.history.append(Message.assistant("after the first"))
    await store.commit(info.id, session)
    session.compactions.append(Compaction(upto=5, summary="S2", pinned=4, summary_tokens=12))
    await store.commit(info.id, session)

    assert rows(store.path, "messages")[:6] == before
    assert [seq for seq, _ in rows(store.path, "compactions")] == [0, 1]

    reopened = await SessionStore.open(folder)
    try:
        loaded = await reopened.load(info.id)
    finally:
        await reopened.close()
    assert loaded.history == session.history  # the whole history, readable
    assert loaded.compactions == session.compactions
    assert [m.text for m in loaded.view()] == ["S2", "m4", "m5", "after the first"]


async def test_a_copy_that_lost_a_compaction_is_refused(store: SessionStore, folder: Path) -> None:
    info = await store.create("x")
    session = Session(history=[Message.user("a"), Message.assistant("b")])
    session.compactions.append(Compaction(upto=1, summary="S"))
    await store.commit(info.id, session)

    other = await SessionStore.open(folder)
    try:
        stale = Session(history=[*session.history, Message.user("c")])
        with pytest.raises(SessionConflictError, match="compactions stored"):
            await other.commit(info.id, stale)
    finally:
        await other.close()
