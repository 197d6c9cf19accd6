"""The step engine: :meth:`Agent.step` is one exchange, never a loop.

A step emits ``StepStart``; builds the request from the session (system
prompt, a copy of the history, the resolver's specs, the params); streams it
through the provider; appends the assistant message; while the provider
paused its own tool work (``pause_turn``), sends the history back to let it
continue, at most :data:`PAUSE_CONTINUATIONS` times; and on a tool-use stop
calls the commit hook (commit-before-execute: a failing hook fails the step
before any tool runs), then resolves each call in order, appending its
``tool``-role result and emitting ``ToolResultEvent``; neighbouring calls
the resolver calls :meth:`~rhema_lsp.engine.tools.ToolResolver.concurrent`
run at the same time, their results recorded in order once all are done.
Finally it emits ``StepEnd``. Tool failures are in-band results, never exceptions.

Every tool call gets an id unique within the session as it streams
(:mod:`.ids`): the provider's own unless it is missing or already used.

Each request carries the session's view (:meth:`Session.view`: the latest
compaction's summary and the rounds after it). A request estimated above the
budget's threshold is compacted first; one the provider refuses as too long
for its window is compacted and sent once more (see :mod:`.compaction`).

Cancellation leaves the history well formed: a provider stream cancelled
mid-answer appends nothing, and calls cut short or never started get in-band
"cancelled" results before the cancellation propagates, so every call in the
history has its result. :func:`run_turn` is the provided driver, not part of
the primitive.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio

from rhema_lsp.engine.budget import ContextBudget, request_bytes
from rhema_lsp.engine.calls import resolve_call
from rhema_lsp.engine.compaction import Compactor
from rhema_lsp.engine.errors import (
    AgentProviderError,
    CommitError,
    MissingProviderError,
    StepLimitError,
)
from rhema_lsp.engine.events import (
    ContextFill,
    Event,
    EventSink,
    StepEnd,
    StepStart,
    ToolCallStart,
    ToolResultEvent,
    UsageUpdate,
)
from rhema_lsp.engine.ids import CallIds
from rhema_lsp.engine.messages import Compaction, Message, Role, Session, ToolCall, ToolResult
from rhema_lsp.engine.output import ModelOutput, Step, StopReason, Usage
from rhema_lsp.engine.provider import ModelProvider, ProviderError
from rhema_lsp.engine.request import ChatParams, ModelRequest
from rhema_lsp.engine.tools import ToolContext, ToolResolver

__all__ = ["PAUSE_CONTINUATIONS", "Agent", "CommitHook", "record_result", "run_turn"]

PAUSE_CONTINUATIONS = 5
"""How many times one step resends a paused answer; past it the step ends
with ``pause_turn`` and a follow-up continues."""

CommitHook = Callable[[Session], Awaitable[None]]
"""Persists the session before any tool of a step runs; raising fails the step."""


class _AnnouncingSink:
    """Forwards every event while noting which calls the provider announced,
    so the engine does not echo their ``ToolCallStart``."""

    __slots__ = ("announced", "inner")

    def __init__(self, inner: EventSink) -> None:
        self.inner = inner
        self.announced: set[str] = set()

    def emit(self, event: Event) -> None:
        if isinstance(event, ToolCallStart):
            self.announced.add(event.id)
        self.inner.emit(event)


class _UsageOffset:
    """Forwards every event, adding the usage of a step's earlier (paused)
    model calls to each running tally, so the tally stays the step's own."""

    __slots__ = ("earlier", "inner")

    def __init__(self, inner: EventSink, earlier: Usage) -> None:
        self.inner = inner
        self.earlier = earlier

    def emit(self, event: Event) -> None:
        if isinstance(event, UsageUpdate):
            event = UsageUpdate(self.earlier + event.usage)
        self.inner.emit(event)


def record_result(session: Session, sink: EventSink, call: ToolCall, result: ToolResult) -> None:
    """Append ``result`` as a ``tool``-role message and announce it.

    Synchronous on purpose: a result is either wholly recorded or not at all.
    """
    session.history.append(Message(role=Role.TOOL, content=[result]))
    sink.emit(
        ToolResultEvent(
            id=result.id,
            name=call.name,
            content=result.content,
            is_error=result.is_error,
            code=result.code,
        )
    )


