"""Reading a session back: its live history and the compactions that apply.

Every message row ever appended stays; a conversation rewind records the
ranges it dropped, and :func:`read_session` leaves those out, with the
compactions that summarise rewound messages or lie ahead of the history. A
gap in the numbering or a row that no longer parses is a
:class:`~rhema_lsp.sessions.errors.SessionStoreError` naming the file and
what to do.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from rhema_lsp.engine import Session
from rhema_lsp.sessions.append import session_exists
from rhema_lsp.sessions.errors import SessionStoreError, UnknownSessionError
from rhema_lsp.sessions.images import loaded_message
from rhema_lsp.sessions.timeline import (
    compaction_cuts,
    compaction_rewound,
    dropped,
    read_compaction,
    seq_is_live,
)

__all__ = ["StoredSession", "read_session"]


@dataclass(frozen=True)
class StoredSession:
    """A session as read, and how many compaction rows it has stored."""

    session: Session
    compaction_rows: int


def read_session(
    conn: sqlite3.Connection, session_id: str, *, folder: str, path: Path
) -> StoredSession:
    """The live history and applicable compactions of ``session_id``, read
    in one snapshot.

    Raises
    ------
    UnknownSessionError
        No such session.
    SessionStoreError
        A stored message is missing or unreadable.
    """
    conn.execute("BEGIN")  # one snapshot for the existence check and the rows
    try:
        if not session_exists(conn, session_id):
            raise UnknownSessionError(session_id, folder)
        rows = conn.execute(
            "SELECT seq, body FROM messages WHERE session_id = ? ORDER BY seq",
            (session_id,),
        ).fetchall()
        ranges = dropped(conn, session_id)
        cuts = compaction_cuts(conn, session_id)
        compaction_rows = conn.execute(
            "SELECT body FROM compactions WHERE session_id = ? ORDER BY seq",
            (session_id,),
        ).fetchall()
    finally:
        conn.execute("COMMIT")
    history = []
    for expected, (seq, body) in enumerate(rows):
        if seq != expected:
            raise SessionStoreError(
                f"session {session_id} is missing message {expected} in {path}; "
                "delete the session or restore the file from a backup"
            )
        if not seq_is_live(seq, ranges):
            continue
        try:
            history.append(loaded_message(conn, body))
        except ValidationError as exc:
            raise SessionStoreError(
                f"message {seq} of session {session_id} cannot be read "
                f"({exc.error_count()} problems); delete the session to go on"
            ) from exc
    compactions = []
    for number, (body,) in enumerate(compaction_rows):
        record = read_compaction(session_id, number, body)
        if record.upto <= len(history) and not compaction_rewound(number, record, cuts):
            compactions.append(record)  # else ahead of its messages, or rewound
    return StoredSession(Session(history=history, compactions=compactions), len(compaction_rows))
