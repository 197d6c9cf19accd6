"""Next-edit suggestions: from the user's recent edits to the next one.

The history (:class:`EditHistory`) is kept from the document changes: each
change of a document becomes one unified diff of its old and new lines
(Zeta's "User edited" event), the last :data:`EVENTS` kept per document,
adjacent edits of the same lines merged into one event. The prompt is the
open Zeta format (:func:`zeta_prompt`): the instruction, the events under
``### User Edits:``, the excerpt around the cursor with its editable region
between ``<|editable_region_start|>`` and ``<|editable_region_end|>`` and the
cursor at ``<|user_cursor_is_here|>``, then ``### Response:``; Zed's Zeta
model on an OpenAI-compatible server takes it as it is, and any chat model
takes it as a chat message. The model's rewrite of the region
(:func:`rewritten_region`) becomes the minimal edits (:func:`minimal_edits`:
changed lines only, trimmed to the characters that differ), as offsets of
the text the prompt was made from; the caller answers them for exactly that
document version.
"""

from __future__ import annotations

import difflib
from collections import deque
from dataclasses import dataclass, field

__all__ = [
    "CURSOR",
    "EVENTS",
    "REGION_END",
    "REGION_START",
    "Edit",
    "EditHistory",
    "Prompt",
    "minimal_edits",
    "rewritten_region",
    "zeta_prompt",
]

REGION_START = "<|editable_region_start|>"
REGION_END = "<|editable_region_end|>"
CURSOR = "<|user_cursor_is_here|>"
START_OF_FILE = "<|start_of_file|>"

EVENTS = 5
"""Edit events kept per document."""

REGION_LINES = 12
"""Lines of the editable region on each side of the cursor."""

