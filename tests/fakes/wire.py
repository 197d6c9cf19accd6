"""Replies a fake model server can send, and how each wire spells them.

A :class:`Reply` is wire-neutral: :func:`render` turns it into the exact
HTTP status, headers and body pieces of the OpenAI-compatible, Anthropic or
Gemini streaming format. A streamed body is a list of pieces, each one
server-sent event (spelled per wire in :mod:`tests.fakes.wire_bodies`), so a
delay or a hold can be put between deltas.
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from tests.fakes import wire_bodies as bodies

__all__ = [
    "Reply",
    "Wire",
    "drip_reply",
    "error_reply",
    "raw_reply",
    "render",
    "split_pieces",
    "stream_error_reply",
    "text_reply",
    "too_long_reply",
    "tool_reply",
]

Wire = Literal["openai", "anthropic", "gemini"]
End = Literal["complete", "eof", "reset"]


@dataclass(frozen=True)
class Reply:
    """One scripted reply; build it with the module's ``*_reply`` functions.

    ``end`` says how a streamed body finishes: ``complete`` (proper end of the
    chunked body), ``eof`` (the connection closes without ending the body) or
    ``reset`` (a TCP reset).
    """

    kind: Literal["text", "error", "raw", "stream_error"]
    text: str = ""
    thinking: str | None = None
    calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    chunk: int = 1
    delay: float = 0.0
    usage: tuple[int, int] | None = None
    status: int = 200
    body: str | dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes = b""
    end: End = "complete"
    error_type: str = "overloaded_error"
    keepalive: bool = False
    crlf: bool = False
    split: int | None = None
    cache: tuple[int, int] | None = None
    """Prompt-cache tokens ``(read, written)`` of the prompt, where the wire reports them."""
    drip: float = 0.0
    """After the body, one more byte (``x``) every ``drip`` seconds until the client leaves."""
    hold: int | None = None
    """After this many pieces of the body the answer waits for the test:
    :meth:`FakeModelServer.release` (or a ``GET /release``, for a test body
    running in an editor), a minute at most. On the OpenAI wire piece 1 is
    the role and each later one a delta: ``hold=2`` shows the first."""

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict (the ``--script`` file format)."""
        data = asdict(self)
        data["raw"] = self.raw.decode("latin-1")
        data["calls"] = [list(call) for call in self.calls]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Reply:
        """The reply a :meth:`to_json` dict (or a hand-written one) describes."""
        values = dict(data)
        values["raw"] = str(values.get("raw", "")).encode("latin-1")
        values["calls"] = tuple((str(name), dict(args)) for name, args in values.get("calls", ()))
        for name in ("usage", "cache"):
            if values.get(name) is not None:
                values[name] = tuple(values[name])
        return cls(**values)


def text_reply(
    text: str,
    *,
    thinking: str | None = None,
    chunk: int = 1,
    delay: float = 0.0,
    usage: tuple[int, int] | None = None,
    keepalive: bool = False,
    crlf: bool = False,
    end: End = "complete",
    hold: int | None = None,
) -> Reply:
    """A streamed answer: optional thinking, then ``text`` in deltas of ``chunk``
    characters, ``delay`` seconds apart, held after ``hold`` pieces until the
    test releases it (see :attr:`Reply.hold`). ``usage`` defaults to (10, deltas).
    With ``end`` other than ``complete`` the wire's closing events (finish,
    usage, terminator) are left out and the connection ends or resets."""
    return Reply(
        kind="text",
        text=text,
        thinking=thinking,
        chunk=max(1, chunk),
        delay=delay,
        usage=usage,
        keepalive=keepalive,
        crlf=crlf,
        end=end,
        hold=hold,
    )


def tool_reply(
    *calls: tuple[str, dict[str, Any]],
    text: str = "",
    thinking: str | None = None,
    delay: float = 0.0,
    usage: tuple[int, int] | None = None,
    keepalive: bool = False,
    crlf: bool = False,
    end: End = "complete",
) -> Reply:
    """A streamed tool-use answer: ``(name, args)`` per call, ids ``call_1``,
    ``call_2``... (Gemini sends no ids, as the real API often does not)."""
    return Reply(
        kind="text",
        text=text,
        thinking=thinking,
        calls=tuple(calls),
        chunk=8,
        delay=delay,
        usage=usage,
        keepalive=keepalive,
        crlf=crlf,
        end=end,
    )


