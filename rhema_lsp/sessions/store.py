"""A workspace folder's sessions, persisted append-only through the engine's seams.

Each message of a session is one row (the engine's JSON, numbered from 0).
:meth:`SessionStore.commit` appends what is new since the last commit in
one transaction: the store remembers how many messages it committed per
session and checks that count against the stored maximum sequence number,
so the cost follows the new messages, not the history, and an append by
another process is detected (:class:`SessionConflictError`) instead of
interleaved (the transaction is :mod:`rhema_lsp.sessions.append`; reading
back, :mod:`rhema_lsp.sessions.reading`). :meth:`SessionStore.commit_hook` is the engine's
commit-before-execute (durable: ``synchronous=FULL``); the server also
commits the user's input before the first model call and checkpoints after
each round. :meth:`SessionStore.open_and_resume` completes a history a
crash left mid-round (safe calls re-run, unsafe ones reported interrupted)
and commits it before the session is used.

A session's row (created, listed, forked, stamped, deleted) is
:class:`~rhema_lsp.sessions.catalog.SessionCatalog`'s, which the store is.

Compactions are appended the same way (their own rows, numbered from 0,
committed with the messages): a compaction never rewrites a message, so the
whole history stays readable, while a loaded :class:`~rhema_lsp.engine.Session`
carries its compactions and so sends the model the compacted view.

Test instrumentation: ``on_event`` (see :meth:`SessionStore.open`) is
called with ``"commit.begin"``, ``"commit.written"`` (rows inserted, not yet
committed) and ``"commit.done"`` around every commit of messages (a session
created with its first prompt included); crash tests kill the process there. It is
``None`` in production.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
from collections.abc import Callable
from pathlib import Path

import anyio.to_thread

from rhema_lsp.engine import (
    CommitHook,
    EventSink,
    ResumeReport,
    Session,
    ToolContext,
    ToolResolver,
    pending_calls,
    resume,
)
from rhema_lsp.sessions.append import Committed, append_new
from rhema_lsp.sessions.catalog import SessionCatalog
from rhema_lsp.sessions.checkpoints import Checkpoints
from rhema_lsp.sessions.choices import SessionChoices
from rhema_lsp.sessions.database import Database
from rhema_lsp.sessions.errors import (
    SessionBusyError,
)
from rhema_lsp.sessions.leases import Lease
from rhema_lsp.sessions.location import StoreLocation, database_path
from rhema_lsp.sessions.reading import read_session
from rhema_lsp.sessions.records import TurnStart
from rhema_lsp.sessions.timeline import (
    dropped,
    live_count,
    next_seq,
)
from rhema_lsp.sessions.turn_numbers import TurnNumbers

__all__ = ["DEFAULT_LEASE_TTL", "SessionStore", "StoreEvent"]

DEFAULT_LEASE_TTL = 30.0
"""Seconds without a heartbeat after which a lease counts as abandoned."""

StoreEvent = Callable[[str], None]
"""Receives the store's persistence points by name (test instrumentation)."""


