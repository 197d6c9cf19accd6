"""The ``Editor`` seam: what the tools need from whoever holds the documents.

Three things: the text and version of a document the editor has open (unsaved
changes included), applying a :class:`~lsprotocol.types.WorkspaceEdit`, and
asking the user to confirm. The LSP server implements it over the wire, the
headless client on disk (:class:`~rhema_lsp.tools.disk_editor.DiskEditor`),
tests in memory (:class:`~rhema_lsp.tools.memory_editor.MemoryEditor`).

URIs the tools pass are ``Path.as_uri()`` of real (symlink-free) absolute
paths; implementations should match documents by decoded path, since editors
spell URIs differently (see :func:`rhema_lsp.tools.positions.uri_to_path`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from lsprotocol.types import WorkspaceEdit

__all__ = [
    "DENY",
    "ConfirmCallback",
    "DocumentSource",
    "EditOutcome",
    "Editor",
    "OpenDocument",
    "approving_choice",
    "not_landed",
    "unmet_expectations",
]

DENY = "Deny"
"""The declining choice of every confirmation, listed first (so a client's
default pick declines)."""

ConfirmCallback = Callable[[str, Sequence[str]], Awaitable[str | None]]
"""Asks the user ``message`` with ``choices``; returns the choice or ``None``."""


@dataclass(frozen=True, slots=True)
class OpenDocument:
    """A document as the editor holds it.

    Parameters
    ----------
    uri
        The document's ``file://`` URI.
    text
        The full current text, unsaved changes included.
    version
        The editor's version number, ``None`` when it has none (disk).
    """

    uri: str
    text: str
    version: int | None


@dataclass(frozen=True, slots=True)
class EditOutcome:
    """Whether a :class:`WorkspaceEdit` landed, and if not, why."""

    applied: bool
    reason: str | None = None


class Editor(Protocol):
    """What the tools ask of the editor (structurally: plain attributes or
    read-only properties both satisfy the capability members).

    Attributes
    ----------
    position_encoding
        ``"utf-8"``, ``"utf-16"`` or ``"utf-32"``: the unit of
        :class:`~lsprotocol.types.Position` ``character`` negotiated at
        ``initialize``.
    supports_document_changes
        Whether edits may use ``documentChanges`` (versioned edits).
    supports_resource_operations
        Whether ``CreateFile`` / ``RenameFile`` / ``DeleteFile`` are accepted.
    supports_change_annotations
        Whether edits may carry annotations needing confirmation (review mode).
    """

    @property
    def position_encoding(self) -> str:
        """``utf-8``, ``utf-16`` or ``utf-32``."""
        ...

    @property
    def supports_document_changes(self) -> bool:
        """``workspace.workspaceEdit.documentChanges``."""
        ...

    @property
    def supports_resource_operations(self) -> bool:
        """Create, rename and delete operations."""
        ...

    @property
    def supports_change_annotations(self) -> bool:
        """Change annotations (review mode)."""
        ...

    def open_document(self, uri: str) -> OpenDocument | None:
        """The editor's current text of ``uri`` if it is open, else ``None``."""
        ...

    def open_documents(self) -> list[OpenDocument]:
        """Every open document (searches include their unsaved text)."""
        ...

    async def apply_edit(
        self, edit: WorkspaceEdit, label: str, expected: Mapping[str, str | None]
    ) -> EditOutcome:
        """Apply ``edit``, labelled ``label`` for the user.

        ``expected`` maps each touched URI to the full text it should hold
        afterwards (``None``: it should not exist). ``applied`` means every
        touched open document holds its expected text: implementations
        verify it (some editors report success for an edit they skipped),
        and callers rely on it rather than checking again.
        """
        ...

    async def confirm(self, message: str, choices: Sequence[str]) -> str | None:
        """Ask the user; the chosen entry of ``choices``, or ``None`` if dismissed."""
        ...


class DocumentSource(Protocol):
    """Whatever can say which text a document holds (an :class:`Editor`, or
    a view of one)."""

    def open_document(self, uri: str) -> OpenDocument | None:
        """The open document at ``uri``, or ``None``."""
        ...


def approving_choice(choices: Sequence[str]) -> str | None:
    """The choice of a confirmation that approves: the first that is not :data:`DENY`."""
    return next((choice for choice in choices if choice != DENY), None)


def unmet_expectations(editor: DocumentSource, expected: Mapping[str, str | None]) -> list[str]:
    """The URIs of open documents that do not hold their ``expected`` text:
    the one applied-edit check, which each :class:`Editor` facing a client
    that may answer ``applied`` for an edit it skipped runs before saying so."""
    wrong = []
    for uri, text in expected.items():
        if text is None:
            continue
        document = editor.open_document(uri)
        if document is not None and document.text != text:
            wrong.append(uri)
    return wrong


def not_landed(shown: str) -> EditOutcome:
    """The outcome of an edit reported applied whose documents (``shown``)
    do not hold the expected text."""
    return EditOutcome(
        applied=False,
        reason=(
            f"the editor reported the edit applied, but {shown} does not hold the expected "
            "text: the edit did not land (the buffer changed under it)"
        ),
    )
