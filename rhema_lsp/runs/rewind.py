"""Rewinding a session: its files back to before a turn, its conversation to
before that turn, or both, from the checkpoints in the session store.

Per file, the store's plan gives the content before the turn and the hash
the agent left it at. A file that still holds what the agent left (in the
editor's buffer when open, else on disk) is restored; one the user changed
since is a conflict, reported with the reason and left alone, unless
``force``. When the process died while the agent's last change to a file
was being applied, what it left is unknown (:attr:`Restore.unknown`): the
file is restored whatever it holds, so no applied change is beyond a
rewind. Every restore goes out as one ``WorkspaceEdit`` through the
:class:`~rhema_lsp.tools.Editor` (an editor's ``workspace/applyEdit``, or
atomic writes on disk headless). Paths come from the store, which a
workspace could have crafted: each is confined like the tools' own writes
(inside a workspace folder, never ``.git`` or ``.rhema``), else a conflict.

Restored documents that matched the disk before the turn (or whose restored
text is what the disk holds) are listed in ``save``: the client saves them,
so a rewind leaves clean buffers clean. The rewind is then recorded
(append-only) with the files restored, and the conversation cut back when
asked. The caller holds the session's lease.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio.to_thread
from lsprotocol import types

from rhema_lsp.sessions import Restore, SessionStore, content_hash
from rhema_lsp.tools import Access, Editor, ToolError, Workspace, minimal_edits, uri_to_path
from rhema_lsp.vocabulary import RewindWhat

__all__ = ["Conflict", "RewindReport", "current_bytes", "rewind"]

Change = types.TextDocumentEdit | types.CreateFile | types.DeleteFile


@dataclass(frozen=True, slots=True)
class Conflict:
    """A file left alone, and why."""

    uri: str
    reason: str


@dataclass
class RewindReport:
    """What a rewind did.

    Attributes
    ----------
    restored
        Files now as they were before the turn.
    conflicts
        Files left alone (changed since, outside the workspace, refused).
    save
        Restored documents the client should save (clean before the turn).
    messages
        The live conversation's length after a conversation rewind.
    """

    restored: list[str] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    save: list[str] = field(default_factory=list)
    messages: int | None = None


def _disk(path: Path) -> bytes | None:
    """A regular file's bytes (``None``: absent; ``b""``: not a regular
    file). Opened without blocking and without following a final link, so
    a FIFO or a device a crafted store names is never waited on."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError:
        return b""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b""
        os.set_blocking(fd, True)
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


async def current_bytes(editor: Editor, uri: str) -> bytes | None:
    """What ``uri`` holds now: the editor's buffer when open, else the file
    (``None``: absent)."""
    document = editor.open_document(uri)
    if document is not None:
        return document.text.encode("utf-8")
    return await anyio.to_thread.run_sync(_disk, uri_to_path(uri))


def _confine(ws: Workspace, uri: str) -> str | None:
    """Why ``uri`` may not be written by a rewind, or ``None`` (blocking)."""
    try:
        path = uri_to_path(uri)
        ws.resolve(str(path), Access.WRITE)
    except (ToolError, ValueError) as exc:
        return f"not restored: {exc}"
    return None


def _ops(editor: Editor, uri: str, current: bytes | None, restore: bytes | None) -> list[Change]:
    if restore is None:
        return [
            types.DeleteFile(uri=uri, options=types.DeleteFileOptions(ignore_if_not_exists=True))
        ]
    ops: list[Change] = []
    if current is None:
        ops.append(types.CreateFile(uri=uri, options=types.CreateFileOptions(overwrite=True)))
    old = "" if current is None else current.decode("utf-8")
    document = editor.open_document(uri)
    ops.append(
        types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(
                uri=uri, version=document.version if document else None
            ),
            edits=list(minimal_edits(old, restore.decode("utf-8"), editor.position_encoding)),
        )
    )
    return ops


