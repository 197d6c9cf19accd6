"""How every change the edit tools make is sent, checked and journaled.

:class:`EditingBase` holds what the edit tools share (the text edits of
:mod:`~rhema_lsp.tools.editing`, the file operations of
:mod:`~rhema_lsp.tools.file_operations`): resolving a path for writing,
reading the editor's text, asking before protected paths, the edit's label
and review annotations, telling the journal (and the diagnostics watch)
before a change is sent and after it landed, applying a ``WorkspaceEdit``
(an edit the editor did not apply is an in-band error telling the model to
re-read) and, in review mode, accounting for a file operation the user
declined.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import anyio.to_thread
from lsprotocol.types import (
    ChangeAnnotation,
    CreateFile,
    WorkspaceEdit,
)

from rhema_lsp.engine.tools import ToolContext
from rhema_lsp.tools import review
from rhema_lsp.tools.after_edit import EditWatch
from rhema_lsp.tools.editor import DENY
from rhema_lsp.tools.errors import PathRefused, ToolError
from rhema_lsp.tools.gate import Gate, Snapshot
from rhema_lsp.tools.journal import Journal
from rhema_lsp.tools.rules import write_confirmation_reason
from rhema_lsp.tools.workspace import Access, Target

__all__ = ["EditingBase"]

_ALLOW = "Allow"
_DENY = DENY
_REREAD = "Re-read the file with read_file and try again."


@dataclass(frozen=True, slots=True)
class _Call:
    ctx: ToolContext
    call_id: str
    tool: str


class EditingBase:
    """What the edit tools share, bound to a workspace and an editor.

    Parameters
    ----------
    gate
        The confined workspace (every path resolved and read through it) and
        the editor, where edits are applied and confirmations asked.
    journal
        Where applied changes are recorded (optional).
    review
        Whether edits go through the editor's preview for the user to confirm.
    watch
        Told of every document about to change, for the diagnostics after
        the edit (optional).
    """

    def __init__(
        self, gate: Gate, journal: Journal | None, review: bool, watch: EditWatch | None = None
    ) -> None:
        self.gate = gate
        self.watch = watch
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
        """Tell the journal ``target`` is about to change (its checkpoint),
        and the watch (its problems before the edit)."""
        if self.watch is not None:
            await self.watch.before(call.call_id, call.tool, target.uri, text)
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
        self,
        call: _Call,
        target: Target,
        edit: WorkspaceEdit,
        expected: dict[str, str | None],
        label: str | None = None,
    ) -> None:
        """Apply ``edit`` (labelled for ``target`` unless ``label``); the
        editor answers applied only once every open document it touched
        holds its ``expected`` text (its one check)."""
        label = label or self._label(call, target)
        outcome = await self.editor.apply_edit(edit, label, expected)
        if not outcome.applied:
            shown = self.ws.display(target.path)
            reason = outcome.reason or "rejected"
            raise ToolError(f"{shown}: the editor did not apply the edit ({reason}). {_REREAD}")

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
