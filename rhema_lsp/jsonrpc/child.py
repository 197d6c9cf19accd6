"""A minimal JSON-RPC 2.0 endpoint over a child process's stdio, with LSP's
``Content-Length`` framing: what the headless client needs to drive the real
server as an editor does, without an editor, and what the agent's own
language servers are spoken to with.

A child that writes garbage is treated as gone the moment it does (its
process group is killed): every pending request fails with
:class:`ServerGone`, and so does every later one, at once
(:attr:`StdioEndpoint.broken` says why). Garbage is anything but
LSP framing: a header line that is not ``Name: value`` (a name of letters,
digits and dashes), a header line over :data:`MAX_HEADER` bytes or more
than :data:`MAX_HEADERS` of them, a ``Content-Length`` that is
not a number or exceeds :data:`MAX_FRAME` (refused before anything is
allocated), a body that is not a JSON object.

Requests return awaitables; notifications are sent and forgotten; requests
and notifications from the server go to registered handlers (a request
without a handler is answered ``MethodNotFound``, one whose handler raises
``InternalError``, so the server never waits for a reply that will not come).

The child runs in a session (and process group) of its own: a Ctrl-C at the
terminal reaches the client alone, which decides what the server is told.
:meth:`StdioEndpoint.kill` ends the child's whole group (commands the agent
started included); :meth:`StdioEndpoint.close` does so when a polite
shutdown fails, so no child outlives the client.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import json
import logging
import os
import re
import signal
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

__all__ = ["MAX_FRAME", "RpcError", "ServerGone", "StdioEndpoint"]

logger = logging.getLogger(__name__)

CLOSE_WAIT = 5.0

MAX_FRAME = 64 << 20
"""Bytes a frame's body may declare; a larger ``Content-Length`` is garbage."""

MAX_HEADER = 1024
"""Bytes a header line may take."""

MAX_HEADERS = 8
"""Header lines a frame may have."""

_BUFFER = 64 << 10
"""The stream's limit: a line longer than this is never buffered whole."""

_HEADER_NAME = re.compile(rb"[A-Za-z0-9-]+")

Handler = Callable[[Any], Awaitable[Any] | Any]


