"""The Anthropic Messages stream, decoded into engine events.

Events: ``message_start`` carries the input usage; ``content_block_start``
opens a block that ``content_block_delta`` extends (``text_delta``,
``thinking_delta``, ``signature_delta``, ``input_json_delta``,
``citations_delta``, ``compaction_delta``) and ``content_block_stop`` ends;
``message_delta`` carries the stop reason and the cumulative usage (its
counts replace earlier ones; input counts cache reads and writes too);
``message_stop`` terminates. ``ping`` and unknown events are ignored. An
``error`` event after HTTP 200 (``overloaded_error``, ``api_error``,
``rate_limit_error``) is transient.

Only ``tool_use`` blocks are our tool calls (a call whose input came whole
with its start, as programmatic calls do, gets it as one delta at its stop).
The provider's own tools (``server_tool_use``, ``mcp_tool_use``), their
result blocks, compaction and any block type added later are never surfaced
as calls: each is kept verbatim as a :class:`~rhema_lsp.engine.ProviderPart`
and sent back as it came, and a finished server call is announced with
``ProviderToolUse``. ``pause_turn`` is :attr:`StopReason.PAUSE_TURN`: the
engine sends the paused answer back to let it continue.

The request side (messages, cache breakpoints, thinking budget) is
:mod:`.anthropic`; :data:`WIRE` names the provider parts both keep.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from rhema_lsp.engine import (
    EventSink,
    Message,
    ModelOutput,
    ProviderPart,
    ProviderToolUse,
    Role,
    StopReason,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolCallArgsDelta,
    ToolCallStart,
    Usage,
)
from rhema_lsp.providers.decoding import EventBatcher, decode_event, tool_args
from rhema_lsp.providers.errors import ProviderStreamError

__all__ = ["WIRE", "AnthropicStreamDecoder"]

WIRE = "anthropic"
"""The ``wire`` of the provider parts this adapter keeps and resends."""

_TRANSIENT_ERRORS = {"overloaded_error", "api_error", "rate_limit_error", "timeout_error"}
_STOP = {
    "end_turn": StopReason.END_TURN,
    "stop_sequence": StopReason.END_TURN,
    "pause_turn": StopReason.PAUSE_TURN,
    "refusal": StopReason.END_TURN,
    "tool_use": StopReason.TOOL_USE,
    "max_tokens": StopReason.MAX_TOKENS,
    "model_context_window_exceeded": StopReason.MAX_TOKENS,
}
_USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)

_SERVER_CALLS = ("server_tool_use", "mcp_tool_use")
"""Blocks in which the provider calls its own tools; their input streams like a call's."""

_DETAIL_KEYS = ("query", "url", "command", "code", "path", "pattern")


def _detail(args: Any) -> str:
    """The main input of a server tool call, in one line of at most 80 characters."""
    if isinstance(args, dict):
        for key in _DETAIL_KEYS:
            value = args.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip().splitlines()[0][:80]
        return json.dumps(args, ensure_ascii=False)[:80] if args else ""
    return ""


class _Event(msgspec.Struct, gc=False):
    """What this adapter reads of an event's data."""

    type: str | None = None
    index: int = -1
    delta: dict[str, Any] | None = None
    content_block: dict[str, Any] | None = None
    message: dict[str, Any] | None = None
    usage: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


_EVENT = msgspec.json.Decoder(_Event)


class _Block:
    __slots__ = ("citations", "id", "kind", "name", "parts", "signature", "start")

    def __init__(self, kind: str, start: dict[str, Any]) -> None:
        self.kind = kind
        self.start = start
        self.parts: list[str] = []
        self.signature: str | None = start.get("signature") or None
        self.id: str = start.get("id") or ""
        self.name: str = start.get("name") or ""
        self.citations: list[Any] = []

    def input(self) -> tuple[Any, str]:
        """A call's arguments and their raw text: the streamed JSON when some
        streamed, else the input the block started with (programmatic calls
        arrive whole)."""
        raw = "".join(self.parts)
        if raw.strip():
            return tool_args(raw), raw
        start = self.start.get("input")
        if isinstance(start, dict) and start:
            return start, json.dumps(start, ensure_ascii=False)
        return {}, raw

    def verbatim(self) -> dict[str, Any]:
        """The block as the non-streaming API would have returned it."""
        block = dict(self.start)
        if self.kind in _SERVER_CALLS:
            block["input"] = self.input()[0]
        elif self.kind == "compaction" and self.parts:
            block["content"] = "".join(self.parts)
        return block


