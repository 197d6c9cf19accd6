"""A minimal JSON-RPC 2.0 endpoint over a child process's stdio, with LSP's
``Content-Length`` framing: what the headless client needs to drive the real
server as an editor does, without an editor, and what the agent's own
language servers are spoken to with.

A child that writes garbage (no frame, a frame that is not JSON) is treated
as gone: every pending request fails with :class:`ServerGone`.

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
import signal
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

__all__ = ["RpcError", "ServerGone", "StdioEndpoint"]

logger = logging.getLogger(__name__)

CLOSE_WAIT = 5.0

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
            limit=2**24,
            start_new_session=True,
            cwd=cwd,
        )
        endpoint = cls(process)
        endpoint._reading = asyncio.create_task(endpoint._read_loop())
        if process.stderr is not None:
            endpoint._draining = asyncio.create_task(endpoint._drain(process.stderr))
        return endpoint

    async def _drain(self, stream: asyncio.StreamReader) -> None:
        while line := await stream.readline():
            self._stderr.append(line.decode("utf-8", "replace").rstrip())

    def _gone(self) -> ServerGone:
        tail = " | ".join(line for line in self._stderr if line)
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
        while True:
            line = await self._reader.readline()
            if not line:
                return None
            line = line.strip()
            if not line:
                break
            name, _, value = line.decode("ascii", "replace").partition(":")
            if name.lower() == "content-length":
                length = int(value)
        if length is None:
            raise ServerGone("the language server sent a frame without Content-Length")
        message = json.loads(await self._reader.readexactly(length))
        if not isinstance(message, dict):
            raise ValueError("a message that is not a JSON object")
        return message

    async def _read_loop(self) -> None:
        try:
            while (message := await self._read_message()) is not None:
                self._dispatch(message)
        except (asyncio.IncompleteReadError, ConnectionResetError):
            pass
        except (ValueError, TypeError, ServerGone) as exc:  # garbage: the child is unusable
            self._stderr.append(f"it wrote something that is not LSP ({exc})")
        finally:
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(self._gone())

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
