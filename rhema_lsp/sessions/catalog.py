"""A folder's sessions as rows: created, listed, looked up, forked,
stamped when a turn ends, deleted.

:class:`SessionCatalog` is the part of
:class:`~rhema_lsp.sessions.store.SessionStore` that works on the
``sessions`` table (and, for a new session's first prompt or a fork, the
rows that come with it); the store adds the histories' commits, the leases
and resume. The rules it keeps: a session is created with its first
prompt in one transaction (no crash leaves a session without the prompt
that made it); a fork copies, never moves; a session held by a live lease
is not deleted; a listing says ``running`` only for a live lease.
"""

from __future__ import annotations

import builtins
import secrets
import sqlite3
from pathlib import Path

from rhema_lsp.engine import Message
from rhema_lsp.sessions.database import Database
from rhema_lsp.sessions.errors import UnknownSessionError
from rhema_lsp.sessions.fork import copy_session
from rhema_lsp.sessions.images import stored_body
from rhema_lsp.sessions.leases import LeaseRow, is_live, refuse_if_live
from rhema_lsp.sessions.records import SessionInfo, TurnStart, now_iso, title_from_prompt
from rhema_lsp.sessions.turn_numbers import end_turn, start_turn

__all__ = ["SessionCatalog"]

_INFO_COLUMNS = (
    "SELECT s.id, s.title, s.created_at, s.updated_at, s.model, s.turns, "
    "l.holder, l.pid, l.host, l.heartbeat_at FROM sessions AS s "
    "LEFT JOIN leases AS l ON l.session_id = s.id"
)


class SessionCatalog:
    """The ``sessions`` rows of one folder's store (see the module docstring)."""

    folder: Path
    lease_ttl: float
    _db: Database
    _real_folder: str
    _committed: dict[str, int]
    _compacted: dict[str, int]
    _compaction_rows: dict[str, int]

    def _event(self, name: str) -> None:
        """A persistence point, for the store's test instrumentation."""

    def _info(self, row: tuple[object, ...]) -> SessionInfo:
        lease = None
        if row[6] is not None:
            lease = LeaseRow(
                holder=str(row[6]),
                pid=int(str(row[7])),
                host=str(row[8]),
                heartbeat_at=float(str(row[9])),
            )
        return SessionInfo(
            id=str(row[0]),
            folder=str(self.folder),
            title=str(row[1]),
            created_at=str(row[2]),
            updated_at=str(row[3]),
            model=str(row[4]),
            turns=int(str(row[5])),
            running=lease is not None and is_live(lease, ttl=self.lease_ttl),
        )

    async def create(
        self,
        title: str,
        *,
        model: str = "",
        session_id: str | None = None,
        first: Message | None = None,
    ) -> SessionInfo:
        """Start a session titled after ``title`` (the first prompt, cut to
        one line of at most 80 characters): empty, or holding ``first`` as
        the prompt of its turn 1, in the same transaction (so no crash
        leaves a session without the prompt that made it).

        Parameters
        ----------
        session_id
            The id to give it (a front door that handed out an id before the
            first prompt, as ACP's ``session/new`` does); a fresh one if omitted.

        Raises
        ------
        SessionStoreError
            ``session_id`` is already taken.
        """
        if session_id is None:
            session_id = secrets.token_hex(8)
        stamp = now_iso()
        clean = title_from_prompt(title)
        turns = 0 if first is None else 1

        def insert(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO sessions (id, folder, title, created_at, updated_at, model, turns) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (session_id, self._real_folder, clean, stamp, stamp, model, turns),
            )
            if first is not None:
                conn.execute(
                    "INSERT INTO messages (session_id, seq, body) VALUES (?, 0, ?)",
                    (session_id, stored_body(conn, first)),
                )
                start_turn(conn, session_id, TurnStart(1, clean), 0)
                self._event("commit.written")

        if first is not None:
            self._event("commit.begin")
        await self._db.write("create a session", insert, durable=first is not None)
        self._committed[session_id] = turns
        if first is not None:
            self._event("commit.done")
        return SessionInfo(
            id=session_id,
            folder=str(self.folder),
            title=clean,
            created_at=stamp,
            updated_at=stamp,
            model=model,
            turns=turns,
            running=False,
        )

    async def list(self) -> builtins.list[SessionInfo]:
        """Every session of the folder, most recently updated first."""

        def select(conn: sqlite3.Connection) -> builtins.list[SessionInfo]:
            rows = conn.execute(
                _INFO_COLUMNS + " ORDER BY s.updated_at DESC, s.created_at DESC, s.id"
            ).fetchall()
            return [self._info(tuple(row)) for row in rows]

        return await self._db.read("list sessions", select)

    async def info(self, session_id: str) -> SessionInfo:
        """One session's listing entry.

        Raises
        ------
        UnknownSessionError
            No such session.
        """

        def select(conn: sqlite3.Connection) -> SessionInfo:
            row = conn.execute(_INFO_COLUMNS + " WHERE s.id = ?", (session_id,)).fetchone()
            if row is None:
                raise UnknownSessionError(session_id, str(self.folder))
            return self._info(tuple(row))

        return await self._db.read(f"read session {session_id}", select)

    async def fork(self, session_id: str, turn: int | None = None) -> SessionInfo:
        """A new session holding ``session_id``'s conversation before ``turn``
        (none: all of it), with those turns' checkpoints; the original is
        untouched.

        Raises
        ------
        UnknownSessionError
            No such session.
        SessionStoreError
            The session has no such turn in its conversation.
        """
        new_id = secrets.token_hex(8)
        stamp = now_iso()

        def copy(conn: sqlite3.Connection) -> SessionInfo:
            fork = copy_session(conn, session_id, new_id, turn, self._real_folder, stamp)
            self._committed[new_id] = fork.messages
            self._compacted[new_id] = self._compaction_rows[new_id] = fork.compactions
            return SessionInfo(
                id=new_id,
                folder=str(self.folder),
                title=fork.title,
                created_at=stamp,
                updated_at=stamp,
                model=fork.model,
                turns=fork.turns,
                running=False,
            )

        return await self._db.write(f"fork session {session_id}", copy)

    async def record_turn(
        self, session_id: str, turn: int | None = None, *, model: str | None = None
    ) -> None:
        """Record that ``turn`` ended (a turn never recorded so was cut short:
        it is listed as interrupted), stamp ``updated_at`` and, when given,
        the model.

        Raises
        ------
        UnknownSessionError
            No such session.
        """
        stamp = now_iso()

        def update(conn: sqlite3.Connection) -> None:
            cursor = conn.execute(
                "UPDATE sessions SET updated_at = ?, model = coalesce(?, model) WHERE id = ?",
                (stamp, model, session_id),
            )
            if cursor.rowcount != 1:
                raise UnknownSessionError(session_id, str(self.folder))
            if turn is not None:
                end_turn(conn, session_id, turn, stamp)

        await self._db.write(f"record a turn of session {session_id}", update)

    async def delete(self, session_id: str) -> bool:
        """Delete a session and its messages; ``False`` when there was none.

        Raises
        ------
        SessionBusyError
            A live lease holds it (here or in another window): cancel that
            run first.
        """

        def remove(conn: sqlite3.Connection) -> bool:
            refuse_if_live(conn, session_id, ttl=self.lease_ttl)
            cursor = conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
            return cursor.rowcount == 1

        deleted = await self._db.write(f"delete session {session_id}", remove)
        self._committed.pop(session_id, None)
        self._compacted.pop(session_id, None)
        self._compaction_rows.pop(session_id, None)
        return deleted