class RpcError(Exception):
    """The server answered a request with an error."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class ServerGone(Exception):
    """The server process exited or closed its output."""


class StdioEndpoint:
    """One JSON-RPC connection to a server started as a child process."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self._writer = process.stdin
        self._reader = process.stdout
        self._ids = itertools.count(1)
        self._pending: dict[int | str, asyncio.Future[Any]] = {}
        self._handlers: dict[str, Handler] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._reading: asyncio.Task[None] | None = None
        self._draining: asyncio.Task[None] | None = None
        self._stderr: collections.deque[str] = collections.deque(maxlen=20)
        self.broken: str | None = None
        """Why the connection is unusable (garbage, or the output closed)."""

    @classmethod
    async def spawn(
        cls,
        command: Sequence[str],
        env: dict[str, str],
        *,
        show_stderr: bool = False,
        cwd: str | os.PathLike[str] | None = None,
    ) -> StdioEndpoint:
        """Start ``command`` and connect to its stdio.

        The server's stderr is kept (its last lines explain an early exit)
        unless ``show_stderr`` passes it through. The child starts a new
        session, so the terminal's signals are not sent to it.
        """
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=None if show_stderr else asyncio.subprocess.PIPE,
            env=env,
            limit=_BUFFER,
            start_new_session=True,
            cwd=cwd,
        )
        endpoint = cls(process)
        endpoint._reading = asyncio.create_task(endpoint._read_loop())
        if process.stderr is not None:
            endpoint._draining = asyncio.create_task(endpoint._drain(process.stderr))
        return endpoint

    async def _drain(self, stream: asyncio.StreamReader) -> None:
        while True:
            try:
                line = await stream.readline()
            except ValueError:  # a line over the limit: dropped, the rest kept
                continue
            if not line:
                return
            self._stderr.append(line.decode("utf-8", "replace").rstrip())

    def _gone(self) -> ServerGone:
        tail = " | ".join(line for line in self._stderr if line)
        if self.broken is not None and self.broken.startswith("it wrote"):
            return ServerGone(self.broken)
        return ServerGone(f"the language server exited{': ' + tail if tail else ''}")

    def on(self, method: str, handler: Handler) -> None:
        """Handle the server's requests or notifications of ``method``."""
        self._handlers[method] = handler

    def next_id(self) -> int:
        return next(self._ids)

    async def request(self, method: str, params: Any, *, msg_id: int | None = None) -> Any:
        """Send a request and wait for its result.

        Raises
        ------
        RpcError
            The server answered with an error.
        ServerGone
            The server went away before answering.
        """
        if self.broken is not None:
            raise self._gone()
        ident = self.next_id() if msg_id is None else msg_id
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[ident] = future
        await self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        try:
            return await future
        finally:
            self._pending.pop(ident, None)

    async def notify(self, method: str, params: Any) -> None:
        await self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message, ensure_ascii=False).encode("utf-8")
        try:
            self._writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            await self._writer.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise self._gone() from exc

    async def _read_message(self) -> dict[str, Any] | None:
        length = None
        for _ in range(MAX_HEADERS + 1):
            line = await self._reader.readline()  # over the limit: ValueError
            if not line:
                return None
            if len(line) > MAX_HEADER:
                raise ValueError(f"a header line of {len(line)} bytes")
            line = line.strip()
            if not line:
                break
            name, colon, value = line.partition(b":")
            if not colon or not _HEADER_NAME.fullmatch(name):
                raise ValueError(f"a header line that is not LSP: {line[:60]!r}")
            if name.lower() == b"content-length":
                if not value.strip().isdigit():
                    raise ValueError(f"Content-Length {value.strip()[:30]!r}")
                length = int(value)
                if length > MAX_FRAME:
                    raise ValueError(f"a frame of {length} bytes (at most {MAX_FRAME})")
        else:
            raise ValueError(f"more than {MAX_HEADERS} header lines")
        if length is None:
            raise ValueError("a frame without Content-Length")
        message = json.loads(await self._reader.readexactly(length))
        if not isinstance(message, dict):
            raise ValueError("a message that is not a JSON object")
        return message

    async def _read_loop(self) -> None:
        try:
            while (message := await self._read_message()) is not None:
                self._dispatch(message)
        except (asyncio.IncompleteReadError, ConnectionResetError):
            self.broken = "its output ended"
        except (ValueError, TypeError, RecursionError) as exc:  # garbage: unusable
            self.broken = f"it wrote something that is not LSP ({exc})"
            self._stderr.append(self.broken)
            self.kill()
            await self._discard()
        finally:
            if self.broken is None:
                self.broken = "its output ended"
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(self._gone())

    async def _discard(self) -> None:
        """Read what is left of the output, unread: until it ends, the
        process is not reaped (``wait`` waits for its pipes)."""
        with contextlib.suppress(ConnectionResetError):
            while await self._reader.read(_BUFFER):
                pass

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "method" not in message:
            future = self._pending.get(message.get("id", -1))
            if future is None or future.done():
                return
            if "error" in message:
                error = message["error"]
                future.set_exception(RpcError(error.get("code", 0), error.get("message", "")))
            else:
                future.set_result(message.get("result"))
            return
        task = asyncio.create_task(self._serve(message))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _serve(self, message: dict[str, Any]) -> None:
        handler = self._handlers.get(message["method"])
        is_request = "id" in message
        if handler is None:
            if is_request:
                await self._send(
                    {
                        "jsonrpc": "2.0",
                        "id": message["id"],
                        "error": {"code": -32601, "message": f"{message['method']} unsupported"},
                    }
                )
            return
        try:
            result = handler(message.get("params"))
            if isinstance(result, Awaitable):
                result = await result
        except Exception as exc:
            # The RPC boundary: unanswered, the server would wait for this reply forever.
            logger.warning("handling %s failed", message["method"], exc_info=True)
            if is_request:
                error = {"code": -32603, "message": f"{message['method']} failed: {exc}"}
                await self._send({"jsonrpc": "2.0", "id": message["id"], "error": error})
            return
        if is_request:
            await self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    def kill(self) -> None:
        """Kill the server and everything in its process group, now."""
        if self.process.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):  # already gone: nothing to kill
            os.killpg(self.process.pid, signal.SIGKILL)

    async def close(self) -> int:
        """Ask the server to shut down and exit; kill its group if it does not
        within :data:`CLOSE_WAIT` seconds."""
        try:
            if self.process.returncode is None:
                await asyncio.wait_for(self.request("shutdown", None), CLOSE_WAIT)
                await self.notify("exit", None)
                await asyncio.wait_for(self.process.wait(), CLOSE_WAIT)
        except (TimeoutError, ServerGone, RpcError):
            self.kill()
        finally:
            if self.process.returncode is None:
                self.kill()
            await self.process.wait()
        for task in (self._reading, self._draining):
            if task is not None:
                task.cancel()
        for task in list(self._tasks):
            task.cancel()
        return self.process.returncode or 0
