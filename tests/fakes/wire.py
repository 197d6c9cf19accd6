"""Replies a fake model server can send, and how each wire spells them.

A :class:`Reply` is wire-neutral: :func:`render` turns it into the exact
HTTP status, headers and body pieces of the OpenAI-compatible, Anthropic or
Gemini streaming format (written from each vendor's documented format). A
streamed body is a list of pieces, each one server-sent event, so a delay can
be put between deltas.
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

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


def _pieces(text: str, size: int) -> list[str]:
    return [text[index : index + size] for index in range(0, len(text), size)]


def _sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


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
    renderer = {"openai": _openai, "anthropic": _anthropic, "gemini": _gemini}[wire]
    pieces = renderer(reply, model)
    if reply.kind == "text" and reply.end != "complete":
        # A broken stream: the wire's closing events never arrive.
        pieces = pieces[: -_CLOSING_EVENTS[wire]]
    if reply.keepalive:
        keep = _anthropic_ping() if wire == "anthropic" else b": OPENROUTER PROCESSING\n\n"
        pieces = [item for piece in pieces for item in (keep, piece)]
    if reply.crlf:
        pieces = [piece.replace(b"\n", b"\r\n") for piece in pieces]
    return 200, headers, pieces


_CLOSING_EVENTS = {"openai": 3, "anthropic": 2, "gemini": 1}


def _usage(reply: Reply, deltas: int) -> tuple[int, int]:
    return reply.usage if reply.usage is not None else (10, deltas)


def _openai(reply: Reply, model: str) -> list[bytes]:
    base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1, "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return _sse({**base, "choices": [choice]})

    out = [chunk({"role": "assistant", "content": ""})]
    deltas = 0
    if reply.thinking:
        for piece in _pieces(reply.thinking, reply.chunk):
            out.append(chunk({"reasoning_content": piece}))
            deltas += 1
    for piece in _pieces(reply.text, reply.chunk):
        out.append(chunk({"content": piece}))
        deltas += 1
    if reply.kind == "stream_error":
        out.append(
            _sse(
                {
                    **base,
                    "error": {"message": "Overloaded", "code": 529, "type": reply.error_type},
                    "choices": [{"index": 0, "delta": {}, "finish_reason": "error"}],
                }
            )
        )
        return out
    if reply.calls:
        fragments: list[list[dict[str, Any]]] = []
        for index, (name, args) in enumerate(reply.calls):
            first = {
                "index": index,
                "id": f"call_{index + 1}",
                "type": "function",
                "function": {"name": name, "arguments": ""},
            }
            text = json.dumps(args)
            rest = [
                {"index": index, "function": {"arguments": piece}}
                for piece in _pieces(text, max(1, len(text) // 3))
            ]
            fragments.append([first, *rest])
        for group in fragments:  # every call announced first ...
            out.append(chunk({"tool_calls": [group.pop(0)]}))
        while any(fragments):  # ... then their argument fragments interleave
            for group in fragments:
                if group:
                    out.append(chunk({"tool_calls": [group.pop(0)]}))
                    deltas += 1
    out.append(chunk({}, "tool_calls" if reply.calls else "stop"))
    prompt, completion = _usage(reply, deltas)
    out.append(
        _sse(
            {
                **base,
                "choices": [],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                    **(
                        {"prompt_tokens_details": {"cached_tokens": reply.cache[0]}}
                        if reply.cache is not None
                        else {}
                    ),
                },
            }
        )
    )
    out.append(b"data: [DONE]\n\n")
    return out


def _anthropic_usage(reply: Reply, prompt: int) -> dict[str, int]:
    """``message_start``'s usage: ``input_tokens`` counts only what the cache
    did not serve or store, as the API reports it."""
    if reply.cache is None:
        return {"input_tokens": prompt, "output_tokens": 1}
    read, written = reply.cache
    return {
        "input_tokens": prompt - read - written,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": written,
        "output_tokens": 1,
    }


def _anthropic_ping() -> bytes:
    return _sse({"type": "ping"}, "ping")


def _anthropic(reply: Reply, model: str) -> list[bytes]:
    deltas = 0
    prompt, _ = _usage(reply, 0)
    out = [
        _sse(
            {
                "type": "message_start",
                "message": {
                    "id": "msg_fake",
                    "type": "message",
                    "role": "assistant",
                    "content": [],
                    "model": model,
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": _anthropic_usage(reply, prompt),
                },
            },
            "message_start",
        ),
        _anthropic_ping(),
    ]
    index = 0

    def block(start: dict[str, Any], deltas_: list[dict[str, Any]]) -> None:
        nonlocal index
        out.append(
            _sse(
                {"type": "content_block_start", "index": index, "content_block": start},
                "content_block_start",
            )
        )
        for delta in deltas_:
            out.append(
                _sse(
                    {"type": "content_block_delta", "index": index, "delta": delta},
                    "content_block_delta",
                )
            )
        out.append(_sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
        index += 1

    if reply.thinking:
        pieces = [
            {"type": "thinking_delta", "thinking": p} for p in _pieces(reply.thinking, reply.chunk)
        ]
        deltas += len(pieces)
        block(
            {"type": "thinking", "thinking": ""},
            [*pieces, {"type": "signature_delta", "signature": "sig-fake-1"}],
        )
    if reply.text:
        pieces = [{"type": "text_delta", "text": p} for p in _pieces(reply.text, reply.chunk)]
        deltas += len(pieces)
        if reply.kind == "stream_error":
            out.append(
                _sse(
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "text", "text": ""},
                    },
                    "content_block_start",
                )
            )
            for delta in pieces:
                out.append(
                    _sse(
                        {"type": "content_block_delta", "index": index, "delta": delta},
                        "content_block_delta",
                    )
                )
        else:
            block({"type": "text", "text": ""}, pieces)
    if reply.kind == "stream_error":
        out.append(
            _sse(
                {"type": "error", "error": {"type": reply.error_type, "message": "Overloaded"}},
                "error",
            )
        )
        return out
    for number, (name, args) in enumerate(reply.calls, start=1):
        text = json.dumps(args)
        pieces = [
            {"type": "input_json_delta", "partial_json": p}
            for p in _pieces(text, max(1, len(text) // 3))
        ]
        deltas += len(pieces)
        block(
            {"type": "tool_use", "id": f"call_{number}", "name": name, "input": {}},
            [{"type": "input_json_delta", "partial_json": ""}, *pieces],
        )
    _, completion = _usage(reply, deltas)
    out.append(
        _sse(
            {
                "type": "message_delta",
                "delta": {
                    "stop_reason": "tool_use" if reply.calls else "end_turn",
                    "stop_sequence": None,
                },
                "usage": {"output_tokens": completion},
            },
            "message_delta",
        )
    )
    out.append(_sse({"type": "message_stop"}, "message_stop"))
    return out


def _gemini(reply: Reply, model: str) -> list[bytes]:
    prompt, _ = _usage(reply, 0)
    total_deltas = len(_pieces(reply.text, reply.chunk)) + (
        len(_pieces(reply.thinking, reply.chunk)) if reply.thinking else 0
    )
    final_output = _usage(reply, total_deltas + len(reply.calls))[1]
    out: list[bytes] = []
    produced = 0

    def chunk(parts: list[dict[str, Any]], finish: str | None = None) -> bytes:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        if finish:
            candidate["finishReason"] = finish
        output = final_output if finish else min(produced, final_output)
        return _sse(
            {
                "candidates": [candidate],
                "usageMetadata": {
                    "promptTokenCount": prompt,
                    "candidatesTokenCount": output,
                    "totalTokenCount": prompt + output,
                },
                "modelVersion": model,
                "responseId": "fake",
            }
        )

    if reply.thinking:
        for piece in _pieces(reply.thinking, reply.chunk):
            produced += 1
            out.append(chunk([{"text": piece, "thought": True}]))
    for piece in _pieces(reply.text, reply.chunk):
        produced += 1
        out.append(chunk([{"text": piece}]))
    if reply.kind == "stream_error":
        out.append(
            _sse(
                {
                    "error": {
                        "code": 503,
                        "message": "The model is overloaded.",
                        "status": "UNAVAILABLE",
                    }
                }
            )
        )
        return out
    calls: list[dict[str, Any]] = []
    for number, (name, args) in enumerate(reply.calls):
        part: dict[str, Any] = {"functionCall": {"name": name, "args": args}}
        if number == 0:
            part["thoughtSignature"] = "c2lnLWdlbWluaS0x"
        calls.append(part)
    out.append(chunk(calls, "STOP"))
    return out
