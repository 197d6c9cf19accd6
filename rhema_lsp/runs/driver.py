"""The server's use of the engine's turn loop: a checkpoint after every
round, and an outcome however the run ends.

The loop itself is the engine's :func:`~rhema_lsp.engine.run_turn`. Around
it the server keeps its own rules: the user's input is committed before the
first model call (by the caller), the commit hook makes each tool-use intent
durable before its tools run, the session is checkpointed after every round,
and whatever happens the outcome says how the run ended and the session is
checkpointed one last time, shielded from the cancellation.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import anyio

from rhema_lsp.contract import RunStopReason
from rhema_lsp.engine import (
    Agent,
    AgentError,
    Event,
    EventSink,
    Message,
    Session,
    Step,
    StepEnd,
    StepLimitError,
    StepStart,
    StopReason,
    TextDelta,
    ToolContext,
    Usage,
    UsageUpdate,
    run_turn,
)
from rhema_lsp.runs.registry import Run
from rhema_lsp.sessions import SessionStore, SessionStoreError

__all__ = ["CallSummary", "Outcome", "drive"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class CallSummary:
    """One tool call of the last step, as ``rhema.step`` reports it."""

    id: str
    name: str
    is_error: bool


_STOP_REASONS: dict[StopReason, RunStopReason] = {
    StopReason.END_TURN: "end_turn",
    StopReason.TOOL_USE: "tool_use",
    StopReason.MAX_TOKENS: "max_tokens",
    StopReason.PAUSE_TURN: "pause_turn",
}


@dataclass
class Outcome:
    """How a run ended."""

    stop_reason: RunStopReason = "end_turn"
    text: str = ""
    steps: int = 0
    usage: Usage = field(default_factory=Usage)
    error: str | None = None
    tool_calls: list[CallSummary] = field(default_factory=list)


class _Tally:
    """Counts what a run really did, cancelled steps included: a step counts
    from its ``StepStart``, its text and usage as far as they streamed."""

    __slots__ = ("done_usage", "inner", "live_usage", "started", "text_parts")

    def __init__(self, inner: EventSink) -> None:
        self.inner = inner
        self.started = 0
        self.text_parts: list[str] = []
        self.done_usage = Usage()
        self.live_usage = Usage()

    def emit(self, event: Event) -> None:
        if isinstance(event, StepStart):
            self.started += 1
            self.text_parts = []
            self.live_usage = Usage()
        elif isinstance(event, TextDelta):
            self.text_parts.append(event.text)
        elif isinstance(event, UsageUpdate):
            self.live_usage = event.usage
        elif isinstance(event, StepEnd):
            self.done_usage = self.done_usage + event.usage
            self.live_usage = Usage()
        self.inner.emit(event)

    def fill(self, outcome: Outcome) -> None:
        """What a run cut short had done when it stopped."""
        outcome.steps = self.started
        outcome.text = "".join(self.text_parts)
        outcome.usage = self.done_usage + self.live_usage


def _last_calls(session: Session, answer: Message) -> list[CallSummary]:
    """The calls of ``answer`` (the step's assistant message) and whether
    each failed; a call without a result counts as failed."""
    start = next(i for i in range(len(session.history) - 1, -1, -1) if session.history[i] is answer)
    results = {
        result.id: result for message in session.history[start:] for result in message.tool_results
    }
    return [
        CallSummary(call.id, call.name, results.get(call.id) is None or results[call.id].is_error)
        for call in answer.tool_calls
    ]


async def drive(
    agent: Agent,
    session: Session,
    sink: EventSink,
    ctx: ToolContext,
    run: Run,
    *,
    store: SessionStore,
    session_id: str,
    max_steps: int,
    single_step: bool = False,
) -> Outcome:
    """Run the turn on ``session`` (its input already in the history); never
    raises for a provider, tool, commit or store failure (the outcome says
    ``error``).

    Parameters
    ----------
    single_step
        Run exactly one step (``rhema.step``).
    """
    outcome = Outcome()
    tally = _Tally(sink)
    logger.info(
        "run on session %s: %s (at most %d steps)",
        session_id,
        "one step" if single_step else "a turn",
        1 if single_step else max_steps,
    )

    async def after_step(step: Step) -> None:
        outcome.steps += 1
        outcome.usage = outcome.usage + step.output.usage
        outcome.text = step.output.message.text
        outcome.stop_reason = _STOP_REASONS[step.output.stop_reason]
        outcome.tool_calls = _last_calls(session, step.output.message)
        await store.commit(session_id, session, durable=False)

    with run.scope:
        try:
            await run_turn(
                agent,
                session,
                None,
                tally,
                ctx,
                1 if single_step else max_steps,
                after_step=after_step,
                limit_is_error=not single_step,
            )
        except StepLimitError as exc:
            outcome.stop_reason, outcome.error = "max_steps", str(exc)
        except (AgentError, SessionStoreError) as exc:
            outcome.stop_reason, outcome.error = "error", str(exc)
    if run.cancelled:
        outcome.stop_reason, outcome.error = "cancelled", None
        tally.fill(outcome)
    with anyio.CancelScope(shield=True):
        try:
            await store.commit(session_id, session)
        except SessionStoreError as exc:
            logger.error("could not checkpoint session %s: %s", session_id, exc)
            outcome.stop_reason, outcome.error = "error", f"could not save the session: {exc}"
    logger.info(
        "run on session %s: %s after %d step(s), %d in / %d out tokens%s",
        session_id,
        outcome.stop_reason,
        outcome.steps,
        outcome.usage.input,
        outcome.usage.output,
        f" ({outcome.error})" if outcome.error else "",
    )
    return outcome
