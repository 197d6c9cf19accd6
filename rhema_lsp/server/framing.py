"""LSP's base protocol: ``Content-Length`` frames, decoded as bytes arrive.

A frame is a header block (lines ``Name: value``, ended by an empty line)
and a body of exactly ``Content-Length`` bytes. :class:`FrameDecoder` is
fed the bytes as they come, in any chunks (:meth:`~FrameDecoder.feed`), and
hands out each body they complete (:meth:`~FrameDecoder.frame`), so the
frames before a bad one are all served. It is tolerant where clients differ:

- header names are case-insensitive (``content-length`` is
  ``Content-Length``), and lines may end in ``\\n`` as well as ``\\r\\n``;
- ``Content-Type`` and headers it does not know are ignored (the body is
  JSON in UTF-8 whatever they say; a body that is not is answered by the
  message check, not here).

A frame it cannot delimit is unrecoverable: once a header is garbage, a
length is missing, negative, not a number or over :data:`MAX_BODY`, or the
header block runs past :data:`MAX_HEADERS` bytes, nothing says where the
next frame starts, and every byte after would be read wrong. It raises
:class:`FrameError` at once (at the first byte that cannot begin a header:
a client that sends bare JSON is told immediately, not after 8 KB), and the
server exits non-zero so the client restarts it, rather than hang.

No I/O here and no pygls: the server's read loop (:mod:`.app`) feeds it.
"""

from __future__ import annotations

import re

__all__ = ["MAX_BODY", "MAX_HEADERS", "FrameDecoder", "FrameError"]

MAX_BODY = 128 * 1024 * 1024
"""The largest body accepted, in bytes (a big file opened in the editor fits)."""

MAX_HEADERS = 8192
"""The longest header block accepted, in bytes."""

_NAME = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_DIGITS = re.compile(rb"[0-9]+")


class FrameError(Exception):
    """The stream cannot be delimited any more; the message says why."""


def _shown(line: bytes | bytearray) -> str:
    text = line[:60].decode("latin-1")
    return repr(text + ("..." if len(line) > 60 else ""))


class FrameDecoder:
    """Turns the bytes of a stream into frame bodies (see the module docstring)."""

    def __init__(self, *, max_body: int = MAX_BODY, max_headers: int = MAX_HEADERS) -> None:
        self._buffer = bytearray()
        self._length: int | None = None
        self._max_body = max_body
        self._max_headers = max_headers

    def feed(self, data: bytes) -> None:
        """Take the next bytes of the stream."""
        self._buffer += data

    def frame(self) -> bytes | None:
        """The next complete body, or ``None`` until more bytes come.

        Raises
        ------
        FrameError
            The stream cannot be delimited (see the module docstring).
        """
        if self._length is None and not self._headers():
            return None
        assert self._length is not None
        if len(self._buffer) < self._length:
            return None
        body = bytes(self._buffer[: self._length])
        del self._buffer[: self._length]
        self._length = None
        return body

    def close(self) -> None:
        """The stream ended.

        Raises
        ------
        FrameError
            It ended inside a frame.
        """
        if self._length is not None:
            raise FrameError(
                f"the stream ended {len(self._buffer)} bytes into a body of {self._length}"
            )
        if self._buffer:
            raise FrameError(f"the stream ended inside a header block: {_shown(self._buffer)}")

    def _headers(self) -> bool:
        """Parse a complete header block at the buffer's start, if there is one."""
        length: int | None = None
        start = 0
        while True:
            end = self._buffer.find(b"\n", start, self._max_headers + 1)
            if end < 0:
                self._check_partial(self._buffer[start:])
                if len(self._buffer) > self._max_headers:
                    raise FrameError(f"a header block longer than {self._max_headers} bytes")
                return False
            line = bytes(self._buffer[start:end]).removesuffix(b"\r")
            start = end + 1
            if not line:
                break
            name, value = self._split(line)
            if name.lower() == b"content-length":
                length = self._length_of(value, length)
        if length is None:
            what = "an empty line" if start <= 2 else "a header block"
            raise FrameError(f"{what} without Content-Length where a frame should start")
        del self._buffer[:start]
        self._length = length
        return True

    @staticmethod
    def _split(line: bytes) -> tuple[bytes, bytes]:
        name, colon, value = line.partition(b":")
        if not colon or not _NAME.fullmatch(name):
            raise FrameError(f"garbage where a header should be: {_shown(line)}")
        return name, value.strip(b" \t")

    @staticmethod
    def _check_partial(partial: bytes | bytearray) -> None:
        """Fail early on bytes that cannot begin a header line."""
        name = bytes(partial).removesuffix(b"\r").partition(b":")[0]
        if name and not _NAME.fullmatch(name):
            raise FrameError(f"garbage where a header should be: {_shown(partial)}")

    def _length_of(self, value: bytes, seen: int | None) -> int:
        if not _DIGITS.fullmatch(value):
            raise FrameError(f"Content-Length {_shown(value)} is not a number of bytes")
        length = int(value[:20])
        if len(value) > 20 or length > self._max_body:
            raise FrameError(
                f"Content-Length {_shown(value)} is over the {self._max_body}-byte limit"
            )
        if seen is not None and seen != length:
            raise FrameError(f"two Content-Length headers: {seen} and {length}")
        return length
