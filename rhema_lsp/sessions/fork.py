"""Forking a session: a new session holding a prefix of another's live
conversation.

The fork gets the live messages before the chosen turn (renumbered from 0,
so it has no rewound ranges of its own), the ``turns`` rows of the turns it
keeps, their checkpoints (``turn_files``; the blobs are shared, content
addressed) and the compactions that summarise only what it keeps, so its next
request shows the model the same compacted view. The original is untouched.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from rhema_lsp.sessions.checkpoints import turn_starts
from rhema_lsp.sessions.errors import SessionStoreError, UnknownSessionError
from rhema_lsp.sessions.timeline import (
    compaction_cuts,
    compaction_rewound,
    dropped,
    next_seq,
    read_compaction,
    seq_is_live,
)

__all__ = ["Fork", "copy_session"]


@dataclass(frozen=True, slots=True)
class Fork:
    """What a fork copied: the session's title and model, the turns, live
    messages and compactions it holds."""

    title: str
    model: str
    turns: int
    messages: int
    compactions: int


def copy_session(
    conn: sqlite3.Connection,
    source: str,
    target: str,
    turn: int | None,
    folder: str,
    stamp: str,
) -> Fork:
    """Insert session ``target`` (in ``folder``, created at ``stamp``) holding
    ``source``'s conversation before ``turn`` (``None``: all of it).

    Raises
    ------
    UnknownSessionError
        No session ``source``.
    SessionStoreError
        ``source`` has no such turn in its live conversation.
    """
    row = conn.execute(
        "SELECT title, model, turns FROM sessions WHERE id = ?", (source,)
    ).fetchone()
    if row is None:
        raise UnknownSessionError(source, folder)
    title, model, turns = str(row[0]), str(row[1]), int(row[2])
    starts = turn_starts(conn, source)
    ranges = dropped(conn, source)
    cut, kept_turns = next_seq(conn, source), turns
    if turn is not None:
        if turn not in starts or not seq_is_live(starts[turn], ranges):
            raise SessionStoreError(
                f"session {source} has no turn {turn} in its conversation to fork at"
            )
        cut, kept_turns = starts[turn], turn - 1
    conn.execute(
        "INSERT INTO sessions (id, folder, title, created_at, updated_at, model, turns) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (target, folder, title, stamp, stamp, model, kept_turns),
    )
    renumber: dict[int, int] = {}
    rows = conn.execute(
        "SELECT seq, body FROM messages WHERE session_id = ? AND seq < ? ORDER BY seq",
        (source, cut),
    ).fetchall()
    for seq, body in rows:
        if seq_is_live(int(seq), ranges):
            renumber[int(seq)] = len(renumber)
            conn.execute(
                "INSERT INTO messages (session_id, seq, body) VALUES (?, ?, ?)",
                (target, renumber[int(seq)], body),
            )
    for number, first_seq in starts.items():
        if number <= kept_turns and first_seq in renumber:
            conn.execute(
                "INSERT INTO turns (session_id, turn, first_seq, title, created_at, ended_at) "
                "SELECT ?, turn, ?, title, created_at, ended_at FROM turns "
                "WHERE session_id = ? AND turn = ?",
                (target, renumber[first_seq], source, number),
            )
    conn.execute(
        "INSERT INTO turn_files (session_id, turn, uri, before, after, clean, settled) "
        "SELECT ?, turn, uri, before, after, clean, settled FROM turn_files "
        "WHERE session_id = ? AND turn <= ? ORDER BY rowid",
        (target, source, kept_turns),
    )
    compactions = _copy_compactions(conn, source, target, len(renumber))
    return Fork(title, model, kept_turns, len(renumber), compactions)


def _copy_compactions(conn: sqlite3.Connection, source: str, target: str, messages: int) -> int:
    """Copy to ``target`` the compactions of ``source`` that still apply to
    its first ``messages`` live messages; their count."""
    cuts = compaction_cuts(conn, source)
    rows = conn.execute(
        "SELECT body FROM compactions WHERE session_id = ? ORDER BY seq", (source,)
    ).fetchall()
    copied = 0
    for number, (body,) in enumerate(rows):
        record = read_compaction(source, number, body)
        if record.upto <= messages and not compaction_rewound(number, record, cuts):
            conn.execute(
                "INSERT INTO compactions (session_id, seq, body) VALUES (?, ?, ?)",
                (target, copied, body),
            )
            copied += 1
    return copied
