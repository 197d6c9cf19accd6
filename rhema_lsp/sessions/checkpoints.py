"""Checkpoints: what each turn changed in the workspace, durable, so any turn
can be rewound, after a restart and from another window.

Before a turn's first change to a file, :meth:`Checkpoints.pre_image` stores
the file's content (a content-addressed blob, see :mod:`.blobs`) and a
``turn_files`` row; before every change it marks the row *unsettled* (a
change is being applied, what the file will hold is unknown), and after the
change :meth:`Checkpoints.post_image` records the hash of what the file now
holds and settles it (the content itself is not stored: it is the next
turn's pre-image, or the workspace's). A crash between the two leaves the
row unsettled: the change counts, and a rewind restores the pre-image
whatever the file holds (:attr:`Restore.unknown`). A file is identified by
its ``file://`` URI; ``None`` stands for "absent" on either side.

A rewind is an appended ``rewinds`` row (:meth:`Checkpoints.record_rewind`):
code rewinds list the files they restored, so those turns' changes to those
files count as undone; conversation rewinds drop a range of messages from
the live history (:mod:`.timeline`). Nothing is ever deleted or rewritten,
except a ``turn_files`` row's post-image hash (and whether it is settled)
while its turn runs, and a turn's end stamp.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass

from rhema_lsp.engine import Message, Role
from rhema_lsp.sessions.blobs import content_hash, get_blob, put_blob
from rhema_lsp.sessions.database import Database
from rhema_lsp.sessions.errors import SessionStoreError, UnknownSessionError
from rhema_lsp.sessions.records import now_iso
from rhema_lsp.sessions.timeline import (
    derived_starts,
    dropped,
    live_count,
    next_seq,
    seq_is_live,
    turn_rows,
)
from rhema_lsp.sessions.turn_numbers import last_turn
from rhema_lsp.vocabulary import RewindWhat

__all__ = ["Checkpoints", "FileChange", "Restore", "TurnSummary", "turn_starts"]


@dataclass(frozen=True, slots=True)
class FileChange:
    """What one turn did to one file.

    Attributes
    ----------
    turn
        The turn.
    uri
        The file's ``file://`` URI.
    before
        The blob of its content before the turn (``None``: it did not exist).
    after
        The hash of its content after the turn (``None``: it does not exist).
    clean
        Whether its editor buffer matched the file on disk before the turn
        (or it was not open): a restore then saves it.
    rewound
        Whether a code rewind has restored it since.
    known
        Whether ``after`` is known: ``False`` when the process died while a
        change was being applied (the file may hold ``after`` or what the
        change made).
    """

    turn: int
    uri: str
    before: str | None
    after: str | None
    clean: bool
    rewound: bool
    known: bool = True


@dataclass(frozen=True, slots=True)
class TurnSummary:
    """One turn as a rewind picker lists it."""

    turn: int
    title: str
    created_at: str
    in_conversation: bool
    files: list[FileChange]
    ended: bool = True


@dataclass(frozen=True, slots=True)
class Restore:
    """How to take one file back to before a turn.

    Attributes
    ----------
    uri
        The file.
    restore
        The blob to restore (``None``: delete the file).
    expect
        The hash the agent left it at (``None``: absent); any other current
        content is the user's, a conflict.
    clean
        Save the restored buffer (it matched the disk before the turn).
    turns
        The turns whose changes this undoes.
    unknown
        The last change was being applied when the process died: whatever
        the file holds is taken as the agent's, and restored.
    """

    uri: str
    restore: str | None
    expect: str | None
    clean: bool
    turns: tuple[int, ...]
    unknown: bool = False


def _hash(data: bytes | None) -> str | None:
    return None if data is None else content_hash(data)


def _exists(conn: sqlite3.Connection, session_id: str) -> bool:
    return conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is not None


def _rewound(conn: sqlite3.Connection, session_id: str) -> list[tuple[int, int, set[str]]]:
    rows = conn.execute(
        "SELECT turn, last_turn, files FROM rewinds WHERE session_id = ? "
        "AND what IN ('code', 'both') ORDER BY id",
        (session_id,),
    ).fetchall()
    return [(int(first), int(last), set(json.loads(files))) for first, last, files in rows]


def _changes(conn: sqlite3.Connection, session_id: str) -> list[FileChange]:
    rewinds = _rewound(conn, session_id)
    rows = conn.execute(
        "SELECT turn, uri, before, after, clean, settled FROM turn_files "
        "WHERE session_id = ? AND (before IS NOT after OR settled = 0) ORDER BY turn, rowid",
        (session_id,),
    ).fetchall()
    return [
        FileChange(
            turn=int(turn),
            uri=str(uri),
            before=before,
            after=after,
            clean=bool(clean),
            rewound=any(lo <= int(turn) <= hi and uri in files for lo, hi, files in rewinds),
            known=bool(settled),
        )
        for turn, uri, before, after, clean, settled in rows
    ]


def turn_starts(conn: sqlite3.Connection, session_id: str) -> dict[int, int]:
    """Turn -> the sequence number of its first message (its prompt)."""
    recorded = {row.turn: row.first_seq for row in turn_rows(conn, session_id)}
    if recorded:
        return recorded
    user_seqs = []
    for seq, body in conn.execute(
        "SELECT seq, body FROM messages WHERE session_id = ? ORDER BY seq", (session_id,)
    ):
        message = Message.model_validate_json(body)
        if message.role == Role.USER and not message.tool_results:
            user_seqs.append(int(seq))
    return derived_starts(user_seqs)


class Checkpoints:
    """The checkpoints of one store (``store.checkpoints``).

    Parameters
    ----------
    db
        The store's database.
    committed
        The store's count of messages committed per session, updated when a
        conversation rewind shortens the live history.
    """

    def __init__(self, db: Database, committed: dict[str, int]) -> None:
        self._db = db
        self._committed = committed

    async def pre_image(
        self, session_id: str, turn: int, uri: str, data: bytes | None, *, clean: bool
    ) -> None:
        """Store ``uri``'s content before ``turn`` first changes it and mark
        the change unsettled (durably, before the change is made); later
        calls for the same turn and file keep the first image."""

        def write(conn: sqlite3.Connection) -> None:
            if not _exists(conn, session_id):
                raise UnknownSessionError(session_id, "this store")
            seen = conn.execute(
                "SELECT 1 FROM turn_files WHERE session_id = ? AND turn = ? AND uri = ?",
                (session_id, turn, uri),
            ).fetchone()
            if seen is not None:
                conn.execute(
                    "UPDATE turn_files SET settled = 0 WHERE session_id = ? AND turn = ? "
                    "AND uri = ?",
                    (session_id, turn, uri),
                )
                return
            before = None
            if data is not None:
                base = conn.execute(
                    "SELECT before FROM turn_files WHERE session_id = ? AND uri = ? "
                    "AND before IS NOT NULL ORDER BY turn DESC LIMIT 1",
                    (session_id, uri),
                ).fetchone()
                before = put_blob(conn, data, base[0] if base else None)
            conn.execute(
                "INSERT INTO turn_files (session_id, turn, uri, before, after, clean, settled) "
                "VALUES (?, ?, ?, ?, ?, ?, 0)",
                (session_id, turn, uri, before, before, int(clean)),
            )

        await self._db.write(f"checkpoint {uri}", write, durable=True)

    async def post_image(self, session_id: str, turn: int, uri: str, data: bytes | None) -> None:
        """Record what ``uri`` holds after a change of ``turn``, and settle it
        (committed before the next change or step: a crash loses no more than
        the unsettled marker says)."""
        after = _hash(data)

        def write(conn: sqlite3.Connection) -> None:
            conn.execute(
                "UPDATE turn_files SET after = ?, settled = 1 "
                "WHERE session_id = ? AND turn = ? AND uri = ?",
                (after, session_id, turn, uri),
            )

        await self._db.write(f"checkpoint {uri}", write)

    async def blob(self, name: str) -> bytes:
        """A stored pre-image's bytes.

        Raises
        ------
        SessionStoreError
            No such checkpoint, or a damaged one.
        """
        return await self._db.read("read a checkpoint", lambda conn: get_blob(conn, name))

    async def changes(self, session_id: str) -> list[FileChange]:
        """Every change the session's turns made, by turn."""
        return await self._db.read("read checkpoints", lambda conn: _changes(conn, session_id))

    async def turns(self, session_id: str) -> list[TurnSummary]:
        """The session's turns, oldest first, with the files each changed."""

        def select(conn: sqlite3.Connection) -> list[TurnSummary]:
            if not _exists(conn, session_id):
                raise UnknownSessionError(session_id, "this store")
            changes = _changes(conn, session_id)
            rows = {row.turn: row for row in turn_rows(conn, session_id)}
            starts = turn_starts(conn, session_id)
            ranges = dropped(conn, session_id)
            numbers = sorted(set(starts) | {change.turn for change in changes})
            return [
                TurnSummary(
                    turn=number,
                    title=rows[number].title if number in rows else "",
                    created_at=rows[number].created_at if number in rows else "",
                    in_conversation=number in starts and seq_is_live(starts[number], ranges),
                    files=[change for change in changes if change.turn == number],
                    ended=rows[number].ended if number in rows else True,
                )
                for number in numbers
            ]

        return await self._db.read(f"list the turns of {session_id}", select)

    async def plan(self, session_id: str, turn: int) -> list[Restore]:
        """What restoring the workspace to before ``turn`` takes: per file, the
        first pre-image and the last post-image of the changes from ``turn``
        on that no rewind has undone yet."""
        by_uri: dict[str, list[FileChange]] = {}
        for change in await self.changes(session_id):
            if change.turn >= turn and not change.rewound:
                by_uri.setdefault(change.uri, []).append(change)
        return [
            Restore(
                uri=uri,
                restore=changes[0].before,
                expect=changes[-1].after,
                clean=changes[0].clean,
                turns=tuple(change.turn for change in changes),
                unknown=not changes[-1].known,
            )
            for uri, changes in by_uri.items()
        ]

    async def record_rewind(
        self, session_id: str, turn: int, what: RewindWhat, restored: list[str]
    ) -> int | None:
        """Append a rewind to before ``turn``: the files restored (code) and,
        for the conversation, the messages from ``turn`` on dropped from the
        live history. Returns the live history's new length (conversation),
        else ``None``.

        Raises
        ------
        SessionStoreError
            The conversation has no turn ``turn``, or it was rewound already.
        """

        def write(conn: sqlite3.Connection) -> int | None:
            if not _exists(conn, session_id):
                raise UnknownSessionError(session_id, "this store")
            total = next_seq(conn, session_id)
            ranges = dropped(conn, session_id)
            start = end = None
            if what != "code":
                starts = turn_starts(conn, session_id)
                if turn not in starts:
                    raise SessionStoreError(
                        f"session {session_id} has no turn {turn} in its conversation; "
                        "pick a turn from rhema.changes"
                    )
                if not seq_is_live(starts[turn], ranges):
                    raise SessionStoreError(
                        f"turn {turn} of session {session_id} was already rewound out of the "
                        "conversation; pick an earlier turn"
                    )
                start, end = starts[turn], total
            kept = None
            if start is not None and end is not None:
                kept = live_count(total, [*ranges, (start, end)])
            (compactions,) = conn.execute(
                "SELECT count(*) FROM compactions WHERE session_id = ?", (session_id,)
            ).fetchone()
            conn.execute(
                "INSERT INTO rewinds (session_id, turn, what, last_turn, from_seq, to_seq, "
                "files, kept, compactions, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    session_id,
                    turn,
                    what,
                    last_turn(conn, session_id),
                    start,
                    end,
                    json.dumps(sorted(restored)),
                    kept,
                    int(compactions),
                    now_iso(),
                ),
            )
            return kept

        count = await self._db.write(f"rewind session {session_id}", write, durable=True)
        if count is not None:
            # The next load decides which compactions still hold.
            self._committed.pop(session_id, None)
        return count
