"""The OpenAI-compatible Chat Completions wire (``POST {base}/chat/completions``).

One adapter covers OpenAI, OpenRouter, Groq, Ollama, LM Studio, llama.cpp's
server and vLLM. Streaming chunks carry ``choices[0].delta``: ``content`` is
answer text; ``reasoning_content`` (llama.cpp, vLLM) or ``reasoning``
(OpenRouter, Ollama) is thinking; ``tool_calls`` are fragments keyed by
``index`` — id and name arrive on a call's first fragment only, fragments of
parallel calls interleave, and a missing ``index`` falls back to the id, then
to the last call. ``content`` may also be an array of parts (Mistral): text
parts are answer text, thinking parts reasoning. The raw argument text is
kept for resending. Usage arrives in a chunk with ``choices: []`` (or Groq's
``x_groq.usage``), cached prompt tokens in ``prompt_tokens_details`` (or
DeepSeek's ``prompt_cache_hit_tokens``); ``data: [DONE]``
terminates the stream. An ``error`` object in a chunk (OpenRouter) is a
provider error, transient when its code is.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from rhema_lsp.engine import (
    EventSink,
    ImagePart,
    ImageSupport,
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
from rhema_lsp.providers.decoding import EventBatcher, decode_event, tool_args
from rhema_lsp.providers.errors import TRANSIENT_STATUSES, ProviderStreamError
from rhema_lsp.providers.images import data_url, returned_note
from rhema_lsp.providers.limits import ResponseLimits
from rhema_lsp.providers.retry import RetryPolicy
from rhema_lsp.providers.secrets import Secret
from rhema_lsp.providers.transport import HttpStreamProvider, WireDecoder

__all__ = ["OpenAIProvider", "openai_messages"]

_REASONING = "reasoning_content"  # llama.cpp, vLLM
_REASONING_ALT = "reasoning"  # OpenRouter, Ollama
_FINISH = {
    "stop": StopReason.END_TURN,
    "end_turn": StopReason.END_TURN,
    "content_filter": StopReason.END_TURN,
    "tool_calls": StopReason.TOOL_USE,
    "function_call": StopReason.TOOL_USE,
    "length": StopReason.MAX_TOKENS,
}


def _resend_arguments(call: ToolCall) -> str:
    """The argument text to resend: the raw text when it is valid JSON (exact
    round-trip), else the parsed arguments (strict servers reject broken JSON)."""
    raw = call.raw_args
    if raw is not None and raw.strip():
        try:
            json.loads(raw)
        except ValueError:
            return json.dumps(call.args)
        return raw
    return json.dumps(call.args)


def _image_url(image: ImagePart) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": data_url(image)}}


def openai_messages(request: ModelRequest) -> list[dict[str, Any]]:
    """The Chat Completions ``messages`` of ``request``, tool results one per
    message; images as ``image_url`` data URLs in user messages (a tool
    result's, which a ``tool`` message cannot hold, in a user message after
    the run of tool messages, with a note naming the call)."""
    out: list[dict[str, Any]] = []
    if request.system:
        out.append({"role": "system", "content": request.system})
    returned: list[dict[str, Any]] = []
    for message in request.messages:
        if returned and message.role is not Role.TOOL:
            out.append({"role": "user", "content": returned})
            returned = []
        if message.role is Role.ASSISTANT:
            text = message.text
            calls = message.tool_calls
            entry: dict[str, Any] = {
                "role": "assistant",
                "content": text or (None if calls else ""),
            }
            if calls:
                entry["tool_calls"] = [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": _resend_arguments(call)},
                    }
                    for call in calls
                ]
            out.append(entry)
            continue
        text_parts = [part.text for part in message.content if isinstance(part, TextPart)]
        for part in message.content:
            if isinstance(part, ToolResult):
                out.append({"role": "tool", "tool_call_id": part.id, "content": part.content})
                if part.images:
                    returned.append({"type": "text", "text": returned_note(part)})
                    returned.extend(_image_url(image) for image in part.images)
        images = message.images
        if images:
            content: list[dict[str, Any]] = [{"type": "text", "text": "".join(text_parts)}]
            content.extend(_image_url(image) for image in images)
            out.append({"role": "user", "content": content})
        elif text_parts or (message.role is Role.USER and not message.tool_results):
            out.append({"role": "user", "content": "".join(text_parts)})
    if returned:
        out.append({"role": "user", "content": returned})
    return out


class OpenAIProvider(HttpStreamProvider):
    """A :class:`~rhema_lsp.engine.ModelProvider` over Chat Completions.

    ``flavour`` adjusts the request for one server family: ``"openai"`` sends
    ``max_completion_tokens``; ``"openrouter"`` sends ``reasoning.effort``;
    anything else sends ``max_tokens`` and ``reasoning_effort``.
    """

    def __init__(
        self,
        *,
        name: str,
        base_url: str,
        model: str,
        key: Secret | None = None,
        stall_timeout: float = 120.0,
        retry: RetryPolicy | None = None,
        limits: ResponseLimits | None = None,
        flavour: str = "generic",
        images: ImageSupport | None = None,
    ) -> None:
        super().__init__(
            name=name,
            base_url=base_url,
            model=model,
            key=key,
            stall_timeout=stall_timeout,
            retry=retry,
            limits=limits,
            images=images,
        )
        self.flavour = flavour

    def request_url(self, request: ModelRequest) -> str:
        return f"{self.base_url}/chat/completions"

    def request_headers(self, key: str | None) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": "text/event-stream"}
        if key is not None:
            headers["authorization"] = f"Bearer {key}"
        return headers

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        params = request.params
        body: dict[str, Any] = {
            "model": params.model or self.model,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if params.max_tokens is not None:
            limit_key = "max_completion_tokens" if self.flavour == "openai" else "max_tokens"
            body[limit_key] = params.max_tokens
        if params.temperature is not None:
            body["temperature"] = params.temperature
        if params.thinking is not ThinkingEffort.DEFAULT:
            if self.flavour == "openrouter":
                body["reasoning"] = {"effort": params.thinking.value}
            else:
                body["reasoning_effort"] = params.thinking.value
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": spec.name,
                        "description": spec.description,
                        "parameters": spec.parameters,
                    },
                }
                for spec in request.tools
            ]
        # Last: the part that grows, so each request's bytes start with the
        # previous one's (servers cache by prefix).
        body["messages"] = openai_messages(request)
        return body

    def new_decoder(self, sink: EventSink) -> WireDecoder:
        return OpenAIStreamDecoder(sink, self.name)


class _Choice(msgspec.Struct, gc=False):
    delta: dict[str, Any] | None = None
    finish_reason: str | None = None


class _Chunk(msgspec.Struct, gc=False):
    """What this adapter reads of a ``chat.completion.chunk``."""

    choices: list[_Choice] | None = None
    usage: dict[str, Any] | None = None
    x_groq: dict[str, Any] | None = None  # Groq's usage rides here
    error: Any = None


_CHUNK = msgspec.json.Decoder(_Chunk)


class _PendingCall:
    __slots__ = ("args", "id", "name")

    def __init__(self, call_id: str, name: str) -> None:
        self.id = call_id
        self.name = name
        self.args: list[str] = []


class OpenAIStreamDecoder:
    """Decodes one Chat Completions stream (see the module docstring)."""

    def __init__(self, sink: EventSink, name: str) -> None:
        self.out = EventBatcher(sink)
        self.name = name
        self.text: list[str] = []
        self.thinking: list[str] = []
        self.calls: dict[int, _PendingCall] = {}
        self.call_by_id: dict[str, int] = {}
        self.last_index: int | None = None
        self.finish_reason: str | None = None
        self.tally = (0, 0, 0)

    def flush(self) -> None:
        self.out.flush()

    def feed(self, event: str | None, data: bytes) -> bool:
        if data == b"[DONE]":
            return True
        chunk = decode_event(self.name, data, _CHUNK)
        if chunk.error is not None:
            self._raise_error(chunk.error)
        if chunk.choices:
            choice = chunk.choices[0]  # one choice is requested
            delta = choice.delta
            if delta:
                content = delta.get("content")
                if len(delta) == 1 and content and type(content) is str:
                    self.text.append(content)  # the common case, kept short
                    self.out.text(content)
                else:
                    self._delta(delta)
            reason = choice.finish_reason
            if reason:
                if reason == "error":
                    self._raise_error({"message": "finish_reason error"})
                self.finish_reason = reason
        usage = chunk.usage
        if usage is None and chunk.x_groq:
            usage = chunk.x_groq.get("usage")
        if usage:
            self._usage(usage)
        return False

    def _usage(self, usage: dict[str, Any]) -> None:
        details = usage.get("prompt_tokens_details") or {}
        cached = details.get("cached_tokens") or usage.get("prompt_cache_hit_tokens") or 0
        self.tally = (
            int(usage.get("prompt_tokens") or 0),
            int(usage.get("completion_tokens") or 0),
            int(cached),
        )
        self.out.usage(*self.tally)

    def _delta(self, delta: dict[str, Any]) -> None:
        for key, value in delta.items():  # wire order
            if not value:
                continue
            if key == "content":
                if isinstance(value, str):
                    self.text.append(value)
                    self.out.text(value)
                elif isinstance(value, list):
                    self._content_parts(value)
            elif key in (_REASONING, _REASONING_ALT) and isinstance(value, str):
                self.thinking.append(value)
                self.out.thinking(value)
            elif key == "tool_calls" and isinstance(value, list):
                for fragment in value:
                    self._tool_fragment(fragment)

    def _content_parts(self, parts: list[Any]) -> None:
        """``content`` as an array of parts (Mistral): text parts are answer
        text, thinking parts (text or an array of text parts) are reasoning."""
        for part in parts:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("text"), str) and part["text"]:
                self.text.append(part["text"])
                self.out.text(part["text"])
            elif kind == "thinking":
                thinking = part.get("thinking")
                pieces = thinking if isinstance(thinking, list) else [thinking]
                for piece in pieces:
                    text = piece.get("text") if isinstance(piece, dict) else piece
                    if isinstance(text, str) and text:
                        self.thinking.append(text)
                        self.out.thinking(text)

    def _raise_error(self, error: Any) -> None:
        if isinstance(error, dict):
            code = error.get("code")
            message = error.get("message") or json.dumps(error)
        else:
            code, message = None, str(error)
        status = code if isinstance(code, int) else None
        transient = status in TRANSIENT_STATUSES or "overload" in str(message).lower()
        raise ProviderStreamError(
            f"{self.name} reported an error in the stream: {message}",
            transient=transient,
            status=status,
        )

    def _tool_fragment(self, fragment: dict[str, Any]) -> None:
        call_id = fragment.get("id")
        function = fragment.get("function") or {}
        index = fragment.get("index")
        if not isinstance(index, int):
            if call_id and call_id in self.call_by_id:
                index = self.call_by_id[call_id]
            elif call_id or self.last_index is None:
                index = len(self.calls)
            else:
                index = self.last_index
        self.last_index = index
        pending = self.calls.get(index)
        if pending is None:
            pending = _PendingCall(call_id or f"call_{index + 1}", function.get("name") or "")
            self.calls[index] = pending
            self.call_by_id[pending.id] = index
            self.out.emit(ToolCallStart(pending.id, pending.name))
        elif not pending.name and function.get("name"):
            pending.name = function["name"]
        arguments = function.get("arguments")
        if arguments:
            if not isinstance(arguments, str):
                arguments = json.dumps(arguments)
            pending.args.append(arguments)
            self.out.emit(ToolCallArgsDelta(pending.id, arguments))

    def finish(self, terminated: bool) -> ModelOutput:
        if not terminated:
            detail = " during a tool call" if self.calls else ""
            raise ProviderStreamError(
                f"{self.name} stream ended without [DONE]{detail}; the answer is incomplete",
                transient=True,
            )
        self.out.flush()
        content: list[Any] = []
        if self.thinking:
            content.append(ThinkingPart(text="".join(self.thinking)))
        if self.text:
            content.append(TextPart(text="".join(self.text)))
        for index in sorted(self.calls):
            pending = self.calls[index]
            raw = "".join(pending.args)
            content.append(
                ToolCall(id=pending.id, name=pending.name, args=tool_args(raw), raw_args=raw)
            )
        stop = _FINISH.get(self.finish_reason or "stop", StopReason.END_TURN)
        if self.calls and stop is StopReason.END_TURN:
            stop = StopReason.TOOL_USE
        prompt, completion, cached = self.tally
        return ModelOutput(
            message=Message(role=Role.ASSISTANT, content=content),
            stop_reason=stop,
            usage=Usage(input=prompt, output=completion, cache_read=cached),
        )