def error_reply(
    status: int,
    body: str | dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> Reply:
    """An HTTP error (or redirect) with the wire's own error body unless ``body`` is given."""
    return Reply(kind="error", status=status, body=body, headers=dict(headers or {}))


def too_long_reply(wire: Wire, tokens: int, window: int) -> Reply:
    """The HTTP 400 each wire answers a prompt longer than the model's window
    with, in its own words (as the vendors' APIs and llama.cpp send them)."""
    body: dict[str, Any]
    if wire == "anthropic":
        body = {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": f"prompt is too long: {tokens} tokens > {window} maximum",
            },
        }
    elif wire == "gemini":
        body = {
            "error": {
                "code": 400,
                "message": f"The input token count ({tokens}) exceeds the maximum number of "
                f"tokens allowed ({window}).",
                "status": "INVALID_ARGUMENT",
            }
        }
    else:
        body = {
            "error": {
                "message": f"This model's maximum context length is {window} tokens. However, "
                f"your messages resulted in {tokens} tokens. Please reduce the length of the "
                "messages.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        }
    return error_reply(400, body)


def raw_reply(
    lines: list[str] | bytes,
    status: int = 200,
    headers: dict[str, str] | None = None,
    *,
    end: End = "complete",
    split: int | None = None,
    pace: tuple[int, float] | None = None,
) -> Reply:
    """Exactly these body bytes (``lines`` joined with ``\\n``, or given as bytes).

    With ``split`` (a seed) the body goes out in pieces of 1 to 2,048 bytes,
    sizes drawn from ``random.Random(split)``, each its own flushed HTTP chunk.
    With ``pace`` ``(size, seconds)`` it goes out in pieces of ``size`` bytes,
    ``seconds`` apart.
    """
    raw = lines if isinstance(lines, bytes) else "".join(line + "\n" for line in lines).encode()
    size, delay = pace if pace is not None else (1, 0.0)
    return Reply(
        kind="raw",
        raw=raw,
        status=status,
        headers=dict(headers or {}),
        end=end,
        split=split,
        chunk=size,
        delay=delay,
    )


def drip_reply(head: bytes = b"data: ", *, every: float = 2.0) -> Reply:
    """A stream that never quite stops: ``head``, then one byte every ``every``
    seconds, for as long as the client keeps reading (up to ten minutes)."""
    return Reply(kind="raw", raw=head, drip=every)


def split_pieces(body: bytes, seed: int) -> list[bytes]:
    """``body`` cut into pieces of 1 to 2,048 bytes, sizes drawn from ``random.Random(seed)``."""
    sizes = random.Random(seed)
    pieces: list[bytes] = []
    start = 0
    while start < len(body):
        size = sizes.randint(1, 2048)
        pieces.append(body[start : start + size])
        start += size
    return pieces


def stream_error_reply(
    after_text: str = "",
    *,
    error_type: str = "overloaded_error",
    chunk: int = 1,
) -> Reply:
    """HTTP 200, optionally some answer text, then an in-stream error event."""
    return Reply(kind="stream_error", text=after_text, error_type=error_type, chunk=chunk)


# -- rendering ------------------------------------------------------------------


def _error_body(wire: Wire, status: int, message: str) -> dict[str, Any]:
    if wire == "anthropic":
        kind = (
            "overloaded_error"
            if status == 529
            else "api_error"
            if status >= 500
            else "invalid_request_error"
        )
        return {"type": "error", "error": {"type": kind, "message": message}}
    if wire == "gemini":
        return {"error": {"code": status, "message": message, "status": "UNAVAILABLE"}}
    return {"error": {"message": message, "type": "server_error", "code": status}}


BODIES = {"openai": bodies.openai, "anthropic": bodies.anthropic, "gemini": bodies.gemini}
"""Each wire's streamed body (:mod:`tests.fakes.wire_bodies`)."""


def render(
    reply: Reply, wire: Wire, *, model: str = "fake-model"
) -> tuple[int, dict[str, str], list[bytes]]:
    """The status, headers and body pieces of ``reply`` on ``wire``."""
    if reply.kind == "error":
        body = reply.body
        if body is None:
            body = _error_body(wire, reply.status, f"fake error {reply.status}")
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        content_type = "text/plain" if isinstance(body, str) else "application/json"
        return reply.status, {"content-type": content_type, **reply.headers}, [data]
    headers = {"content-type": "text/event-stream", "cache-control": "no-cache", **reply.headers}
    if reply.kind == "raw":
        if reply.split is not None:
            return reply.status, headers, split_pieces(reply.raw, reply.split)
        if reply.delay > 0:
            raw, size = reply.raw, reply.chunk
            return reply.status, headers, [raw[i : i + size] for i in range(0, len(raw), size)]
        return reply.status, headers, [reply.raw]
    renderer = {"openai": bodies.openai, "anthropic": bodies.anthropic, "gemini": bodies.gemini}[
        wire
    ]
    pieces = renderer(reply, model)
    if reply.kind == "text" and reply.end != "complete":
        # A broken stream: the wire's closing events never arrive.
        pieces = pieces[: -bodies.CLOSING_EVENTS[wire]]
    if reply.keepalive:
        keep = bodies.anthropic_ping() if wire == "anthropic" else b": OPENROUTER PROCESSING\n\n"
        pieces = [item for piece in pieces for item in (keep, piece)]
    if reply.crlf:
        pieces = [piece.replace(b"\n", b"\r\n") for piece in pieces]
    return 200, headers, pieces
