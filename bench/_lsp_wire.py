"""A minimal raw JSON-RPC client for a language server process on stdio.

The benchmarks drive the real server process and must not be limited by
their own client, so this one does the least a client can: it frames and
unframes ``Content-Length`` messages with asyncio streams, stamps each
message with ``time.perf_counter()`` the moment its body has been read (before
any JSON parsing), matches responses to requests, answers the few requests a
server may send to a client (``null``, or one ``null`` per configuration
item), and hands every notification with its arrival stamp to a callback.

Contract: :meth:`LspProcess.spawn` starts the process and records the spawn
instant (``spawned``); :meth:`LspProcess.request` returns the ``result`` or
raises :class:`LspError`; :meth:`LspProcess.close` shuts the server down
politely and kills it if it does not exit within a few seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["LspError", "LspProcess", "NotificationHandler", "initialize_params", "rss_kib"]

NotificationHandler = Callable[[str, Any, float], None]

_HEADER_END = b"\r\n\r\n"
_CLOSE_WAIT = 5.0


class LspError(RuntimeError):
    """A JSON-RPC error answer, or the server exiting under a pending request."""


def initialize_params(folder: Path, options: Mapping[str, Any] | None) -> dict[str, Any]:
    """``initialize`` params of a plain client: one workspace folder, no progress,
    no configuration pulls, so the server sends nothing a bench does not read."""
    uri = folder.resolve().as_uri()
    return {
        "processId": os.getpid(),
        "clientInfo": {"name": "rhema-bench", "version": "0"},
        "rootUri": uri,
        "workspaceFolders": [{"uri": uri, "name": folder.name}],
        "capabilities": {"general": {"positionEncodings": ["utf-16"]}},
        "initializationOptions": dict(options) if options is not None else None,
    }


def rss_kib(pid: int) -> int:
    """The resident set size of process ``pid`` in KiB (``VmRSS``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise LspError(f"no VmRSS for process {pid}")


def cpu_seconds(pid: int) -> float:
    """The CPU time (user and system) process ``pid`` used so far, in
    seconds: less moved by the other processes of a loaded machine than
    the wall time."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class LspProcess:
    """One language server process and the client end of its stdio."""

    def __init__(self, process: asyncio.subprocess.Process, spawned: float) -> None:
        self.process = process
        self.spawned = spawned
        self.on_notification: NotificationHandler | None = None
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._reader = asyncio.get_running_loop().create_task(self._read_loop())

    @classmethod
    async def spawn(
        cls, argv: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: Path | None = None
    ) -> LspProcess:
        """Start ``argv`` with piped stdin/stdout (stderr inherited)."""
        spawned = time.perf_counter()
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=dict(env) if env is not None else None,
            cwd=cwd,
        )
        return cls(process, spawned)

    @property
    def pid(self) -> int:
        """The server's process id."""
        return self.process.pid

    def _write(self, message: dict[str, Any]) -> None:
        body = json.dumps(message, separators=(",", ":")).encode()
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params: Any = None) -> None:
        """Send a notification."""
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    def send_request(self, method: str, params: Any = None) -> asyncio.Future[Any]:
        """Send a request; the future resolves to its result."""
        self._next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[self._next_id] = future
        self._write({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        return future

    async def request(self, method: str, params: Any = None) -> Any:
        """Send a request and wait for its result."""
        return await self.send_request(method, params)

    async def _read_loop(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            while True:
                head = await stdout.readuntil(_HEADER_END)
                length = 0
                for line in head.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                body = await stdout.readexactly(length)
                self._dispatch(json.loads(body), time.perf_counter())
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(LspError(f"server closed its output: {exc}"))
            self._pending.clear()

    def _dispatch(self, message: dict[str, Any], arrived: float) -> None:
        method = message.get("method")
        if method is None:
            future = self._pending.pop(message["id"], None)
            if future is None or future.done():
                return
            if "error" in message:
                future.set_exception(LspError(json.dumps(message["error"])))
            else:
                future.set_result(message.get("result"))
        elif "id" in message:
            result: Any = None
            if method == "workspace/configuration":
                result = [None] * len(message["params"]["items"])
            self._write({"jsonrpc": "2.0", "id": message["id"], "result": result})
        elif self.on_notification is not None:
            self.on_notification(method, message.get("params"), arrived)

    async def close(self) -> None:
        """``shutdown`` then ``exit``; kill the process if it lingers."""
        timeout = _CLOSE_WAIT
        if self.process.returncode is None:
            try:
                await asyncio.wait_for(self.request("shutdown"), timeout)
                self.notify("exit")
                stdin = self.process.stdin
                if stdin is not None:
                    stdin.close()
                await asyncio.wait_for(self.process.wait(), timeout)
            except (TimeoutError, LspError, ConnectionError):
                self.process.kill()
                await self.process.wait()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader
