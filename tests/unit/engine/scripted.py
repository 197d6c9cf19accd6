"""In-memory scripted provider and resolver for engine tests (not a product
feature): each provider call plays the next scripted reply into the sink."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import anyio

from rhema_lsp.engine import (
    Event,
    EventSink,
    Message,
    ModelOutput,
    ModelRequest,
    Part,
    ProviderError,
    ReplaySafety,
    Role,
    StopReason,
    TextDelta,
    TextPart,
    ToolCall,
    ToolCallArgsDelta,
    ToolCallStart,
    ToolContext,
    ToolResolver,
    ToolResult,
    ToolSpec,
    Usage,
)
from rhema_lsp.engine.tools import Progress, StatusReporter


@dataclass
class Reply:
    """One scripted model reply."""

    text: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    announce: bool = False
    stop: StopReason | None = None
    usage: Usage = field(default_factory=lambda: Usage(input=10, output=5))
    error: ProviderError | None = None
    hang: bool = False


def call(call_id: str, name: str, **args: object) -> ToolCall:
    raw = json.dumps(args)
    return ToolCall(id=call_id, name=name, args=args, raw_args=raw)


class ScriptedProvider:
    """Plays replies in order; records every request it was given."""

    def __init__(self, *replies: Reply) -> None:
        self.replies = list(replies)
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest, sink: EventSink) -> ModelOutput:
        self.requests.append(request)
        reply = self.replies.pop(0)
        if reply.error is not None:
            raise reply.error
        if reply.text:
            for word in reply.text.split(" "):
                sink.emit(TextDelta(text=word))
                await anyio.lowlevel.checkpoint()
        if reply.hang:
            await anyio.sleep_forever()
        if reply.announce:
            for tool_call in reply.calls:
                sink.emit(ToolCallStart(id=tool_call.id, name=tool_call.name))
                sink.emit(ToolCallArgsDelta(id=tool_call.id, delta=tool_call.raw_args or ""))
        content: list[Part] = []
        if reply.text:
            content.append(TextPart(text=reply.text))
        content.extend(reply.calls)
        stop = reply.stop or (StopReason.TOOL_USE if reply.calls else StopReason.END_TURN)
        return ModelOutput(
            message=Message(role=Role.ASSISTANT, content=content),
            stop_reason=stop,
            usage=reply.usage,
        )


Behaviour = Callable[[ToolCall, ToolContext, Progress], Awaitable[ToolResult]]


class ScriptedResolver(ToolResolver):
    """Tools whose behaviour each test supplies; records what ran."""

    def __init__(self, tools: dict[str, Behaviour], safe: set[str] | None = None) -> None:
        self.tools = tools
        self.safe = safe or set()
        self.ran: list[str] = []

    def specs(self) -> list[ToolSpec]:
        return [ToolSpec(name=name, description=f"the {name} tool") for name in self.tools]

    def replay_safety(self, name: str) -> ReplaySafety:
        return ReplaySafety.SAFE if name in self.safe else ReplaySafety.UNSAFE

    async def resolve(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        return await self.resolve_streaming(call, ctx, lambda _: None)

    async def resolve_streaming(
        self,
        call: ToolCall,
        ctx: ToolContext,
        progress: Progress,
        status: StatusReporter | None = None,
    ) -> ToolResult:
        behaviour = self.tools.get(call.name)
        if behaviour is None:
            return ToolResult.failure(call.id, f"unknown tool `{call.name}`")
        self.ran.append(call.id)
        return await behaviour(call, ctx, progress)


async def echo(call: ToolCall, ctx: ToolContext, progress: Progress) -> ToolResult:
    return ToolResult.success(call.id, json.dumps(call.args, sort_keys=True))


class Recorder:
    """An event sink that keeps every event."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)

    def types(self) -> list[str]:
        return [event.type for event in self.events]
