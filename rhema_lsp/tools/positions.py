"""Text positions in a negotiated encoding, minimal edits, and applying them.

LSP positions are ``(line, character)`` where ``character`` counts code units
of the negotiated encoding (UTF-16 for VS Code, UTF-8 for Neovim 0.11, UTF-32
= code points). Lines end at ``\\n``, ``\\r\\n`` or ``\\r``. Internally text
is a Python ``str`` and offsets are code-point indices; this module converts
between the two and never places a boundary between ``\\r`` and ``\\n``.

:func:`minimal_edits` turns ``old -> new`` into a few small
:class:`~lsprotocol.types.TextEdit` (common prefix/suffix, then line-level
``difflib`` opcodes trimmed to the characters that changed), so what is sent is
proportional to the change, not the file.
"""

from __future__ import annotations

import bisect
import difflib
import itertools
import re
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import unquote, urlparse

from lsprotocol.types import Position, Range, TextEdit

__all__ = [
    "LineIndex",
    "apply_text_edits",
    "apply_workspace_edit_to_text",
    "minimal_edits",
    "path_to_uri",
    "replacement_edits",
    "unit_length",
    "uri_to_path",
]

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_DIFF_LINE_LIMIT = 20_000
"""Above this many differing lines the middle is sent as one edit: difflib is
quadratic in the worst case and the edit would be large anyway."""


def path_to_uri(path: Path) -> str:
    """The ``file://`` URI of an absolute path."""
    return path.as_uri()


def uri_to_path(uri: str) -> Path:
    """The path of a ``file://`` URI, percent-decoded once."""
    parsed = urlparse(uri)
    return Path(unquote(parsed.path))


def unit_length(text: str, encoding: str) -> int:
    """Length of ``text`` in code units of ``encoding``."""
    if encoding == "utf-32":
        return len(text)
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    if encoding == "utf-16":
        return len(text.encode("utf-16-le", "surrogatepass")) // 2
    raise ValueError(f"unknown position encoding {encoding!r}")


class LineIndex:
    """Line starts of one text, for offset <-> position conversion.

    Parameters
    ----------
    text
        The document text.
    encoding
        The position encoding (``utf-8``, ``utf-16`` or ``utf-32``).
    """

    def __init__(self, text: str, encoding: str) -> None:
        if encoding not in ("utf-8", "utf-16", "utf-32"):
            raise ValueError(f"unknown position encoding {encoding!r}")
        self.text = text
        self.encoding = encoding
        self.starts = [0]
        self.content_ends: list[int] = []
        for match in _LINE_BREAK.finditer(text):
            self.content_ends.append(match.start())
            self.starts.append(match.end())
        self.content_ends.append(len(text))

    def position(self, offset: int) -> Position:
        """The position of code-point ``offset``."""
        line = bisect.bisect_right(self.starts, offset) - 1
        start = self.starts[line]
        offset = min(offset, self.content_ends[line])
        return Position(line=line, character=unit_length(self.text[start:offset], self.encoding))

    def offset(self, position: Position) -> int:
        """The code-point offset of ``position``, clamped to its line."""
        if position.line >= len(self.starts):
            return len(self.text)
        start = self.starts[position.line]
        end = self.content_ends[position.line]
        if self.encoding == "utf-32":
            return min(start + position.character, end)
        line = self.text[start:end]
        # Cut the encoded line at the unit count; a cut inside a character
        # (a surrogate pair, a UTF-8 sequence) falls back to its start.
        if self.encoding == "utf-16":
            encoded = line.encode("utf-16-le", "surrogatepass")[: 2 * position.character]
            return start + len(encoded.decode("utf-16-le", "ignore"))
        encoded = line.encode("utf-8", "surrogatepass")[: position.character]
        return start + len(encoded.decode("utf-8", "ignore"))

    def range(self, start: int, end: int) -> Range:
        """The range of code-point offsets ``[start, end)``."""
        return Range(start=self.position(start), end=self.position(end))


_CHUNK = 4096


def _common_prefix(old: str, new: str, i: int, j: int, limit: int) -> int:
    """Length of the common prefix of ``old[i:]`` and ``new[j:]``, at most ``limit``
    (compared a chunk at a time in C, then a character at a time)."""
    n = 0
    while n < limit:
        size = min(_CHUNK, limit - n)
        if old[i + n : i + n + size] != new[j + n : j + n + size]:
            while old[i + n] == new[j + n]:
                n += 1
            return n
        n += size
    return n


def _common_suffix(old: str, new: str, i: int, j: int, limit: int) -> int:
    """Length of the common suffix of ``old[:i]`` and ``new[:j]``, at most ``limit``."""
    n = 0
    while n < limit:
        size = min(_CHUNK, limit - n)
        if old[i - n - size : i - n] != new[j - n - size : j - n]:
            while old[i - n - 1] == new[j - n - 1]:
                n += 1
            return n
        n += size
    return n


def _safe_prefix(old: str, new: str, lo_old: int, lo_new: int, hi_old: int, hi_new: int) -> int:
    """Length of the common prefix of two slices, not ending inside ``\\r\\n``."""
    n = _common_prefix(old, new, lo_old, lo_new, min(hi_old - lo_old, hi_new - lo_new))
    while n > 0 and old[lo_old + n - 1] == "\r" and old[lo_old + n : lo_old + n + 1] == "\n":
        n -= 1
    return n


