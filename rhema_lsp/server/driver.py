"""The server's turn driver: steps, with a checkpoint after every round.

The engine's :func:`~rhema_lsp.engine.run_turn` pushes the input and loops;
the server needs more around each step, so it drives the steps itself with
the same rules: the user's input is committed before the first model call,
the commit hook makes each tool-use intent durable before its tools run, the
session is checkpointed after every round, and the loop ends when the model
stops asking for tools, when the run is cancelled, or at the step limit.
Whatever happens, the outcome says how the run ended and the session is
checkpointed one last time, shielded from the cancellation.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import anyio

from rhema_lsp.engine import (
    Agent,
    AgentError,
    Event,
    EventSink,
    Session,
    StepEnd,
    StepLimitError,
    StepStart,
    StopReason,
    TextDelta,
    ToolContext,
    Usage,
    UsageUpdate,
)
from rhema_lsp.server.runs import Run
from rhema_lsp.sessions import SessionStore, SessionStoreError

__all__ = ["CallSummary", "Outcome", "drive"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class CallSummary:
    """One tool call of the last step, as ``rhema.step`` reports it."""

    id: str
    name: str
    is_error: bool


@dataclass
class Outcome:
    """How a run ended."""

    stop_reason: str = StopReason.END_TURN.value
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


def _last_calls(session: Session, start: int) -> list[CallSummary]:
    results = {
        result.id: result for message in session.history[start:] for result in message.tool_results
    }
    calls = []
    for message in session.history[start:]:
        for call in message.tool_calls:
            result = results.get(call.id)
            calls.append(CallSummary(call.id, call.name, result is None or result.is_error))
    return calls


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
    """Run steps on ``session`` until the turn ends; never raises for a
    provider, tool, commit or store failure (the outcome says ``error``).

    Parameters
    ----------
    single_step
        Run exactly one step (``rhema.step``).
    """
    outcome = Outcome()
    tally = _Tally(sink)
    sink = tally
    with run.scope:
        try:
            for _ in range(1 if single_step else max_steps):
                start = len(session.history)
                step = await agent.step(session, sink, ctx)
                outcome.steps += 1
                outcome.usage = outcome.usage + step.output.usage
                outcome.text = step.output.message.text
                outcome.stop_reason = step.output.stop_reason.value
                outcome.tool_calls = _last_calls(session, start)
                await store.commit(session_id, session, durable=False)
                more = step.output.stop_reason is StopReason.TOOL_USE
                if single_step or not more or run.cancelled:
                    break
            else:
                raise StepLimitError(max_steps)
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
    return outcome
