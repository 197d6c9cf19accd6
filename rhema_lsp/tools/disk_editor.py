"""An :class:`~rhema_lsp.tools.editor.Editor` without an editor: files on disk.

For the headless client and tests. Documents can be held "open" in an
in-memory overlay (with versions, like an editor's unsaved buffers); edits to
them change the overlay, everything else is written to disk atomically
through :class:`~rhema_lsp.tools.confined_fs.ConfinedFS` (temporary file in
the same folder, fsync, rename), so it can never write outside ``roots``.

A :class:`WorkspaceEdit` is first checked and computed in full against a
virtual view (versions, existence, overlapping edits), then committed in
order; a check failure applies nothing. Every ``expected`` text is
compared with what the edit would produce before anything is written, so an
edit computed against text that has since changed on disk is refused whole.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio.to_thread
from lsprotocol.types import (
    CreateFile,
    DeleteFile,
    RenameFile,
    SnippetTextEdit,
    TextDocumentEdit,
    TextEdit,
    WorkspaceEdit,
)

from rhema_lsp.tools.confined_fs import ConfinedFS
from rhema_lsp.tools.editor import ConfirmCallback, EditOutcome, OpenDocument
from rhema_lsp.tools.errors import ToolError
from rhema_lsp.tools.positions import apply_text_edits, uri_to_path

__all__ = ["DiskEditor", "StaleDocument"]


class StaleDocument(ToolError):
    """An edit carried a version the open document no longer has."""


@dataclass(slots=True)
class _Buffer:
    text: str
    version: int


@dataclass(frozen=True, slots=True)
class _Write:
    path: Path
    text: str
    create_only: bool


@dataclass(frozen=True, slots=True)
class _Rename:
    source: Path
    target: Path
    overwrite: bool


@dataclass(frozen=True, slots=True)
class _Delete:
    path: Path
    recursive: bool


_Op = _Write | _Rename | _Delete


class DiskEditor:
    """Applies edits to files below ``roots``; optional in-memory open documents.

    Parameters
    ----------
    roots
        The folders edits may touch.
    confirm
        Asks the user; without it every confirmation is declined.
    overlay
        URI -> text of documents to treat as open (version 1).
    position_encoding
        The unit of positions in the edits it receives.
    """

    supports_document_changes: bool
    supports_resource_operations: bool
    supports_change_annotations: bool

    def __init__(
        self,
        roots: Sequence[Path],
        confirm: ConfirmCallback | None = None,
        *,
        overlay: Mapping[str, str] | None = None,
        position_encoding: str = "utf-16",
        supports_document_changes: bool = True,
        supports_resource_operations: bool = True,
        supports_change_annotations: bool = False,
    ) -> None:
        self.fs = ConfinedFS(roots)
        self.position_encoding = position_encoding
        self.supports_document_changes = supports_document_changes
        self.supports_resource_operations = supports_resource_operations
        self.supports_change_annotations = supports_change_annotations
        self._confirm = confirm
        self._buffers: dict[Path, _Buffer] = {}
        for uri, text in (overlay or {}).items():
            self._buffers[self._key(uri)] = _Buffer(text, 1)

    @staticmethod
    def _key(uri: str) -> Path:
        return Path(os.path.normpath(uri_to_path(uri)))

    # -- open documents ------------------------------------------------------

    def open_document(self, uri: str) -> OpenDocument | None:
        """The overlay's text of ``uri``, if it is held open."""
        buffer = self._buffers.get(self._key(uri))
        if buffer is None:
            return None
        return OpenDocument(uri, buffer.text, buffer.version)

    def open_documents(self) -> list[OpenDocument]:
        """Every document held open."""
        return [OpenDocument(p.as_uri(), b.text, b.version) for p, b in self._buffers.items()]

    # -- confirmation --------------------------------------------------------

    async def confirm(self, message: str, choices: Sequence[str]) -> str | None:
        """Ask through the callback; ``None`` (declined) without one."""
        if self._confirm is None:
            return None
        return await self._confirm(message, choices)

    # -- edits ---------------------------------------------------------------

    async def apply_edit(
        self, edit: WorkspaceEdit, label: str, expected: Mapping[str, str | None]
    ) -> EditOutcome:
        """Check, then apply ``edit``; verify ``expected`` afterwards."""
        return await anyio.to_thread.run_sync(self._apply_sync, edit, expected)

    def _apply_sync(self, edit: WorkspaceEdit, expected: Mapping[str, str | None]) -> EditOutcome:
        try:
            view: dict[Path, str | None] = {}
            ops = self._plan(edit, view)
            mismatch = self._verify(expected, view)
            if mismatch is not None:
                return mismatch
            for op in ops:
                self._commit(op)
        except ToolError as exc:
            return EditOutcome(False, str(exc))
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            return EditOutcome(False, f"the edit could not be applied: {exc}")
        return EditOutcome(True)

    def _current(self, path: Path, view: dict[Path, str | None]) -> str | None:
        """The text at ``path`` as the edit so far would leave it."""
        if path in view:
            return view[path]
        buffer = self._buffers.get(path)
        if buffer is not None:
            return buffer.text
        info = self.fs.lstat(path)
        if info is None:
            return None
        data, _size = self.fs.read_bytes(path)
        return data.decode("utf-8")

    def _exists(self, path: Path, view: dict[Path, str | None]) -> bool:
        if path in view:
            return view[path] is not None
        return path in self._buffers or self.fs.lstat(path) is not None

    def check_version(self, path: Path, version: int | None) -> None:
        """Raise :class:`StaleDocument` if ``version`` is not the open one's."""
        buffer = self._buffers.get(path)
        if version is not None and buffer is not None and buffer.version != version:
            raise StaleDocument(
                f"{path}: the document changed (version {version} -> {buffer.version})"
            )

    def _text_edits(
        self,
        path: Path,
        version: int | None,
        edits: Sequence[TextEdit],
        view: dict[Path, str | None],
    ) -> _Write | None:
        self.check_version(path, version)
        text = self._current(path, view)
        if text is None:
            raise ToolError(f"{path}: no such file to edit")
        new_text = apply_text_edits(text, edits, self.position_encoding)
        view[path] = new_text
        return _Write(path, new_text, create_only=False)

    def _plan(self, edit: WorkspaceEdit, view: dict[Path, str | None]) -> list[_Op]:
        ops: list[_Op] = []
        if edit.document_changes is not None:
            for change in edit.document_changes:
                op = self._plan_change(change, view)
                if op is not None:
                    ops.append(op)
        elif edit.changes is not None:
            for uri, edits in edit.changes.items():
                op = self._text_edits(self._key(uri), None, edits, view)
                if op is not None:
                    ops.append(op)
        return ops

    def _plan_change(
        self,
        change: TextDocumentEdit | CreateFile | RenameFile | DeleteFile,
        view: dict[Path, str | None],
    ) -> _Op | None:
        if isinstance(change, TextDocumentEdit):
            edits: list[TextEdit] = []
            for item in change.edits:
                if isinstance(item, SnippetTextEdit):
                    edits.append(TextEdit(range=item.range, new_text=item.snippet.value))
                else:
                    edits.append(TextEdit(range=item.range, new_text=item.new_text))
            return self._text_edits(
                self._key(change.text_document.uri), change.text_document.version, edits, view
            )
        if isinstance(change, CreateFile):
            path = self._key(change.uri)
            options = change.options
            if self._exists(path, view):
                if options is not None and options.overwrite:
                    view[path] = ""
                    return _Write(path, "", create_only=False)
                if options is not None and options.ignore_if_exists:
                    return None
                raise ToolError(f"{path}: already exists")
            view[path] = ""
            return _Write(path, "", create_only=True)
        if isinstance(change, RenameFile):
            source, target = self._key(change.old_uri), self._key(change.new_uri)
            rename_options = change.options
            if not self._exists(source, view):
                raise ToolError(f"{source}: no such file to rename")
            overwrite = bool(rename_options and rename_options.overwrite)
            if self._exists(target, view) and not overwrite:
                if rename_options is not None and rename_options.ignore_if_exists:
                    return None
                raise ToolError(f"{target}: already exists")
            info = None if source in view or source in self._buffers else self.fs.lstat(source)
            if info is not None and not stat.S_ISREG(info.st_mode):
                view.pop(target, None)  # a directory or link: its contents are not tracked
            else:
                view[target] = self._current(source, view)
            view[source] = None
            return _Rename(source, target, overwrite)
        path = self._key(change.uri)
        delete_options = change.options
        if not self._exists(path, view):
            if delete_options is not None and delete_options.ignore_if_not_exists:
                return None
            raise ToolError(f"{path}: no such file to delete")
        view[path] = None
        return _Delete(path, bool(delete_options and delete_options.recursive))

    def _commit(self, op: _Op) -> None:
        if isinstance(op, _Write):
            buffer = self._buffers.get(op.path)
            if buffer is not None:
                buffer.text = op.text
                buffer.version += 1
                return
            self.fs.write_atomic(op.path, op.text.encode("utf-8"), must_not_exist=op.create_only)
        elif isinstance(op, _Rename):
            on_disk = self.fs.lstat(op.source) is not None
            if on_disk:
                self.fs.rename(op.source, op.target, overwrite=op.overwrite)
            buffer = self._buffers.pop(op.source, None)
            if buffer is not None:
                self._buffers[op.target] = _Buffer(buffer.text, buffer.version + 1)
        else:
            if self.fs.lstat(op.path) is not None:
                self.fs.delete(op.path, recursive=op.recursive)
            self._buffers.pop(op.path, None)

    def _verify(
        self, expected: Mapping[str, str | None], view: dict[Path, str | None]
    ) -> EditOutcome | None:
        """Before committing: would each document end as ``expected``? A file
        changed on disk since the caller read it fails here, unwritten."""
        for uri, want in expected.items():
            path = self._key(uri)
            if path in view:
                have = view[path]
            else:
                try:
                    have = self._current(path, view)
                except (ToolError, OSError, UnicodeDecodeError) as exc:
                    return EditOutcome(False, f"{path}: could not check the edit ({exc})")
            if have != want:
                return EditOutcome(
                    False, f"{path}: the file changed since it was read; nothing was written"
                )
        return None
