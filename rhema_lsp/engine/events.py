"""The streaming seam: every event of a step, and the sink that receives them.

Who emits what: a provider emits the streaming deltas while it streams
(``ThinkingDelta``, ``TextDelta``, ``ToolCallStart``, ``ToolCallArgsDelta``,
``ProviderToolUse``, ``UsageUpdate``) and ``RetryWait`` between attempts; the agent emits the
lifecycle (``StepStart``, ``ToolCallStart`` for calls the provider did not
announce, ``ToolOutputDelta`` stamped with the call id, ``ToolResultEvent``,
``StepEnd``); the ``update_plan`` tool emits ``PlanUpdate`` each time the
model replaces its plan; a driver emits ``TurnEnd`` and ``ErrorEvent``
around a run, and ``RulesInUse`` when it gives the model project rules; a
tool that runs a child turn (the ``task`` tool's subagent) emits each of the
child's events wrapped in a ``ChildEvent`` stamped with its own call id.

Events are ephemeral: none of them is ever appended to the history. Each one
knows its wire name (``type``) and its payload as the editor contract spells
it (camelCase keys), so every driver serialises them the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from rhema_lsp.engine.output import StopReason, Usage
from rhema_lsp.vocabulary import PlanPriority, PlanStatus

__all__ = [
    "ChildEvent",
    "CompactionEvent",
    "ContextFill",
    "ErrorEvent",
    "Event",
    "EventSink",
    "PlanEntry",
    "PlanUpdate",
    "ProviderToolUse",
    "RetryWait",
    "RulesInUse",
    "StepEnd",
    "StepStart",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallArgsDelta",
    "ToolCallStart",
    "ToolOutputDelta",
    "ToolResultEvent",
    "ToolStatus",
    "ToolStatusEvent",
    "TurnEnd",
    "UsageUpdate",
]


def _usage(usage: Usage) -> dict[str, int]:
    return {
        "input": usage.input,
        "output": usage.output,
        "cacheRead": usage.cache_read,
        "cacheWrite": usage.cache_write,
    }


@dataclass(frozen=True, slots=True)
class StepStart:
    """A step begins; ``iteration`` counts the steps this agent already ran."""

    type: ClassVar[str] = "step_start"
    iteration: int

    def payload(self) -> dict[str, Any]:
        return {"type": self.type, "iteration": self.iteration}


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    """A piece of the model's reasoning, in stream order."""

    type: ClassVar[str] = "thinking_delta"
    text: str

    def payload(self) -> dict[str, Any]:
        return {"type": self.type, "text": self.text}


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the assistant's answer, in stream order."""

    type: ClassVar[str] = "text_delta"
    text: str

    def payload(self) -> dict[str, Any]:
        return {"type": self.type, "text": self.text}


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    """A tool call begins; its arguments may follow as deltas."""

    type: ClassVar[str] = "tool_call_start"
    id: str
    name: str

    def payload(self) -> dict[str, Any]:
        return {"type": self.type, "id": self.id, "name": self.name}


@dataclass(frozen=True, slots=True)
class ToolCallArgsDelta:
    """A piece of a call's JSON arguments. Wires interleave the fragments of
    parallel calls, so the id names the call it belongs to."""

    type: ClassVar[str] = "tool_call_args_delta"
    id: str
    delta: str

    def payload(self) -> dict[str, Any]:
        return {"type": self.type, "id": self.id, "delta": self.delta}


