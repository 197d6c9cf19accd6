"""Run leases: at most one live holder runs a session at a time.

A holder (one :class:`~rhema_lsp.sessions.SessionStore`, so one window) that
runs a session writes a lease row naming itself, its process id and its
host, and renews ``heartbeat_at`` every third of the time-to-live from a
background task the :class:`Lease` owns. Another holder finding a *live*
lease gets :class:`SessionBusyError`; it may still read the session. A lease
is dead, and is taken over, when its heartbeat is older than the
time-to-live (the holder crashed or hung) or when its holder's process is
gone on this host (checked at once, so a crashed window frees its sessions
immediately for windows on the same machine).

Acquire and release are single ``BEGIN IMMEDIATE`` transactions, so two
contenders can never both win.
"""

from __future__ import annotations

import logging
import os
import socket
import sqlite3
import time
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from types import TracebackType

import anyio

from rhema_lsp.sessions.database import Database
from rhema_lsp.sessions.errors import SessionBusyError, SessionStoreError, UnknownSessionError

__all__ = ["HOST", "Lease", "LeaseRow", "is_live", "pid_alive", "read_lease", "refuse_if_live"]

_log = logging.getLogger(__name__)

HOST = socket.gethostname()
"""This machine's name, stamped on leases so pids are only checked locally."""


def pid_alive(pid: int) -> bool:
    """Whether a process with ``pid`` exists on this host."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass(frozen=True, slots=True)
class LeaseRow:
    """One stored lease."""

    holder: str
    pid: int
    host: str
    heartbeat_at: float


def is_live(row: LeaseRow, *, ttl: float, now: float | None = None) -> bool:
    """Whether ``row`` still holds its session: heartbeat within ``ttl``
    seconds and, on this host, its process still running."""
    current = time.time() if now is None else now
    if current - row.heartbeat_at > ttl:
        return False
    return not (row.host == HOST and not pid_alive(row.pid))


def read_lease(conn: sqlite3.Connection, session_id: str) -> LeaseRow | None:
    """The stored lease of ``session_id``, live or not."""
    row = conn.execute(
        "SELECT holder, pid, host, heartbeat_at FROM leases WHERE session_id = ?", (session_id,)
    ).fetchone()
    if row is None:
        return None
    return LeaseRow(holder=row[0], pid=int(row[1]), host=row[2], heartbeat_at=float(row[3]))


def refuse_if_live(conn: sqlite3.Connection, session_id: str, *, ttl: float) -> None:
    """Raise :class:`SessionBusyError` when a live lease holds ``session_id``."""
    current = read_lease(conn, session_id)
    if current is not None and is_live(current, ttl=ttl):
        same = current.host == HOST and current.pid == os.getpid()
        raise SessionBusyError(session_id, current.pid, same_process=same, ttl=ttl)


class Lease:
    """The right to run one session, held for the body of ``async with``.

    Entering acquires it (raising :class:`SessionBusyError` when a live lease
    of another holder exists, :class:`UnknownSessionError` when there is no
    such session) and starts the heartbeat; leaving stops the heartbeat and
    releases it, even on cancellation.

    Attributes
    ----------
    lost
        Set when a heartbeat found the lease taken over (this holder stalled
        past the time-to-live); commits still detect any divergence.
    """

    def __init__(
        self,
        db: Database,
        session_id: str,
        *,
        folder: str,
        holder: str,
        ttl: float,
        held: dict[str, Lease],
    ) -> None:
        self.session_id = session_id
        self.holder = holder
        self.ttl = ttl
        self.lost = False
        self._db = db
        self._folder = folder
        self._held = held
        self._context: AbstractAsyncContextManager[Lease] | None = None

    async def __aenter__(self) -> Lease:
        context = self._hold()
        entered = await context.__aenter__()
        self._context = context
        return entered

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        context, self._context = self._context, None
        if context is None:
            return None
        return await context.__aexit__(exc_type, exc, tb)

    @asynccontextmanager
    async def _hold(self) -> AsyncIterator[Lease]:
        if self.session_id in self._held:
            raise SessionBusyError(self.session_id, os.getpid(), same_process=True, ttl=self.ttl)
        await self._acquire()
        self._held[self.session_id] = self
        body_error: BaseException | None = None
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(self._heartbeat)
                try:
                    yield self
                except anyio.get_cancelled_exc_class():
                    raise
                except BaseException as exc:  # noqa: BLE001 -- re-raised below, unwrapped
                    # A task group would wrap the body's error in an ExceptionGroup;
                    # the caller must see it as raised.
                    body_error = exc
                finally:
                    tasks.cancel_scope.cancel()
            if body_error is not None:
                raise body_error
        finally:
            self._held.pop(self.session_id, None)
            with anyio.CancelScope(shield=True):
                await self._release()

    async def _acquire(self) -> None:
        def acquire(conn: sqlite3.Connection) -> None:
            found = conn.execute("SELECT 1 FROM sessions WHERE id = ?", (self.session_id,))
            if found.fetchone() is None:
                raise UnknownSessionError(self.session_id, self._folder)
            refuse_if_live(conn, self.session_id, ttl=self.ttl)
            conn.execute(
                "INSERT INTO leases (session_id, holder, pid, host, heartbeat_at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET "
                "holder = excluded.holder, pid = excluded.pid, host = excluded.host, "
                "heartbeat_at = excluded.heartbeat_at",
                (self.session_id, self.holder, os.getpid(), HOST, time.time()),
            )

        await self._db.write(f"lease session {self.session_id}", acquire)

    async def _renew(self) -> bool:
        def renew(conn: sqlite3.Connection) -> bool:
            cursor = conn.execute(
                "UPDATE leases SET heartbeat_at = ? WHERE session_id = ? AND holder = ?",
                (time.time(), self.session_id, self.holder),
            )
            return cursor.rowcount == 1

        return await self._db.write(f"renew the lease of session {self.session_id}", renew)

    async def _heartbeat(self) -> None:
        while True:
            await anyio.sleep(self.ttl / 3)
            try:
                still_held = await self._renew()
            except SessionStoreError as exc:
                _log.warning("lease heartbeat failed, will retry: %s", exc)
                continue
            if not still_held:
                self.lost = True
                _log.warning("the lease of session %s was taken over", self.session_id)
                return

    async def _release(self) -> None:
        def release(conn: sqlite3.Connection) -> None:
            conn.execute(
                "DELETE FROM leases WHERE session_id = ? AND holder = ?",
                (self.session_id, self.holder),
            )

        try:
            await self._db.write(f"release the lease of session {self.session_id}", release)
        except SessionStoreError as exc:
            # Never mask the body's outcome: an unreleased lease expires by itself.
            _log.warning("could not release the lease of session %s: %s", self.session_id, exc)
