"""Resume: completing a history that a crash left mid-round.

The commit hook makes a tool-use assistant message durable before any of its
calls runs, so after a crash the history can end with calls that have no
result. :func:`resume` completes them in call order: a call whose tool is
replay-``safe`` is run again; an ``unsafe`` one gets an in-band error saying
it was interrupted before its result was recorded, so the model verifies the
state before retrying instead of repeating a side effect blindly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rhema_lsp.engine.agent import record_result
from rhema_lsp.engine.calls import resolve_call
from rhema_lsp.engine.events import EventSink, ToolCallStart
from rhema_lsp.engine.messages import Role, Session, ToolCall, ToolResult
from rhema_lsp.engine.tools import ReplaySafety, ToolContext, ToolResolver

__all__ = ["ResumeReport", "pending_calls", "resume"]


@dataclass(frozen=True, slots=True)
class ResumeReport:
    """Which pending calls :func:`resume` ran again and which it reported
    interrupted, by call id."""

    rerun: list[str] = field(default_factory=list)
    interrupted: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        """Whether resume appended anything to the history."""
        return bool(self.rerun or self.interrupted)


def pending_calls(session: Session) -> list[ToolCall]:
    """The calls of the last assistant message that have no result yet."""
    for index in range(len(session.history) - 1, -1, -1):
        message = session.history[index]
        if message.role is Role.ASSISTANT:
            answered = {
                result.id for later in session.history[index + 1 :] for result in later.tool_results
            }
            return [call for call in message.tool_calls if call.id not in answered]
        if message.role is Role.USER:
            return []
    return []


def _interrupted(call: ToolCall) -> ToolResult:
    return ToolResult.failure(
        call.id,
        f"`{call.name}` was interrupted before its result was recorded: it may or may "
        "not have taken effect. Verify the current state before retrying it.",
    )


async def resume(
    session: Session,
    resolver: ToolResolver | None,
    sink: EventSink,
    ctx: ToolContext,
) -> ResumeReport:
    """Complete the pending calls of ``session``'s last round, in order.

    Parameters
    ----------
    session
        The history to complete, in place.
    resolver
        Decides each tool's replay safety and runs the safe ones; without
        one, every pending call is reported interrupted.
    sink
        Receives the lifecycle and result events of re-run calls and the
        result events of interrupted ones.
    ctx
        The tool context for re-run calls.

    Returns
    -------
    ResumeReport
        The ids of the calls run again and of those reported interrupted.
    """
    report = ResumeReport()
    for call in pending_calls(session):
        safety = resolver.replay_safety(call.name) if resolver is not None else ReplaySafety.UNSAFE
        if safety is ReplaySafety.SAFE:
            sink.emit(ToolCallStart(id=call.id, name=call.name))
            result = await resolve_call(resolver, call, ctx, sink)
            report.rerun.append(call.id)
        else:
            result = _interrupted(call)
            report.interrupted.append(call.id)
        record_result(session, sink, call, result)
    return report