class Agent:
    """A provider, an optional tool resolver, and the fixed prompt and params
    stamped into every request.

    Parameters
    ----------
    provider
        The model backend (required).
    resolver
        The tools; without one the model is offered none, and a tool-use stop
        resolves to an in-band error per call.
    system
        The system prompt.
    params
        The sampling parameters.
    commit_hook
        Called on a tool-use stop after the assistant message is appended and
        before the first call runs (see :data:`CommitHook`).
    compaction_hook
        Makes each compaction durable before its event is emitted.
    context
        The session's window and token estimate; by default the window is
        unknown, so only a provider's "too long" error compacts.
    """

    def __init__(
        self,
        provider: ModelProvider | None,
        *,
        resolver: ToolResolver | None = None,
        system: str | None = None,
        params: ChatParams | None = None,
        commit_hook: CommitHook | None = None,
        compaction_hook: CommitHook | None = None,
        context: ContextBudget | None = None,
    ) -> None:
        if provider is None:
            raise MissingProviderError()
        self.provider = provider
        self.resolver = resolver
        self.system = system
        self.params = params or ChatParams()
        self.commit_hook = commit_hook
        self.compaction_hook = compaction_hook
        self.context = context or ContextBudget()
        self.steps = 0

    def compactor(self) -> Compactor:
        """Compacts sessions for this agent's requests."""
        return Compactor(
            self.provider,
            self.context,
            system=self.system,
            tools=self.resolver.specs() if self.resolver is not None else [],
            params=self.params,
            commit=self.compaction_hook,
        )

    async def compact(self, session: Session, sink: EventSink) -> Compaction | None:
        """Compact ``session`` now, whatever its size: keep the latest rounds
        within half of what the next request would carry (``None`` when
        only the current round is there).

        Raises
        ------
        AgentProviderError
            Never for the summary call (a failure drops the older rounds
            with a note instead); declared for symmetry with :meth:`step`.
        """
        compactor = self.compactor()
        tokens = compactor.estimate(session)
        target = min(self.context.target(tokens), max(1, tokens // 2))
        return await compactor.compact(session, sink, tokens=tokens, target=target)

    async def step(self, session: Session, sink: EventSink, ctx: ToolContext) -> Step:
        """Run one exchange, appending to ``session.history`` in place.

        Raises
        ------
        AgentProviderError
            A model call failed; nothing of it was appended (a paused answer
            the step already continued from stays).
        CommitError
            The commit hook failed; the assistant message was appended and no
            tool ran.
        """
        iteration = self.steps
        self.steps += 1
        events = _AnnouncingSink(sink)
        events.emit(StepStart(iteration=iteration))

        output = await self._call(session, events)
        usage = output.usage
        for _ in range(PAUSE_CONTINUATIONS):
            if output.stop_reason is not StopReason.PAUSE_TURN:
                break
            # The paused answer stays in the history: resending it continues it.
            output = await self._call(session, _UsageOffset(events, usage))
            usage = usage + output.usage
        if usage is not output.usage:
            output = output.model_copy(update={"usage": usage})

        if output.stop_reason is StopReason.TOOL_USE:
            if self.commit_hook is not None:
                try:
                    await self.commit_hook(session)
                except Exception as exc:
                    raise CommitError(str(exc) or type(exc).__name__) from exc
            await self._resolve_calls(output.message.tool_calls, session, events, ctx)

        fill = self.compactor().estimate(session)
        events.emit(ContextFill(tokens=fill, window=self.context.window))
        events.emit(StepEnd(usage=output.usage, stop_reason=output.stop_reason))
        return Step(output=output)

    async def _call(self, session: Session, sink: EventSink) -> ModelOutput:
        """One model call on the session's view; appends its message.

        Compacts first when the request would cross the threshold, and once
        more, then retries once, when the provider says it is too long.
        """
        compactor = self.compactor()
        request = compactor.request(session)
        tokens = self.context.estimator.estimate(request)
        if self.context.over(tokens) and await compactor.compact(session, sink, tokens=tokens):
            request = compactor.request(session)
        ids = CallIds(session.history)
        try:
            output = await self.provider.complete(request, ids.sink(sink))
        except ProviderError as exc:
            if not exc.context_overflow:
                raise AgentProviderError(exc) from exc
            request = await self._recover(compactor, session, sink, request, exc)
            ids = CallIds(session.history)
            try:
                output = await self.provider.complete(request, ids.sink(sink))
            except ProviderError as again:
                raise AgentProviderError(_still_too_long(again)) from again
        output = ids.finish(output)
        self.context.estimator.calibrate(request_bytes(request), output.usage.input)
        session.history.append(output.message)
        return output

    async def _recover(
        self,
        compactor: Compactor,
        session: Session,
        sink: EventSink,
        request: ModelRequest,
        error: ProviderError,
    ) -> ModelRequest:
        """Compact after the provider refused ``request`` as too long: the
        window is at most what the error named, or than this request."""
        tokens = self.context.estimator.estimate(request)
        self.context.learn_window(error.context_window or tokens)
        # Whatever the estimate says, this request did not fit: halve it at least.
        target = min(self.context.target(tokens), max(1, tokens // 2))
        if await compactor.compact(session, sink, tokens=tokens, target=target) is None:
            raise AgentProviderError(_still_too_long(error)) from error
        return compactor.request(session)

    async def _resolve_calls(
        self,
        calls: list[ToolCall],
        session: Session,
        events: _AnnouncingSink,
        ctx: ToolContext,
    ) -> None:
        done = running = 0
        try:
            while done < len(calls):
                if ctx.cancel.is_set():
                    break
                batch = self._batch(calls, done)
                for call in batch:
                    if call.id not in events.announced:
                        events.emit(ToolCallStart(id=call.id, name=call.name))
                running = len(batch)
                results = await self._run_batch(batch, ctx, events)
                for call, result in zip(batch, results, strict=True):
                    record_result(session, events, call, result)
                done += len(batch)
                running = 0
        except anyio.get_cancelled_exc_class():
            _record_cancelled(session, events, calls[done:], running=max(running, 1))
            raise
        _record_cancelled(session, events, calls[done:], running=0)

    def _batch(self, calls: list[ToolCall], start: int) -> list[ToolCall]:
        """The calls from ``start`` that run together: the run of neighbours
        the resolver says are concurrent, else the one call."""
        resolver = self.resolver
        end = start + 1
        if resolver is not None and resolver.concurrent(calls[start]):
            while end < len(calls) and resolver.concurrent(calls[end]):
                end += 1
        return calls[start:end]

    async def _run_batch(
        self, batch: list[ToolCall], ctx: ToolContext, events: EventSink
    ) -> list[ToolResult]:
        if len(batch) == 1:
            return [await resolve_call(self.resolver, batch[0], ctx, events)]
        results: list[ToolResult | None] = [None] * len(batch)

        async def run(index: int) -> None:
            results[index] = await resolve_call(self.resolver, batch[index], ctx, events)

        async with anyio.create_task_group() as group:
            for index in range(len(batch)):
                group.start_soon(run, index)
        return [result for result in results if result is not None]


def _still_too_long(error: ProviderError) -> ProviderError:
    if not error.context_overflow:
        return error
    return ProviderError(
        f"{error.message}. The request does not fit the model's context window even after "
        "compacting the conversation: start a new session, attach less context, or choose "
        "a model with a larger window",
        status=error.status,
        context_overflow=True,
        context_window=error.context_window,
    )


def _record_cancelled(
    session: Session, sink: EventSink, calls: list[ToolCall], *, running: int
) -> None:
    """In-band results for ``calls`` cut short: the first ``running`` ran."""
    for index, call in enumerate(calls):
        if index < running:
            text = (
                f"`{call.name}` was cancelled by the user while it ran; it may have "
                "partly taken effect. Check the current state before retrying it."
            )
        else:
            text = f"`{call.name}` was not run: the user cancelled the turn before it started."
        record_result(session, sink, call, ToolResult.failure(call.id, text))


async def run_turn(
    agent: Agent,
    session: Session,
    input: Message | None,
    sink: EventSink,
    ctx: ToolContext,
    max_steps: int,
    *,
    after_step: Callable[[Step], Awaitable[None]] | None = None,
    limit_is_error: bool = True,
) -> ModelOutput:
    """Push ``input`` (when given), then run steps until the model stops
    asking for tools: the one turn loop, for every driver.

    Returns the last step's output; returns early, after a consistent step,
    when ``ctx.cancel`` is set.

    Parameters
    ----------
    input
        The user's message; ``None`` continues the history as it is (a
        driver that committed the input itself, or a follow-up step).
    after_step
        Awaited after every step, before the next one starts (a driver
        checkpoints the session here).
    limit_is_error
        Whether still wanting tools after ``max_steps`` steps is an error;
        ``False`` returns the last output (a driver running single steps).

    Raises
    ------
    StepLimitError
        The model still wanted tools after ``max_steps`` steps.
    AgentError
        Whatever a step raised.
    """
    if input is not None:
        session.history.append(input)
    output: ModelOutput | None = None
    for _ in range(max_steps):
        step = await agent.step(session, sink, ctx)
        output = step.output
        if after_step is not None:
            await after_step(step)
        if output.stop_reason is not StopReason.TOOL_USE or ctx.cancel.is_set():
            return output
    if output is None or limit_is_error:
        raise StepLimitError(max_steps)
    return output
