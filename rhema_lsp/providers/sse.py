"""Server-sent events, read straight from a response's bytes.

:class:`SSEParser` cuts a byte stream into ``(event name, data)`` pairs as the
SSE specification reads it, holding back the part of a read that does not end
an event yet. Every wire adapter's stream goes through it, so it is written for
the common case: a read whose events all have one shape the providers send
(one ``data:`` line; or an ``event:`` line and a ``data:`` line) is sliced in
bulk by C-level ``bytes``/``re`` operations, and only what is not goes line by
line.

It is linear in the stream's length whatever the stream: only each new read is
searched for the blank line that ends an event (plus the one byte before it),
and the reads of an unfinished event are kept as a list, joined once when the
event ends. An event (its lines up to the blank line) longer than
``max_event`` bytes raises :class:`EventTooLong`: no wire sends one, and
holding it would let a hostile server grow the parser without bound.
"""

from __future__ import annotations

import re

__all__ = ["MAX_EVENT_BYTES", "EventTooLong", "SSEParser"]

MAX_EVENT_BYTES = 16 * 1024 * 1024
"""The longest event a stream may send: 16 MiB (the largest real ones, a
whole tool call's arguments in one Gemini chunk, are far below)."""

_DATA_BLOCKS = b"\n\ndata: "
"""What separates two one-line ``data:`` events (the end of one, the start of the next)."""

_NAMED_BLOCK = re.compile(rb"(?:\A|\n\n)event: ([^\n]*)\ndata: ([^\n]*)(?=\n\n|\Z)")
"""A named event of one ``event:`` and one ``data:`` line: its name and data."""


class EventTooLong(Exception):
    """An event grew past the parser's ``max_event`` bytes without ending."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"an event longer than {limit} bytes")
        self.limit = limit


class SSEParser:
    """Splits a byte stream into server-sent events ``(event name, data)``.

    ``\r\n``, ``\r`` and ``\n`` all end a line (a ``\r`` at a chunk's end is
    held back in case a ``\n`` follows); comments are skipped; several
    ``data:`` lines join with ``\n``. The stream is cut at blank lines into
    event blocks; the one-line ``data: ...`` block and the two-line
    ``event: ...`` / ``data: ...`` block (nearly every event on every wire)
    are sliced directly, anything else goes line by line.

    ``work`` counts the bytes searched or joined so far, about twice the
    stream's length whatever its shape: the measure of the parser's cost that
    tests compare across sizes.
    """

    __slots__ = ("_cr", "_data", "_event", "_held", "_max", "_names", "_pending", "work")

    def __init__(self, max_event: int = MAX_EVENT_BYTES) -> None:
        self._pending: list[bytes] = []  # the reads of the event not ended yet
        self._held = 0  # their length
        self._cr = False  # a \r ended the last read
        self._max = max_event
        self._event: str | None = None
        self._data: list[bytes] = []
        self._names: dict[bytes, str] = {}
        self.work = 0

    def feed(self, chunk: bytes) -> list[tuple[str | None, bytes]]:
        """The events completed by ``chunk``.

        Raises
        ------
        EventTooLong
            When the event being read grows past ``max_event`` bytes.
        """
        if self._cr:
            chunk = b"\r" + chunk
            self._cr = False
        if chunk[-1:] == b"\r":
            chunk = chunk[:-1]
            self._cr = True
        if b"\r" in chunk:
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        self.work += len(chunk)
        end = chunk.rfind(b"\n\n")
        pending = self._pending
        if end < 0:
            if not (chunk[:1] == b"\n" and pending and pending[-1][-1:] == b"\n"):
                if chunk:
                    pending.append(chunk)
                    self._held += len(chunk)
                    if self._held > self._max:
                        raise EventTooLong(self._max)
                return []
            # The blank line straddles the reads: its first newline ended the last one.
            complete = self._joined()[:-1]
            rest = chunk[1:]
        elif pending:
            complete = self._joined() + chunk[:end]
            rest = chunk[end + 2 :]
        else:
            complete = chunk[:end]
            rest = chunk[end + 2 :]
        if rest:
            pending.append(rest)
        self._held = len(rest)
        if len(complete) > self._max:
            self._refuse_long_blocks(complete)
        return self._events(complete)

    def _joined(self) -> bytes:
        """The pending reads as one string (emptied: an event ends in it)."""
        joined = self._pending[0] if len(self._pending) == 1 else b"".join(self._pending)
        self._pending.clear()
        self.work += len(joined)
        return joined

    def _refuse_long_blocks(self, complete: bytes) -> None:
        for block in complete.split(b"\n\n"):
            if len(block) > self._max:
                raise EventTooLong(self._max)

    def _events(self, complete: bytes) -> list[tuple[str | None, bytes]]:
        """The events of ``complete``: whole blocks separated by blank lines."""
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
        pending = self._joined() if self._pending else b""
        self._held = 0
        self._cr = False
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
