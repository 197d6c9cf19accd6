"""How each wire spells a streamed :class:`~tests.fakes.wire.Reply`: the exact
server-sent events of the OpenAI-compatible, Anthropic and Gemini streaming
formats (written from each vendor's documented format), one piece per event,
so a delay or a hold can go between deltas. :func:`tests.fakes.wire.render`
picks the wire.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.fakes.wire import Reply

__all__ = ["CLOSING_EVENTS", "anthropic", "anthropic_ping", "gemini", "openai"]


def _pieces(text: str, size: int) -> list[str]:
    return [text[index : index + size] for index in range(0, len(text), size)]


def _sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


CLOSING_EVENTS = {"openai": 3, "anthropic": 2, "gemini": 1}


def _usage(reply: Reply, deltas: int) -> tuple[int, int]:
    return reply.usage if reply.usage is not None else (10, deltas)


def openai(reply: Reply, model: str) -> list[bytes]:
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


def anthropic_ping() -> bytes:
    return _sse({"type": "ping"}, "ping")


def anthropic(reply: Reply, model: str) -> list[bytes]:
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
        anthropic_ping(),
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


def gemini(reply: Reply, model: str) -> list[bytes]:
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
