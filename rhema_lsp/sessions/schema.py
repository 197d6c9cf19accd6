"""The store's schema and its forward migrations.

``PRAGMA user_version`` is the schema version: migration ``i`` (0-based)
takes a database from version ``i`` to ``i + 1``. All pending migrations run
in one ``BEGIN IMMEDIATE`` transaction, so two processes opening an old store
at once migrate it exactly once, and a crash mid-migration leaves the old
version intact. A store newer than this code is refused, never downgraded.

Version 1 holds sessions and their messages (append-only, one JSON row per
message, numbered from 0); version 2 adds the run leases; version 3 the
compactions (append-only too: one JSON row per compaction record, numbered
from 0; the latest decides what the model is sent); version 4 adds
checkpoints (:mod:`rhema_lsp.sessions.checkpoints`): content-addressed
``blobs`` (pre-images, zlib, possibly a line delta on an earlier blob), the
``turns`` (where each turn's messages start), the ``turn_files`` each turn
changed (pre-image blob, post-image hash) and the append-only ``rewinds``;
version 5 makes turns crash-consistent: a turn's end stamp (``ended_at``,
``NULL``: cut short, or running) and whether a file's post-image is known
(``settled``, ``0``: a change was being applied when the process died).
Turns stored before it count as ended.
"""

from __future__ import annotations

import sqlite3

from rhema_lsp.sessions.errors import SessionStoreError

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "migrate", "schema_version"]

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            folder TEXT NOT NULL,
            title TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            model TEXT NOT NULL DEFAULT '',
            turns INTEGER NOT NULL DEFAULT 0
        )
        """,
        "CREATE INDEX sessions_by_update ON sessions (updated_at DESC)",
        """
        CREATE TABLE messages (
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            seq INTEGER NOT NULL CHECK (seq >= 0),
            body TEXT NOT NULL,
            PRIMARY KEY (session_id, seq)
        )
        """,
    ),
    (
        """
        CREATE TABLE leases (
            session_id TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
            holder TEXT NOT NULL,
            pid INTEGER NOT NULL,
            host TEXT NOT NULL,
            heartbeat_at REAL NOT NULL
        )
        """,
    ),
    (
        """
        CREATE TABLE compactions (
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            seq INTEGER NOT NULL CHECK (seq >= 0),
            body TEXT NOT NULL,
            PRIMARY KEY (session_id, seq)
        )
        """,
    ),
    (
        """
        CREATE TABLE blobs (
            hash TEXT PRIMARY KEY,
            size INTEGER NOT NULL CHECK (size >= 0),
            base TEXT REFERENCES blobs (hash),
            depth INTEGER NOT NULL DEFAULT 0,
            body BLOB NOT NULL
        ) WITHOUT ROWID
        """,
        """
        CREATE TABLE turns (
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            turn INTEGER NOT NULL CHECK (turn >= 1),
            first_seq INTEGER NOT NULL CHECK (first_seq >= 0),
            title TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (session_id, turn)
        )
        """,
        """
        CREATE TABLE turn_files (
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            turn INTEGER NOT NULL CHECK (turn >= 1),
            uri TEXT NOT NULL,
            before TEXT REFERENCES blobs (hash),
            after TEXT,
            clean INTEGER NOT NULL DEFAULT 1,
            PRIMARY KEY (session_id, turn, uri)
        )
        """,
        """
        CREATE TABLE rewinds (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            turn INTEGER NOT NULL CHECK (turn >= 1),
            what TEXT NOT NULL CHECK (what IN ('code', 'conversation', 'both')),
            last_turn INTEGER NOT NULL,
            from_seq INTEGER,
            to_seq INTEGER,
            files TEXT NOT NULL DEFAULT '[]',
            kept INTEGER,
            compactions INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL
        )
        """,
    ),
    (
        "ALTER TABLE turns ADD COLUMN ended_at TEXT",
        "UPDATE turns SET ended_at = created_at",
        "ALTER TABLE turn_files ADD COLUMN settled INTEGER NOT NULL DEFAULT 1",
    ),
    (
        """
        CREATE TABLE session_choices (
            session_id TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
            mode TEXT,
            model TEXT,
            thinking TEXT
        )
        """,
    ),
)
"""Statements per migration, in order; append new ones, never edit old ones."""

SCHEMA_VERSION = len(MIGRATIONS)
"""The version this code writes."""


def schema_version(conn: sqlite3.Connection) -> int:
    """The database's ``user_version``."""
    (version,) = conn.execute("PRAGMA user_version").fetchone()
    return int(version)


def migrate(conn: sqlite3.Connection, target: int = SCHEMA_VERSION) -> int:
    """Bring the database up to ``target``, in one transaction.

    Returns the version found before migrating.

    Raises
    ------
    SessionStoreError
        The database was written by a newer version of rhema-lsp.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        found = schema_version(conn)
        if found > SCHEMA_VERSION:
            raise SessionStoreError(
                f"the session store has schema version {found}, newer than this rhema-lsp "
                f"understands ({SCHEMA_VERSION}); upgrade rhema-lsp to open it"
            )
        for version in range(found, target):
            for statement in MIGRATIONS[version]:
                conn.execute(statement)
        if target > found:
            conn.execute(f"PRAGMA user_version = {int(target)}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return found
