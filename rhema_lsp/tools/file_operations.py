"""The file operations of the edit tools: creating a file (``write_file`` of a
new path), ``rename_path`` and ``delete_path``, each one ``CreateFile``,
``RenameFile`` or ``DeleteFile`` in a ``WorkspaceEdit`` the editor applies
(never straight to disk), confirmed first on protected paths, journaled, and
in review mode opened in the editor's preview where the user may decline it.
"""

from __future__ import annotations

from lsprotocol.types import (
    AnnotatedTextEdit,
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
from rhema_lsp.tools.edit_base import EditingBase, _Call
from rhema_lsp.tools.errors import PathRefused, ToolError
from rhema_lsp.tools.workspace import Access, Target

__all__ = ["FileOperations"]


class FileOperations(EditingBase):
    """Create, rename and delete, through the editor."""

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
