"""The real language server in-process, fed raw bytes: what the wire tests
and fuzz suites of the unit tier drive.

:class:`InProcessServer` runs ``create_server()``'s server on an event loop
of its own thread, exactly as ``rhema-lsp serve`` does (the same
``RhemaServer.serve`` loop, frame decoder, message check and protocol);
only the byte source and the writer are in memory. The test thread sends
bytes or messages, and waits for the server's frames, which it decodes with
the server's own :class:`FrameDecoder` (a body that is not one JSON object
fails the test). Requests the server sends are answered by ``answer``
(default: a ``null`` result). Every log record of the process is kept, to
check that client errors leave one line and no traceback; tests find a
record by the function that logged it (:meth:`InProcessServer.logged`), not
by its text, which the providers' key filter rewrites wherever a key of an
earlier test (some are one letter long) appears in it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import threading
from collections.abc import Callable
from typing import Any

from rhema_lsp.server import create_server
from rhema_lsp.server.framing import FrameDecoder

__all__ = ["WAIT", "InProcessServer", "frame"]

WAIT = 30.0
"""Seconds a test waits for an answer before it fails (a guard, not a timing)."""


def frame(body: bytes | dict[str, Any]) -> bytes:
    """``body`` (bytes, or a message to dump) as one LSP frame."""
    data = body if isinstance(body, bytes) else json.dumps(body, allow_nan=False).encode()
    return b"Content-Length: %d\r\n\r\n" % len(data) + data


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


class InProcessServer:
    """One server connection in a thread (see the module docstring)."""

    def __init__(self, answer: Callable[[dict[str, Any]], Any] | None = None) -> None:
        self.answer = answer or (lambda request: None)
        self.exit_code: int | None = None
        self.messages: list[dict[str, Any]] = []
        self.server_requests: list[dict[str, Any]] = []
        self._changed = threading.Condition()
        self._frames = FrameDecoder()
        self._ids = itertools.count(1_000_000)
        self._loop = asyncio.new_event_loop()
        self._inbox: asyncio.Queue[bytes] | None = None
        self._records = _Records()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="in-process-lsp")
        self._thread.start()
        if not self._ready.wait(WAIT):
            raise RuntimeError("the in-process server did not start")

    # -- the server's thread ---------------------------------------------------------

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = create_server()
        self.server = server
        for name in ("rhema_lsp", ""):
            logging.getLogger(name).addHandler(self._records)
        server.protocol.set_writer(self)
        self._inbox = asyncio.Queue()
        self._loop.call_soon(self._ready.set)
        try:
            code = self._loop.run_until_complete(server.serve(self._inbox.get))
        finally:
            for name in ("rhema_lsp", ""):
                logging.getLogger(name).removeHandler(self._records)
            self._loop.close()
        with self._changed:
            self.exit_code = code
            self._changed.notify_all()

    def write(self, data: bytes) -> None:
        """pygls' writer interface: the server's output, decoded as it comes."""
        self._frames.feed(data)
        while (body := self._frames.frame()) is not None:
            message = json.loads(body)
            assert isinstance(message, dict), body
            if "method" in message and "id" in message:
                self._answer(message)
            with self._changed:
                self.messages.append(message)
                self._changed.notify_all()

    def close(self) -> None:
        """pygls' writer interface."""

    def _answer(self, request: dict[str, Any]) -> None:
        self.server_requests.append(request)
        reply = self.answer(request)
        message = reply if isinstance(reply, dict) and "jsonrpc" in reply else None
        if message is None:
            message = {"jsonrpc": "2.0", "id": request["id"], "result": reply}
        data = frame(message)
        self._loop.call_soon(self._put, data)

    def _put(self, data: bytes) -> None:
        assert self._inbox is not None
        self._inbox.put_nowait(data)

    # -- the test's thread -----------------------------------------------------------

    def send_bytes(self, data: bytes) -> None:
        """Bytes as the client writes them; ``b""`` ends the stream."""
        self._loop.call_soon_threadsafe(self._put, data)

    def send(self, message: dict[str, Any] | bytes) -> None:
        """One message (or one body) in a frame of its own."""
        self.send_bytes(frame(message))

    def wait_for(self, predicate: Callable[[], Any]) -> Any:
        """The first true value of ``predicate`` (asked as messages come)."""
        with self._changed:
            found = predicate()
            if not found and not self._changed.wait_for(predicate, WAIT):
                raise AssertionError(f"nothing came within {WAIT} s; got {self.messages[-5:]}")
            return predicate()

    def response(self, msg_id: Any) -> dict[str, Any]:
        """The server's answer to ``msg_id``."""

        def answered() -> dict[str, Any] | None:
            return next(
                (m for m in self.messages if m.get("id") == msg_id and "method" not in m), None
            )

        found: dict[str, Any] = self.wait_for(answered)
        return found

    def request(self, method: str, params: Any = None, msg_id: Any = None) -> dict[str, Any]:
        """Send a request and wait for its answer (the whole response)."""
        msg_id = next(self._ids) if msg_id is None else msg_id
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return self.response(msg_id)

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def command(self, name: str, args: Any = None) -> dict[str, Any]:
        """``workspace/executeCommand`` with one argument object."""
        return self.request(
            "workspace/executeCommand", {"command": name, "arguments": [args or {}]}
        )

    def initialize(self, settings: dict[str, Any], folders: list[Any], **extra: Any) -> None:
        answer = self.request(
            "initialize",
            {
                "processId": None,
                "rootUri": None,
                "capabilities": extra.pop("capabilities", {}),
                "workspaceFolders": [{"uri": f.as_uri(), "name": f.name} for f in folders],
                "initializationOptions": settings,
                **extra,
            },
        )
        assert "result" in answer, answer
        self.notify("initialized", {})

    def wait_exit(self) -> int:
        """The exit code, once the connection ended."""
        self.wait_for(lambda: self.exit_code is not None)
        self._thread.join(WAIT)
        assert self.exit_code is not None
        return self.exit_code

    def stop(self) -> None:
        """shutdown, exit, and wait for the thread."""
        if self.exit_code is None:
            with contextlib.suppress(AssertionError):
                self.request("shutdown")
            self.notify("exit")
            self.wait_exit()

    # -- what the tests check --------------------------------------------------------

    def mark(self) -> int:
        """A point in the log and the output, for :meth:`since`."""
        return len(self._records.records)

    def logged(self, since: int, function: str, level: int = logging.INFO) -> list[str]:
        """The messages logged by ``function`` at ``level`` since ``since``."""
        return [
            r.getMessage()
            for r in self._records.records[since:]
            if r.funcName == function and r.levelno == level
        ]

    def tracebacks(self, since: int = 0) -> list[str]:
        """Every log record since ``since`` that carries a traceback."""
        return [f"{r.name}: {r.getMessage()}" for r in self._records.records[since:] if r.exc_info]

    def popups(self) -> list[dict[str, Any]]:
        """Every ``window/showMessage`` the server sent."""
        return [m for m in self.messages if m.get("method") == "window/showMessage"]