@dataclass(frozen=True, slots=True)
class ProviderToolUse:
    """The provider ran one of its own tools inside the model call (a web
    search, code execution, an MCP call). Not a call of ours: nothing runs
    here and no ``tool_result`` follows. ``detail`` is its main input in one
    short line for the user (a search query, a URL, a command), or empty."""

    type: ClassVar[str] = "provider_tool"
    id: str
    name: str
    detail: str

    def payload(self) -> dict[str, Any]:
        return {"type": self.type, "id": self.id, "name": self.name, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class ToolOutputDelta:
    """Complete lines of a running tool's output (newline included)."""

    type: ClassVar[str] = "tool_output_delta"
    id: str
    chunk: str

    def payload(self) -> dict[str, Any]:
        return {"type": self.type, "id": self.id, "chunk": self.chunk}


@dataclass(frozen=True, slots=True)
class ToolStatus:
    """What a running tool's inner work is doing, and what it has spent so far.
    A later status for the same call replaces the earlier one."""

    activity: str
    spent: Usage | None = None

    def payload(self) -> dict[str, Any]:
        spent = None if self.spent is None else _usage(self.spent)
        return {"activity": self.activity, "spent": spent}


@dataclass(frozen=True, slots=True)
class ToolStatusEvent:
    """A running tool reported its own status."""

    type: ClassVar[str] = "tool_status"
    id: str
    status: ToolStatus

    def payload(self) -> dict[str, Any]:
        return {"type": self.type, "id": self.id, "status": self.status.payload()}


@dataclass(frozen=True, slots=True)
class ToolResultEvent:
    """A tool result was appended to the history."""

    type: ClassVar[str] = "tool_result"
    id: str
    name: str
    content: str
    is_error: bool
    code: int | None = None

    def payload(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "id": self.id,
            "name": self.name,
            "content": self.content,
            "isError": self.is_error,
            "code": self.code,
        }


@dataclass(frozen=True, slots=True)
class PlanEntry:
    """One step of the model's plan, where it stands, and how much it
    matters (``priority``: shown by ACP; not part of the LSP payload)."""

    content: str
    status: PlanStatus
    priority: PlanPriority = "medium"

    def payload(self) -> dict[str, Any]:
        return {"content": self.content, "status": self.status}


@dataclass(frozen=True, slots=True)
class PlanUpdate:
    """The model's plan, whole: each update replaces the one before."""

    type: ClassVar[str] = "plan"
    entries: tuple[PlanEntry, ...]

    def payload(self) -> dict[str, Any]:
        return {"type": self.type, "entries": [entry.payload() for entry in self.entries]}


@dataclass(frozen=True, slots=True)
class UsageUpdate:
    """The running token tally of the model call in flight. Cumulative: each
    event replaces the previous tally, never adds to it."""

    type: ClassVar[str] = "usage"
    usage: Usage

    def payload(self) -> dict[str, Any]:
        return {"type": self.type, **_usage(self.usage)}


@dataclass(frozen=True, slots=True)
class RetryWait:
    """A provider attempt failed transiently; the ladder waits before the
    next one. ``attempt`` is the one-based number of the attempt that failed."""

    type: ClassVar[str] = "retry_wait"
    error: str
    delay_seconds: float
    attempt: int
    total: int

    def payload(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "error": self.error,
            "delaySeconds": self.delay_seconds,
            "attempt": self.attempt,
            "total": self.total,
        }


@dataclass(frozen=True, slots=True)
class StepEnd:
    """The step ends, with the call's usage and why the model stopped."""

    type: ClassVar[str] = "step_end"
    usage: Usage
    stop_reason: StopReason

    def payload(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "usage": _usage(self.usage),
            "stopReason": self.stop_reason.value,
        }


@dataclass(frozen=True, slots=True)
class CompactionEvent:
    """The older part of the history was summarised (or dropped) so the
    requests fit the model's window: the estimated input tokens of a request
    ``before`` and ``after``, and the summary's own size (0 when dropped)."""

    type: ClassVar[str] = "compaction"
    before: int
    after: int
    summary_tokens: int

    def payload(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "before": self.before,
            "after": self.after,
            "summaryTokens": self.summary_tokens,
        }


@dataclass(frozen=True, slots=True)
class ContextFill:
    """How full the model's context window is: the tokens the session's next
    request carries at least (the last call's input and output, or the
    estimate after a compaction), and the window (``None`` while unknown)."""

    type: ClassVar[str] = "context"
    tokens: int
    window: int | None

    def payload(self) -> dict[str, Any]:
        return {"type": self.type, "tokens": self.tokens, "window": self.window}


@dataclass(frozen=True, slots=True)
class RulesInUse:
    """The project rules files a run gives the model so far (its folder's
    ``AGENTS.md`` and the like, then the nested ones as they join), by name."""

    type: ClassVar[str] = "rules"
    files: tuple[str, ...]

    def payload(self) -> dict[str, Any]:
        return {"type": self.type, "files": list(self.files)}


@dataclass(frozen=True, slots=True)
class TurnEnd:
    """A driver's run ended. ``stop_reason`` is a contract stop reason, which
    adds ``max_steps``, ``cancelled`` and ``error`` to the model's own."""

    type: ClassVar[str] = "turn_end"
    stop_reason: str
    text: str
    steps: int
    usage: Usage

    def payload(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "stopReason": self.stop_reason,
            "text": self.text,
            "steps": self.steps,
            "usage": _usage(self.usage),
        }


@dataclass(frozen=True, slots=True)
class ErrorEvent:
    """A driver's run failed; ``message`` says what to do next."""

    type: ClassVar[str] = "error"
    message: str

    def payload(self) -> dict[str, Any]:
        return {"type": self.type, "message": self.message}


@dataclass(frozen=True, slots=True)
class ChildEvent:
    """One event of a child run (a subagent) that the tool call ``id`` of
    this run started; ``session`` is the child's own stored session. A
    child's events are never themselves ``ChildEvent`` (a child starts no
    child)."""

    type: ClassVar[str] = "subagent"
    id: str
    session: str
    event: Event

    def payload(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "id": self.id,
            "session": self.session,
            "event": self.event.payload(),
        }


Event = (
    StepStart
    | ThinkingDelta
    | TextDelta
    | ToolCallStart
    | ToolCallArgsDelta
    | ProviderToolUse
    | ToolOutputDelta
    | ToolStatusEvent
    | ToolResultEvent
    | PlanUpdate
    | UsageUpdate
    | RetryWait
    | StepEnd
    | CompactionEvent
    | ContextFill
    | RulesInUse
    | TurnEnd
    | ErrorEvent
    | ChildEvent
)
"""One event of a step or a run."""


class EventSink(Protocol):
    """Receives events, synchronously and in stream order.

    A sink must not block: it renders, buffers or forwards, and returns.
    """

    def emit(self, event: Event) -> None:
        """Handle one event."""
