"""The text around the cursor, and the stop rule a suggestion is cut at.

A position is LSP's (line, UTF-16 character). The window is bounded in
characters (a token is about four): the prefix ends exactly at the cursor,
the suffix starts right after it. The stop rule: several lines when the
cursor is at an empty body (its line is blank, or ends with an opener such
as ``:`` or ``{``, and nothing follows the cursor on it), one line
otherwise; a multi-line suggestion ends where the code leaves the body (a
line indented less than the body) and after :data:`MAX_LINES` lines. A
suggestion that only repeats the text after the cursor is no suggestion.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "MAX_LINES",
    "Cursor",
    "cut",
    "offset_of",
    "position_of",
    "replaces_tail",
    "split_at",
]

MAX_LINES = 12
"""The most lines a multi-line suggestion keeps."""

PREFIX_CHARS = 6000
"""The prefix window (about 1,500 tokens)."""

SUFFIX_CHARS = 2000
"""The suffix window (about 500 tokens)."""

_OPENERS = (":", "{", "(", "[", "=>", "->", "=", "do", "then")


@dataclass(frozen=True, slots=True)
class Cursor:
    """The text around one cursor position.

    ``prefix`` ends exactly at the cursor, ``suffix`` starts right after
    it (both windowed); ``line_prefix`` and ``line_suffix`` are the cursor's
    line before and after it; ``offset`` is the cursor's offset in the
    whole text.
    """

    prefix: str
    suffix: str
    line_prefix: str
    line_suffix: str
    offset: int

    @property
    def multiline(self) -> bool:
        """Whether the cursor is at an empty body (the stop rule)."""
        if self.line_suffix.strip():
            return False
        before = self.line_prefix.rstrip()
        return not before or before.endswith(_OPENERS)

    @property
    def indent(self) -> str:
        """The indentation the body at the cursor is written at."""
        line = self.line_prefix
        own = line[: len(line) - len(line.lstrip())]
        if line.strip():
            return own + " "  # a body after an opener is indented deeper
        return own


def offset_of(text: str, line: int, character: int) -> int:
    """The offset in ``text`` of LSP's (line, UTF-16 character), clamped."""
    start = 0
    for _ in range(max(line, 0)):
        newline = text.find("\n", start)
        if newline < 0:
            return len(text)
        start = newline + 1
    end = text.find("\n", start)
    end = len(text) if end < 0 else end
    units = 0
    offset = start
    while offset < end and units < character:
        units += 2 if ord(text[offset]) > 0xFFFF else 1
        offset += 1
    return offset


def split_at(
    text: str, line: int, character: int, *, before: int = PREFIX_CHARS, after: int = SUFFIX_CHARS
) -> Cursor:
    """The :class:`Cursor` at (line, character) of ``text``."""
    offset = offset_of(text, line, character)
    line_start = text.rfind("\n", 0, offset) + 1
    line_end = text.find("\n", offset)
    line_end = len(text) if line_end < 0 else line_end
    return Cursor(
        prefix=text[max(0, offset - before) : offset],
        suffix=text[offset : offset + after],
        line_prefix=text[line_start:offset],
        line_suffix=text[offset:line_end],
        offset=offset,
    )


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip())


def cut(text: str, cursor: Cursor) -> str:
    """``text`` (the model's middle) cut at the stop rule; ``""`` when
    nothing of it is worth showing."""
    text = text.replace("\r\n", "\n")
    if not cursor.multiline:
        text = text.split("\n", 1)[0].rstrip()
    else:
        lines = text.split("\n")
        body = len(cursor.indent)
        kept: list[str] = []
        for number, line in enumerate(lines):
            if number and line.strip() and _indent_of(line) < body:
                break
            if len(kept) == MAX_LINES:
                break
            kept.append(line)
        while kept and not kept[-1].strip():
            kept.pop()
        text = "\n".join(kept)
    if not text.strip():
        return ""
    if cursor.suffix.lstrip().startswith(text.strip()):
        return ""  # it only repeats what follows the cursor
    return text


def replaces_tail(text: str, cursor: Cursor) -> bool:
    """Whether a one-line ``text`` ends with what follows the cursor on its
    line (a closing bracket the model wrote again): it then replaces that
    text rather than being inserted before it."""
    tail = cursor.line_suffix.strip()
    return bool(tail) and not cursor.multiline and "\n" not in text and text.endswith(tail)


def position_of(text: str, offset: int) -> tuple[int, int]:
    """LSP's (line, UTF-16 character) of ``offset`` in ``text``."""
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    character = sum(2 if ord(char) > 0xFFFF else 1 for char in text[start:offset])
    return line, character
