"""Appending what is new in a session, in one transaction, or refusing to.

A store remembers what it committed of each session (:class:`Committed`).
:func:`append_new` checks that memory against the rows stored before it
writes: another process that appended in between, or a copy whose history
was rewritten, is a :class:`~rhema_lsp.sessions.errors.SessionConflictError`
and nothing is written. The cost follows the new messages, not the history:
only the stored count, the rewind ranges and (the first time) the last stored
message are read.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from pydantic import ValidationError

from rhema_lsp.engine import Message, Session
from rhema_lsp.sessions.errors import SessionConflictError, UnknownSessionError
from rhema_lsp.sessions.images import loaded_message, stored_body
from rhema_lsp.sessions.records import TurnStart, now_iso
from rhema_lsp.sessions.timeline import dropped, last_live_seq, live_count, next_seq
from rhema_lsp.sessions.turn_numbers import start_turn

__all__ = ["Committed", "append_new", "session_exists"]


@dataclass(frozen=True)
class Committed:
    """What a store has committed (or loaded) of one session.

    Attributes
    ----------
    messages
        Messages of the live history; ``None`` when not known here.
    compaction_rows
        Compaction rows stored, rewound ones included; ``None`` when not known.
    compactions_kept
        How many of the copy's compactions are stored.
    """

    messages: int | None
    compaction_rows: int | None
    compactions_kept: int


def session_exists(conn: sqlite3.Connection, session_id: str) -> bool:
    """Whether the store has a session ``session_id``."""
    return conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is not None


def append_new(
    conn: sqlite3.Connection,
    session_id: str,
    session: Session,
    known: Committed,
    turn: TurnStart | None,
    *,
    folder: str,
) -> Committed:
    """Insert the messages and compactions of ``session`` beyond ``known``.

    ``turn`` records that a turn starts at the last message (its prompt).
    Returns what is committed once the transaction commits.

    Raises
    ------
    UnknownSessionError
        The session was deleted.
    SessionConflictError
        The stored history is not a prefix of ``session.history``.
    """
    history = session.history
    count = len(history)
    compactions = session.compactions
    if not session_exists(conn, session_id):
        raise UnknownSessionError(session_id, folder)
    total = next_seq(conn, session_id)
    ranges = dropped(conn, session_id)
    stored = live_count(total, ranges)
    if known.messages is not None and known.messages != stored:
        raise SessionConflictError(
            session_id, f"{stored} messages stored, {known.messages} committed from here"
        )
    if stored > count:
        raise SessionConflictError(session_id, f"{stored} messages stored, this copy has {count}")
    if known.messages is None and stored:
        tail = last_live_seq(total, ranges)
        assert tail is not None
        _check_tail(conn, session_id, tail, history[stored - 1])
    conn.executemany(
        "INSERT INTO messages (session_id, seq, body) VALUES (?, ?, ?)",
        [
            (session_id, total + index - stored, stored_body(conn, history[index]))
            for index in range(stored, count)
        ],
    )
    if turn is not None and count > stored:
        start_turn(conn, session_id, turn, total + count - 1 - stored)
    # Compactions: rows are numbered apart from the copy's list, which
    # leaves out those a conversation rewind made obsolete.
    (have,) = conn.execute(
        "SELECT count(*) FROM compactions WHERE session_id = ?", (session_id,)
    ).fetchone()
    have = int(have)
    known_rows, kept = known.compaction_rows, known.compactions_kept
    if known_rows is None:  # not loaded here: the copy holds every stored row
        known_rows = kept = have
    if have != known_rows or kept > len(compactions):
        raise SessionConflictError(
            session_id,
            f"{have} compactions stored, {known_rows} known here, this copy has {len(compactions)}",
        )
    conn.executemany(
        "INSERT INTO compactions (session_id, seq, body) VALUES (?, ?, ?)",
        [
            (session_id, have + offset, record.model_dump_json())
            for offset, record in enumerate(compactions[kept:])
        ],
    )
    conn.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (now_iso(), session_id))
    return Committed(
        messages=count,
        compaction_rows=have + len(compactions) - kept,
        compactions_kept=len(compactions),
    )


def _check_tail(conn: sqlite3.Connection, session_id: str, seq: int, mine: Message) -> None:
    (body,) = conn.execute(
        "SELECT body FROM messages WHERE session_id = ? AND seq = ?", (session_id, seq)
    ).fetchone()
    try:
        same = loaded_message(conn, body) == mine
    except ValidationError:
        same = False
    if not same:
        raise SessionConflictError(session_id, f"stored message {seq} differs from this copy's")
