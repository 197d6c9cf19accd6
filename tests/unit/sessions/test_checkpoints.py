"""Checkpoints in a real SQLite store: content-addressed, deduplicated,
delta-compressed pre-images that read back exactly; damage is a clear error;
rewinds are appended and the live history follows them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from rhema_lsp.engine import Message, Session
from rhema_lsp.sessions import SessionStore, SessionStoreError, TurnStart, content_hash
from rhema_lsp.sessions.blobs import get_blob, put_blob

BASE = "".join(f"line {n}: some code here\n" for n in range(400)).encode()


def test_a_blob_is_stored_once_and_a_near_copy_as_a_small_delta(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "s.db", isolation_level=None)
    from rhema_lsp.sessions.schema import migrate

    migrate(conn)
    first = put_blob(conn, BASE)
    assert put_blob(conn, BASE) == first == content_hash(BASE)
    changed = BASE.replace(b"line 200: some", b"line 200: other")
    second = put_blob(conn, changed, base=first)
    sizes = dict(conn.execute("SELECT hash, length(body) FROM blobs").fetchall())
    assert sizes[second] < sizes[first] / 4  # a delta, not a copy
    assert conn.execute("SELECT count(*) FROM blobs").fetchone() == (2,)
    assert get_blob(conn, second) == changed
    assert get_blob(conn, first) == BASE


def test_a_damaged_blob_is_a_clear_error_not_wrong_content(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "s.db", isolation_level=None)
    from rhema_lsp.sessions.schema import migrate

    migrate(conn)
    name = put_blob(conn, BASE)
    conn.execute("UPDATE blobs SET body = ? WHERE hash = ?", (b"not zlib", name))
    with pytest.raises(SessionStoreError, match="cannot be decoded"):
        get_blob(conn, name)
    with pytest.raises(SessionStoreError, match="missing"):
        get_blob(conn, "0" * 64)


async def test_the_first_pre_image_of_a_turn_wins_and_rewinds_are_appended(
    tmp_path: Path,
) -> None:
    store = await SessionStore.open(tmp_path)
    try:
        info = await store.create("t")
        uri = (tmp_path / "f.py").as_uri()
        session = Session(history=[Message.user("one")])
        await store.commit(info.id, session, turn=TurnStart(1, "one"))
        await store.checkpoints.pre_image(info.id, 1, uri, b"v0", clean=True)
        await store.checkpoints.post_image(info.id, 1, uri, b"v1")
        await store.checkpoints.pre_image(info.id, 1, uri, b"v1", clean=False)  # kept: v0
        await store.checkpoints.post_image(info.id, 1, uri, b"v2")
        (plan,) = await store.checkpoints.plan(info.id, 1)
        assert plan.restore == content_hash(b"v0") and plan.expect == content_hash(b"v2")
        assert plan.clean is True
        assert await store.checkpoints.blob(plan.restore) == b"v0"

        session.history.append(Message.assistant("a"))
        session.history.append(Message.user("two"))
        await store.commit(info.id, session, turn=TurnStart(2, "two"))
        kept = await store.checkpoints.record_rewind(info.id, 2, "both", [uri])
        assert kept == 2
        assert [m.text for m in (await store.load(info.id)).history] == ["one", "a"]
        assert await store.checkpoints.plan(info.id, 1) == [plan]  # turn 1 is not rewound
        await store.checkpoints.record_rewind(info.id, 1, "code", [uri])
        assert await store.checkpoints.plan(info.id, 1) == []
        with pytest.raises(SessionStoreError, match="already rewound"):
            await store.checkpoints.record_rewind(info.id, 2, "conversation", [])
        # The rewound messages are still stored, readable in the log.
        with sqlite3.connect(store.path) as conn:
            assert conn.execute("SELECT count(*) FROM messages").fetchone() == (3,)
    finally:
        await store.close()


async def test_a_compaction_of_rewound_messages_stops_applying(tmp_path: Path) -> None:
    from rhema_lsp.engine import Compaction

    store = await SessionStore.open(tmp_path)
    try:
        info = await store.create("t")
        session = Session(history=[])
        for number, (prompt, answer) in enumerate((("one", "a"), ("two", "b")), 1):
            session.history.append(Message.user(prompt))  # a turn starts at its prompt
            await store.commit(info.id, session, turn=TurnStart(number, prompt))
            session.history.append(Message.assistant(answer))
            await store.commit(info.id, session)
        session.compactions.append(Compaction(upto=3, summary="one, a, two"))
        await store.commit(info.id, session)
        assert len((await store.load(info.id)).compactions) == 1

        await store.checkpoints.record_rewind(info.id, 2, "conversation", [])
        again = await store.load(info.id)
        assert [m.text for m in again.history] == ["one", "a"]
        assert again.compactions == []  # it summarised a rewound prompt
        # The history grows past the old cut: the stale summary stays out, and
        # commits (of messages and of a new compaction) still line up.
        again.history.append(Message.user("three"))
        await store.commit(info.id, again, turn=TurnStart(3, "three"))
        again.history.append(Message.assistant("c"))
        again.compactions.append(Compaction(upto=2, summary="one, a"))
        await store.commit(info.id, again)
        final = await store.load(info.id)
        assert [m.text for m in final.history] == ["one", "a", "three", "c"]
        assert [c.summary for c in final.compactions] == ["one, a"]
    finally:
        await store.close()


async def test_a_fork_keeps_the_compactions_of_the_part_it_copies(tmp_path: Path) -> None:
    from rhema_lsp.engine import Compaction

    store = await SessionStore.open(tmp_path)
    try:
        info = await store.create("t")
        session = Session(history=[])
        for number, (prompt, answer) in enumerate((("one", "a"), ("two", "b"), ("three", "c")), 1):
            session.history.append(Message.user(prompt))
            await store.commit(info.id, session, turn=TurnStart(number, prompt))
            session.history.append(Message.assistant(answer))
            await store.commit(info.id, session)
            if number == 1:
                session.compactions.append(Compaction(upto=2, summary="one, a"))
            if number == 2:
                session.compactions.append(Compaction(upto=4, summary="one, a, two, b"))
            await store.commit(info.id, session)

        at_three = await store.fork(info.id, 3)  # turns 1 and 2: both summaries apply
        forked = await store.load(at_three.id)
        assert [m.text for m in forked.history] == ["one", "a", "two", "b"]
        assert [c.summary for c in forked.compactions] == ["one, a", "one, a, two, b"]
        at_two = await store.fork(info.id, 2)  # turn 1 only: the later summary is ahead of it
        assert [c.summary for c in (await store.load(at_two.id)).compactions] == ["one, a"]

        # The fork's own commits line up after the copied records.
        forked.history.append(Message.user("four"))
        await store.commit(at_three.id, forked, turn=TurnStart(3, "four"))
        forked.compactions.append(Compaction(upto=5, summary="all"))
        await store.commit(at_three.id, forked)
        again = await store.load(at_three.id)
        assert [c.summary for c in again.compactions][-1] == "all"
        assert len((await store.load(info.id)).compactions) == 2  # the original is untouched
    finally:
        await store.close()
