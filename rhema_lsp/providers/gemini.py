"""The Gemini wire (``POST {base}/v1beta/models/{model}:streamGenerateContent?alt=sse``).

Each SSE chunk is a full ``GenerateContentResponse``: ``candidates[0].content.parts``
hold text parts, thought parts (``thought: true``) and ``functionCall`` parts
(ids synthesized when absent); a part's ``thoughtSignature`` is stored in the
call's ``provider_data`` and sent back unchanged. ``usageMetadata`` arrives as
a cumulative tally (output = candidate + thought tokens). The stream is done
once a candidate carries a ``finishReason``; a stream that ends before one is
an error. The key travels in the ``x-goog-api-key`` header, never in the URL.
"""

from __future__ import annotations

import json
import re
from itertools import count
from typing import Any
from urllib.parse import quote

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
from rhema_lsp.providers.errors import TRANSIENT_STATUSES, ProviderStreamError
from rhema_lsp.providers.shapes import EventShape, JsonPath, ShapeLearner
from rhema_lsp.providers.transport import (
    EventBatcher,
    HttpStreamProvider,
    WireDecoder,
    parse_event,
)

__all__ = ["GeminiProvider", "gemini_contents"]

_BUDGETS = {ThinkingEffort.LOW: 1024, ThinkingEffort.MEDIUM: 8192, ThinkingEffort.HIGH: 24576}
_FAILED_FINISH = {"MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL"}
_synthesized = count(1)
_PROMPT: JsonPath = ("usageMetadata", "promptTokenCount")
_CANDIDATES: JsonPath = ("usageMetadata", "candidatesTokenCount")
_THOUGHTS: JsonPath = ("usageMetadata", "thoughtsTokenCount")
_USAGE_KEYS = (_PROMPT, _CANDIDATES, _THOUGHTS)


def _function_call_part(call: ToolCall) -> dict[str, Any]:
    data = call.provider_data if isinstance(call.provider_data, dict) else {}
    function_call: dict[str, Any] = {"name": call.name, "args": call.args}
    if data.get("wire_id"):
        function_call["id"] = call.id
    part: dict[str, Any] = {"functionCall": function_call}
    if data.get("thoughtSignature"):
        part["thoughtSignature"] = data["thoughtSignature"]
    return part


def gemini_contents(request: ModelRequest) -> list[dict[str, Any]]:
    """The ``contents`` of ``request``: ``model`` turns, and user turns where
    function responses (named after their calls) and text merge in order."""
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
                if isinstance(part, TextPart) and part.text:
                    parts.append({"text": part.text})
                elif isinstance(part, ThinkingPart) and part.signature:
                    parts.append(
                        {"text": part.text, "thought": True, "thoughtSignature": part.signature}
                    )
                elif isinstance(part, ToolCall):
                    parts.append(_function_call_part(part))
        else:
            role = "user"
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
                elif isinstance(part, TextPart) and part.text:
                    parts.append({"text": part.text})
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
        body: dict[str, Any] = {"contents": gemini_contents(request)}
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
        return body

    def new_decoder(self, sink: EventSink) -> WireDecoder:
        return GeminiStreamDecoder(sink, self.name)


