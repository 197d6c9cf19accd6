"""Which stored messages are the live conversation, and where each turn starts.

Messages are never deleted or rewritten. A conversation rewind appends a
``rewinds`` row dropping the sequence numbers ``[from_seq, to_seq)`` (from the
rewound turn's first message to everything stored then) from the live
history; later messages get new sequence numbers after them. The live
history is every stored message outside every dropped range, in order, so
the old turns stay readable and a rewind can itself be seen in the log.

A compaction summarises ``history[:upto]`` of the live history it was made
on. A conversation rewind records how many messages it kept and how many
compactions were stored then; an earlier compaction reaching past what was
kept is obsolete (:func:`compaction_rewound`), whatever the history grows to
later.

``turns`` rows say where each turn's messages start (its ``first_seq``).
Sessions stored before checkpoints existed have none: their turns are
counted from the user's prompts (:func:`derived_starts`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import ValidationError

from rhema_lsp.engine import Compaction
from rhema_lsp.sessions.errors import SessionStoreError

__all__ = [
    "Ranges",
    "TurnRow",
    "compaction_cuts",
    "compaction_rewound",
    "derived_starts",
    "dropped",
    "last_live_seq",
    "live_count",
    "next_seq",
    "seq_is_live",
    "turn_rows",
]

Ranges = list[tuple[int, int]]
"""Dropped ``[from_seq, to_seq)`` ranges, in the order they were recorded."""


@dataclass(frozen=True, slots=True)
class TurnRow:
    """Where a turn starts, what it was asked, and whether it ended (a turn
    that did not was cut short by a crash, or is running)."""

    turn: int
    first_seq: int
    title: str
    created_at: str
    ended: bool


def dropped(conn: sqlite3.Connection, session_id: str) -> Ranges:
    """The session's dropped ranges."""
    rows = conn.execute(
        "SELECT from_seq, to_seq FROM rewinds WHERE session_id = ? AND from_seq IS NOT NULL "
        "ORDER BY id",
        (session_id,),
    ).fetchall()
    return [(int(start), int(end)) for start, end in rows]


def next_seq(conn: sqlite3.Connection, session_id: str) -> int:
    """The sequence number the next stored message gets."""
    (top,) = conn.execute(
        "SELECT max(seq) FROM messages WHERE session_id = ?", (session_id,)
    ).fetchone()
    return 0 if top is None else int(top) + 1


def seq_is_live(seq: int, ranges: Ranges) -> bool:
    """Whether message ``seq`` is in the live history."""
    return not any(start <= seq < end for start, end in ranges)


def live_count(total: int, ranges: Ranges) -> int:
    """How many of the messages ``0 .. total - 1`` are live."""
    if not ranges:
        return total
    merged: list[list[int]] = []
    for start, end in sorted(ranges):
        end = min(end, total)
        if start >= end:
            continue
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return total - sum(end - start for start, end in merged)


def last_live_seq(total: int, ranges: Ranges) -> int | None:
    """The highest live sequence number below ``total``."""
    seq = total - 1
    while seq >= 0:
        cover = next((end for start, end in ranges if start <= seq < end), None)
        if cover is None:
            return seq
        seq = min(start for start, end in ranges if start <= seq < end) - 1
    return None


def turn_rows(conn: sqlite3.Connection, session_id: str) -> list[TurnRow]:
    """The recorded turns of a session, in order."""
    rows = conn.execute(
        "SELECT turn, first_seq, title, created_at, ended_at IS NOT NULL FROM turns "
        "WHERE session_id = ? ORDER BY turn",
        (session_id,),
    ).fetchall()
    return [
        TurnRow(int(t), int(s), str(title), str(at), bool(ended)) for t, s, title, at, ended in rows
    ]


def derived_starts(user_seqs: Sequence[int]) -> dict[int, int]:
    """Turn number -> first sequence number for a session stored before
    ``turns`` were recorded: turn *k* starts at the *k*-th user prompt."""
    return {index + 1: seq for index, seq in enumerate(user_seqs)}


def compaction_cuts(conn: sqlite3.Connection, session_id: str) -> list[tuple[int, int]]:
    """Per conversation rewind: the compactions stored before it, and the
    messages it kept."""
    rows = conn.execute(
        "SELECT compactions, kept FROM rewinds WHERE session_id = ? AND kept IS NOT NULL "
        "ORDER BY id",
        (session_id,),
    ).fetchall()
    return [(int(count), int(kept)) for count, kept in rows]


def compaction_rewound(number: int, record: Compaction, cuts: list[tuple[int, int]]) -> bool:
    """Whether compaction ``number`` summarised messages a later conversation
    rewind dropped."""
    return any(number < count and record.upto > kept for count, kept in cuts)


def read_compaction(session_id: str, number: int, body: str) -> Compaction:
    """Stored compaction ``number`` of ``session_id``; damage is a clear error."""
    try:
        return Compaction.model_validate_json(body)
    except ValidationError as exc:
        raise SessionStoreError(
            f"compaction {number} of session {session_id} cannot be read "
            f"({exc.error_count()} problems); delete the session to go on"
        ) from exc
