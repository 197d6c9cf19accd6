"""The edit journal: every change the tools applied, so a turn can be undone.

One :class:`JournalEntry` per document touched by an applied edit, keyed by
the turn (the run's ``ToolContext.run_id``) and the tool call. ``before`` and
``after`` are the full texts (``None``: the file did not / does not exist);
a rename is recorded as the old path going away and the new one appearing.
The server undoes a turn by walking :meth:`EditJournal.entries_for` backwards
and restoring ``before`` where the text still equals ``after``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["EditJournal", "JournalEntry"]


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """One applied change to one document.

    Attributes
    ----------
    turn_id, call_id
        The run and the tool call that made it.
    uri
        The document.
    before, after
        Its full text before and after (``None``: absent).
    kind
        ``edit``, ``create``, ``delete``, ``rename_from`` or ``rename_to``.
    """

    turn_id: str
    call_id: str
    uri: str
    before: str | None
    after: str | None
    kind: str


class EditJournal:
    """An in-memory, append-only record of applied changes."""

    def __init__(self) -> None:
        self._entries: list[JournalEntry] = []

    def record(
        self,
        turn_id: str,
        call_id: str,
        uri: str,
        before: str | None,
        after: str | None,
        kind: str,
    ) -> JournalEntry:
        """Append one change and return its entry."""
        entry = JournalEntry(turn_id, call_id, uri, before, after, kind)
        self._entries.append(entry)
        return entry

    def entries_for(self, turn_id: str) -> list[JournalEntry]:
        """The changes of one turn, oldest first."""
        return [entry for entry in self._entries if entry.turn_id == turn_id]

    def keep_last(self, turns: int) -> None:
        """Forget every turn but the last ``turns`` (memory stays bounded
        across a long editing session)."""
        recent = set(self.turns()[-turns:]) if turns > 0 else set()
        self._entries = [entry for entry in self._entries if entry.turn_id in recent]

    def turns(self) -> list[str]:
        """Turn ids with recorded changes, oldest first."""
        seen: dict[str, None] = {}
        for entry in self._entries:
            seen.setdefault(entry.turn_id, None)
        return list(seen)
