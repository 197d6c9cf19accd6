"""Streams in the shapes real provider servers send, and what must come out of each.

Written for this project from what recorded production streams teach (the
corpus itself stays outside the repository). Here the case's shape and
Anthropic's streams: server tools and their result blocks, MCP blocks,
programmatic calls whose input arrives whole, cache tokens that
``message_delta`` revises, compaction, ``pause_turn`` and whitespace-padded
``data:`` lines (Gemini's and the OpenAI wire's are in
:mod:`tests.unit.providers.streams_more`). Ids, signatures and texts are
invented.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ANTHROPIC_CASES", "Case"]


@dataclass(frozen=True)
class Case:
    """One stream and what the adapter must make of it."""

    name: str
    wire: str
    body: bytes
    text: str = ""
    reasoning: str = ""
    calls: tuple[tuple[str, str, dict[str, Any]], ...] = ()
    stop: str = "end_turn"
    usage: tuple[int, int, int, int] = (0, 0, 0, 0)
    """input (cached included), output, cache read, cache write."""
    provider_kinds: tuple[str, ...] = ()
    provider_tools: tuple[tuple[str, str, str], ...] = ()
    """The ``ProviderToolUse`` events: id, name, detail."""
    text_signatures: tuple[str, ...] = ()
    thinking_signatures: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)


def _anthropic(*events: dict[str, Any], pad: bool = False) -> bytes:
    """Anthropic SSE: ``event: <type>`` then ``data: <json>``; ``pad`` adds the
    trailing spaces some servers leave inside data lines."""
    out = []
    for event in events:
        data = json.dumps(event, separators=(",", ":"))
        out.append(f"event: {event['type']}\ndata: {data}{'   ' if pad else ''}\n\n")
    return "".join(out).encode()


def _data(*chunks: dict[str, Any], done: bool = False, comment: str | None = None) -> bytes:
    """``data: <json>`` events (OpenAI-compatible and Gemini)."""
    out = [f": {comment}\n\n"] if comment else []
    out += [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks]
    if done:
        out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def _start(usage: dict[str, int]) -> dict[str, Any]:
    return {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-x",
            "content": [],
            "stop_reason": None,
            "usage": usage,
        },
    }


def _block(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def _delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def _stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def _end(reason: str, usage: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    return (
        {"type": "message_delta", "delta": {"stop_reason": reason}, "usage": usage},
        {"type": "message_stop"},
    )


def _json_pieces(index: int, value: Any, size: int = 7) -> list[dict[str, Any]]:
    text = json.dumps(value)
    return [
        _delta(index, {"type": "input_json_delta", "partial_json": text[at : at + size]})
        for at in range(0, len(text), size)
    ]


def _text(index: int, *pieces: str) -> list[dict[str, Any]]:
    return [
        _block(index, {"type": "text", "text": ""}),
        *(_delta(index, {"type": "text_delta", "text": piece}) for piece in pieces),
        _stop(index),
    ]


SEARCH_RESULT = {
    "type": "web_search_tool_result",
    "tool_use_id": "srvtoolu_01",
    "content": [
        {
            "type": "web_search_result",
            "title": "The borrow checker",
            "url": "https://doc.example/borrow",
            "encrypted_content": "EqQBCkYIBxgC",
            "page_age": None,
        }
    ],
}
CITATION = {
    "type": "web_search_result_location",
    "cited_text": "References must always be valid.",
    "url": "https://doc.example/borrow",
    "title": "The borrow checker",
    "encrypted_index": "Eo8BCioIBxgC",
}

WEB_SEARCH = Case(
    name="anthropic-web-search",
    wire="anthropic",
    body=_anthropic(
        _start({"input_tokens": 2100, "output_tokens": 3}),
        {"type": "ping"},
        *_text(0, "Let me look", " that up."),
        _block(
            1, {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {}}
        ),
        *_json_pieces(1, {"query": "rust borrow checker"}),
        _stop(1),
        _block(2, SEARCH_RESULT),
        _stop(2),
        _block(3, {"type": "text", "text": "", "citations": []}),
        _delta(3, {"type": "citations_delta", "citation": CITATION}),
        _delta(3, {"type": "text_delta", "text": "References must stay valid."}),
        _stop(3),
        *_end("end_turn", {"input_tokens": 5200, "output_tokens": 61}),
    ),
    text="Let me look that up.References must stay valid.",
    usage=(5200, 61, 0, 0),
    provider_kinds=("server_tool_use", "web_search_tool_result"),
    provider_tools=(("srvtoolu_01", "web_search", "rust borrow checker"),),
)

MCP = Case(
    name="anthropic-mcp",
    wire="anthropic",
    body=_anthropic(
        _start({"input_tokens": 400, "output_tokens": 1}),
        _block(
            0,
            {
                "type": "mcp_tool_use",
                "id": "mcptoolu_01",
                "name": "echo",
                "server_name": "echo",
                "input": {},
            },
        ),
        *_json_pieces(0, {"message": "hello"}, size=3),
        _stop(0),
        _block(
            1,
            {
                "type": "mcp_tool_result",
                "tool_use_id": "mcptoolu_01",
                "is_error": False,
                "content": [{"type": "text", "text": "hello"}],
            },
        ),
        _stop(1),
        *_text(2, "It said hello."),
        *_end("end_turn", {"output_tokens": 30}),
    ),
    text="It said hello.",
    usage=(400, 30, 0, 0),
    provider_kinds=("mcp_tool_use", "mcp_tool_result"),
    # No key reads as the main input: the detail is the input's JSON.
    provider_tools=(("mcptoolu_01", "echo", '{"message": "hello"}'),),
    extra={"mcp_input": {"message": "hello"}},
)

PROGRAMMATIC = Case(
    name="anthropic-programmatic-call",
    wire="anthropic",
    body=_anthropic(
        _start({"input_tokens": 3000, "output_tokens": 2}),
        *_text(0, "I'll script it."),
        _block(
            1,
            {"type": "server_tool_use", "id": "srvtoolu_02", "name": "code_execution", "input": {}},
        ),
        *_json_pieces(1, {"code": "for p in players:\n    roll(p)"}),
        _stop(1),
        # A call made from the provider's code: its input comes whole, no delta follows.
        _block(
            2,
            {
                "type": "tool_use",
                "id": "toolu_01",
                "name": "roll",
                "input": {"player": "p1"},
                "caller": {"type": "code_execution_20250825", "tool_id": "srvtoolu_02"},
            },
        ),
        _stop(2),
        *_end("tool_use", {"input_tokens": 3000, "output_tokens": 700}),
    ),
    text="I'll script it.",
    calls=(("toolu_01", "roll", {"player": "p1"}),),
    stop="tool_use",
    usage=(3000, 700, 0, 0),
    provider_kinds=("server_tool_use",),
    provider_tools=(("srvtoolu_02", "code_execution", "for p in players:"),),
)

CACHE = Case(
    name="anthropic-cache-usage",
    wire="anthropic",
    body=_anthropic(
        _start(
            {
                "input_tokens": 2,
                "cache_creation_input_tokens": 3000,
                "cache_read_input_tokens": 0,
                "output_tokens": 5,
            }
        ),
        *_text(0, "Six", "ty."),
        # message_delta revises every count, cache reads included.
        *_end(
            "end_turn",
            {
                "input_tokens": 6,
                "cache_creation_input_tokens": 3300,
                "cache_read_input_tokens": 6300,
                "output_tokens": 198,
            },
        ),
    ),
    text="Sixty.",
    usage=(9606, 198, 6300, 3300),
)

COMPACTION = Case(
    name="anthropic-compaction",
    wire="anthropic",
    body=_anthropic(
        _start({"input_tokens": 60000, "output_tokens": 1}),
        _block(0, {"type": "compaction", "content": None}),
        _delta(0, {"type": "compaction_delta", "content": "## Summary\nWe compared state stores."}),
        _stop(0),
        *_text(1, "As summarised, ", "Pinia."),
        *_end("end_turn", {"input_tokens": 612, "output_tokens": 2819}),
    ),
    text="As summarised, Pinia.",
    usage=(612, 2819, 0, 0),
    provider_kinds=("compaction",),
    extra={"compaction": "## Summary\nWe compared state stores."},
)

PAUSE = Case(
    name="anthropic-pause-turn-padded",
    wire="anthropic",
    body=_anthropic(
        _start({"input_tokens": 900, "output_tokens": 4}),
        _block(0, {"type": "thinking", "thinking": "", "signature": ""}),
        _delta(0, {"type": "thinking_delta", "thinking": "Search one at a time."}),
        _delta(0, {"type": "signature_delta", "signature": "EuwJsig"}),
        _stop(0),
        *_text(1, "Starting:"),
        _block(
            2, {"type": "server_tool_use", "id": "srvtoolu_03", "name": "web_search", "input": {}}
        ),
        *_json_pieces(2, {"query": "ferry schedule"}),
        _stop(2),
        _block(3, {**SEARCH_RESULT, "tool_use_id": "srvtoolu_03"}),
        _stop(3),
        *_end("pause_turn", {"input_tokens": 40000, "output_tokens": 90}),
        pad=True,
    ),
    text="Starting:",
    reasoning="Search one at a time.",
    stop="pause_turn",
    usage=(40000, 90, 0, 0),
    provider_kinds=("server_tool_use", "web_search_tool_result"),
    provider_tools=(("srvtoolu_03", "web_search", "ferry schedule"),),
    thinking_signatures=("EuwJsig",),
)

ANTHROPIC_CASES = (WEB_SEARCH, MCP, PROGRAMMATIC, CACHE, COMPACTION, PAUSE)