class SessionStore(SessionCatalog):
    """The sessions of one workspace folder; open with :meth:`open`.

    Attributes
    ----------
    folder
        The workspace folder, as given.
    path
        The database file.
    notice
        Set when a corrupt store was moved aside on open (says where it
        went), or when the workspace's ``.rhema`` could not hold the store
        safely (says where it is instead): for the user. ``None`` otherwise.
    holder
        This store's lease-holder id (unique per open store).
    checkpoints
        What each turn changed in the workspace, and the rewinds.
    turn_numbers
        The turns' numbers: reserved when a turn starts, never reused.
    choices
        Each session's mode, model and thinking level, as the user left them.
    """

    def __init__(
        self,
        db: Database,
        folder: Path,
        *,
        lease_ttl: float,
        on_event: StoreEvent | None,
    ) -> None:
        self.folder = folder
        self.path = db.path
        self.notice = db.notice
        self.holder = secrets.token_hex(8)
        self.lease_ttl = lease_ttl
        self._db = db
        self._on_event = on_event
        self._real_folder = os.path.realpath(folder)
        self._committed: dict[str, int] = {}
        self._compacted: dict[str, int] = {}
        self._compaction_rows: dict[str, int] = {}
        self._held: dict[str, Lease] = {}
        self.checkpoints = Checkpoints(db, self._committed)
        self.turn_numbers = TurnNumbers(db, str(folder))
        self.choices = SessionChoices(db, str(folder))

    @classmethod
    async def open(
        cls,
        folder: Path,
        *,
        location: StoreLocation = "workspace",
        state_dir: Path | None = None,
        lease_ttl: float = DEFAULT_LEASE_TTL,
        on_event: StoreEvent | None = None,
    ) -> SessionStore:
        """Open (creating or migrating) the store of ``folder``.

        Parameters
        ----------
        folder
            The workspace folder.
        location
            ``"workspace"``: ``<folder>/.rhema/sessions.sqlite3``; ``"user"``:
            the user's state directory, keyed by the folder's real path.
        state_dir
            Replaces the user state directory (tests).
        lease_ttl
            Seconds after which a silent lease holder is presumed crashed.
        on_event
            Test instrumentation, called synchronously (possibly from a
            worker thread) at each persistence point of a commit.

        Raises
        ------
        SessionStoreError
            The store cannot be created or opened. A corrupt one is not an
            error: it is moved aside and :attr:`notice` says so.
        """
        place = await anyio.to_thread.run_sync(database_path, folder, location, state_dir)
        db = await Database.open(place.path)
        store = cls(db, folder, lease_ttl=lease_ttl, on_event=on_event)
        notices = [notice for notice in (place.notice, db.notice) if notice]
        store.notice = " ".join(notices) or None
        return store

    def _event(self, name: str) -> None:
        if self._on_event is not None:
            self._on_event(name)

    async def load(self, session_id: str) -> Session:
        """The stored history of ``session_id``.

        Raises
        ------
        UnknownSessionError
            No such session.
        SessionStoreError
            A stored message is missing or unreadable.
        """

        def select(conn: sqlite3.Connection) -> Session:
            stored = read_session(conn, session_id, folder=str(self.folder), path=self.path)
            self._committed[session_id] = len(stored.session.history)
            self._compacted[session_id] = len(stored.session.compactions)
            self._compaction_rows[session_id] = stored.compaction_rows
            return stored.session

        return await self._db.read(f"load session {session_id}", select)

    def commit_hook(self, session_id: str) -> CommitHook:
        """The engine's commit-before-execute for ``session_id``: a durable
        :meth:`commit` of what is new."""

        async def hook(session: Session) -> None:
            await self.commit(session_id, session, durable=True)

        return hook

    async def commit(
        self,
        session_id: str,
        session: Session,
        *,
        durable: bool = True,
        turn: TurnStart | None = None,
    ) -> None:
        """Append the messages of ``session`` that are new since the last
        commit, in one transaction.

        ``durable`` commits with ``synchronous=FULL`` (on disk before this
        returns); without it the commit survives a process crash but not a
        power loss (see :mod:`rhema_lsp.sessions.database`). ``turn`` records
        that a turn starts at the last message committed (its prompt), so it
        can be rewound to later.

        Raises
        ------
        UnknownSessionError
            The session was deleted.
        SessionConflictError
            The stored history is not a prefix of ``session.history``
            (another process appended, or the copy was rewritten); nothing
            was written.
        """
        if (
            self._committed.get(session_id) == len(session.history)
            and self._compacted.get(session_id) == len(session.compactions)
            and turn is None
        ):
            return
        self._event("commit.begin")

        known = Committed(
            messages=self._committed.get(session_id),
            compaction_rows=self._compaction_rows.get(session_id),
            compactions_kept=self._compacted.get(session_id, 0),
        )

        def append(conn: sqlite3.Connection) -> Committed:
            done = append_new(conn, session_id, session, known, turn, folder=str(self.folder))
            self._event("commit.written")
            return done

        done = await self._db.write(f"commit session {session_id}", append, durable=durable)
        assert done.messages is not None and done.compaction_rows is not None
        self._committed[session_id] = done.messages
        self._compaction_rows[session_id] = done.compaction_rows
        self._compacted[session_id] = done.compactions_kept
        self._event("commit.done")

    def lease(self, session_id: str) -> Lease:
        """The right to run ``session_id``, as an async context manager.

        Entering raises :class:`SessionBusyError` when another live holder
        (another window, or a run of this store) has it; an expired lease
        (no heartbeat for ``lease_ttl`` seconds, or its process gone on this
        host) is taken over.
        """
        return Lease(
            self._db,
            session_id,
            folder=str(self.folder),
            holder=self.holder,
            ttl=self.lease_ttl,
            held=self._held,
        )

    async def open_and_resume(
        self,
        session_id: str,
        resolver: ToolResolver | None,
        sink: EventSink,
        ctx: ToolContext,
    ) -> tuple[Session, ResumeReport]:
        """Load a session and complete a round a crash left open.

        Pending ``safe`` calls are re-run and ``unsafe`` ones reported
        interrupted (the engine's :func:`~rhema_lsp.engine.resume`); the
        completed history is committed before it is returned. Resuming
        takes the session's lease unless this store already holds it; when
        another live holder has it, its calls are running there, not lost:
        the stored history is returned as is with an empty report.

        Raises
        ------
        UnknownSessionError
            No such session.
        SessionStoreError
            The session cannot be read or the completion not committed.
        """
        session = await self.load(session_id)
        if not pending_calls(session):
            return session, ResumeReport()
        if session_id in self._held:
            return session, await self._resume(session_id, session, resolver, sink, ctx)
        try:
            async with self.lease(session_id):
                stored = await self._db.read(
                    f"read session {session_id}", lambda conn: _stored_count(conn, session_id)
                )
                if stored != len(session.history):
                    session = await self.load(session_id)
                report = await self._resume(session_id, session, resolver, sink, ctx)
        except SessionBusyError:
            return session, ResumeReport()
        return session, report

    async def _resume(
        self,
        session_id: str,
        session: Session,
        resolver: ToolResolver | None,
        sink: EventSink,
        ctx: ToolContext,
    ) -> ResumeReport:
        report = await resume(session, resolver, sink, ctx)
        if report.changed:
            await self.commit(session_id, session, durable=True)
        return report

    async def close(self) -> None:
        """Close the database (idempotent); the store is unusable afterwards."""
        await self._db.close()


def _stored_count(conn: sqlite3.Connection, session_id: str) -> int:
    """How many messages the live history holds."""
    return live_count(next_seq(conn, session_id), dropped(conn, session_id))
