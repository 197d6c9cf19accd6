"""The Gemini wire (``POST {base}/v1beta/models/{model}:streamGenerateContent?alt=sse``).

Each SSE chunk is a full ``GenerateContentResponse``: ``candidates[0].content.parts``
hold text parts, thought parts (``thought: true``) and ``functionCall`` parts
(ids synthesized when absent). Every ``thoughtSignature`` is sent back as it
came: a call's in its ``provider_data``, a thought run's as its signature, and
a signed answer part (often an empty last one) stays a text part of its own
with the signature in its ``provider_data``. Parts Gemini acts on itself
(``executableCode``, ``codeExecutionResult``, anything newer) are kept verbatim
as :class:`~rhema_lsp.engine.ProviderPart` and resent; code it runs is
announced with ``ProviderToolUse``. ``usageMetadata`` arrives as a cumulative
tally (output = candidate + thought tokens). The stream is done once a
candidate carries a ``finishReason``; a stream that ends before one is an
error. The key travels in the ``x-goog-api-key`` header, never in the URL.
"""

from __future__ import annotations

import json
from itertools import count
from typing import Any
from urllib.parse import quote

import msgspec

from rhema_lsp.engine import (
    EventSink,
    ImagePart,
    Message,
    ModelOutput,
    ModelRequest,
    ProviderPart,
    ProviderToolUse,
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
from rhema_lsp.providers.decoding import EventBatcher, decode_event
from rhema_lsp.providers.errors import TRANSIENT_STATUSES, ProviderStreamError
from rhema_lsp.providers.images import returned_note
from rhema_lsp.providers.transport import HttpStreamProvider, WireDecoder

__all__ = ["GeminiProvider", "gemini_contents"]

_BUDGETS = {ThinkingEffort.LOW: 1024, ThinkingEffort.MEDIUM: 8192, ThinkingEffort.HIGH: 24576}
_FAILED_FINISH = {"MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL"}
_synthesized = count(1)
WIRE = "gemini"
"""The ``wire`` of the provider parts this adapter keeps and resends."""


def _function_call_part(call: ToolCall) -> dict[str, Any]:
    data = call.provider_data if isinstance(call.provider_data, dict) else {}
    function_call: dict[str, Any] = {"name": call.name, "args": call.args}
    if data.get("wire_id"):
        function_call["id"] = call.id
    part: dict[str, Any] = {"functionCall": function_call}
    if data.get("thoughtSignature"):
        part["thoughtSignature"] = data["thoughtSignature"]
    return part


def _inline(image: ImagePart) -> dict[str, Any]:
    return {"inline_data": {"mime_type": image.media_type, "data": image.data}}


def gemini_contents(request: ModelRequest) -> list[dict[str, Any]]:
    """The ``contents`` of ``request``: ``model`` turns, and user turns where
    function responses (named after their calls) and text merge in order.
    Images are ``inline_data`` parts; a tool result's follow its response,
    with a note naming the call."""
    names = {
        call.id: call
        for message in request.messages
        if message.role is Role.ASSISTANT
        for call in message.tool_calls
    }
    out: list[dict[str, Any]] = []
    for message in request.messages:
        parts: list[dict[str, Any]] = []
        if message.role is Role.ASSISTANT:
            role = "model"
            for part in message.content:
                if isinstance(part, TextPart):
                    signed = part.provider_data if isinstance(part.provider_data, dict) else {}
                    if signed.get("thoughtSignature"):
                        parts.append(
                            {"text": part.text, "thoughtSignature": signed["thoughtSignature"]}
                        )
                    elif part.text:
                        parts.append({"text": part.text})
                elif isinstance(part, ProviderPart):
                    if part.wire == WIRE and isinstance(part.provider_data, dict):
                        parts.append(part.provider_data)
                elif isinstance(part, ThinkingPart) and part.signature:
                    parts.append(
                        {"text": part.text, "thought": True, "thoughtSignature": part.signature}
                    )
                elif isinstance(part, ToolCall):
                    parts.append(_function_call_part(part))
        else:
            role = "user"
            returned: list[dict[str, Any]] = []
            for part in message.content:
                if isinstance(part, ToolResult):
                    call = names.get(part.id)
                    response: dict[str, Any] = {
                        "name": call.name if call else part.id,
                        "response": {"error": part.content}
                        if part.is_error
                        else {"content": part.content},
                    }
                    data = (
                        call.provider_data if call and isinstance(call.provider_data, dict) else {}
                    )
                    if data.get("wire_id"):
                        response["id"] = part.id
                    parts.append({"functionResponse": response})
                    if part.images:
                        returned.append({"text": returned_note(part)})
                        returned.extend(_inline(image) for image in part.images)
                elif isinstance(part, TextPart) and part.text:
                    parts.append({"text": part.text})
                elif isinstance(part, ImagePart):
                    parts.append(_inline(part))
            parts.extend(returned)  # after the responses, as a user's own parts
        if not parts:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["parts"].extend(parts)
        else:
            out.append({"role": role, "parts": parts})
    return out


class GeminiProvider(HttpStreamProvider):
    """A :class:`~rhema_lsp.engine.ModelProvider` over Gemini's streaming API."""

    def request_url(self, request: ModelRequest) -> str:
        model = quote(request.params.model or self.model, safe="")
        return f"{self.base_url}/v1beta/models/{model}:streamGenerateContent?alt=sse"

    def request_headers(self, key: str | None) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": "text/event-stream"}
        if key is not None:
            headers["x-goog-api-key"] = key
        return headers

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        params = request.params
        body: dict[str, Any] = {}
        if request.system:
            body["systemInstruction"] = {"parts": [{"text": request.system}]}
        config: dict[str, Any] = {}
        if params.max_tokens is not None:
            config["maxOutputTokens"] = params.max_tokens
        if params.temperature is not None:
            config["temperature"] = params.temperature
        budget = _BUDGETS.get(params.thinking)
        if budget is not None:
            config["thinkingConfig"] = {"thinkingBudget": budget, "includeThoughts": True}
        if config:
            body["generationConfig"] = config
        if request.tools:
            body["tools"] = [
                {
                    "functionDeclarations": [
                        {
                            "name": spec.name,
                            "description": spec.description,
                            "parametersJsonSchema": spec.parameters,
                        }
                        for spec in request.tools
                    ]
                }
            ]
        # Last: the part that grows, so each request's bytes start with the
        # previous one's (Gemini caches by prefix).
        body["contents"] = gemini_contents(request)
        return body

    def new_decoder(self, sink: EventSink) -> WireDecoder:
        return GeminiStreamDecoder(sink, self.name)


class _Content(msgspec.Struct, gc=False):
    parts: list[dict[str, Any]] | None = None


class _Candidate(msgspec.Struct, gc=False):
    content: _Content | None = None
    finishReason: str | None = None


class _Usage(msgspec.Struct, gc=False):
    """Gemini's cumulative tally (the wire's camelCase names)."""

    promptTokenCount: int = 0
    candidatesTokenCount: int = 0
    thoughtsTokenCount: int = 0
    cachedContentTokenCount: int = 0


class _Chunk(msgspec.Struct, gc=False):
    """What this adapter reads of a ``GenerateContentResponse``."""

    candidates: list[_Candidate] | None = None
    usageMetadata: _Usage | None = None
    error: dict[str, Any] | None = None


# Without alt=sse a stream item is a JSON array of responses.
_CHUNK = msgspec.json.Decoder(_Chunk | list[_Chunk])


class _Text:
    """A run of text or thought parts that becomes one part of the message."""

    __slots__ = ("parts", "signature", "thought")

    def __init__(self, thought: bool, signature: str | None) -> None:
        self.thought = thought
        self.parts: list[str] = []
        self.signature = signature


def _code_detail(code: Any) -> str:
    text = code.get("code") if isinstance(code, dict) else None
    lines = text.strip().splitlines() if isinstance(text, str) else []
    return lines[0][:80] if lines else ""


class GeminiStreamDecoder:
    """Decodes one ``streamGenerateContent`` SSE stream (see the module docstring)."""

    def __init__(self, sink: EventSink, name: str) -> None:
        self.out = EventBatcher(sink)
        self.name = name
        self.parts: list[_Text | ToolCall | ProviderPart] = []
        self.finish_reason: str | None = None
        self.tally = (0, 0, 0)
        self.usage: _Usage | None = None  # the latest tally, read at the next flush
        # The pieces of the last part when it is a run of plain answer text
        # (not a thought, unsigned), which more plain text continues.
        self._plain: list[str] | None = None

    def flush(self) -> None:
        if self.usage is not None:
            self._take_usage()
        self.out.flush()

    def _take_usage(self) -> None:
        usage, self.usage = self.usage or _Usage(), None
        self.tally = (
            usage.promptTokenCount,
            usage.candidatesTokenCount + usage.thoughtsTokenCount,
            usage.cachedContentTokenCount,
        )
        self.out.usage(*self.tally)

    def feed(self, event: str | None, data: bytes) -> bool:
        try:
            chunk = _CHUNK.decode(data)
        except msgspec.MsgspecError:
            chunk = decode_event(self.name, data, _CHUNK)
        if isinstance(chunk, list):
            chunk = chunk[0] if chunk else _Chunk()
        error = chunk.error
        if error:
            code = error.get("code")
            raise ProviderStreamError(
                f"{self.name} reported an error in the stream: "
                f"{error.get('status', '')} {error.get('message', '')}".strip(),
                transient=code in TRANSIENT_STATUSES,
                status=code if isinstance(code, int) else None,
            )
        if chunk.candidates:
            candidate = chunk.candidates[0]  # one candidate is requested
            content = candidate.content
            for part in (content.parts if content else None) or ():
                text = part.get("text")
                if type(text) is str:
                    plain = self._plain
                    if plain is not None and text and len(part) == 1:
                        plain.append(text)  # more plain answer text: the common case
                        self.out.text(text)
                    else:
                        self._text(text, part)
                elif "functionCall" in part:
                    self._call(part["functionCall"] or {}, part.get("thoughtSignature"))
                else:
                    self._provider_part(part)
            reason = candidate.finishReason
            if reason:
                self.finish_reason = reason
        usage = chunk.usageMetadata
        if usage is not None and (usage.promptTokenCount or usage.candidatesTokenCount):
            self.usage = usage
        # Keep reading after the finish: a last usage chunk may follow; EOF ends it.
        return False

    def _text(self, text: str, part: dict[str, Any]) -> None:
        """A text or thought part: unsigned ones continue the run before them;
        a signed answer part stays a part of its own, as Gemini sent it."""
        thought = bool(part.get("thought"))
        signature = part.get("thoughtSignature")
        if text:
            if thought:
                self.out.thinking(text)
            else:
                self.out.text(text)
        last = self.parts[-1] if self.parts else None
        if (
            type(last) is _Text
            and last.thought == thought
            and (thought or (last.signature is None and signature is None))
        ):
            last.parts.append(text)
            if signature:
                last.signature = signature
        elif text or signature:
            run = _Text(thought, signature)
            run.parts.append(text)
            self.parts.append(run)
        last = self.parts[-1] if self.parts else None
        if isinstance(last, _Text) and not last.thought and last.signature is None:
            self._plain = last.parts
        else:
            self._plain = None

    def _provider_part(self, part: dict[str, Any]) -> None:
        """A part Gemini acts on itself (code it ran and its result): kept verbatim."""
        kind = next((key for key in part if key not in ("thoughtSignature", "thought")), "")
        if not kind:
            return
        self.parts.append(ProviderPart(wire=WIRE, kind=kind, provider_data=part))
        self._plain = None
        if kind == "executableCode":
            code = part[kind]
            call_id = (code.get("id") if isinstance(code, dict) else None) or (
                f"gemini_code_{next(_synthesized)}"
            )
            self.out.emit(ProviderToolUse(call_id, "code_execution", _code_detail(code)))

    def _call(self, call: dict[str, Any], signature: str | None) -> None:
        wire_id = call.get("id")
        call_id = wire_id or f"gemini_call_{next(_synthesized)}"
        name = call.get("name") or ""
        args = call.get("args")
        if not isinstance(args, dict):
            args = {}
        raw = json.dumps(args, ensure_ascii=False)
        provider_data: dict[str, Any] = {}
        if signature:
            provider_data["thoughtSignature"] = signature
        if wire_id:
            provider_data["wire_id"] = True
        self.out.emit(ToolCallStart(call_id, name))
        self.out.emit(ToolCallArgsDelta(call_id, raw))
        self.parts.append(
            ToolCall(
                id=call_id, name=name, args=args, raw_args=raw, provider_data=provider_data or None
            )
        )
        self._plain = None

    def finish(self, terminated: bool) -> ModelOutput:
        if self.usage is not None:
            self._take_usage()
        if self.finish_reason is None:
            raise ProviderStreamError(
                f"{self.name} stream ended without a finishReason; the answer is incomplete",
                transient=True,
            )
        if self.finish_reason in _FAILED_FINISH:
            raise ProviderStreamError(
                f"{self.name} stopped with {self.finish_reason}; ask again or rephrase",
                transient=False,
            )
        self.out.flush()
        content: list[Any] = []
        for part in self.parts:
            if type(part) is not _Text:
                content.append(part)
            elif part.thought:
                content.append(ThinkingPart(text="".join(part.parts), signature=part.signature))
            else:
                signed = {"thoughtSignature": part.signature} if part.signature else None
                content.append(TextPart(text="".join(part.parts), provider_data=signed))
        if any(isinstance(part, ToolCall) for part in content):
            stop = StopReason.TOOL_USE
        elif self.finish_reason == "MAX_TOKENS":
            stop = StopReason.MAX_TOKENS
        else:
            stop = StopReason.END_TURN
        prompt, output, cached = self.tally
        return ModelOutput(
            message=Message(role=Role.ASSISTANT, content=content),
            stop_reason=stop,
            usage=Usage(input=prompt, output=output, cache_read=cached),
        )
