"""The ``rhema/event`` notification and every event it carries.

The engine emits its events as slotted dataclasses (the hot path of a
stream); each one's ``payload()`` is what goes on the wire, and the models
here say what that is. ``tests/unit/contract`` checks every engine event's
payload against its model, so the two cannot drift.
"""

from __future__ import annotations

import typing
from typing import Annotated, Literal

from pydantic import Field

from rhema_lsp.contract.base import Wire
from rhema_lsp.vocabulary import PlanStatus

__all__ = [
    "EVENT_METHOD",
    "EVENT_MODELS",
    "CompactionPayload",
    "ContextPayload",
    "ErrorPayload",
    "EventPayload",
    "PlanEntryBody",
    "PlanPayload",
    "ProviderToolPayload",
    "RetryWaitPayload",
    "RhemaEventParams",
    "RulesPayload",
    "RunStopReason",
    "StepEndPayload",
    "StepStartPayload",
    "SubagentPayload",
    "TextDeltaPayload",
    "ThinkingDeltaPayload",
    "ToolCallArgsDeltaPayload",
    "ToolCallStartPayload",
    "ToolOutputDeltaPayload",
    "ToolResultPayload",
    "ToolStatusBody",
    "ToolStatusPayload",
    "TurnEndPayload",
    "UsagePayload",
    "UsageTally",
]

EVENT_METHOD = "rhema/event"

ModelStopReason = Literal["end_turn", "tool_use", "max_tokens", "pause_turn"]
"""Why one model call stopped."""

RunStopReason = Literal[
    "end_turn", "tool_use", "max_tokens", "pause_turn", "max_steps", "cancelled", "error"
]
"""Why a run stopped: the model's reasons plus the driver's own."""


class UsageTally(Wire):
    """Tokens in and out; ``input`` counts cached input too, ``cache_read``
    and ``cache_write`` how much of it the provider's prompt cache served or
    stored (0 where the wire does not say)."""

    input: int
    output: int
    cache_read: int
    cache_write: int


class StepStartPayload(Wire):
    """A step begins; ``iteration`` counts the steps this run already ran."""

    type: Literal["step_start"] = "step_start"
    iteration: int


class ThinkingDeltaPayload(Wire):
    """A piece of the model's reasoning."""

    type: Literal["thinking_delta"] = "thinking_delta"
    text: str


class TextDeltaPayload(Wire):
    """A piece of the answer."""

    type: Literal["text_delta"] = "text_delta"
    text: str


class ToolCallStartPayload(Wire):
    """A tool call begins; its arguments may follow as deltas."""

    type: Literal["tool_call_start"] = "tool_call_start"
    id: str
    name: str


class ToolCallArgsDeltaPayload(Wire):
    """A piece of a call's JSON arguments."""

    type: Literal["tool_call_args_delta"] = "tool_call_args_delta"
    id: str
    delta: str


class ToolOutputDeltaPayload(Wire):
    """Complete lines of a running tool's output."""

    type: Literal["tool_output_delta"] = "tool_output_delta"
    id: str
    chunk: str


class ToolStatusBody(Wire):
    """What a running tool is doing, and what it has spent so far."""

    activity: str
    spent: UsageTally | None = None


class ToolStatusPayload(Wire):
    """A running tool reported its status; a later one replaces it."""

    type: Literal["tool_status"] = "tool_status"
    id: str
    status: ToolStatusBody


class ToolResultPayload(Wire):
    """A tool result was recorded."""

    type: Literal["tool_result"] = "tool_result"
    id: str
    name: str
    content: str
    is_error: bool
    code: int | None = None


class PlanEntryBody(Wire):
    """One step of a plan: what it is, and where it stands."""

    content: str
    status: PlanStatus


class PlanPayload(Wire):
    """The model's plan (``update_plan``), whole: each one replaces the one
    before. Kept in the session; ``rhema.openSession`` returns the latest."""

    type: Literal["plan"] = "plan"
    entries: list[PlanEntryBody]


class ProviderToolPayload(Wire):
    """The provider ran one of its own tools inside the model call (web
    search, code execution, ...): not one of the agent's calls, no result
    follows. ``detail`` is its main input in one short line, or empty."""

    type: Literal["provider_tool"] = "provider_tool"
    id: str
    name: str
    detail: str


class UsagePayload(Wire):
    """The running tally of the step in flight (cumulative)."""

    type: Literal["usage"] = "usage"
    input: int
    output: int
    cache_read: int
    cache_write: int


class RetryWaitPayload(Wire):
    """A provider attempt failed transiently; the next one follows after a wait."""

    type: Literal["retry_wait"] = "retry_wait"
    error: str
    delay_seconds: float
    attempt: int
    total: int


class StepEndPayload(Wire):
    """A step ended: the call's usage and why the model stopped."""

    type: Literal["step_end"] = "step_end"
    usage: UsageTally
    stop_reason: ModelStopReason


class CompactionPayload(Wire):
    """The older part of the session was summarised (or, when no summary
    could be written, dropped with a note) so requests fit the model's
    window: estimated input tokens of a request ``before`` and ``after``, and
    the summary's own tokens (0 when dropped)."""

    type: Literal["compaction"] = "compaction"
    before: int
    after: int
    summary_tokens: int


class ContextPayload(Wire):
    """How full the model's window is: the estimated tokens of the session's
    next request, and the window (``null`` while unknown)."""

    type: Literal["context"] = "context"
    tokens: int
    window: int | None


class RulesPayload(Wire):
    """The project rules files the run gives the model so far, by name
    (``AGENTS.md``, ``pkg/AGENTS.md``; the user's own by its path): at the
    run's start when there are any, and again, with the whole list, when a
    nested one joins."""

    type: Literal["rules"] = "rules"
    files: list[str]


class TurnEndPayload(Wire):
    """A run ended; always the last event of a run."""

    type: Literal["turn_end"] = "turn_end"
    stop_reason: RunStopReason
    text: str
    steps: int
    usage: UsageTally


class ErrorPayload(Wire):
    """A run failed; ``message`` says what to do next."""

    type: Literal["error"] = "error"
    message: str


_AnyEvent = (
    StepStartPayload
    | ThinkingDeltaPayload
    | TextDeltaPayload
    | ToolCallStartPayload
    | ToolCallArgsDeltaPayload
    | ProviderToolPayload
    | ToolOutputDeltaPayload
    | ToolStatusPayload
    | ToolResultPayload
    | PlanPayload
    | UsagePayload
    | RetryWaitPayload
    | StepEndPayload
    | CompactionPayload
    | ContextPayload
    | RulesPayload
    | TurnEndPayload
    | ErrorPayload
)

ChildEventPayload = Annotated[_AnyEvent, Field(discriminator="type")]
"""Any event of a child run (a child starts no child: never ``subagent``)."""


class SubagentPayload(Wire):
    """One event of a subagent: the child turn that the ``task`` call ``id``
    of this run started, stored as its own session ``session`` (linked to
    this one). ``event`` is the child's event as it would be sent for its
    own run (its ``turn_end`` last); a client shows them nested in the task
    call, and ``rhema.cancel {session}`` stops the child alone (the task
    then fails with a cancelled result)."""

    type: Literal["subagent"] = "subagent"
    id: str
    session: str
    event: ChildEventPayload


EventPayload = Annotated[_AnyEvent | SubagentPayload, Field(discriminator="type")]
"""Any event, told apart by its ``type``."""

EVENT_MODELS: tuple[type[Wire], ...] = (*typing.get_args(_AnyEvent), SubagentPayload)
"""Every event, in the order the docs list them."""


class RhemaEventParams(Wire):
    """The params of one ``rhema/event`` notification; ``seq`` rises by one
    per notification within a session."""

    session: str
    turn: int
    seq: int
    event: EventPayload
