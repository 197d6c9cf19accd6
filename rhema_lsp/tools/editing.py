"""The edit tools: ``edit_file``, ``write_file``, ``rename_path``, ``delete_path``.

Every change goes to the editor as one :class:`WorkspaceEdit`, never straight
to disk: minimal :class:`TextEdit`\\ s computed against the text the editor has
(unsaved buffers included) in its negotiated position encoding, inside a
``TextDocumentEdit`` carrying the open document's version when the client
supports ``documentChanges`` (else ``changes``); ``CreateFile``,
``RenameFile`` and ``DeleteFile`` for file operations; a label naming tool and
path; in review mode change annotations that open the editor's preview with
every change pre-selected (:mod:`~rhema_lsp.tools.review`), and an account of
the changes the user declined there, reported as the user's choice.

Never a blind overwrite: the document is re-checked just before applying, a
rejected edit or a version that moved is an in-band error telling the model
to re-read, and after an "applied" answer the open buffer must hold the
expected text (Neovim answers ``applied: true`` for a stale document it
skipped). Protected paths (:mod:`~rhema_lsp.tools.rules`) ask the user first.
The :class:`~rhema_lsp.tools.journal.Journal` hears of every change, under
the run id: the text before it is sent (the turn's checkpoint), and the
text after it landed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lsprotocol.types import (
    AnnotatedTextEdit,
    CreateFile,
    OptionalVersionedTextDocumentIdentifier,
    TextDocumentEdit,
    TextEdit,
    WorkspaceEdit,
)

from rhema_lsp.engine.tools import ToolContext
from rhema_lsp.tools import review
from rhema_lsp.tools.edit_base import _REREAD, _Call
from rhema_lsp.tools.errors import ToolError
from rhema_lsp.tools.file_operations import FileOperations
from rhema_lsp.tools.gate import Snapshot
from rhema_lsp.tools.positions import minimal_edits, replacement_edits
from rhema_lsp.tools.workspace import Access

__all__ = ["Change", "Editing"]


@dataclass(frozen=True, slots=True)
class Change:
    """One document's text change: ``edits`` against ``snap``'s text give ``new_text``."""

    snap: Snapshot
    edits: list[TextEdit]
    new_text: str


class Editing(FileOperations):
    """The write side of the tools, bound to a workspace and an editor (the
    parameters are :class:`~rhema_lsp.tools.edit_base.EditingBase`'s)."""

    async def _change_text(
        self, call: _Call, snap: Snapshot, edits: list[TextEdit], new_text: str
    ) -> str:
        """Send ``edits`` (against ``snap``) unless the document moved since;
        in review mode, what the user declined ("" when nothing was)."""
        return await self._change_texts(call, [Change(snap, edits, new_text)])

    async def _change_texts(self, call: _Call, changes: Sequence[Change]) -> str:
        """Send every change as one ``WorkspaceEdit``, unless a document
        moved since it was read; in review mode, what the user declined
        ("" when nothing was). The one path every text change takes."""
        for change in changes:
            snap = change.snap
            shown = self.ws.display(snap.target.path)
            current = self.editor.open_document(snap.target.uri)
            moved = (
                current is None or current.version != snap.version or current.text != snap.text
                if snap.is_open
                else current is not None and current.text != snap.text
            )
            if moved:
                raise ToolError(f"{shown}: the document changed since it was read. {_REREAD}")
        first = changes[0].snap.target
        label = self._label(call, first)
        if len(changes) > 1:
            label += f" (+{len(changes) - 1} file{'s' if len(changes) > 2 else ''})"
        annotation_id, annotations = self._annotation(call, label)
        if self.editor.supports_document_changes:
            document_changes: list[TextDocumentEdit | CreateFile] = []
            for change in changes:
                sent: list[TextEdit | AnnotatedTextEdit] = list(change.edits)
                if annotation_id is not None:
                    sent = [
                        AnnotatedTextEdit(
                            range=e.range, new_text=e.new_text, annotation_id=annotation_id
                        )
                        for e in change.edits
                    ]
                snap = change.snap
                identifier = OptionalVersionedTextDocumentIdentifier(
                    uri=snap.target.uri, version=snap.version if snap.is_open else None
                )
                document_changes.append(TextDocumentEdit(text_document=identifier, edits=sent))
            if annotation_id is not None:
                document_changes.insert(0, self._trigger())
            edit = WorkspaceEdit(
                document_changes=document_changes, change_annotations=annotations or None
            )
        else:
            edit = WorkspaceEdit(changes={c.snap.target.uri: c.edits for c in changes})
        for change in changes:
            snap = change.snap
            await self._before(call, snap.target, snap.text, snap.is_open)
        if annotation_id is not None and all(c.snap.text is not None for c in changes):
            return await self._reviewed(call, changes, edit, label)
        expected: dict[str, str | None] = {c.snap.target.uri: c.new_text for c in changes}
        await self._apply(call, first, edit, expected, label)
        for change in changes:
            await self._record(
                call, change.snap.target.uri, change.snap.text, change.new_text, "edit"
            )
        return ""

    async def _reviewed(
        self, call: _Call, changes: Sequence[Change], edit: WorkspaceEdit, label: str
    ) -> str:
        """Apply ``edit`` through the editor's preview and account for what
        the user kept in each document: the hunks declined, or an error if a
        text shows neither choice."""
        await self.editor.apply_edit(edit, label, {})
        accounts: list[str] = []
        for change in changes:
            snap = change.snap
            old = snap.text or ""
            target = snap.target
            shown = self.ws.display(target.path)
            current = await review.settled_text(
                self.editor, target.uri, old, self._disk_reader(target)
            )
            hunks = review.hunks_of(old, change.edits, self.editor.position_encoding)
            decided = review.landed(old, hunks, current)
            if decided is None:
                raise ToolError(f"{shown}: the document changed while under review. {_REREAD}")
            if any(decided):
                await self._record(call, target.uri, old, current, "edit")
            if all(decided):
                continue
            kept = sum(decided)
            accounts.append(
                f"In review the user applied {kept} of {len(hunks)} changes to {shown} and "
                f"declined {len(hunks) - kept}; that is their choice, not an error: do not "
                f"make the declined changes again unless asked.\n"
                f"{review.describe_declined(old, hunks, decided)}"
            )
        return "\n".join(accounts)

    async def change_texts(
        self, ctx: ToolContext, call_id: str, tool: str, texts: Sequence[tuple[Snapshot, str]]
    ) -> str:
        """Replace the text of each document (as read, for writing, in the
        snapshot) with its new text by minimal edits, in one
        ``WorkspaceEdit`` (``rename_symbol``'s edit): asked for on protected
        paths, versioned, journaled like every edit; in review mode, what
        the user declined ("" when nothing was).

        Raises
        ------
        ToolError
            A document is missing, or moved since it was read.
        """
        call = _Call(ctx, call_id, tool)
        changes: list[Change] = []
        for snap, new_text in texts:
            if snap.text is None:
                raise ToolError(f"{snap.target.requested}: no such file")
            if snap.text == new_text:
                continue
            await self._confirm_protected(snap.target, "edit")
            edits = minimal_edits(snap.text, new_text, self.editor.position_encoding)
            changes.append(Change(snap, edits, new_text))
        if not changes:
            return ""
        return await self._change_texts(call, changes)

    # -- tools ---------------------------------------------------------------

    async def edit_file(
        self,
        ctx: ToolContext,
        call_id: str,
        path: str,
        old_text: str,
        new_text: str,
        replace_all: bool,
    ) -> str:
        """Replace exact ``old_text`` with ``new_text`` in the editor's text."""
        call = _Call(ctx, call_id, "edit_file")
        target = await self._resolve(path, Access.WRITE)
        if not old_text:
            raise ToolError("old_text is empty; use write_file to create or replace a whole file")
        if old_text == new_text:
            raise ToolError("old_text and new_text are identical; nothing to change")
        snap = await self._snapshot(target)
        text = snap.text
        if text is None:
            raise ToolError(f"{target.requested}: no such file; use write_file to create it")
        if old_text not in text and "\r\n" in text and "\r" not in old_text:
            # The model usually writes \n; match a CRLF file's line endings.
            old_text = old_text.replace("\n", "\r\n")
            new_text = new_text.replace("\r\n", "\n").replace("\n", "\r\n")
        starts: list[int] = []
        index = text.find(old_text)
        while index != -1:
            starts.append(index)
            index = text.find(old_text, index + len(old_text))
        shown = self.ws.display(target.path)
        if not starts:
            raise ToolError(
                f"{shown}: old_text not found (0 matches). It must match the current text "
                f"exactly, including whitespace. {_REREAD}"
            )
        if len(starts) > 1 and not replace_all:
            lines = [text.count("\n", 0, start) + 1 for start in starts[:20]]
            raise ToolError(
                f"{shown}: old_text matches {len(starts)} times (at lines "
                f"{', '.join(map(str, lines))}); include more surrounding text to make it "
                "unique, or set replace_all to true"
            )
        replacements = [(start, start + len(old_text), new_text) for start in starts]
        pieces: list[str] = []
        cursor = 0
        for start, end, replacement in replacements:
            pieces += [text[cursor:start], replacement]
            cursor = end
        pieces.append(text[cursor:])
        updated = "".join(pieces)
        edits = replacement_edits(text, replacements, self.editor.position_encoding)
        await self._confirm_protected(target, "edit")
        declined = await self._change_text(call, snap, edits, updated)
        if declined:
            return declined
        count = len(starts)
        return f"edited {shown}: {count} replacement{'s' if count != 1 else ''}"

    async def replace_text(
        self,
        ctx: ToolContext,
        call_id: str,
        path: str,
        *,
        old: str,
        version: int | None,
        is_open: bool,
        new: str,
        tool: str,
    ) -> None:
        """Replace a document's whole text ``old``, as the caller read it
        (at ``version``, from the editor's buffer when ``is_open``), with
        ``new``, by minimal edits; refused when the document moved since.

        The user's own rewrites (``rhema.edit``) take this path, so they are
        confined, versioned, verified and journaled like the tools' edits.

        Raises
        ------
        ToolError
            The path is refused, the document changed since it was read, or
            the editor did not apply the edit.
        """
        call = _Call(ctx, call_id, tool)
        target = await self._resolve(path, Access.WRITE)
        snap = Snapshot(target, old, version, is_open)
        edits = minimal_edits(old, new, self.editor.position_encoding)
        declined = await self._change_text(call, snap, edits, new)
        if declined:
            raise ToolError(declined)

    async def write_file(self, ctx: ToolContext, call_id: str, path: str, content: str) -> str:
        """Create ``path`` with ``content``, or replace its text by minimal edits."""
        call = _Call(ctx, call_id, "write_file")
        target = await self._resolve(path, Access.WRITE)
        if target.kind == "dir":
            raise ToolError(f"{target.requested}: is a directory")
        snap = await self._snapshot(target)
        shown = self.ws.display(target.path)
        if snap.text is not None and snap.text == content:
            return f"{shown} already has exactly this content; nothing changed"
        await self._confirm_protected(target, "write")
        if snap.text is None:
            declined = await self._create(call, target, content)
            return declined or f"created {shown} ({len(content.splitlines())} lines)"
        edits = minimal_edits(snap.text, content, self.editor.position_encoding)
        declined = await self._change_text(call, snap, edits, content)
        if declined:
            return declined
        return f"wrote {shown} ({len(content.splitlines())} lines)"
