"""The edit journal: where the tools report every change, so a turn can be
rewound.

The tools call a :class:`Journal` twice per document they change:
:meth:`Journal.before_change` with the document's text before the edit is
sent (the journal keeps the first one of a turn: the pre-image, durably,
before anything changes), then :meth:`Journal.after_change` once the editor
has applied it. Turns are the run's ``ToolContext.run_id``. A rename is
reported as the old path going away and the new one appearing.

:class:`EditJournal` keeps the changes in memory (tests, ACP); the server's
journal writes them to the session store as checkpoints
(:mod:`rhema_lsp.runs.checkpoints`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

__all__ = ["EditJournal", "Journal", "JournalEntry"]


class Journal(Protocol):
    """Receives the tools' changes (see the module docstring)."""

    async def before_change(self, run_id: str, uri: str, text: str | None, *, clean: bool) -> None:
        """``uri`` is about to change; ``text`` is what it holds now
        (``None``: absent). ``clean``: its buffer matches the file on disk
        (or it is not open). Raising stops the change."""
        ...

    async def after_change(
        self,
        run_id: str,
        call_id: str,
        uri: str,
        before: str | None,
        after: str | None,
        kind: str,
    ) -> None:
        """A change to ``uri`` was applied: its text went from ``before`` to
        ``after`` (``None``: absent). ``kind`` is ``edit``, ``create``,
        ``delete``, ``delete_dir``, ``rename_from`` or ``rename_to``."""
        ...


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

    async def before_change(self, run_id: str, uri: str, text: str | None, *, clean: bool) -> None:
        """Nothing to keep: the entries hold their own before-texts."""

    async def after_change(
        self,
        run_id: str,
        call_id: str,
        uri: str,
        before: str | None,
        after: str | None,
        kind: str,
    ) -> None:
        """Append the change."""
        self._entries.append(JournalEntry(run_id, call_id, uri, before, after, kind))

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
