"""The pipeline's use of the engine's turn loop: a checkpoint after every
round, and an outcome however the run ends.

The loop itself is the engine's :func:`~rhema_lsp.engine.run_turn`. Around
it the pipeline keeps its own rules: the user's input is committed before
the first model call (by the caller), the commit hook makes each tool-use
intent durable before its tools run, the session is checkpointed after every
round, and whatever happens the outcome says how the run ended and the
session is checkpointed one last time, shielded from the cancellation.

A cancelled run keeps what it said: the answer cut short (or, before any
answer, nothing) becomes an assistant message ending in
:data:`INTERRUPTED`, so the history never holds two user messages in a row
and the model knows it was stopped; and the outcome counts the step that
was cut short, its streamed text and its usage (the provider's running tally,
or, before the provider reported one, the estimate of the request and of the
text it streamed).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import anyio

from rhema_lsp.contract import CallSummary, RunStopReason
from rhema_lsp.engine import (
    Agent,
    AgentError,
    Event,
    EventSink,
    Message,
    Role,
    Session,
    Step,
    StepEnd,
    StepLimitError,
    StepStart,
    StopReason,
    TextDelta,
    TextPart,
    ToolContext,
    Usage,
    UsageUpdate,
    run_turn,
)
from rhema_lsp.runs.points import STEP_COMMITTED, TURN_CHECKPOINTED, PointHook
from rhema_lsp.runs.refs import TurnRef
from rhema_lsp.runs.registry import Run
from rhema_lsp.sessions import SessionStore, SessionStoreError

__all__ = ["INTERRUPTED", "Outcome", "drive", "interrupted_answer"]

logger = logging.getLogger(__name__)

INTERRUPTED = "[interrupted by the user]"
"""How an answer the user cancelled ends in the history."""

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


def interrupted_answer(text: str) -> Message:
    """The assistant message of an answer the user cut short after ``text``."""
    return Message(
        role=Role.ASSISTANT,
        content=[TextPart(text=f"{text}\n\n{INTERRUPTED}" if text else INTERRUPTED)],
    )


class _Tally:
    """Counts what a run really did, cancelled steps included: a step counts
    from its ``StepStart``, its text and usage as far as they streamed."""

    __slots__ = (
        "done_usage",
        "history_at_start",
        "inner",
        "live_usage",
        "session",
        "started",
        "text_parts",
    )

    def __init__(self, inner: EventSink, session: Session) -> None:
        self.inner = inner
        self.session = session
        self.started = 0
        self.history_at_start = len(session.history)
        self.text_parts: list[str] = []
        self.done_usage = Usage()
        self.live_usage = Usage()

    def emit(self, event: Event) -> None:
        if isinstance(event, StepStart):
            self.started += 1
            self.history_at_start = len(self.session.history)
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

    def keep_interrupted(self, agent: Agent, outcome: Outcome) -> None:
        """What a cancelled run had done when it stopped: into the outcome,
        and its answer cut short into the history (see the module docstring)."""
        history = self.session.history
        text = "".join(self.text_parts)
        live = self.live_usage
        cut = len(history) == self.history_at_start  # the model call appended nothing
        if cut and live.input == 0 and (self.started or text):
            estimator = agent.context.estimator
            streamed = estimator.tokens(len(text.encode("utf-8")))
            live = live.model_copy(
                update={
                    "input": agent.compactor().estimate(self.session),
                    "output": max(live.output, streamed),
                }
            )
        outcome.steps = self.started
        outcome.text = text
        outcome.usage = self.done_usage + live
        if cut and (text or (history and history[-1].role is Role.USER)):
            history.append(interrupted_answer(text))


def _last_calls(session: Session, answer: Message) -> list[CallSummary]:
    """The calls of ``answer`` (the step's assistant message) and whether
    each failed; a call without a result counts as failed."""
    start = next(i for i in range(len(session.history) - 1, -1, -1) if session.history[i] is answer)
    results = {
        result.id: result for message in session.history[start:] for result in message.tool_results
    }
    return [
        CallSummary(
            id=call.id,
            name=call.name,
            is_error=results.get(call.id) is None or results[call.id].is_error,
        )
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
    max_steps: int,
    single_step: bool = False,
    on_point: PointHook | None = None,
) -> Outcome:
    """Run the turn on ``session`` (its input already in the history); never
    raises for a provider, tool, commit or store failure (the outcome says
    ``error``).

    Parameters
    ----------
    single_step
        Run exactly one step (``rhema.step``).
    on_point
        Told :data:`~rhema_lsp.runs.points.STEP_COMMITTED` and
        :data:`~rhema_lsp.runs.points.TURN_CHECKPOINTED`.
    """
    ref: TurnRef = run.ref
    outcome = Outcome()
    tally = _Tally(sink, session)
    logger.info(
        "run %s: %s (at most %d steps)",
        ref,
        "one step" if single_step else "a turn",
        1 if single_step else max_steps,
    )

    async def after_step(step: Step) -> None:
        outcome.steps += 1
        outcome.usage = outcome.usage + step.output.usage
        outcome.text = step.output.message.text
        outcome.stop_reason = _STOP_REASONS[step.output.stop_reason]
        outcome.tool_calls = _last_calls(session, step.output.message)
        await store.commit(ref.session, session, durable=False)
        if on_point is not None:
            on_point(STEP_COMMITTED)

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
        tally.keep_interrupted(agent, outcome)
    with anyio.CancelScope(shield=True):
        try:
            await store.commit(ref.session, session)
        except SessionStoreError as exc:
            logger.error("could not checkpoint session %s: %s", ref.session, exc)
            outcome.stop_reason, outcome.error = "error", f"could not save the session: {exc}"
        else:
            if on_point is not None:
                on_point(TURN_CHECKPOINTED)
    logger.info(
        "run %s: %s after %d step(s), %d in / %d out tokens%s",
        ref,
        outcome.stop_reason,
        outcome.steps,
        outcome.usage.input,
        outcome.usage.output,
        f" ({outcome.error})" if outcome.error else "",
    )
    return outcome
