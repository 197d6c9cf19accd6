"""One SQLite connection, driven from worker threads, that never blocks the loop.

:meth:`Database.open` connects with WAL journaling, a busy timeout and
foreign keys on, checks the file (``PRAGMA quick_check``) and migrates it. A
file SQLite reports as corrupt or not a database is moved aside (renamed with
a UTC timestamp, with its ``-wal``/``-shm`` companions) and a fresh one is
started; :attr:`Database.notice` then tells the user where it went. Any other
failure (a locked or read-only file) is raised, never "repaired".

All work goes through :meth:`Database.read` and :meth:`Database.write`, which
run a function on the connection in a worker thread under a lock (sqlite3
objects are not safe for concurrent use). ``write`` wraps it in
``BEGIN IMMEDIATE`` ... ``COMMIT``: taking the write lock up front means a
busy database makes the caller wait (up to the busy timeout) instead of
failing on a read-to-write upgrade.

Durability: a ``durable`` write runs with ``synchronous=FULL``, so its commit
is on disk (the WAL fsynced) before ``write`` returns. Other writes run with
``synchronous=NORMAL``: in WAL mode a committed transaction is in the OS's
page cache once ``COMMIT`` returns, so it survives a process crash (the
case a server must survive) but may be lost with the last few commits on a
power failure; the database stays consistent either way.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import anyio.to_thread

from rhema_lsp.sessions.errors import SessionStoreError
from rhema_lsp.sessions.schema import migrate

__all__ = ["BUSY_TIMEOUT_MS", "Database"]

_log = logging.getLogger(__name__)

T = TypeVar("T")

BUSY_TIMEOUT_MS = 10_000
"""How long a write waits for another process's write lock before failing."""

_CORRUPT_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})


class _CorruptDatabase(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _is_corruption(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and (code & 0xFF) in _CORRUPT_CODES


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(
        path,
        timeout=BUSY_TIMEOUT_MS / 1000,
        isolation_level=None,
        check_same_thread=False,
    )
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        (mode,) = conn.execute("PRAGMA journal_mode = WAL").fetchone()
        if str(mode).lower() != "wal":
            raise SessionStoreError(f"{path}: SQLite refused WAL journaling (mode {mode})")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA synchronous = NORMAL")
        problems = [row[0] for row in conn.execute("PRAGMA quick_check").fetchall()]
        if problems != ["ok"]:
            raise _CorruptDatabase("; ".join(str(p) for p in problems[:3]))
        migrate(conn)
    except sqlite3.Error as exc:
        conn.close()
        if _is_corruption(exc):
            raise _CorruptDatabase(str(exc)) from exc
        raise SessionStoreError(f"cannot open the session store {path}: {exc}") from exc
    except BaseException:
        conn.close()
        raise
    return conn


def _move_aside(path: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    aside = path.with_name(f"{path.name}.corrupt-{stamp}")
    counter = 1
    while aside.exists():
        counter += 1
        aside = path.with_name(f"{path.name}.corrupt-{stamp}-{counter}")
    try:
        path.rename(aside)
        for suffix in ("-wal", "-shm"):
            companion = path.with_name(path.name + suffix)
            if companion.exists():
                companion.rename(aside.with_name(aside.name + suffix))
    except OSError as exc:
        raise SessionStoreError(
            f"the session store {path} is unreadable and could not be moved aside: {exc}; "
            "move or delete it by hand"
        ) from exc
    return aside


def _open_or_replace(path: Path) -> tuple[sqlite3.Connection, str | None]:
    try:
        return _connect(path), None
    except _CorruptDatabase as exc:
        reason = exc.reason
    aside = _move_aside(path)
    _log.warning("session store %s was unreadable (%s); moved to %s", path, reason, aside)
    notice = (
        f"The session store {path} could not be read ({reason}). It was moved to {aside} "
        "and a fresh store was started; earlier sessions are in the moved file."
    )
    try:
        return _connect(path), notice
    except _CorruptDatabase as exc:
        raise SessionStoreError(f"a fresh session store at {path} is unusable: {exc}") from exc


class Database:
    """A checked, migrated connection plus the lock that serialises its use.

    Use :meth:`open`; the constructor takes an already prepared connection.
    """

    def __init__(self, conn: sqlite3.Connection, path: Path, notice: str | None) -> None:
        self.path = path
        self.notice = notice
        self._conn: sqlite3.Connection | None = conn
        self._lock = threading.Lock()
        self._synchronous = "NORMAL"

    @classmethod
    async def open(cls, path: Path) -> Database:
        """Connect to ``path`` (creating it), moving a corrupt file aside.

        Raises
        ------
        SessionStoreError
            The file cannot be opened for a reason other than corruption, or
            was written by a newer rhema-lsp.
        """
        conn, notice = await anyio.to_thread.run_sync(_open_or_replace, path)
        return cls(conn, path, notice)

    def _call(self, action: str, fn: Callable[[sqlite3.Connection], T], durable: bool | None) -> T:
        with self._lock:
            conn = self._conn
            if conn is None:
                raise SessionStoreError(f"cannot {action}: the session store is closed")
            try:
                if durable is None:
                    return fn(conn)
                wanted = "FULL" if durable else "NORMAL"
                if wanted != self._synchronous:
                    conn.execute(f"PRAGMA synchronous = {wanted}")
                    self._synchronous = wanted
                conn.execute("BEGIN IMMEDIATE")
                try:
                    result = fn(conn)
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
                return result
            except sqlite3.Error as exc:
                raise SessionStoreError(f"cannot {action} in {self.path}: {exc}") from exc

    async def read(self, action: str, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` on the connection in a worker thread (autocommit).

        ``action`` names the work for error messages ("list sessions").
        """
        return await anyio.to_thread.run_sync(self._call, action, fn, None)

    async def write(
        self, action: str, fn: Callable[[sqlite3.Connection], T], *, durable: bool = False
    ) -> T:
        """Run ``fn`` in one ``BEGIN IMMEDIATE`` transaction in a worker thread.

        An exception from ``fn`` rolls the transaction back and propagates;
        ``durable`` commits with ``synchronous=FULL``.
        """
        return await anyio.to_thread.run_sync(self._call, action, fn, durable)

    async def close(self) -> None:
        """Close the connection (idempotent); later calls raise."""

        def close() -> None:
            with self._lock:
                if self._conn is not None:
                    self._conn.close()
                    self._conn = None

        await anyio.to_thread.run_sync(close)
