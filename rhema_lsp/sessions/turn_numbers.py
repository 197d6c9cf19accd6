"""Turn numbers: reserved when a turn starts, never given out twice.

A prompt's turn gets its number before anything of it is stored
(:meth:`TurnNumbers.reserve`, durable): one above every number the session's
rows use (its ``turns`` count, its ``turns`` rows, its ``turn_files``), so a
turn a crash cut short keeps its number, and stores written before
reservations (which counted only finished turns) are read right. The
prompt's commit records the turn (:func:`start_turn`): a ``turns`` row is
inserted once, never replaced. A turn whose prompt was never stored gives
its number back (:meth:`TurnNumbers.release`), only while nothing is stored
under it and no later number was given out. :func:`end_turn` stamps a
turn's end; a turn without one that is not running was cut short.
"""

from __future__ import annotations

import sqlite3

from rhema_lsp.sessions.database import Database
from rhema_lsp.sessions.errors import SessionConflictError, UnknownSessionError
from rhema_lsp.sessions.records import TurnStart, now_iso

__all__ = ["TurnNumbers", "end_turn", "last_turn", "start_turn"]


def _exists(conn: sqlite3.Connection, session_id: str) -> bool:
    return conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is not None


def last_turn(conn: sqlite3.Connection, session_id: str) -> int:
    """The highest turn number anything of the session is stored under (or
    reserved: the session's ``turns``)."""
    row = conn.execute(
        "SELECT max(t) FROM (SELECT turns AS t FROM sessions WHERE id = ? "
        "UNION ALL SELECT max(turn) FROM turns WHERE session_id = ? "
        "UNION ALL SELECT max(turn) FROM turn_files WHERE session_id = ?)",
        (session_id, session_id, session_id),
    ).fetchone()
    return int(row[0] or 0)


def start_turn(conn: sqlite3.Connection, session_id: str, turn: TurnStart, first_seq: int) -> None:
    """Record that ``turn`` starts at message ``first_seq`` and count it as
    reserved; a turn is recorded once, never replaced.

    Raises
    ------
    SessionConflictError
        The turn is recorded already (another window ran a turn of that
        number meanwhile); nothing is written.
    """
    taken = conn.execute(
        "SELECT 1 FROM turns WHERE session_id = ? AND turn = ?", (session_id, turn.turn)
    ).fetchone()
    if taken is not None:
        raise SessionConflictError(session_id, f"turn {turn.turn} was started already")
    conn.execute(
        "INSERT INTO turns (session_id, turn, first_seq, title, created_at) VALUES (?, ?, ?, ?, ?)",
        (session_id, turn.turn, first_seq, turn.title, now_iso()),
    )
    conn.execute("UPDATE sessions SET turns = max(turns, ?) WHERE id = ?", (turn.turn, session_id))


def end_turn(conn: sqlite3.Connection, session_id: str, turn: int, stamp: str) -> None:
    """Stamp ``turn``'s end (once)."""
    conn.execute(
        "UPDATE turns SET ended_at = ? WHERE session_id = ? AND turn = ? AND ended_at IS NULL",
        (stamp, session_id, turn),
    )


class TurnNumbers:
    """The turn numbers of one store (``store.turn_numbers``)."""

    def __init__(self, db: Database, folder: str) -> None:
        self._db = db
        self._folder = folder

    async def reserve(self, session_id: str) -> int:
        """The number of a new turn of ``session_id``, reserved durably.

        Raises
        ------
        UnknownSessionError
            No such session.
        """

        def reserve(conn: sqlite3.Connection) -> int:
            if not _exists(conn, session_id):
                raise UnknownSessionError(session_id, self._folder)
            number = last_turn(conn, session_id) + 1
            conn.execute("UPDATE sessions SET turns = ? WHERE id = ?", (number, session_id))
            return number

        return await self._db.write(
            f"reserve a turn of session {session_id}", reserve, durable=True
        )

    async def release(self, session_id: str, turn: int) -> bool:
        """Give back ``turn``'s number when nothing was stored under it and
        it is still the last one; whether it was given back."""

        def release(conn: sqlite3.Connection) -> bool:
            cursor = conn.execute(
                "UPDATE sessions SET turns = turns - 1 WHERE id = ? AND turns = ? "
                "AND NOT EXISTS (SELECT 1 FROM turns WHERE session_id = ? AND turn = ?) "
                "AND NOT EXISTS (SELECT 1 FROM turn_files WHERE session_id = ? AND turn = ?)",
                (session_id, turn, session_id, turn, session_id, turn),
            )
            return cursor.rowcount == 1

        return await self._db.write(f"release turn {turn} of session {session_id}", release)

    async def started(self, session_id: str, turn: int) -> bool:
        """Whether ``turn``'s prompt is stored (its ``TurnStart``)."""

        def select(conn: sqlite3.Connection) -> bool:
            row = conn.execute(
                "SELECT 1 FROM turns WHERE session_id = ? AND turn = ?", (session_id, turn)
            ).fetchone()
            return row is not None

        return await self._db.read(f"read session {session_id}", select)

    async def current(self, session_id: str) -> int:
        """The last turn whose prompt is stored (what a continuation goes on
        with; 0 before the first).

        Raises
        ------
        UnknownSessionError
            No such session.
        """

        def select(conn: sqlite3.Connection) -> int:
            row = conn.execute(
                "SELECT coalesce((SELECT max(turn) FROM turns WHERE session_id = ?), turns) "
                "FROM sessions WHERE id = ?",
                (session_id, session_id),
            ).fetchone()
            if row is None:
                raise UnknownSessionError(session_id, self._folder)
            return int(row[0])

        return await self._db.read(f"read session {session_id}", select)
