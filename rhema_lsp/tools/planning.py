"""``update_plan``: the model's checklist of a turn's work, around any resolver.

:class:`Planning` wraps a run's resolver (the workspace tools, MCP tools and
whatever a door adds) and offers ``update_plan`` in every mode, after the
inner tools. A call replaces the whole plan: it is checked with
:class:`UpdatePlan`, told to ``on_plan`` (a run sends it as the ``plan``
event) and answered in-band; every other call goes to the inner resolver
untouched. The plan is never stored apart: it is the last successful
``update_plan`` call of the session's history (:func:`latest_plan`), so it is
kept, forked, rewound and resumed exactly as the conversation is, and the
model sees it when a turn continues ("run this plan"). A call is replay-safe:
running it again after a crash only sends the same plan again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from rhema_lsp.engine.events import PlanEntry, PlanUpdate
from rhema_lsp.engine.messages import Message, ToolCall, ToolResult
from rhema_lsp.engine.request import ToolSpec
from rhema_lsp.engine.tools import (
    DelegatingResolver,
    Progress,
    ReplaySafety,
    StatusReporter,
    ToolContext,
    ToolResolver,
)
from rhema_lsp.tools.arguments import ToolArguments
from rhema_lsp.tools.errors import ToolError
from rhema_lsp.vocabulary import PlanPriority, PlanStatus

__all__ = ["MAX_ENTRIES", "UPDATE_PLAN", "Planning", "UpdatePlan", "latest_plan"]

UPDATE_PLAN = "update_plan"

MAX_ENTRIES = 50
"""The most entries a plan may have."""

_MAX_CONTENT = 500
"""The longest entry, in characters."""

_Content = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=_MAX_CONTENT)
]


class Step(BaseModel):
    """One entry of ``update_plan``'s ``entries``."""

    model_config = ConfigDict(strict=True, frozen=True, extra="ignore")

    content: _Content = Field(description=f"The step, in a short line (<= {_MAX_CONTENT} chars).")
    status: PlanStatus
    priority: PlanPriority = Field(
        default="medium", description="How much the step matters (default medium)."
    )


class UpdatePlan(ToolArguments):
    """Arguments of ``update_plan``."""

    tool_name = UPDATE_PLAN
    tool_description = (
        "Keep a checklist of your work on a task with several steps, shown live to the user. "
        "Each call replaces the whole plan: give every step, in order, with its status "
        "(pending, in_progress, completed) and, when it helps, its priority (high, medium, "
        "low). Mark a step in_progress as you start it and "
        "completed when it is done. Skip it for a question or a one-step change."
    )

    entries: list[Step] = Field(
        min_length=1, max_length=MAX_ENTRIES, description="Every step, in order."
    )


_SPEC = UpdatePlan.spec()


def _entries(args: UpdatePlan) -> tuple[PlanEntry, ...]:
    return tuple(PlanEntry(step.content, step.status, step.priority) for step in args.entries)


def _answer(entries: Sequence[PlanEntry]) -> str:
    done = sum(entry.status == "completed" for entry in entries)
    current = next((e.content for e in entries if e.status == "in_progress"), None)
    now = f"; in progress: {current}" if current is not None else ""
    return f"Plan updated: {done} of {len(entries)} steps completed{now}."


class Planning(DelegatingResolver):
    """``inner``'s tools plus ``update_plan`` (see the module docstring).

    Parameters
    ----------
    inner
        The run's resolver.
    on_plan
        Told each plan a call sets (a run emits it as a ``plan`` event).
    limit
        The most tools a request may carry, ``update_plan`` included (the
        inner resolver's last tools give way to it), or ``None``.
    """

    def __init__(
        self,
        inner: ToolResolver,
        on_plan: Callable[[PlanUpdate], None],
        *,
        limit: int | None = None,
    ) -> None:
        super().__init__(inner)
        self.on_plan = on_plan
        self.limit = limit

    def specs(self) -> list[ToolSpec]:
        """The inner tools, then ``update_plan``."""
        inner = [spec for spec in self.inner.specs() if spec.name != UPDATE_PLAN]
        if self.limit is not None:
            inner = inner[: max(self.limit - 1, 0)]
        return [*inner, _SPEC]

    def replay_safety(self, name: str) -> ReplaySafety:
        """``SAFE`` for ``update_plan``, else as the inner resolver says."""
        return ReplaySafety.SAFE if name == UPDATE_PLAN else self.inner.replay_safety(name)

    def concurrent(self, call: ToolCall) -> bool:
        """As the inner resolver says; ``update_plan`` runs alone."""
        return call.name != UPDATE_PLAN and self.inner.concurrent(call)

    async def resolve_streaming(
        self,
        call: ToolCall,
        ctx: ToolContext,
        progress: Progress,
        status: StatusReporter | None = None,
    ) -> ToolResult:
        """Set the plan, or run the call through the inner resolver."""
        if call.name != UPDATE_PLAN:
            return await self.inner.resolve_streaming(call, ctx, progress, status)
        try:
            entries = _entries(UpdatePlan.parse(call.args))
        except ToolError as exc:
            return ToolResult.failure(call.id, str(exc))
        self.on_plan(PlanUpdate(entries))
        return ToolResult.success(call.id, _answer(entries))


def latest_plan(history: Sequence[Message]) -> tuple[PlanEntry, ...] | None:
    """The plan the last successful ``update_plan`` call of ``history`` set,
    or ``None`` when the session has none."""
    failed: set[str] = set()
    for message in reversed(history):
        for part in reversed(message.content):
            if isinstance(part, ToolResult) and part.is_error:
                failed.add(part.id)
            elif isinstance(part, ToolCall) and part.name == UPDATE_PLAN:
                if part.id in failed:
                    continue
                try:
                    return _entries(UpdatePlan.parse(part.args))
                except ToolError:
                    continue
    return None
