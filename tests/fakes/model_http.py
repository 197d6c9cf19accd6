"""The HTTP side of :class:`tests.fakes.model_server.FakeModelServer`: the
request handler that records each request, answers ``GET`` (model listings,
llama.cpp's ``/props``, ``/release``) and streams each ``POST``'s scripted
reply piece by piece (with its delays, its hold, a drip, or a broken end),
and the threading server that hands it its owner.
"""

from __future__ import annotations

import dataclasses
import json
import math
import socket
import struct
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from tests.fakes.fim import fim_answer, is_fim
from tests.fakes.wire import Reply, too_long_reply

if TYPE_CHECKING:
    from tests.fakes.model_server import FakeModelServer

TOKEN_BYTES = 4
"""Bytes of a request body the fake counts as one token."""

__all__ = ["TOKEN_BYTES", "RecordedRequest", "Server"]


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the fake received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Server

    def log_message(self, format: str, *args: Any) -> None:  # the test output stays clean
        return

    def _record(self, body: bytes) -> None:
        try:
            parsed: Any = json.loads(body) if body else None
        except ValueError:
            parsed = None
        headers = {name.lower(): value for name, value in self.headers.items()}
        self.server.owner._record(RecordedRequest(self.command, self.path, headers, parsed, body))

    def do_GET(self) -> None:
        self._record(b"")
        owner = self.server.owner
        if self.path == "/props" and owner.context_window and owner.report_window:
            props = {"default_generation_settings": {"n_ctx": owner.context_window}}
            self._send_whole(200, {"content-type": "application/json"}, json.dumps(props).encode())
        elif self.path == "/release":
            owner.release()
            self._send_whole(200, {"content-type": "text/plain"}, b"released")
        elif self.path.rstrip("/").endswith("/models"):
            models = [
                {"id": name, "object": "model", "owned_by": owner.owned_by} for name in owner.models
            ]
            self._send_whole(
                200,
                {"content-type": "application/json"},
                json.dumps({"object": "list", "data": models}).encode(),
            )
        else:
            self._send_whole(404, {"content-type": "text/plain"}, b"not found")

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        self._record(body)
        owner = self.server.owner
        tokens = math.ceil(len(body) / TOKEN_BYTES)
        fim = is_fim(self.path)
        if fim and not owner.fim:
            self._send_whole(404, {"content-type": "text/plain"}, b"not found")
            return
        if owner.context_window is not None and tokens > owner.context_window:
            owner._too_long()
            reply: Reply | None = too_long_reply(owner.wire, tokens, owner.context_window)
        else:
            reply = owner._next_reply(body)
            if reply is not None and owner.context_window is not None and reply.kind == "text":
                output = max(1, math.ceil(len(reply.text) / TOKEN_BYTES)) + 8 * len(reply.calls)
                reply = dataclasses.replace(reply, usage=(tokens, output))
        if reply is None:
            message = (
                "FakeModelServer: no scripted reply left for this request "
                f"(request #{len(self.server.owner.received)}); call server.script(...) first"
            )
            self._send_whole(
                500,
                {"content-type": "application/json"},
                json.dumps({"error": {"message": message, "type": "fake_error"}}).encode(),
            )
            return
        if fim:
            if reply.delay > 0:
                time.sleep(reply.delay)
            status, answer = fim_answer(self.path, reply)
            try:
                self._send_whole(status, {"content-type": "application/json"}, answer)
            except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
                self.server.owner._disconnected()  # the client aborted the request
            return
        status, headers, pieces = self.server.owner._rendered(reply)
        if reply.kind == "error":
            self._send_whole(status, headers, pieces[0])
            return
        self._stream(reply, status, headers, pieces)

    def _drip(self, every: float) -> None:
        """One byte every ``every`` seconds until the client leaves (ten minutes at most)."""
        stop = time.monotonic() + 600
        while time.monotonic() < stop:
            time.sleep(every)
            self.server.owner.sent.append((time.time(), b"x"))
            self.wfile.write(b"1\r\nx\r\n")
            self.wfile.flush()

    def _send_whole(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(body)))
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(body)
        self.close_connection = True

    def _stream(
        self, reply: Reply, status: int, headers: dict[str, str], pieces: list[bytes]
    ) -> None:
        self.close_connection = True
        try:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("transfer-encoding", "chunked")
            self.send_header("connection", "close")
            self.end_headers()
            self.wfile.flush()
            if reply.split is not None or reply.drip > 0:
                # Each piece leaves as soon as it is written, not coalesced.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            elif reply.delay <= 0 and reply.hold is None:
                pieces = [b"".join(pieces)]
            for number, piece in enumerate(pieces):
                if number == reply.hold:
                    self.server.owner._wait_for_release()
                if number and reply.delay > 0:
                    time.sleep(reply.delay)
                if piece:
                    # Stamped before the write: after it, this thread may be descheduled
                    # while the client already shows the piece.
                    self.server.owner.sent.append((time.time(), piece))
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    self.wfile.flush()
            if reply.drip > 0:
                self._drip(reply.drip)
            if reply.end == "complete":
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            elif reply.end == "reset":
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                self.connection.close()
            else:
                self.connection.shutdown(socket.SHUT_RDWR)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            self.server.owner._disconnected()


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, owner: FakeModelServer, port: int) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", port), _Handler)
