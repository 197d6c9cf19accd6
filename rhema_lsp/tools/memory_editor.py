"""An in-memory editor for tests: open buffers with versions, and misbehaviour.

Built on :class:`~rhema_lsp.tools.disk_editor.DiskEditor` (files that are not
open live on disk below ``roots``), it adds what tests need to provoke:

- a configurable position encoding and capability set (VS Code: UTF-16 and
  ``documentChanges``; Neovim: UTF-8);
- :meth:`MemoryEditor.type_text` — the user typing (new text, version + 1),
  and :attr:`MemoryEditor.before_apply` — a hook run just before an edit is
  applied, to type between the tool's read and its apply;
- :attr:`MemoryEditor.reject` — the editor answering ``applied: false``;
- :attr:`MemoryEditor.skip_stale` — Neovim's behaviour of skipping a
  document whose version is stale yet answering ``applied: true``, caught
  as the LSP editor catches it, by the one applied-edit check
  (:func:`~rhema_lsp.tools.editor.unmet_expectations`);
- a record of every edit received (:attr:`MemoryEditor.received`) and of
  every confirmation asked (:attr:`MemoryEditor.asked`), answered with the
  next of :attr:`MemoryEditor.answers` while there is one, else
  :attr:`MemoryEditor.answer`;
- pages it was asked to open (:meth:`MemoryEditor.show_document`, recorded
  in :attr:`MemoryEditor.shown` and handed to :attr:`MemoryEditor.on_show`,
  a test's stand-in for the browser).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from lsprotocol.types import TextDocumentEdit, WorkspaceEdit

from rhema_lsp.tools.disk_editor import DiskEditor, StaleDocument, _Buffer
from rhema_lsp.tools.editor import EditOutcome, not_landed, unmet_expectations

__all__ = ["MemoryEditor", "ReceivedEdit"]


@dataclass(frozen=True, slots=True)
class ReceivedEdit:
    """One ``apply_edit`` call as the editor saw it."""

    edit: WorkspaceEdit
    label: str
    expected: Mapping[str, str | None]


class MemoryEditor(DiskEditor):
    """Open documents in memory over a disk-backed workspace.

    Parameters
    ----------
    roots
        The folders files not held open live in.
    documents
        URI -> text of documents open at version 1.
    position_encoding, supports_document_changes, supports_resource_operations,
    supports_change_annotations
        The negotiated encoding and client capabilities to emulate.
    answer
        What :meth:`confirm` answers (``None``: dismissed).
    """

    def __init__(
        self,
        roots: Sequence[Path],
        *,
        documents: Mapping[str, str] | None = None,
        position_encoding: str = "utf-16",
        supports_document_changes: bool = True,
        supports_resource_operations: bool = True,
        supports_change_annotations: bool = False,
        answer: str | None = None,
    ) -> None:
        super().__init__(
            roots,
            overlay=documents,
            position_encoding=position_encoding,
            supports_document_changes=supports_document_changes,
            supports_resource_operations=supports_resource_operations,
            supports_change_annotations=supports_change_annotations,
        )
        self.answer = answer
        self.answers: list[str | None] = []
        self.reject: str | None = None
        self.skip_stale = False
        self.before_apply: Callable[[], None] | None = None
        self.received: list[ReceivedEdit] = []
        self.asked: list[tuple[str, tuple[str, ...]]] = []
        self.shown: list[str] = []
        self.on_show: Callable[[str], None] | None = None
        self.asks_text = False
        self.texts: list[str | None] = []
        self.text_asked: list[tuple[str, str]] = []

    def open(self, uri: str, text: str, version: int = 1) -> None:
        """Open ``uri`` with ``text`` (as the user opening a file)."""
        self._buffers[self._key(uri)] = _Buffer(text, version)

    def close(self, uri: str) -> None:
        """Close ``uri`` (unsaved changes are dropped)."""
        self._buffers.pop(self._key(uri), None)

    def type_text(self, uri: str, text: str) -> None:
        """The user replaces the text of open ``uri``; its version goes up."""
        buffer = self._buffers[self._key(uri)]
        buffer.text = text
        buffer.version += 1

    async def confirm(self, message: str, choices: Sequence[str]) -> str | None:
        """Record the question; answer the next of :attr:`answers`, else :attr:`answer`."""
        self.asked.append((message, tuple(choices)))
        return self.answers.pop(0) if self.answers else self.answer

    async def ask_text(self, message: str, value: str) -> str | None:
        """Record the question; answer the next of :attr:`texts` (``None``
        when none is left: dismissed). Only asked when :attr:`asks_text`."""
        self.text_asked.append((message, value))
        return self.texts.pop(0) if self.texts else None

    async def show_document(self, uri: str) -> bool:
        """Record the page and hand it to :attr:`on_show`; shown if there is one."""
        self.shown.append(uri)
        if self.on_show is None:
            return False
        self.on_show(uri)
        return True

    async def apply_edit(
        self, edit: WorkspaceEdit, label: str, expected: Mapping[str, str | None]
    ) -> EditOutcome:
        """Record, run :attr:`before_apply`, then apply (or misbehave)."""
        self.received.append(ReceivedEdit(edit, label, dict(expected)))
        if self.before_apply is not None:
            hook, self.before_apply = self.before_apply, None
            hook()
        if self.reject is not None:
            return EditOutcome(False, self.reject)
        if self.skip_stale and edit.document_changes is not None:
            kept = [
                change
                for change in edit.document_changes
                if not (isinstance(change, TextDocumentEdit) and self._is_stale(change))
            ]
            outcome = await super().apply_edit(
                WorkspaceEdit(document_changes=kept, change_annotations=edit.change_annotations),
                label,
                {},
            )
            if not outcome.applied:
                return outcome
            unmet = unmet_expectations(self, expected)
            return not_landed(", ".join(unmet)) if unmet else EditOutcome(True)
        return await super().apply_edit(edit, label, expected)

    def _is_stale(self, change: TextDocumentEdit) -> bool:
        try:
            self.check_version(self._key(change.text_document.uri), change.text_document.version)
        except StaleDocument:
            return True
        return False