class GeminiStreamDecoder:
    """Decodes one ``streamGenerateContent`` SSE stream (see the module docstring)."""

    def __init__(self, sink: EventSink, name: str) -> None:
        self.out = EventBatcher(sink)
        self.name = name
        self.parts: list[Any] = []
        self.finish_reason: str | None = None
        self.input_tokens = 0
        self.output_tokens = 0
        # Learned shapes of a one-part text and thought chunk, and whether they carry
        # usage (see .shapes); the usage integers are the shape's integer holes.
        self.text_shape: tuple[EventShape, bool] | None = None
        self.thought_shape: tuple[EventShape, bool] | None = None
        self.learner = ShapeLearner()
        self.pending_usage: tuple[EventShape, re.Match[bytes]] | None = None

    def flush(self) -> None:
        self._take_pending_usage()
        self.out.flush()

    def _take_pending_usage(self) -> None:
        """Record the usage of the latest shaped chunk that carried one."""
        if self.pending_usage is not None:
            shape, match = self.pending_usage
            self.pending_usage = None
            self.input_tokens = shape.integer(match, _PROMPT) or 0
            self.output_tokens = (shape.integer(match, _CANDIDATES) or 0) + (
                shape.integer(match, _THOUGHTS) or 0
            )
            self.out.usage(self.input_tokens, self.output_tokens)

    def _shaped(self, shaped: tuple[EventShape, bool], event: str | None, data: bytes) -> bool:
        """Decode a chunk of a learned shape; ``False`` when it is not one."""
        shape, has_usage = shaped
        match = shape.match(event, data)
        if match is None:
            return False
        text = shape.text(match)
        if text is None:
            return False
        if text:
            last = self.parts[-1] if self.parts else None
            if shaped is self.text_shape and type(last) is list and last[0] == "text":
                last[1].append(text)  # what _append_text does, without the call
                self.out.text(text)
            else:
                self._append_text(text, shaped is self.thought_shape, None)
        if has_usage:
            # Only the latest tally is ever emitted (at the next flush): convert it then.
            self.pending_usage = (shape, match)
        return True

    def _learn(self, event: str | None, data: bytes, chunk: dict[str, Any]) -> None:
        """Learn the shape of a chunk holding one text part, maybe usage, nothing else."""
        candidate = chunk["candidates"][0]
        parts = (candidate.get("content") or {}).get("parts")
        usage = chunk.get("usageMetadata")
        if (
            not isinstance(parts, list)
            or len(parts) != 1
            or not isinstance(parts[0], dict)
            or not isinstance(parts[0].get("text"), str)
            or not set(parts[0]) <= {"text", "thought"}
            or candidate.get("finishReason")
            or chunk.get("error")
            or (usage and not isinstance(usage, dict))
            or (usage and not all(type(usage.get(key[1], 0)) is int for key in _USAGE_KEYS))
            or not self.learner.due()
        ):
            return
        shape = self.learner.learned(
            EventShape.learn(
                event,
                data,
                chunk,
                ("candidates", 0, "content", "parts", 0, "text"),
                lambda path: path[:1] == ("usageMetadata",),
            )
        )
        if shape is not None:
            if parts[0].get("thought"):
                self.thought_shape = (shape, bool(usage))
            else:
                self.text_shape = (shape, bool(usage))

    def _append_text(self, text: str, thought: bool, signature: str | None) -> None:
        last = self.parts[-1] if self.parts else None
        if thought:
            self.out.thinking(text)
            if isinstance(last, list) and last[0] == "thinking":
                last[1].append(text)
                last[2] = signature or last[2]
            else:
                self.parts.append(["thinking", [text], signature])
        else:
            self.out.text(text)
            if isinstance(last, list) and last[0] == "text":
                last[1].append(text)
            else:
                self.parts.append(["text", [text], None])

    def feed(self, event: str | None, data: bytes) -> bool:
        if self.text_shape is not None and self._shaped(self.text_shape, event, data):
            return False
        if self.thought_shape is not None and self._shaped(self.thought_shape, event, data):
            return False
        chunk = parse_event(self.name, data)
        if isinstance(chunk, list):  # a JSON-array stream item, as without alt=sse
            chunk = chunk[0] if chunk else {}
        error = chunk.get("error")
        if error:
            code = error.get("code")
            raise ProviderStreamError(
                f"{self.name} reported an error in the stream: "
                f"{error.get('status', '')} {error.get('message', '')}".strip(),
                transient=code in TRANSIENT_STATUSES,
                status=code if isinstance(code, int) else None,
            )
        for candidate in chunk.get("candidates") or ():
            for part in (candidate.get("content") or {}).get("parts") or ():
                signature = part.get("thoughtSignature")
                call = part.get("functionCall")
                if call is not None:
                    self._call(call, signature)
                    continue
                text = part.get("text")
                if text:
                    self._append_text(text, bool(part.get("thought")), signature)
                    self._learn(event, data, chunk)
            reason = candidate.get("finishReason")
            if reason:
                self.finish_reason = reason
            break  # one candidate is requested
        usage = chunk.get("usageMetadata")
        if usage:
            self.pending_usage = None  # replaced by this later tally
            self.input_tokens = int(usage.get("promptTokenCount") or 0)
            self.output_tokens = int(usage.get("candidatesTokenCount") or 0) + int(
                usage.get("thoughtsTokenCount") or 0
            )
            self.out.usage(self.input_tokens, self.output_tokens)
        # Keep reading after the finish: a last usage chunk may follow; EOF ends it.
        return False

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

    def finish(self, terminated: bool) -> ModelOutput:
        self._take_pending_usage()
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
            if isinstance(part, ToolCall):
                content.append(part)
            elif part[0] == "text":
                content.append(TextPart(text="".join(part[1])))
            else:
                content.append(ThinkingPart(text="".join(part[1]), signature=part[2]))
        has_calls = any(isinstance(part, ToolCall) for part in content)
        if has_calls:
            stop = StopReason.TOOL_USE
        elif self.finish_reason == "MAX_TOKENS":
            stop = StopReason.MAX_TOKENS
        else:
            stop = StopReason.END_TURN
        return ModelOutput(
            message=Message(role=Role.ASSISTANT, content=content),
            stop_reason=stop,
            usage=Usage(input=self.input_tokens, output=self.output_tokens),
        )
