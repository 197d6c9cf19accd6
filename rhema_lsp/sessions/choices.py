"""What the user chose for a session: its mode, model and thinking level.

One row per session (``session_choices``, deleted with it), written when a
door changes a choice (ACP's ``session/set_mode`` and
``session/set_config_option``) and read when a session is reopened, by
either door, so it goes on as it was left. A choice never made is ``NULL``
(the door's own setting stands). The store keeps the text as given and
checks nothing: each door validates what it reads against what it offers
(a value it no longer offers falls back to its setting).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from rhema_lsp.sessions.database import Database
from rhema_lsp.sessions.errors import UnknownSessionError

__all__ = ["SessionChoices", "StoredChoices"]


@dataclass(frozen=True, slots=True)
class StoredChoices:
    """A session's choices; ``None``: never made."""

    mode: str | None = None
    model: str | None = None
    thinking: str | None = None


class SessionChoices:
    """The choices of a store's sessions."""

    def __init__(self, db: Database, folder: str) -> None:
        self._db = db
        self._folder = folder

    async def load(self, session_id: str) -> StoredChoices:
        """``session_id``'s choices (none made: all ``None``)."""

        def select(conn: sqlite3.Connection) -> StoredChoices:
            row = conn.execute(
                "SELECT mode, model, thinking FROM session_choices WHERE session_id = ?",
                (session_id,),
            ).fetchone()
            return StoredChoices() if row is None else StoredChoices(*row)

        return await self._db.read(f"read the choices of session {session_id}", select)

    async def save(self, session_id: str, choices: StoredChoices) -> None:
        """Replace ``session_id``'s choices.

        Raises
        ------
        UnknownSessionError
            No such session.
        """

        def upsert(conn: sqlite3.Connection) -> None:
            found = conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if found is None:
                raise UnknownSessionError(session_id, self._folder)
            conn.execute(
                "INSERT INTO session_choices (session_id, mode, model, thinking) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET "
                "mode = excluded.mode, model = excluded.model, thinking = excluded.thinking",
                (session_id, choices.mode, choices.model, choices.thinking),
            )

        await self._db.write(f"save the choices of session {session_id}", upsert)
