"""The Anthropic Messages wire (``POST {base}/v1/messages``, streamed).

Events: ``message_start`` carries the input usage; ``content_block_start``
opens a ``text``, ``thinking``, ``redacted_thinking`` or ``tool_use`` block
that ``content_block_delta`` extends (``text_delta``, ``thinking_delta``,
``signature_delta``, ``input_json_delta``); ``message_delta`` carries the
stop reason and the cumulative output usage; ``message_stop`` terminates.
``ping`` and unknown events are ignored. An ``error`` event after HTTP 200
(``overloaded_error``, ``api_error``, ``rate_limit_error``) is transient.

Thinking blocks round-trip verbatim with their signatures (redacted thinking
keeps its opaque ``data`` in ``provider_data``); consecutive user and tool
messages merge into one user message, tool results first in call order.
Thinking effort becomes a thinking budget kept below ``max_tokens``.
"""

from __future__ import annotations

from typing import Any

from rhema_lsp.engine import (
    EventSink,
    Message,
    ModelOutput,
    ModelRequest,
    Role,
    StopReason,
    TextPart,
    ThinkingEffort,
    ThinkingPart,
    ToolCall,
    ToolCallArgsDelta,
    ToolCallStart,
    ToolResult,
    Usage,
)
from rhema_lsp.providers.errors import ProviderStreamError
from rhema_lsp.providers.shapes import EventShape, ShapeLearner
from rhema_lsp.providers.transport import (
    EventBatcher,
    HttpStreamProvider,
    WireDecoder,
    parse_event,
    tool_args,
)

__all__ = ["ANTHROPIC_VERSION", "AnthropicProvider", "anthropic_messages", "thinking_budget"]

ANTHROPIC_VERSION = "2023-06-01"
"""The ``anthropic-version`` header value."""

DEFAULT_MAX_TOKENS = 8192
"""``max_tokens`` is required on this wire; used when the request sets none."""

_BUDGETS = {ThinkingEffort.LOW: 1024, ThinkingEffort.MEDIUM: 4096, ThinkingEffort.HIGH: 16384}
_MIN_BUDGET = 1024
_TRANSIENT_ERRORS = {"overloaded_error", "api_error", "rate_limit_error", "timeout_error"}
_STOP = {
    "end_turn": StopReason.END_TURN,
    "stop_sequence": StopReason.END_TURN,
    "pause_turn": StopReason.END_TURN,
    "refusal": StopReason.END_TURN,
    "tool_use": StopReason.TOOL_USE,
    "max_tokens": StopReason.MAX_TOKENS,
}


def thinking_budget(effort: ThinkingEffort, max_tokens: int) -> int | None:
    """The thinking budget for ``effort``, below ``max_tokens``; ``None`` for no thinking."""
    budget = _BUDGETS.get(effort)
    if budget is None:
        return None
    budget = min(budget, max_tokens - 1)
    return budget if budget >= _MIN_BUDGET else None


def _assistant_blocks(message: Message) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, ThinkingPart):
            data = part.provider_data
            if isinstance(data, dict) and isinstance(data.get("redacted_data"), str):
                blocks.append({"type": "redacted_thinking", "data": data["redacted_data"]})
            elif part.signature:
                blocks.append(
                    {"type": "thinking", "thinking": part.text, "signature": part.signature}
                )
            # Unsigned thinking (another provider's) cannot be resent here.
        elif isinstance(part, TextPart):
            if part.text:
                blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ToolCall):
            args = part.args if isinstance(part.args, dict) else {}
            blocks.append({"type": "tool_use", "id": part.id, "name": part.name, "input": args})
    return blocks


