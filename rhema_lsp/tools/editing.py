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

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import anyio.to_thread
from lsprotocol.types import (
    AnnotatedTextEdit,
    ChangeAnnotation,
    CreateFile,
    CreateFileOptions,
    DeleteFile,
    DeleteFileOptions,
    OptionalVersionedTextDocumentIdentifier,
    Position,
    Range,
    RenameFile,
    RenameFileOptions,
    TextDocumentEdit,
    TextEdit,
    WorkspaceEdit,
)

from rhema_lsp.engine.tools import ToolContext
from rhema_lsp.tools import review
from rhema_lsp.tools.editor import DENY
from rhema_lsp.tools.errors import PathRefused, ToolError
from rhema_lsp.tools.gate import Gate, Snapshot
from rhema_lsp.tools.journal import Journal
from rhema_lsp.tools.positions import minimal_edits, replacement_edits
from rhema_lsp.tools.rules import write_confirmation_reason
from rhema_lsp.tools.workspace import Access, Target

__all__ = ["Editing"]

_ALLOW = "Allow"
_DENY = DENY
_REREAD = "Re-read the file with read_file and try again."


@dataclass(frozen=True, slots=True)
class _Call:
    ctx: ToolContext
    call_id: str
    tool: str


class Editing:
    """The write side of the tools, bound to a workspace and an editor.

    Parameters
    ----------
    gate
        The confined workspace (every path resolved and read through it) and
        the editor, where edits are applied and confirmations asked.
    journal
        Where applied changes are recorded (optional).
    review
        Whether edits go through the editor's preview for the user to confirm.
    """

    def __init__(self, gate: Gate, journal: Journal | None, review: bool) -> None:
        self.gate = gate
        self.ws = gate.ws
        self.editor = gate.editor
        self.journal = journal
        self.review = review

    # -- helpers -------------------------------------------------------------

    def _label(self, call: _Call, target: Target) -> str:
        return f"rhema: {call.tool} {self.ws.display(target.path)}"

    @property
    def reviewing(self) -> bool:
        """Whether edits go through the editor's preview (review mode, and an
        editor that takes change annotations)."""
        return self.review and self.editor.supports_change_annotations

    def _trigger(self) -> CreateFile:
        return review.trigger(self.ws.folder.as_uri())

    def _annotation(
        self, call: _Call, label: str
    ) -> tuple[str | None, dict[str, ChangeAnnotation]]:
        if not self.reviewing:
            return None, {}
        annotation_id = f"rhema:{call.ctx.run_id}:{call.call_id}"
        return annotation_id, review.review_annotations(annotation_id, label)

    async def _resolve(self, raw: object, access: Access) -> Target:
        return await self.gate.resolve(raw, access)

    async def _snapshot(self, target: Target) -> Snapshot:
        return await self.gate.snapshot(target)

    async def _confirm_protected(self, target: Target, verb: str, *, is_dir: bool = False) -> None:
        reason = write_confirmation_reason(target.parts, is_dir=is_dir)
        if reason is None:
            return
        shown = self.ws.display(target.path)
        answer = await self.editor.confirm(
            f"Rhema wants to {verb} {shown}: {reason}. Allow?", [_DENY, _ALLOW]
        )
        if answer != _ALLOW:
            raise PathRefused(f"{shown}: the user did not allow this change ({reason})")

    async def _before(self, call: _Call, target: Target, text: str | None, is_open: bool) -> None:
        """Tell the journal ``target`` is about to change (its checkpoint)."""
        if self.journal is None:
            return
        clean = True
        if is_open:
            clean = await anyio.to_thread.run_sync(self._disk_equals, target, text)
        await self.journal.before_change(call.ctx.run_id, target.uri, text, clean=clean)

    def _disk_equals(self, target: Target, text: str | None) -> bool:
        try:
            data, _size = self.ws.fs.read_bytes(target.path)
        except (OSError, ValueError, ToolError):
            return text is None
        return text is not None and data == text.encode("utf-8")

    def _disk_reader(self, target: Target) -> Callable[[], Awaitable[str | None]]:
        """Reads ``target``'s text from disk (``None``: absent or unreadable)."""

        def read() -> str | None:
            try:
                data, _size = self.ws.fs.read_bytes(target.path)
                return data.decode("utf-8")
            except (OSError, ValueError, ToolError):
                return None

        async def reader() -> str | None:
            return await anyio.to_thread.run_sync(read)

        return reader

    async def _record(
        self, call: _Call, uri: str, before: str | None, after: str | None, kind: str
    ) -> None:
        if self.journal is not None:
            await self.journal.after_change(call.ctx.run_id, call.call_id, uri, before, after, kind)

    def _require_resource_operations(self, what: str) -> None:
        if not self.editor.supports_resource_operations:
            raise ToolError(f"the editor does not support {what} through the language server")

    async def _apply(
        self, call: _Call, target: Target, edit: WorkspaceEdit, expected: dict[str, str | None]
    ) -> None:
        """Apply ``edit``; the editor answers applied only once every open
        document it touched holds its ``expected`` text (its one check)."""
        outcome = await self.editor.apply_edit(edit, self._label(call, target), expected)
        if not outcome.applied:
            shown = self.ws.display(target.path)
            reason = outcome.reason or "rejected"
            raise ToolError(f"{shown}: the editor did not apply the edit ({reason}). {_REREAD}")

    async def _change_text(
        self, call: _Call, snap: Snapshot, edits: list[TextEdit], new_text: str
    ) -> str:
        """Send ``edits`` (against ``snap``) unless the document moved since;
        in review mode, what the user declined ("" when nothing was)."""
        target = snap.target
        shown = self.ws.display(target.path)
        current = self.editor.open_document(target.uri)
        moved = (
            current is None or current.version != snap.version or current.text != snap.text
            if snap.is_open
            else current is not None and current.text != snap.text
        )
        if moved:
            raise ToolError(f"{shown}: the document changed since it was read. {_REREAD}")
        label = self._label(call, target)
        annotation_id, annotations = self._annotation(call, label)
        if self.editor.supports_document_changes:
            sent: list[TextEdit | AnnotatedTextEdit] = list(edits)
            if annotation_id is not None:
                sent = [
                    AnnotatedTextEdit(
                        range=e.range, new_text=e.new_text, annotation_id=annotation_id
                    )
                    for e in edits
                ]
            identifier = OptionalVersionedTextDocumentIdentifier(
                uri=target.uri, version=snap.version if snap.is_open else None
            )
            document_changes: list[TextDocumentEdit | CreateFile] = [
                TextDocumentEdit(text_document=identifier, edits=sent)
            ]
            if annotation_id is not None:
                document_changes.insert(0, self._trigger())
            edit = WorkspaceEdit(
                document_changes=document_changes, change_annotations=annotations or None
            )
        else:
            edit = WorkspaceEdit(changes={target.uri: edits})
        await self._before(call, target, snap.text, snap.is_open)
        if annotation_id is not None and snap.text is not None:
            return await self._reviewed(call, snap, snap.text, edit, edits)
        await self._apply(call, target, edit, {target.uri: new_text})
        await self._record(call, target.uri, snap.text, new_text, "edit")
        return ""

    async def _reviewed(
        self, call: _Call, snap: Snapshot, old: str, edit: WorkspaceEdit, edits: list[TextEdit]
    ) -> str:
        """Apply ``edit`` through the editor's preview and account for what
        the user kept: the hunks declined, or an error if the text shows
        neither choice."""
        target = snap.target
        shown = self.ws.display(target.path)
        await self.editor.apply_edit(edit, self._label(call, target), {})
        current = await review.settled_text(self.editor, target.uri, old, self._disk_reader(target))
        hunks = review.hunks_of(old, edits, self.editor.position_encoding)
        decided = review.landed(old, hunks, current)
        if decided is None:
            raise ToolError(f"{shown}: the document changed while under review. {_REREAD}")
        if any(decided):
            await self._record(call, target.uri, old, current, "edit")
        if all(decided):
            return ""
        kept = sum(decided)
        return (
            f"In review the user applied {kept} of {len(hunks)} changes to {shown} and "
            f"declined {len(hunks) - kept}; that is their choice, not an error: do not "
            f"make the declined changes again unless asked.\n"
            f"{review.describe_declined(old, hunks, decided)}"
        )

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

    async def _create(self, call: _Call, target: Target, content: str) -> str:
        self._require_resource_operations("creating files")
        if not self.editor.supports_document_changes:
            raise ToolError("the editor does not support creating files (no documentChanges)")
        label = self._label(call, target)
        annotation_id, annotations = self._annotation(call, label)
        changes: list[CreateFile | TextDocumentEdit] = [
            CreateFile(
                uri=target.uri,
                options=CreateFileOptions(overwrite=False, ignore_if_exists=False),
                annotation_id=annotation_id,
            )
        ]
        if content:
            start = Position(line=0, character=0)
            insert: TextEdit | AnnotatedTextEdit = (
                TextEdit(range=Range(start=start, end=start), new_text=content)
                if annotation_id is None
                else AnnotatedTextEdit(
                    range=Range(start=start, end=start),
                    new_text=content,
                    annotation_id=annotation_id,
                )
            )
            identifier = OptionalVersionedTextDocumentIdentifier(uri=target.uri, version=None)
            changes.append(TextDocumentEdit(text_document=identifier, edits=[insert]))
        if annotation_id is not None:
            changes.insert(0, self._trigger())
        edit = WorkspaceEdit(document_changes=changes, change_annotations=annotations or None)
        await self._before(call, target, None, False)
        if annotation_id is not None:
            if not await self._reviewed_operation(call, target, edit, {target.path: True}):
                return self._declined_operation(target, "creating")
            current = await review.settled_text(
                self.editor, target.uri, "", self._disk_reader(target)
            )
            await self._record(call, target.uri, None, current, "create")
            return ""
        await self._apply(call, target, edit, {target.uri: content})
        await self._record(call, target.uri, None, content, "create")
        return ""

    async def _reviewed_operation(
        self, call: _Call, target: Target, edit: WorkspaceEdit, exists: dict[Path, bool]
    ) -> bool:
        """Apply a file operation through the editor's preview; whether the
        user let it happen (each path in ``exists`` exists, or not, as it
        should afterwards)."""
        await self.editor.apply_edit(edit, self._label(call, target), {})

        def check() -> bool:
            return all(
                (self.ws.fs.lstat(path) is not None) == want for path, want in exists.items()
            )

        return await anyio.to_thread.run_sync(check)

    def _declined_operation(self, target: Target, verb: str) -> str:
        return (
            f"In review the user declined {verb} {self.ws.display(target.path)}; that is their "
            "choice, not an error: do not try it again unless asked."
        )

    async def rename_path(self, ctx: ToolContext, call_id: str, source: str, dest: str) -> str:
        """Rename a file or folder (a symlink is renamed, not followed)."""
        call = _Call(ctx, call_id, "rename_path")
        old = await self._resolve(source, Access.ENTRY)
        new = await self._resolve(dest, Access.ENTRY)
        if not old.exists:
            raise ToolError(f"{old.requested}: no such file or directory")
        if not old.parts:
            raise PathRefused(f"{old.requested}: is a workspace folder itself")
        if new.exists:
            raise ToolError(f"{new.requested}: already exists; delete it first or pick a new name")
        self._require_resource_operations("renaming files")
        await self._confirm_protected(old, "rename")
        await self._confirm_protected(new, "create")
        before: str | None = None
        if old.kind == "file":
            before = (await self._snapshot(old)).text
        label = self._label(call, old)
        annotation_id, annotations = self._annotation(call, label)
        edit = WorkspaceEdit(
            document_changes=[
                RenameFile(
                    old_uri=old.uri,
                    new_uri=new.uri,
                    options=RenameFileOptions(overwrite=False, ignore_if_exists=False),
                    annotation_id=annotation_id,
                )
            ],
            change_annotations=annotations or None,
        )
        expected: dict[str, str | None] = {old.uri: None}
        if before is not None:
            expected[new.uri] = before
        await self._before(call, old, before, False)
        await self._before(call, new, None, False)
        if annotation_id is not None:
            edit.document_changes = [self._trigger(), *(edit.document_changes or [])]
            landed = {old.path: False, new.path: True}
            if not await self._reviewed_operation(call, old, edit, landed):
                return self._declined_operation(old, "renaming")
        else:
            await self._apply(call, old, edit, expected)
        await self._record(call, old.uri, before, None, "rename_from")
        await self._record(call, new.uri, None, before, "rename_to")
        return f"renamed {self.ws.display(old.path)} to {self.ws.display(new.path)}"

    async def delete_path(self, ctx: ToolContext, call_id: str, path: str) -> str:
        """Delete a file, or a folder and its contents (after confirmation)."""
        call = _Call(ctx, call_id, "delete_path")
        target = await self._resolve(path, Access.ENTRY)
        if not target.exists:
            raise ToolError(f"{target.requested}: no such file or directory")
        if not target.parts:
            raise PathRefused(f"{target.requested}: is a workspace folder itself")
        self._require_resource_operations("deleting files")
        is_dir = target.kind == "dir"
        await self._confirm_protected(target, "delete", is_dir=is_dir)
        before = (await self._snapshot(target)).text if target.kind == "file" else None
        label = self._label(call, target)
        annotation_id, annotations = self._annotation(call, label)
        edit = WorkspaceEdit(
            document_changes=[
                DeleteFile(
                    uri=target.uri,
                    options=DeleteFileOptions(recursive=is_dir, ignore_if_not_exists=False),
                    annotation_id=annotation_id,
                )
            ],
            change_annotations=annotations or None,
        )
        await self._before(call, target, before, False)
        if annotation_id is not None:
            edit.document_changes = [self._trigger(), *(edit.document_changes or [])]
            if not await self._reviewed_operation(call, target, edit, {target.path: False}):
                return self._declined_operation(target, "deleting")
        else:
            await self._apply(call, target, edit, {target.uri: None})
        await self._record(call, target.uri, before, None, "delete_dir" if is_dir else "delete")
        return f"deleted {self.ws.display(target.path)}"