def _safe_suffix(old: str, new: str, lo_old: int, lo_new: int, hi_old: int, hi_new: int) -> int:
    """Length of the common suffix of two slices, not starting inside ``\\r\\n``."""
    n = _common_suffix(old, new, hi_old, hi_new, min(hi_old - lo_old, hi_new - lo_new))
    while n > 0 and old[hi_old - n] == "\n" and old[hi_old - n - 1 : hi_old - n] == "\r":
        n -= 1
    return n


def _trimmed(
    old: str, new: str, a0: int, a1: int, b0: int, b1: int
) -> tuple[int, int, int, int] | None:
    """Shrink ``old[a0:a1] -> new[b0:b1]`` to the characters that differ."""
    prefix = _safe_prefix(old, new, a0, b0, a1, b1)
    a0, b0 = a0 + prefix, b0 + prefix
    suffix = _safe_suffix(old, new, a0, b0, a1, b1)
    a1, b1 = a1 - suffix, b1 - suffix
    if a0 == a1 and b0 == b1:
        return None
    return a0, a1, b0, b1


def _span(old: str, new: str, a0: int, a1: int, b0: int, b1: int) -> tuple[int, int, str] | None:
    """The trimmed edit ``(start, end, text)`` for ``old[a0:a1] -> new[b0:b1]``,
    widened so neither end of the range falls between ``\r`` and ``\n``."""
    trimmed = _trimmed(old, new, a0, a1, b0, b1)
    if trimmed is None:
        return None
    a0, a1, b0, b1 = trimmed
    text = new[b0:b1]
    if 0 < a0 < len(old) and old[a0 - 1] == "\r" and old[a0] == "\n":
        a0 -= 1
        text = "\r" + text
    if 0 < a1 < len(old) and old[a1 - 1] == "\r" and old[a1] == "\n":
        a1 += 1
        text += "\n"
    return a0, a1, text


def replacement_edits(
    text: str, replacements: Sequence[tuple[int, int, str]], encoding: str
) -> list[TextEdit]:
    """Edits for known replacements ``(start, end, new_text)`` of ``text``,
    each trimmed to the characters that actually change."""
    index = LineIndex(text, encoding)
    edits: list[TextEdit] = []
    for start, end, replacement in replacements:
        span = _span(text, replacement, start, end, 0, len(replacement))
        if span is not None:
            edits.append(TextEdit(range=index.range(span[0], span[1]), new_text=span[2]))
    return edits


def _line_offsets(text: str) -> list[int]:
    starts = [0]
    starts.extend(match.end() for match in _LINE_BREAK.finditer(text))
    if starts[-1] != len(text):
        starts.append(len(text))
    return starts


def minimal_edits(old: str, new: str, encoding: str) -> list[TextEdit]:
    """A small set of non-overlapping edits turning ``old`` into ``new``."""
    if old == new:
        return []
    outer = _trimmed(old, new, 0, len(old), 0, len(new))
    assert outer is not None
    a0, a1, b0, b1 = outer
    # Widen to whole lines so the line diff aligns, then diff the middle.
    a0 = max(old.rfind("\n", 0, a0) + 1, 0)
    b0 = a0
    old_starts = _line_offsets(old[a0:a1])
    new_starts = _line_offsets(new[b0:b1])
    old_lines = [old[a0 + s : a0 + e] for s, e in itertools.pairwise(old_starts)]
    new_lines = [new[b0 + s : b0 + e] for s, e in itertools.pairwise(new_starts)]
    spans: list[tuple[int, int, int, int]] = []
    if len(old_lines) + len(new_lines) > _DIFF_LINE_LIMIT:
        spans.append((a0, a1, b0, b1))
    else:
        matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                continue
            spans.append(
                (a0 + old_starts[i1], a0 + old_starts[i2], b0 + new_starts[j1], b0 + new_starts[j2])
            )
    index = LineIndex(old, encoding)
    edits: list[TextEdit] = []
    for s0, s1, t0, t1 in spans:
        span = _span(old, new, s0, s1, t0, t1)
        if span is not None:
            edits.append(TextEdit(range=index.range(span[0], span[1]), new_text=span[2]))
    return edits


def apply_text_edits(text: str, edits: Sequence[TextEdit], encoding: str) -> str:
    """Apply LSP ``edits`` (ranges against ``text``, non-overlapping) to ``text``.

    Raises
    ------
    ValueError
        When two edits overlap.
    """
    index = LineIndex(text, encoding)
    spans = sorted(
        (
            (index.offset(edit.range.start), index.offset(edit.range.end), order, edit.new_text)
            for order, edit in enumerate(edits)
        ),
    )
    pieces: list[str] = []
    cursor = 0
    for start, end, _order, new_text in spans:
        if start < cursor:
            raise ValueError("overlapping text edits")
        pieces.append(text[cursor:start])
        pieces.append(new_text)
        cursor = max(end, start)
    pieces.append(text[cursor:])
    return "".join(pieces)


def apply_workspace_edit_to_text(text: str, edits: Sequence[TextEdit], encoding: str) -> str:
    """Apply the text edits of one document of a ``WorkspaceEdit`` to its text.

    The same as :func:`apply_text_edits`; named for what callers hold.
    """
    return apply_text_edits(text, edits, encoding)