def anthropic_messages(request: ModelRequest) -> list[dict[str, Any]]:
    """The Messages ``messages`` of ``request``: roles alternate, tool results
    ride user messages, and two user turns in a row become one."""
    out: list[dict[str, Any]] = []
    for message in request.messages:
        if message.role is Role.ASSISTANT:
            blocks = _assistant_blocks(message)
            role = "assistant"
        else:
            blocks = []
            for part in message.content:
                if isinstance(part, ToolResult):
                    blocks.append(
                        {
                            "type": "tool_result",
                            "tool_use_id": part.id,
                            "content": part.content,
                            "is_error": part.is_error,
                        }
                    )
                elif isinstance(part, TextPart) and part.text:
                    blocks.append({"type": "text", "text": part.text})
            role = "user"
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out


class AnthropicProvider(HttpStreamProvider):
    """A :class:`~rhema_lsp.engine.ModelProvider` over the Anthropic Messages API."""

    def request_url(self, request: ModelRequest) -> str:
        return f"{self.base_url}/v1/messages"

    def request_headers(self, key: str | None) -> dict[str, str]:
        headers = {
            "content-type": "application/json",
            "accept": "text/event-stream",
            "anthropic-version": ANTHROPIC_VERSION,
        }
        if key is not None:
            headers["x-api-key"] = key
        return headers

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        params = request.params
        max_tokens = params.max_tokens or DEFAULT_MAX_TOKENS
        body: dict[str, Any] = {
            "model": params.model or self.model,
            "max_tokens": max_tokens,
            "messages": anthropic_messages(request),
            "stream": True,
        }
        if request.system:
            body["system"] = request.system
        budget = thinking_budget(params.thinking, max_tokens)
        if budget is not None:
            body["thinking"] = {"type": "enabled", "budget_tokens": budget}
        elif params.temperature is not None:
            # With thinking enabled the API accepts only its default temperature.
            body["temperature"] = params.temperature
        if request.tools:
            body["tools"] = [
                {
                    "name": spec.name,
                    "description": spec.description,
                    "input_schema": spec.parameters,
                }
                for spec in request.tools
            ]
        return body

    def new_decoder(self, sink: EventSink) -> WireDecoder:
        return AnthropicStreamDecoder(sink, self.name)


class _Block:
    __slots__ = ("data", "id", "kind", "name", "signature", "text")

    def __init__(self, kind: str, start: dict[str, Any]) -> None:
        self.kind = kind
        self.text: list[str] = []
        self.signature: str | None = start.get("signature") or None
        self.id: str = start.get("id") or ""
        self.name: str = start.get("name") or ""
        self.data: str | None = start.get("data")