class AnthropicStreamDecoder:
    """Decodes one Messages stream (see the module docstring)."""

    def __init__(self, sink: EventSink, name: str) -> None:
        self.out = EventBatcher(sink)
        self.name = name
        self.blocks: dict[int, _Block] = {}
        self.tokens = {key: 0 for key in _USAGE_KEYS}
        self.stop_reason: str | None = None

    def flush(self) -> None:
        self.out.flush()

    def feed(self, event: str | None, data: bytes) -> bool:
        payload = decode_event(self.name, data, _EVENT)
        kind = payload.type or event
        if kind == "content_block_delta":
            block = self.blocks.get(payload.index)
            if block is None:
                raise ProviderStreamError(
                    f"{self.name} sent a delta for a block it never opened", transient=True
                )
            delta = payload.delta or {}
            delta_type = delta.get("type")
            if delta_type == "text_delta":
                text = delta.get("text") or ""
                block.parts.append(text)
                self.out.text(text)
            elif delta_type == "thinking_delta":
                text = delta.get("thinking") or ""
                block.parts.append(text)
                self.out.thinking(text)
            elif delta_type == "input_json_delta":
                partial = delta.get("partial_json") or ""
                if partial:
                    block.parts.append(partial)
                    if block.kind == "tool_use":
                        self.out.emit(ToolCallArgsDelta(block.id, partial))
            elif delta_type == "signature_delta":
                block.signature = (block.signature or "") + (delta.get("signature") or "")
            elif delta_type == "citations_delta":
                block.citations.append(delta.get("citation"))
            elif delta_type == "compaction_delta":
                block.parts.append(delta.get("content") or "")
            return False
        if kind == "content_block_start":
            start = payload.content_block or {}
            block_kind = start.get("type", "")
            block = _Block(block_kind, start)
            self.blocks[payload.index if payload.index >= 0 else len(self.blocks)] = block
            if block_kind == "tool_use":
                self.out.emit(ToolCallStart(block.id, block.name))
            elif block_kind == "text":
                block.citations.extend(start.get("citations") or ())
                if start.get("text"):
                    block.parts.append(start["text"])
                    self.out.text(start["text"])
            elif block_kind == "thinking" and start.get("thinking"):
                block.parts.append(start["thinking"])
                self.out.thinking(start["thinking"])
            return False
        if kind == "content_block_stop":
            block = self.blocks.get(payload.index)
            if block is not None:
                self._stop(block)
            return False
        if kind == "message_start":
            self._usage((payload.message or {}).get("usage"))
            return False
        if kind == "message_delta":
            reason = (payload.delta or {}).get("stop_reason")
            if reason:
                self.stop_reason = reason
            self._usage(payload.usage)
            return False
        if kind == "message_stop":
            return True
        if kind == "error":
            error = payload.error or {}
            error_type = error.get("type", "error")
            raise ProviderStreamError(
                f"{self.name} reported {error_type} in the stream: {error.get('message', '')}",
                transient=error_type in _TRANSIENT_ERRORS,
                status=529 if error_type == "overloaded_error" else None,
            )
        return False  # ping and event types added later

    def _stop(self, block: _Block) -> None:
        """A block is complete: announce what only its end can tell."""
        if block.kind == "tool_use" and not "".join(block.parts).strip():
            raw = block.input()[1]
            if raw:  # the whole input came with the block's start
                self.out.emit(ToolCallArgsDelta(block.id, raw))
        elif block.kind in _SERVER_CALLS:
            name = block.name or block.kind
            self.out.emit(ProviderToolUse(block.id, name, _detail(block.input()[0])))

    def _usage(self, usage: Any) -> None:
        """Take the counts a usage object reports; later counts replace earlier ones."""
        if usage is None:
            return
        tokens = self.tokens
        for key in _USAGE_KEYS:
            value = usage.get(key)
            if value is not None:
                tokens[key] = int(value)
        self.out.usage(*self._tally())

    def _tally(self) -> tuple[int, int, int, int]:
        tokens = self.tokens
        cache_read = tokens["cache_read_input_tokens"]
        cache_write = tokens["cache_creation_input_tokens"]
        return (
            tokens["input_tokens"] + cache_read + cache_write,
            tokens["output_tokens"],
            cache_read,
            cache_write,
        )

    def finish(self, terminated: bool) -> ModelOutput:
        if not terminated:
            open_call = any(block.kind == "tool_use" for block in self.blocks.values())
            detail = " during a tool call" if open_call else ""
            raise ProviderStreamError(
                f"{self.name} stream ended without message_stop{detail}; the answer is incomplete",
                transient=True,
            )
        self.out.flush()
        content: list[Any] = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if block.kind == "text":
                citations = {"citations": block.citations} if block.citations else None
                content.append(TextPart(text="".join(block.parts), provider_data=citations))
            elif block.kind == "thinking":
                content.append(ThinkingPart(text="".join(block.parts), signature=block.signature))
            elif block.kind == "redacted_thinking":
                data = block.start.get("data")
                content.append(ThinkingPart(text="", provider_data={"redacted_data": data}))
            elif block.kind == "tool_use":
                args, raw = block.input()
                content.append(ToolCall(id=block.id, name=block.name, args=args, raw_args=raw))
            else:  # the provider's own tools, their results, compaction: kept verbatim
                content.append(
                    ProviderPart(wire=WIRE, kind=block.kind, provider_data=block.verbatim())
                )
        input_tokens, output_tokens, cache_read, cache_write = self._tally()
        return ModelOutput(
            message=Message(role=Role.ASSISTANT, content=content),
            stop_reason=_STOP.get(self.stop_reason or "end_turn", StopReason.END_TURN),
            usage=Usage(
                input=input_tokens,
                output=output_tokens,
                cache_read=cache_read,
                cache_write=cache_write,
            ),
        )
