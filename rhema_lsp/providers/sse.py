"""Server-sent events, read straight from a response's bytes.

:class:`SSEParser` cuts a byte stream into ``(event name, data)`` pairs as the
SSE specification reads it, holding back the part of a read that does not end
an event yet. Every wire adapter's stream goes through it, so it is written for
the common case: a read whose events all have one shape the providers send
(one ``data:`` line; or an ``event:`` line and a ``data:`` line) is sliced in
bulk by C-level ``bytes``/``re`` operations, and only what is not goes line by
line.
"""

from __future__ import annotations

import re

__all__ = ["SSEParser"]

_DATA_BLOCKS = b"\n\ndata: "
"""What separates two one-line ``data:`` events (the end of one, the start of the next)."""

_NAMED_BLOCK = re.compile(rb"(?:\A|\n\n)event: ([^\n]*)\ndata: ([^\n]*)(?=\n\n|\Z)")
"""A named event of one ``event:`` and one ``data:`` line: its name and data."""


class SSEParser:
    """Splits a byte stream into server-sent events ``(event name, data)``.

    ``\r\n``, ``\r`` and ``\n`` all end a line (a ``\r`` at a chunk's end is
    held back in case a ``\n`` follows); comments are skipped; several
    ``data:`` lines join with ``\n``. The stream is cut at blank lines into
    event blocks; the one-line ``data: ...`` block and the two-line
    ``event: ...`` / ``data: ...`` block (nearly every event on every wire)
    are sliced directly, anything else goes line by line.
    """

    __slots__ = ("_data", "_event", "_names", "_pending")

    def __init__(self) -> None:
        self._pending = b""
        self._event: str | None = None
        self._data: list[bytes] = []
        self._names: dict[bytes, str] = {}

    def feed(self, chunk: bytes) -> list[tuple[str | None, bytes]]:
        """The events completed by ``chunk``."""
        if self._pending:
            chunk = self._pending + chunk
        hold = b""
        if chunk.endswith(b"\r"):
            chunk, hold = chunk[:-1], b"\r"
        if b"\r" in chunk:
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        end = chunk.rfind(b"\n\n")
        if end < 0:
            self._pending = chunk + hold
            return []
        complete = chunk[:end]
        self._pending = chunk[end + 2 :] + hold
        if complete[:6] == b"data: " and complete.count(b"\n") == 2 * complete.count(_DATA_BLOCKS):
            # Every newline is in a separator: each block is one ``data: `` line.
            return [(None, data) for data in complete[6:].split(_DATA_BLOCKS)]
        if complete[:7] == b"event: ":
            named = self._named_blocks(complete)
            if named is not None:
                return named
        events: list[tuple[str | None, bytes]] = []
        for block in complete.split(b"\n\n"):
            if block[:6] == b"data: " and b"\n" not in block:
                events.append((None, block[6:]))
                continue
            if block[:7] == b"event: ":
                newline = block.find(b"\n")
                if block[newline + 1 : newline + 7] == b"data: " and (
                    block.find(b"\n", newline + 1) < 0
                ):
                    events.append((self._name(block[7:newline]), block[newline + 7 :]))
                    continue
            self._lines(block.split(b"\n"), events)
            self._dispatch(events)
        return events

    def close(self) -> list[tuple[str | None, bytes]]:
        """The last event, when the stream ended without its blank line."""
        pending = self._pending.rstrip(b"\r")
        self._pending = b""
        events: list[tuple[str | None, bytes]] = []
        if pending:
            self._lines(pending.split(b"\n"), events)
        self._dispatch(events)
        return events

    def _named_blocks(self, complete: bytes) -> list[tuple[str | None, bytes]] | None:
        """The events of blocks that are all ``event: `` then ``data: ``, one
        line each; ``None`` when any block is not.

        Each match of :data:`_NAMED_BLOCK` holds one newline of its own, plus
        the two of the blank line before it unless it starts the text. With
        ``3 m - 2`` newlines in all for ``m`` matches, the first match starts
        the text and every newline is in a match, so the matches, each ending
        at a blank line or the end, follow each other with nothing between:
        they are the blocks.
        """
        matches = _NAMED_BLOCK.findall(complete)
        if complete.count(b"\n") != 3 * len(matches) - 2:
            return None
        names = self._names
        return [(names.get(name) or self._name(name), data) for name, data in matches]

    def _name(self, value: bytes) -> str:
        """The event name whose ``event:`` line holds ``value``."""
        name = self._names.get(value)
        if name is None:
            name = value.strip().decode("utf-8", "replace")
            if len(self._names) < 64:  # a handful per wire; never grows without bound
                self._names[value] = name
        return name

    def _dispatch(self, events: list[tuple[str | None, bytes]]) -> None:
        """A blank line: emit the event being built, if it has data."""
        data = self._data
        if data:
            events.append((self._event, data[0] if len(data) == 1 else b"\n".join(data)))
            self._data = []
        self._event = None

    def _lines(self, lines: list[bytes], events: list[tuple[str | None, bytes]]) -> None:
        for line in lines:
            if not line:
                self._dispatch(events)
            elif line[:5] == b"data:":
                self._data.append(line[6:] if line[5:6] == b" " else line[5:])
            elif line[:1] == b":":
                continue
            elif line[:6] == b"event:":
                self._event = self._name(line[6:])