class AnthropicStreamDecoder:
    """Decodes one Messages stream (see the module docstring)."""

    def __init__(self, sink: EventSink, name: str) -> None:
        self.out = EventBatcher(sink)
        self.name = name
        self.blocks: dict[int, _Block] = {}
        self.input_tokens = 0
        self.output_tokens = 0
        self.stop_reason: str | None = None
        # Learned shapes of a text and a thinking delta, with their block index (see .shapes).
        self.text_shape: tuple[EventShape, Any] | None = None
        self.thinking_shape: tuple[EventShape, Any] | None = None
        self.learner = ShapeLearner()

    def _usage(self) -> None:
        self.out.usage(self.input_tokens, self.output_tokens)

    def flush(self) -> None:
        self.out.flush()

    def feed(self, event: str | None, data: bytes) -> bool:
        if self.text_shape is not None:
            shape, index = self.text_shape
            match = shape.match(event, data)
            if match is not None and (block := self.blocks.get(index)) is not None:
                text = shape.text(match)
                if text is not None:
                    block.text.append(text)
                    self.out.text(text)
                    return False
        if self.thinking_shape is not None:
            shape, index = self.thinking_shape
            match = shape.match(event, data)
            if match is not None and (block := self.blocks.get(index)) is not None:
                text = shape.text(match)
                if text is not None:
                    block.text.append(text)
                    self.out.thinking(text)
                    return False
        payload = parse_event(self.name, data)
        kind = payload.get("type") or event
        if kind == "content_block_delta":
            block = self.blocks.get(payload.get("index", -1))
            delta = payload.get("delta") or {}
            if block is None:
                raise ProviderStreamError(
                    f"{self.name} sent a delta for a block it never opened", transient=True
                )
            delta_type = delta.get("type")
            if delta_type == "text_delta":
                text = delta.get("text", "")
                block.text.append(text)
                self.out.text(text)
                self._learn(event, data, payload, "text")
            elif delta_type == "thinking_delta":
                text = delta.get("thinking", "")
                block.text.append(text)
                self.out.thinking(text)
                self._learn(event, data, payload, "thinking")
            elif delta_type == "signature_delta":
                block.signature = (block.signature or "") + delta.get("signature", "")
            elif delta_type == "input_json_delta":
                partial = delta.get("partial_json", "")
                if partial:
                    block.text.append(partial)
                    self.out.emit(ToolCallArgsDelta(block.id, partial))
            return False
        if kind == "content_block_start":
            start = payload.get("content_block") or {}
            block_kind = start.get("type", "")
            block = _Block(block_kind, start)
            self.blocks[payload.get("index", len(self.blocks))] = block
            if block_kind == "tool_use":
                self.out.emit(ToolCallStart(block.id, block.name))
            elif block_kind == "text" and start.get("text"):
                block.text.append(start["text"])
                self.out.text(start["text"])
            elif block_kind == "thinking" and start.get("thinking"):
                block.text.append(start["thinking"])
                self.out.thinking(start["thinking"])
            return False
        if kind == "message_start":
            usage = (payload.get("message") or {}).get("usage") or {}
            self.input_tokens = (
                int(usage.get("input_tokens") or 0)
                + int(usage.get("cache_read_input_tokens") or 0)
                + int(usage.get("cache_creation_input_tokens") or 0)
            )
            self.output_tokens = int(usage.get("output_tokens") or 0)
            self._usage()
            return False
        if kind == "message_delta":
            reason = (payload.get("delta") or {}).get("stop_reason")
            if reason:
                self.stop_reason = reason
            usage = payload.get("usage") or {}
            if "output_tokens" in usage:
                self.output_tokens = int(usage["output_tokens"] or 0)
                if usage.get("input_tokens"):
                    self.input_tokens = int(usage["input_tokens"])
                self._usage()
            return False
        if kind == "message_stop":
            return True
        if kind == "error":
            error = payload.get("error") or {}
            error_type = error.get("type", "error")
            raise ProviderStreamError(
                f"{self.name} reported {error_type} in the stream: {error.get('message', '')}",
                transient=error_type in _TRANSIENT_ERRORS,
                status=529 if error_type == "overloaded_error" else None,
            )
        return False  # ping, content_block_stop and event types added later

    def _learn(self, event: str | None, data: bytes, payload: dict[str, Any], key: str) -> None:
        """Learn the shape of a text or thinking delta whose text is a string."""
        if not isinstance(payload["delta"].get(key), str) or not self.learner.due():
            return
        shape = self.learner.learned(EventShape.learn(event, data, payload, ("delta", key)))
        if shape is None:
            return
        if key == "text":
            self.text_shape = (shape, payload.get("index", -1))
        else:
            self.thinking_shape = (shape, payload.get("index", -1))

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
                content.append(TextPart(text="".join(block.text)))
            elif block.kind == "thinking":
                content.append(ThinkingPart(text="".join(block.text), signature=block.signature))
            elif block.kind == "redacted_thinking":
                content.append(ThinkingPart(text="", provider_data={"redacted_data": block.data}))
            elif block.kind == "tool_use":
                raw = "".join(block.text)
                content.append(
                    ToolCall(id=block.id, name=block.name, args=tool_args(raw), raw_args=raw)
                )
        stop = _STOP.get(self.stop_reason or "end_turn", StopReason.END_TURN)
        return ModelOutput(
            message=Message(role=Role.ASSISTANT, content=content),
            stop_reason=stop,
            usage=Usage(input=self.input_tokens, output=self.output_tokens),
        )
