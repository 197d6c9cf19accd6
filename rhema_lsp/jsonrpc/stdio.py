"""Bytes in and out on file descriptors, off the event loop, whatever they are.

An editor connects the server to pipes; a user may also redirect stdin or
stdout to a regular file (``rhema-lsp acp > out.jsonl``), ``/dev/null`` or a
terminal, which asyncio's pipe transports refuse ("Pipe transport is only
for pipes, sockets and character devices") or cannot poll. Both classes here
therefore do their blocking reads and writes on a daemon thread of their own
and hand the bytes over to the event loop, which never blocks on them:

- :class:`FdReader` reads chunks as they come; it stops reading while the
  loop has :data:`QUEUED` chunks it has not taken (backpressure), and says
  ``b""`` at end of file or on a read error.
- :class:`FdWriter` writes each chunk whole, in order; ``await write()``
  returns once the bytes are written (so a slow reader slows the writer,
  never the loop), and raises :class:`BrokenPipeError` (or the ``OSError``)
  when the other end is gone; a write whose caller was cancelled still
  happens, and ``aclose()`` waits for the last one.

The threads are daemons: one blocked on a silent peer never holds the
process's exit.
"""

from __future__ import annotations

import asyncio
import os
import queue
import threading
from concurrent.futures import Future

__all__ = ["QUEUED", "FdReader", "FdWriter"]

QUEUED = 4
"""Chunks read ahead of the event loop before the reader waits."""

CHUNK = 65536

CLOSE_WAIT = 5.0
"""Seconds :meth:`FdWriter.aclose` waits for the last bytes to be written."""


class FdReader:
    """Reads a file descriptor on a daemon thread (see the module docstring)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._chunks: asyncio.Queue[bytes] = asyncio.Queue()
        self._slots = threading.Semaphore(QUEUED)
        self._thread: threading.Thread | None = None
        self._done = False

    def _run(self, loop: asyncio.AbstractEventLoop) -> None:
        data = b"-"
        while data:
            self._slots.acquire()
            try:
                data = os.read(self._fd, CHUNK)
            except OSError:
                data = b""
            try:
                loop.call_soon_threadsafe(self._chunks.put_nowait, data)
            except RuntimeError:  # the loop is closed: nobody reads any more
                return

    async def read(self) -> bytes:
        """The next chunk; ``b""`` at end of file (and on every call after)."""
        if self._done:
            return b""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run,
                args=(asyncio.get_running_loop(),),
                name=f"rhema-read-fd{self._fd}",
                daemon=True,
            )
            self._thread.start()
        data = await self._chunks.get()
        self._slots.release()
        self._done = not data
        return data


class FdWriter:
    """Writes a file descriptor on a daemon thread (see the module docstring)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._pending: queue.SimpleQueue[tuple[bytes, Future[None]] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def _run(self) -> None:
        while (item := self._pending.get()) is not None:
            data, done = item
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(self._fd, view) :]
            except OSError as exc:
                done.set_exception(exc)
            else:
                done.set_result(None)

    async def write(self, data: bytes) -> None:
        """Write ``data`` whole; returns once it is written."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name=f"rhema-write-fd{self._fd}", daemon=True
            )
            self._thread.start()
        done: Future[None] = Future()
        self._pending.put((data, done))
        await asyncio.wrap_future(done)

    async def aclose(self, wait: float = CLOSE_WAIT) -> None:
        """Stop the thread once what was written so far is out (waiting up
        to ``wait`` seconds for it, so the process exits with its last
        answers written)."""
        if self._thread is not None:
            self._pending.put(None)
            await asyncio.to_thread(self._thread.join, wait)
