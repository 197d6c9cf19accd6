"""Our server or agent, fed raw bytes: what the wire tests and fuzz suites
drive, in-process (the unit tier) or as a child process (e2e).

:class:`InProcessPeer` runs a peer's real serving loop (``serve``: the LSP
server's ``RhemaServer.serve``, or the ACP agent on its line transport) on
an event loop of its own thread; only the byte source and the writer are in
memory. :class:`ChildPeer` is the same with ``serve`` running the real
command as a child process (its stderr kept in a file). :class:`Frames` and
:class:`Lines` are the two encodings (LSP's frames, ACP's lines).

The test thread sends bytes or messages and waits for the peer's messages,
decoded as they come (a body that is not one JSON object fails the test).
Requests the peer sends are answered by ``answer`` (default: a ``null``
result). Every log record of an in-process peer is kept, to check that a
client's mistake leaves one line and no traceback; tests find a record by
the function that logged it (:meth:`InProcessPeer.logged`), not by its
text, which the providers' key filter rewrites wherever a key of an earlier
test (some are one letter long) appears in it.
"""

from __future__ import annotations

import abc
import asyncio
import itertools
import json
import logging
import os
import sys
import threading
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from rhema_lsp.server.framing import FrameDecoder

__all__ = [
    "KEYS",
    "WAIT",
    "ChildPeer",
    "Frames",
    "InProcessPeer",
    "Lines",
    "child_env",
    "frame",
    "isolate",
    "line",
]

WAIT = 30.0
"""Seconds a test waits for an answer before it fails (a guard, not a timing)."""


KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "RHEMA_API_KEY")
"""The key variables a peer must not find the machine's values of."""


def isolate(monkeypatch: Any, root: Path) -> None:
    """This process as a peer in-process should see it: no key of the
    machine's, the user's config and state below ``root``."""
    monkeypatch.setenv("XDG_STATE_HOME", str(root / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(root / "config"))
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)


def child_env(root: Path) -> dict[str, str]:
    """The same for a child process."""
    return {
        "XDG_STATE_HOME": str(root / "state"),
        "XDG_CONFIG_HOME": str(root / "config"),
        **dict.fromkeys(KEYS, ""),
    }


FRESH: Any = object()
"""An id the peer has not seen."""


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if not self.records or self.records[-1] is not record:  # on two loggers it comes twice
            self.records.append(record)


class InProcessPeer(abc.ABC):
    """One connection to a peer of ours, in a thread (see the module docstring)."""

    def __init__(self, answer: Callable[[dict[str, Any]], Any] | None = None) -> None:
        self.answer = answer or (lambda request: None)
        self.exit_code: int | None = None
        self.messages: list[dict[str, Any]] = []
        self.peer_requests: list[dict[str, Any]] = []
        self._changed = threading.Condition()
        self._ids = itertools.count(1_000_000)
        self._loop = asyncio.new_event_loop()
        self._inbox: asyncio.Queue[bytes] = asyncio.Queue()
        self._records = _Records()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name=type(self).__name__)
        self._thread.start()
        if not self._ready.wait(WAIT):
            raise RuntimeError("the in-process peer did not start")

    # -- what a peer is --------------------------------------------------------------

    @abc.abstractmethod
    async def serve(self, read: Callable[[], Awaitable[bytes]]) -> int:
        """Serve the connection ``read`` gives the bytes of; the exit code.
        The peer's output goes to :meth:`output`; it calls :meth:`keep_logs`
        once its logging is set up."""

    @abc.abstractmethod
    def encode(self, message: dict[str, Any] | bytes) -> bytes:
        """A message (or a body) as the client writes it."""

    @abc.abstractmethod
    def decode(self, data: bytes) -> list[bytes]:
        """The bodies the peer's output ``data`` completes."""

    # -- the peer's thread -----------------------------------------------------------

    def keep_logs(self) -> None:
        """Keep every log record from now on."""
        for name in ("rhema_lsp", ""):
            logging.getLogger(name).addHandler(self._records)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.call_soon(self._ready.set)
        try:
            code = self._loop.run_until_complete(self.serve(self._inbox.get))
        finally:
            for name in ("rhema_lsp", ""):
                logging.getLogger(name).removeHandler(self._records)
            self._loop.close()
        with self._changed:
            self.exit_code = code
            self._changed.notify_all()

    def output(self, data: bytes) -> None:
        """The peer wrote ``data`` (called on its thread)."""
        for body in self.decode(data):
            message = json.loads(body)
            assert isinstance(message, dict), body
            if "method" in message and "id" in message:
                self.peer_requests.append(message)
                reply = self.answer(message)
                if not (isinstance(reply, dict) and "jsonrpc" in reply):
                    reply = {"jsonrpc": "2.0", "id": message["id"], "result": reply}
                self._inbox.put_nowait(self.encode(reply))
            with self._changed:
                self.messages.append(message)
                self._changed.notify_all()

    # -- the test's thread -----------------------------------------------------------

    def send_bytes(self, data: bytes) -> None:
        """Bytes as the client writes them; ``b""`` ends the stream."""
        self._loop.call_soon_threadsafe(self._inbox.put_nowait, data)

    def send(self, message: dict[str, Any] | bytes) -> None:
        """One message (or one body)."""
        self.send_bytes(self.encode(message))

    def wait_for(self, predicate: Callable[[], Any]) -> Any:
        """The first true value of ``predicate`` (asked as messages come)."""
        with self._changed:
            if not predicate() and not self._changed.wait_for(predicate, WAIT):
                raise AssertionError(f"nothing came within {WAIT} s; got {self.messages[-5:]}")
            return predicate()

    def response(self, msg_id: Any) -> dict[str, Any]:
        """The peer's answer to ``msg_id``."""

        def answered() -> dict[str, Any] | None:
            return next(
                (m for m in self.messages if m.get("id") == msg_id and "method" not in m), None
            )

        found: dict[str, Any] = self.wait_for(answered)
        return found

    def request(self, method: str, params: Any = None, msg_id: Any = FRESH) -> dict[str, Any]:
        """Send a request (under a fresh id unless ``msg_id`` is given) and
        wait for its answer (the whole response)."""
        msg_id = next(self._ids) if msg_id is FRESH else msg_id
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return self.response(msg_id)

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_exit(self) -> int:
        """The exit code, once the connection ended."""
        self.wait_for(lambda: self.exit_code is not None)
        self._thread.join(WAIT)
        assert self.exit_code is not None
        return self.exit_code

    # -- what the tests check --------------------------------------------------------

    def mark(self) -> int:
        """A point in the log, for :meth:`logged` and :meth:`tracebacks`."""
        return len(self._records.records)

    def logged(self, since: int, function: str, level: int = logging.INFO) -> list[str]:
        """The messages logged by ``function`` at ``level`` since ``since``."""
        return [
            r.getMessage()
            for r in self._records.records[since:]
            if r.funcName == function and r.levelno == level
        ]

    def everything_logged(self, since: int) -> list[str]:
        """Every message logged since ``since``, at any level."""
        return [r.getMessage() for r in self._records.records[since:]]

    def tracebacks(self, since: int = 0) -> list[str]:
        """Every log record since ``since`` that carries a traceback."""
        return [f"{r.name}: {r.getMessage()}" for r in self._records.records[since:] if r.exc_info]


def _body(message: dict[str, Any] | bytes) -> bytes:
    return message if isinstance(message, bytes) else json.dumps(message, allow_nan=False).encode()


def frame(message: dict[str, Any] | bytes) -> bytes:
    """``message`` (or a body) as one LSP frame."""
    data = _body(message)
    return b"Content-Length: %d\r\n\r\n" % len(data) + data


def line(message: dict[str, Any] | bytes) -> bytes:
    """``message`` (or a body) as one ACP line."""
    return _body(message) + b"\n"


class Frames:
    """LSP's encoding, for a peer (decoded with the server's own decoder)."""

    _frames: FrameDecoder | None = None

    def encode(self, message: dict[str, Any] | bytes) -> bytes:
        return frame(message)

    def decode(self, data: bytes) -> list[bytes]:
        if self._frames is None:
            self._frames = FrameDecoder()
        self._frames.feed(data)
        bodies = []
        while (body := self._frames.frame()) is not None:
            bodies.append(body)
        return bodies


class Lines:
    """ACP's encoding, for a peer."""

    _pending = b""

    def encode(self, message: dict[str, Any] | bytes) -> bytes:
        return line(message)

    def decode(self, data: bytes) -> list[bytes]:
        *lines, self._pending = (self._pending + data).split(b"\n")
        return lines


class ChildPeer(InProcessPeer):
    """A peer run as a child process: ``python -m rhema_lsp ARGS``."""

    def __init__(
        self,
        args: Sequence[str],
        stderr: Path,
        env: dict[str, str] | None = None,
        answer: Callable[[dict[str, Any]], Any] | None = None,
    ) -> None:
        self._args = list(args)
        self._stderr = stderr
        repo = str(Path(__file__).resolve().parents[2])
        self._env = {**os.environ, "PYTHONPATH": repo, **(env or {})}
        super().__init__(answer)

    async def serve(self, read: Callable[[], Awaitable[bytes]]) -> int:
        with self._stderr.open("ab") as stderr:
            child = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "rhema_lsp",
                *self._args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=stderr,
                env=self._env,
            )
            assert child.stdin is not None and child.stdout is not None
            stdin, stdout = child.stdin, child.stdout

            async def feed() -> None:
                while data := await read():
                    stdin.write(data)
                    try:
                        await stdin.drain()
                    except (BrokenPipeError, ConnectionResetError):
                        return  # it exited
                stdin.close()

            feeding = asyncio.ensure_future(feed())
            while data := await stdout.read(65536):
                self.output(data)
            code = await child.wait()
            feeding.cancel()
            return code

    def stderr(self) -> str:
        """What the child wrote on stderr so far."""
        return self._stderr.read_text(errors="replace")
