"""Review mode: every change pre-selected in the editor's preview, and an
exact account of which ones the user declined.

The shape, measured in VS Code 1.100 (code-server 4.100.3): its refactor
preview opens when any edit of a ``WorkspaceEdit`` carries an annotation with
``needsConfirmation: true``, and it ticks exactly the edits whose annotation
does *not* need confirmation (``checked = !needsConfirmation``); Apply then
applies the ticked ones only. So each real change carries the tool call's
annotation with ``needsConfirmation: false`` (ticked), and one extra
operation carries :data:`REVIEW_ANNOTATION`, which needs confirmation and so
opens the preview: a ``CreateFile`` of the workspace folder with
``ignoreIfExists``. The preview leaves such an operation out of its tree (the
folder exists), so the user sees only the real changes, all ticked; applied
or not, it changes nothing. (An empty text edit would do too, but shows up
as an unticked row holding the file's first line.)
After the editor answers, :func:`landed` works out from the document's text
which hunks were applied: the model hears the declined ones as the user's
choice, not as an error.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable

import anyio
from lsprotocol.types import (
    ChangeAnnotation,
    CreateFile,
    CreateFileOptions,
    TextEdit,
)

from rhema_lsp.tools.editor import Editor
from rhema_lsp.tools.positions import LineIndex

__all__ = [
    "REVIEW_ANNOTATION",
    "REVIEW_WAIT",
    "Hunk",
    "describe_declined",
    "hunks_of",
    "landed",
    "review_annotations",
    "settled_text",
    "trigger",
]

REVIEW_ANNOTATION = "rhema:review"
"""The annotation that opens the preview (on a no-op edit)."""

REVIEW_WAIT = 2.0
"""Seconds to wait for the document sync to show what the user applied."""

Hunk = tuple[int, int, str]
"""A change as offsets into the old text: ``(start, end, new_text)``."""


def review_annotations(annotation_id: str, label: str) -> dict[str, ChangeAnnotation]:
    """The call's annotation (pre-selected) and the one that opens the preview."""
    return {
        annotation_id: ChangeAnnotation(
            label=label, needs_confirmation=False, description="proposed by the Rhema agent"
        ),
        REVIEW_ANNOTATION: ChangeAnnotation(
            label="Rhema review: untick any change you do not want, then Apply",
            needs_confirmation=True,
            description="changes are pre-selected; Discard applies none",
        ),
    }


def trigger(folder_uri: str) -> CreateFile:
    """The no-op that carries :data:`REVIEW_ANNOTATION`: creating the
    (existing) workspace folder, if it does not exist."""
    return CreateFile(
        uri=folder_uri,
        options=CreateFileOptions(ignore_if_exists=True),
        annotation_id=REVIEW_ANNOTATION,
    )


def hunks_of(text: str, edits: list[TextEdit], encoding: str) -> list[Hunk]:
    """``edits`` (against ``text``) as offset hunks, in document order."""
    index = LineIndex(text, encoding)
    hunks = [(index.offset(e.range.start), index.offset(e.range.end), e.new_text) for e in edits]
    return sorted(hunks, key=lambda hunk: (hunk[0], hunk[1]))


def landed(old: str, hunks: list[Hunk], current: str) -> list[bool] | None:
    """Which ``hunks`` of an edit on ``old`` the text ``current`` shows
    applied; ``None`` when no choice of them yields ``current`` (the
    document changed otherwise)."""

    @functools.cache
    def walk(index: int, cursor: int, at: int) -> tuple[bool, ...] | None:
        if index == len(hunks):
            return () if current[at:] == old[cursor:] else None
        start, end, new = hunks[index]
        gap = old[cursor:start]
        if not current.startswith(gap, at):
            return None
        at += len(gap)
        for applied, piece in ((True, new), (False, old[start:end])):
            if current.startswith(piece, at):
                rest = walk(index + 1, end, at + len(piece))
                if rest is not None:
                    return (applied, *rest)
        return None

    found = walk(0, 0, 0)
    return None if found is None else list(found)


async def settled_text(
    editor: Editor,
    uri: str,
    old: str,
    read_disk: Callable[[], Awaitable[str | None]],
    wait: float = REVIEW_WAIT,
) -> str:
    """The document's text (the editor's buffer, else ``read_disk``) once it
    shows a change, or after ``wait`` (the user applied nothing)."""
    seen = old
    with anyio.move_on_after(wait):
        while True:
            document = editor.open_document(uri)
            text = document.text if document is not None else await read_disk()
            seen = old if text is None else text
            if seen != old:
                return seen
            await anyio.sleep(0.05)
    return seen


def describe_declined(old: str, hunks: list[Hunk], decided: list[bool]) -> str:
    """The declined hunks, one line each: their lines, and what they would
    have become."""
    lines = []
    for number, ((start, end, new), applied) in enumerate(zip(hunks, decided, strict=True), 1):
        if applied:
            continue
        head = old.rfind("\n", 0, start) + 1
        tail = old.find("\n", end)
        tail = len(old) if tail == -1 else tail
        first = old.count("\n", 0, head) + 1
        last = first + old.count("\n", head, tail)
        where = f"line {first}" if last == first else f"lines {first}-{last}"
        before = old[head:tail]
        after = old[head:start] + new + old[end:tail]
        lines.append(f"  change {number} at {where}: {_clip(before)} -> {_clip(after)}")
    return "\n".join(lines)


def _clip(text: str, limit: int = 80) -> str:
    flat = " | ".join(line.strip() for line in text.splitlines() if line.strip())
    flat = flat or "(nothing)"
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
