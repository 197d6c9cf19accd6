"""``read_file``: a document's text as numbered lines, a page at a time.

The text itself is read through :class:`~rhema_lsp.tools.gate.Gate` (the
editor's buffer wins over disk, unsaved changes included). Lines are
split as LSP splits them (``\\n``, ``\\r\\n``, ``\\r``) so line numbers agree
with the editor's. A page holds at most :data:`PAGE_LINES` lines and
:data:`PAGE_BYTES` bytes (below the engine's 24,000-byte result cap, so the
paging note is never cut off); the note says which ``offset`` continues.
Binary files (a NUL byte in the first 8 KiB) are refused with their size and
a guessed type; text must be UTF-8.
"""

from __future__ import annotations

import re

from rhema_lsp.tools.errors import ToolError
from rhema_lsp.tools.workspace import Target

__all__ = ["MAX_FILE_BYTES", "PAGE_BYTES", "PAGE_LINES", "decode_file", "format_page"]

PAGE_LINES = 2000
PAGE_BYTES = 20_000
MAX_FILE_BYTES = 32 << 20
_LONG_LINE = 2000
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_MAGIC = (
    (b"\x89PNG", "PNG image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"GIF8", "GIF image"),
    (b"%PDF", "PDF document"),
    (b"PK\x03\x04", "zip archive"),
    (b"\x1f\x8b", "gzip archive"),
    (b"\x7fELF", "ELF executable"),
    (b"\x00asm", "WebAssembly module"),
    (b"SQLite format 3", "SQLite database"),
)


def _binary_kind(head: bytes) -> str:
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    return "binary data"


def decode_file(target: Target, data: bytes, size: int) -> str:
    """The UTF-8 text of a file's bytes, or a :class:`ToolError` saying why not."""
    head = data[:8192]
    if b"\x00" in head:
        raise ToolError(
            f"{target.requested}: binary file ({size} bytes, {_binary_kind(head)}); not shown"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(
            f"{target.requested}: not valid UTF-8 (undecodable byte at offset {exc.start}); "
            "only UTF-8 text files can be read or edited"
        ) from exc


def format_page(display: str, text: str, offset: int, limit: int) -> str:
    """Lines ``offset..`` (1-based, at most ``limit`` of them and a page) of
    ``text`` numbered, with a paging note. Both are at least 1 (the
    ``read_file`` argument model checks it)."""
    lines = _LINE_BREAK.split(text)
    if lines and lines[-1] == "" and len(lines) > 1:
        lines.pop()  # a final line break does not start another line
    total = len(lines) if text else 0
    if total == 0:
        return f"{display}: (empty file)"
    if offset > total:
        raise ToolError(f"{display}: offset {offset} is past the end ({total} lines)")
    wanted = min(limit, PAGE_LINES)
    out: list[str] = []
    used = 0
    last = offset - 1
    for number in range(offset, min(total, offset + wanted - 1) + 1):
        line = lines[number - 1]
        if len(line) > _LONG_LINE:
            line = line[:_LONG_LINE] + f" [line truncated: {len(line)} characters]"
        rendered = f"{number:>6}\t{line}"
        size = len(rendered.encode("utf-8")) + 1
        if out and used + size > PAGE_BYTES:
            break
        out.append(rendered)
        used += size
        last = number
    if last < total:
        out.append(
            f"[lines {offset}-{last} of {total}; call read_file with offset={last + 1} to continue]"
        )
    return "\n".join(out)
