"""Undoing a turn: every file the turn changed goes back to what it was, as
long as it still holds exactly what the agent left.

For each document the turn touched, the journal gives its text before the
turn's first change and after its last. A document whose current text (the
open buffer's, else the file's) still equals the agent's last text is
reverted, in one ``WorkspaceEdit``; a document the user changed since is a
conflict and left alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from lsprotocol import types

from rhema_lsp.tools import EditJournal, Editor
from rhema_lsp.tools.positions import minimal_edits, uri_to_path

__all__ = ["revert_turn"]


@dataclass
class _Span:
    before: str | None
    after: str | None


def _current(editor: Editor, uri: str) -> str | None:
    document = editor.open_document(uri)
    if document is not None:
        return document.text
    path = uri_to_path(uri)
    try:
        text: str = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    return text


def _spans(journal: EditJournal, turn_id: str) -> dict[str, _Span]:
    spans: dict[str, _Span] = {}
    for entry in journal.entries_for(turn_id):
        span = spans.get(entry.uri)
        if span is None:
            spans[entry.uri] = _Span(entry.before, entry.after)
        else:
            span.after = entry.after
    return spans


def _revert_ops(
    editor: Editor, uri: str, span: _Span, current: str | None
) -> list[types.TextDocumentEdit | types.CreateFile | types.DeleteFile]:
    if span.before is None:
        return [
            types.DeleteFile(uri=uri, options=types.DeleteFileOptions(ignore_if_not_exists=True))
        ]
    ops: list[types.TextDocumentEdit | types.CreateFile | types.DeleteFile] = []
    old = current
    if current is None:
        ops.append(types.CreateFile(uri=uri, options=types.CreateFileOptions(overwrite=True)))
        old = ""
    document = editor.open_document(uri)
    ops.append(
        types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(
                uri=uri, version=document.version if document else None
            ),
            edits=list(minimal_edits(old or "", span.before, editor.position_encoding)),
        )
    )
    return ops


async def revert_turn(
    editor: Editor, journal: EditJournal, turn_id: str, *, label: str
) -> tuple[list[str], list[str]]:
    """Revert the changes of ``turn_id`` that the user has not touched since.

    Returns
    -------
    tuple
        The URIs reverted, and the URIs left alone as conflicts.
    """
    reverted: list[str] = []
    conflicts: list[str] = []
    changes: list[types.TextDocumentEdit | types.CreateFile | types.DeleteFile] = []
    expected: dict[str, str | None] = {}
    for uri, span in _spans(journal, turn_id).items():
        current = _current(editor, uri)
        if current != span.after:
            conflicts.append(uri)
            continue
        if span.before == span.after:
            continue
        changes.extend(_revert_ops(editor, uri, span, current))
        expected[uri] = span.before
        reverted.append(uri)
    if changes:
        if editor.supports_document_changes:
            edit = types.WorkspaceEdit(document_changes=changes)
        else:
            edit = types.WorkspaceEdit(
                changes={
                    op.text_document.uri: [e for e in op.edits if type(e) is types.TextEdit]
                    for op in changes
                    if isinstance(op, types.TextDocumentEdit)
                }
            )
        outcome = await editor.apply_edit(edit, label, expected)
        if not outcome.applied:
            conflicts.extend(reverted)
            reverted = []
    return reverted, conflicts