INSTRUCTION = (
    "### Instruction:\n"
    "You are a code completion assistant and your task is to analyze user edits and then "
    "rewrite an excerpt that the user provides, suggesting the appropriate edits within the "
    "excerpt, taking into account the cursor location.\n\n"
)


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace ``text[start:end]`` with ``new``."""

    start: int
    end: int
    new: str


@dataclass
class _Events:
    text: str
    events: deque[str] = field(default_factory=lambda: deque(maxlen=EVENTS))
    last_lines: tuple[int, int] | None = None
    base: str = ""


class EditHistory:
    """The recent edits of each document, as unified diffs."""

    def __init__(self) -> None:
        self._documents: dict[str, _Events] = {}

    def opened(self, uri: str, text: str) -> None:
        self._documents[uri] = _Events(text)

    def closed(self, uri: str) -> None:
        self._documents.pop(uri, None)

    def changed(self, uri: str, path: str, text: str) -> None:
        """``uri`` (shown as ``path``) now holds ``text``."""
        entry = self._documents.get(uri)
        if entry is None:
            self._documents[uri] = _Events(text)
            return
        old, entry.text = entry.text, text
        lines = _changed_lines(old, text)
        if lines is None:
            return
        if entry.events and entry.last_lines is not None and _near(entry.last_lines, lines):
            entry.events.pop()  # the same edit going on: one event from its start
            old = entry.base
        else:
            entry.base = old
        entry.last_lines = lines
        hunk = _hunk(old, text)
        if hunk:
            entry.events.append(f'User edited "{path}":\n```diff\n{hunk}\n```\n')

    def events(self, uri: str) -> list[str]:
        entry = self._documents.get(uri)
        return list(entry.events) if entry is not None else []


def _changed_lines(old: str, new: str) -> tuple[int, int] | None:
    if old == new:
        return None
    a, b = old.split("\n"), new.split("\n")
    first = 0
    while first < min(len(a), len(b)) and a[first] == b[first]:
        first += 1
    last = 0
    while last < min(len(a), len(b)) - first and a[-1 - last] == b[-1 - last]:
        last += 1
    return first, len(b) - last


def _hunk(old: str, new: str) -> str:
    """One unified-diff hunk of ``old`` to ``new`` (two lines of context),
    made from the changed lines only: no diff of the whole document."""
    a, b = old.split("\n"), new.split("\n")
    first = 0
    while first < min(len(a), len(b)) and a[first] == b[first]:
        first += 1
    last = 0
    while last < min(len(a), len(b)) - first and a[-1 - last] == b[-1 - last]:
        last += 1
    if first == len(a) - last and first == len(b) - last:
        return ""
    before = a[max(0, first - 2) : first]
    after = a[len(a) - last : len(a) - last + 2]
    removed = a[first : len(a) - last]
    added = b[first : len(b) - last]
    top = first - len(before) + 1
    lines = [
        f"@@ -{top},{len(before) + len(removed) + len(after)} "
        f"+{top},{len(before) + len(added) + len(after)} @@",
        *(f" {line}" for line in before),
        *(f"-{line}" for line in removed),
        *(f"+{line}" for line in added),
        *(f" {line}" for line in after),
    ]
    return "\n".join(lines)


def _near(before: tuple[int, int], now: tuple[int, int]) -> bool:
    return now[0] <= before[1] + 1 and before[0] <= now[1] + 1


@dataclass(frozen=True, slots=True)
class Prompt:
    """A Zeta prompt and the region of the text it lets the model rewrite."""

    text: str
    start: int
    end: int


def zeta_prompt(path: str, events: list[str], text: str, cursor: int) -> Prompt:
    """The Zeta prompt of ``text`` with the cursor at offset ``cursor``."""
    lines = text.split("\n")
    line = text.count("\n", 0, cursor)
    first = max(0, line - REGION_LINES)
    last = min(len(lines), line + REGION_LINES + 1)
    start = sum(len(item) + 1 for item in lines[:first])
    end = min(len(text), start + sum(len(item) + 1 for item in lines[first:last]) - 1)
    if end > start and text[end - 1] == "\n":
        end -= 1
    end = max(end, cursor)
    context_start = sum(len(item) + 1 for item in lines[: max(0, first - 4)])
    excerpt = (
        (START_OF_FILE + "\n" if first == 0 else "")
        + text[context_start:start]
        + REGION_START
        + "\n"
        + text[start:cursor]
        + CURSOR
        + text[cursor:end]
        + "\n"
        + REGION_END
        + "\n"
        + text[end : end + 400]
    )
    body = (
        INSTRUCTION
        + "### User Edits:\n\n"
        + "\n".join(events)
        + "\n### User Excerpt:\n\n"
        + f"```{path}\n{excerpt}\n```\n\n### Response:\n"
    )
    return Prompt(body, start, end)


def rewritten_region(answer: str) -> str | None:
    """The region the model rewrote (markers and cursor removed), or
    ``None`` when the answer holds no region."""
    begin = answer.find(REGION_START)
    if begin < 0:
        return None
    body = answer[begin + len(REGION_START) :]
    body = body.removeprefix("\n")
    finish = body.find(REGION_END)
    if finish < 0:
        return None
    body = body[:finish].removesuffix("\n")
    return body.replace(CURSOR, "")


def minimal_edits(text: str, prompt: Prompt, region: str) -> list[Edit]:
    """The edits that turn ``text``'s region into ``region``, minimal: the
    changed lines only, each trimmed to the characters that differ."""
    old = text[prompt.start : prompt.end]
    old_lines = old.split("\n")
    new_lines = region.split("\n")
    offsets = [0]
    for item in old_lines:
        offsets.append(offsets[-1] + len(item) + 1)
    edits: list[Edit] = []
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        before = "\n".join(old_lines[i1:i2])
        after = "\n".join(new_lines[j1:j2])
        start = offsets[i1]
        if tag == "insert":
            edits.append(Edit(prompt.start + start, prompt.start + start, after + "\n"))
            continue
        if tag == "delete":
            end = min(offsets[i2], len(old))
            edits.append(Edit(prompt.start + start, prompt.start + end, ""))
            continue
        if i2 - i1 == j2 - j1:  # line by line: each changed line its own edit
            for number in range(i2 - i1):
                edits.extend(
                    _trimmed(
                        prompt.start + offsets[i1 + number],
                        old_lines[i1 + number],
                        new_lines[j1 + number],
                    )
                )
        else:
            edits.extend(_trimmed(prompt.start + start, before, after))
    return edits


def _trimmed(start: int, before: str, after: str) -> list[Edit]:
    """``before`` (at ``start``) to ``after``, cut to the characters that differ."""
    if before == after:
        return []
    head = 0
    while head < min(len(before), len(after)) and before[head] == after[head]:
        head += 1
    tail = 0
    while (
        tail < min(len(before), len(after)) - head
        and before[len(before) - 1 - tail] == after[len(after) - 1 - tail]
    ):
        tail += 1
    return [Edit(start + head, start + len(before) - tail, after[head : len(after) - tail])]