def _edit(editor: Editor, changes: list[Change]) -> types.WorkspaceEdit:
    if editor.supports_document_changes:
        return types.WorkspaceEdit(document_changes=changes)
    return types.WorkspaceEdit(
        changes={
            op.text_document.uri: [e for e in op.edits if type(e) is types.TextEdit]
            for op in changes
            if isinstance(op, types.TextDocumentEdit)
        }
    )


async def _restore_files(
    store: SessionStore,
    editor: Editor,
    ws: Workspace,
    plans: list[Restore],
    *,
    force: bool,
    label: str,
) -> RewindReport:
    report = RewindReport()
    changes: list[Change] = []
    expected: dict[str, str | None] = {}
    cleans: dict[str, bool] = {}
    for plan in plans:
        refused = await anyio.to_thread.run_sync(_confine, ws, plan.uri)
        if refused is not None:
            report.conflicts.append(Conflict(plan.uri, refused))
            continue
        current = await current_bytes(editor, plan.uri)
        restore = None if plan.restore is None else await store.checkpoints.blob(plan.restore)
        now = None if current is None else content_hash(current)
        if now == plan.restore:
            report.restored.append(plan.uri)
            continue
        if now != plan.expect and not plan.unknown and not force:
            what = "deleted" if current is None else "changed"
            turns = ", ".join(map(str, plan.turns))
            report.conflicts.append(
                Conflict(
                    plan.uri,
                    f"{what} since turn {turns} left it; not restored (force overwrites it)",
                )
            )
            continue
        try:
            changes.extend(_ops(editor, plan.uri, current, restore))
        except UnicodeDecodeError:
            report.conflicts.append(Conflict(plan.uri, "not text; not restored"))
            continue
        expected[plan.uri] = None if restore is None else restore.decode("utf-8")
        cleans[plan.uri] = plan.clean
    if changes:
        outcome = await editor.apply_edit(_edit(editor, changes), label, expected)
        if not outcome.applied:
            reason = outcome.reason or "the editor did not apply the edit"
            report.conflicts.extend(Conflict(uri, f"not restored: {reason}") for uri in expected)
            return report
    for uri, text in expected.items():
        report.restored.append(uri)
        if text is None:
            continue
        on_disk = await anyio.to_thread.run_sync(_disk, uri_to_path(uri))
        if cleans[uri] or on_disk == text.encode("utf-8"):
            report.save.append(uri)
    return report


def _same_file(a: str, b: str) -> bool:
    try:
        return uri_to_path(a) == uri_to_path(b)
    except ValueError:
        return a == b


def _only(
    plans: list[Restore], paths: Sequence[str], turn: int
) -> tuple[list[Restore], list[Conflict]]:
    """The plans for ``paths`` only, and a conflict for each path no turn
    from ``turn`` on changed."""
    kept = [plan for plan in plans if any(_same_file(plan.uri, uri) for uri in paths)]
    missing = [
        Conflict(uri, f"not changed by turn {turn} or later; nothing to restore")
        for uri in paths
        if not any(_same_file(plan.uri, uri) for plan in plans)
    ]
    return kept, missing


async def rewind(
    store: SessionStore,
    editor: Editor,
    roots: Sequence[Path],
    session_id: str,
    turn: int,
    what: RewindWhat,
    *,
    force: bool = False,
    label: str = "rhema: rewind",
    paths: Sequence[str] | None = None,
) -> RewindReport:
    """Rewind ``session_id`` to before ``turn`` (see the module docstring);
    the caller holds the session's lease.

    Raises
    ------
    SessionStoreError
        The store cannot be read or written, or (conversation) has no such
        turn left to rewind.
    """
    report = RewindReport()
    if what != "conversation":
        plans = await store.checkpoints.plan(session_id, turn)
        unplanned: list[Conflict] = []
        if paths is not None:
            plans, unplanned = _only(plans, paths, turn)
        ws = Workspace(roots, roots[0])
        report = await _restore_files(store, editor, ws, plans, force=force, label=label)
        report.conflicts.extend(unplanned)
    report.messages = await store.checkpoints.record_rewind(session_id, turn, what, report.restored)
    return report
