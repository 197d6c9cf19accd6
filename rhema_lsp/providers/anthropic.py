"""The Anthropic Messages wire (``POST {base}/v1/messages``, streamed): the
request, from the engine's messages to the body; the stream is read by
:mod:`.anthropic_stream`.

The provider's own tools, their results, compaction and any block type
added later come back as :class:`~rhema_lsp.engine.ProviderPart` (see
:mod:`.anthropic_stream`) and are sent back verbatim, as they came.

Thinking blocks round-trip verbatim with their signatures (redacted thinking
keeps its opaque ``data`` in ``provider_data``), text blocks with their
citations; images are ``image`` blocks with a base64 source, a tool
result's inside its ``tool_result``; consecutive user and tool messages merge into one user message,
tool results first in call order. Thinking effort becomes a thinking budget
kept below ``max_tokens``.

Prompt caching: ``cache_control: {type: "ephemeral"}`` marks the last tool
spec, the system block, the newest message and the user message before it
(the previous request's end, which the cache then serves); four breakpoints,
the most the API allows (:func:`mark_cache_breakpoints`). ``messages`` is
the body's last key, so a request's bytes up to its moved breakpoints are
the next request's first bytes.
"""

from __future__ import annotations

from typing import Any

from rhema_lsp.engine import (
    EventSink,
    ImagePart,
    Message,
    ModelRequest,
    ProviderPart,
    Role,
    TextPart,
    ThinkingEffort,
    ThinkingPart,
    ToolCall,
    ToolResult,
)
from rhema_lsp.providers.anthropic_stream import WIRE, AnthropicStreamDecoder
from rhema_lsp.providers.transport import HttpStreamProvider, WireDecoder

__all__ = [
    "ANTHROPIC_VERSION",
    "CACHE_CONTROL",
    "AnthropicProvider",
    "anthropic_messages",
    "mark_cache_breakpoints",
    "thinking_budget",
]

CACHE_CONTROL = {"type": "ephemeral"}
"""The marker of a prompt-cache breakpoint (five-minute cache)."""

_MESSAGE_BREAKPOINTS = 2
"""Breakpoints on messages: the newest, and the user message before it."""

ANTHROPIC_VERSION = "2023-06-01"
"""The ``anthropic-version`` header value."""

DEFAULT_MAX_TOKENS = 8192
"""``max_tokens`` is required on this wire; used when the request sets none."""

_BUDGETS = {ThinkingEffort.LOW: 1024, ThinkingEffort.MEDIUM: 4096, ThinkingEffort.HIGH: 16384}
_MIN_BUDGET = 1024


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
                block: dict[str, Any] = {"type": "text", "text": part.text}
                data = part.provider_data
                if isinstance(data, dict) and data.get("citations"):
                    block["citations"] = data["citations"]
                blocks.append(block)
        elif isinstance(part, ToolCall):
            args = part.args if isinstance(part.args, dict) else {}
            blocks.append({"type": "tool_use", "id": part.id, "name": part.name, "input": args})
        elif (
            isinstance(part, ProviderPart)
            and part.wire == WIRE
            and isinstance(part.provider_data, dict)
        ):
            blocks.append(part.provider_data)  # another wire's means nothing here
    return blocks


def _image_block(image: ImagePart) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": image.media_type, "data": image.data},
    }


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
                    content: str | list[dict[str, Any]] = part.content
                    if part.images:
                        content = [{"type": "text", "text": part.content}]
                        content.extend(_image_block(image) for image in part.images)
                    blocks.append(
                        {
                            "type": "tool_result",
                            "tool_use_id": part.id,
                            "content": content,
                            "is_error": part.is_error,
                        }
                    )
                elif isinstance(part, TextPart) and part.text:
                    blocks.append({"type": "text", "text": part.text})
                elif isinstance(part, ImagePart):
                    blocks.append(_image_block(part))
            role = "user"
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out


def mark_cache_breakpoints(messages: list[dict[str, Any]]) -> None:
    """Mark the last block of the newest message, and of the user message
    before it, as cache breakpoints (in place). Thinking blocks cannot carry
    one; a message ending in one is marked on its last other block."""
    marked = 0
    for position in range(len(messages) - 1, -1, -1):
        message = messages[position]
        if marked and message["role"] != "user":
            continue
        for block in reversed(message["content"]):
            if block.get("type") not in ("thinking", "redacted_thinking"):
                block["cache_control"] = CACHE_CONTROL
                marked += 1
                break
        if marked >= _MESSAGE_BREAKPOINTS:
            return


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
            "stream": True,
        }
        budget = thinking_budget(params.thinking, max_tokens)
        if budget is not None:
            body["thinking"] = {"type": "enabled", "budget_tokens": budget}
        elif params.temperature is not None:
            # With thinking enabled the API accepts only its default temperature.
            body["temperature"] = params.temperature
        if request.tools:
            tools: list[dict[str, Any]] = [
                {
                    "name": spec.name,
                    "description": spec.description,
                    "input_schema": spec.parameters,
                }
                for spec in request.tools
            ]
            tools[-1]["cache_control"] = CACHE_CONTROL
            body["tools"] = tools
        if request.system:
            body["system"] = [
                {"type": "text", "text": request.system, "cache_control": CACHE_CONTROL}
            ]
        messages = anthropic_messages(request)
        mark_cache_breakpoints(messages)
        body["messages"] = messages  # last: the part that grows
        return body

    def new_decoder(self, sink: EventSink) -> WireDecoder:
        return AnthropicStreamDecoder(sink, self.name)
