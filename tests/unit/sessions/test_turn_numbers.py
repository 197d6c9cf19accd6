"""Crash-consistent turns in a real SQLite store: a turn's number is reserved
before anything is stored under it and never given out again, a turn is
recorded once and never replaced, a session is created with its first
prompt in one transaction, and a change whose post-image was never recorded
is still listed and rewindable (what the file holds is taken as the
agent's). Each test sets up the rows a kill leaves behind."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from rhema_lsp.engine import Message, Session
from rhema_lsp.sessions import (
    SessionConflictError,
    SessionStore,
    SessionStoreError,
    TurnStart,
    content_hash,
)
from rhema_lsp.sessions.schema import SCHEMA_VERSION, migrate


async def _prompted(store: SessionStore, text: str, session: str | None = None) -> tuple[str, int]:
    """A turn started as the pipeline starts one: reserved, then its prompt."""
    if session is None:
        info = await store.create(text, first=Message.user(text))
        return info.id, 1
    turn = await store.turn_numbers.reserve(session)
    loaded = await store.load(session)
    loaded.history.append(Message.user(text))
    await store.commit(session, loaded, turn=TurnStart(turn, text))
    return session, turn


async def test_a_turn_cut_short_keeps_its_number_and_record(store: SessionStore) -> None:
    session, one = await _prompted(store, "first")
    await store.record_turn(session, one)
    _, two = await _prompted(store, "second", session)  # killed: never recorded
    await store.checkpoints.pre_image(session, two, "file:///w/b.py", b"b", clean=True)

    reopened = await SessionStore.open(store.folder)
    try:
        three = await reopened.turn_numbers.reserve(session)
        turns = await reopened.checkpoints.turns(session)
    finally:
        await reopened.close()

    assert (one, two, three) == (1, 2, 3)
    assert [(t.turn, t.title, t.ended) for t in turns] == [(1, "first", True), (2, "second", False)]
    assert [f.uri for f in turns[1].files] == ["file:///w/b.py"]


async def test_a_turn_is_recorded_once_never_replaced(store: SessionStore) -> None:
    session, _ = await _prompted(store, "first")
    loaded = await store.load(session)
    loaded.history.append(Message.user("again"))
    with pytest.raises(SessionConflictError, match="turn 1 was started already"):
        await store.commit(session, loaded, turn=TurnStart(1, "again"))
    assert (await store.load(session)).history == [Message.user("first")]  # nothing written
    assert [t.title for t in await store.checkpoints.turns(session)] == ["first"]


async def test_an_old_store_s_recorded_count_does_not_hide_a_crashed_turn(
    store: SessionStore,
) -> None:
    """Stores written before reservations counted only recorded turns."""
    session, _ = await _prompted(store, "first")
    _, two = await _prompted(store, "second", session)
    with sqlite3.connect(store.path) as conn:
        conn.execute("UPDATE sessions SET turns = 1 WHERE id = ?", (session,))
    assert two == 2
    assert await store.turn_numbers.reserve(session) == 3


async def test_a_reservation_nothing_was_stored_under_is_given_back(store: SessionStore) -> None:
    session, _ = await _prompted(store, "first")
    two = await store.turn_numbers.reserve(session)
    assert await store.turn_numbers.release(session, two)
    assert await store.turn_numbers.reserve(session) == 2
    await store.checkpoints.pre_image(session, 2, "file:///w/a.py", b"a", clean=True)
    assert not await store.turn_numbers.release(session, 2)  # something is stored under it
    assert await store.turn_numbers.reserve(session) == 3
    assert await store.turn_numbers.current(session) == 1  # the last turn with a prompt


async def test_a_session_is_created_with_its_first_prompt_in_one_transaction(
    store: SessionStore,
) -> None:
    info = await store.create("hello there", first=Message.user("hello there"))
    assert info.turns == 1
    assert (await store.load(info.id)).history == [Message.user("hello there")]
    assert await store.turn_numbers.started(info.id, 1)
    # A failing transaction leaves no session at all.
    with pytest.raises(SessionStoreError, match="UNIQUE"):
        await store.create("again", session_id=info.id, first=Message.user("again"))
    assert [s.id for s in await store.list()] == [info.id]
    assert (await store.load(info.id)).history == [Message.user("hello there")]


async def test_a_change_applied_before_a_kill_is_listed_and_rewound_whatever_the_file_holds(
    store: SessionStore,
) -> None:
    session, turn = await _prompted(store, "edit")
    uri = "file:///w/a.py"
    await store.checkpoints.pre_image(session, turn, uri, b"v0", clean=True)
    # killed here: the editor applied the change, its post-image was never recorded

    (change,) = await store.checkpoints.changes(session)
    (plan,) = await store.checkpoints.plan(session, turn)
    assert (change.before, change.known) == (content_hash(b"v0"), False)
    assert (plan.restore, plan.unknown) == (content_hash(b"v0"), True)

    await store.checkpoints.post_image(session, turn, uri, b"v1")
    (plan,) = await store.checkpoints.plan(session, turn)
    assert (plan.expect, plan.unknown) == (content_hash(b"v1"), False)
    # A second change of the same turn is unsettled again until recorded.
    await store.checkpoints.pre_image(session, turn, uri, b"v1", clean=True)
    (plan,) = await store.checkpoints.plan(session, turn)
    assert (plan.restore, plan.unknown) == (content_hash(b"v0"), True)


async def test_turns_and_changes_of_a_version_4_store_count_as_ended_and_known(
    folder: Path,
) -> None:
    path = folder / ".rhema" / "sessions.sqlite3"
    path.parent.mkdir()
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, 4)
    conn.execute(
        "INSERT INTO sessions VALUES ('old', ?, 't', '2020-01-01T00:00:00.000000Z', "
        "'2020-01-01T00:00:00.000000Z', 'm', 1)",
        (str(folder),),
    )
    conn.execute(
        "INSERT INTO messages VALUES ('old', 0, ?)", (Message.user("hi").model_dump_json(),)
    )
    conn.execute("INSERT INTO turns VALUES ('old', 1, 0, 'hi', '2020-01-01T00:00:00.000000Z')")
    conn.execute("INSERT INTO turn_files VALUES ('old', 1, 'file:///w/a.py', NULL, 'x', 1)")
    conn.close()

    store = await SessionStore.open(folder)
    try:
        (turn,) = await store.checkpoints.turns("old")
        assert (turn.ended, [f.known for f in turn.files]) == (True, [True])
        assert await store.turn_numbers.reserve("old") == 2
    finally:
        await store.close()
    with sqlite3.connect(path) as check:
        assert check.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)


async def test_a_fork_keeps_the_turn_states(store: SessionStore) -> None:
    session, one = await _prompted(store, "first")
    await store.record_turn(session, one)
    _, two = await _prompted(store, "second", session)
    await store.checkpoints.pre_image(session, two, "file:///w/a.py", b"a", clean=True)
    fork = await store.fork(session)
    turns = await store.checkpoints.turns(fork.id)
    assert [(t.turn, t.ended, [f.known for f in t.files]) for t in turns] == [
        (1, True, []),
        (2, False, [False]),
    ]
    assert isinstance(await store.load(fork.id), Session)
