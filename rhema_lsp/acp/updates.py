"""One ACP session's ``session/update`` stream: engine events in, ACP updates out.

:class:`UpdateStream` is the engine's :class:`~rhema_lsp.engine.EventSink`
for a prompt. ``emit`` never blocks: deltas go to the run's
:class:`~rhema_lsp.runs.merge.DeltaMerger`, any other event is translated
and queued; :meth:`UpdateStream.pump`, a task the prompt owns, sends the
queue in order and, whenever it is empty, takes what the merger holds. So
while the client reads slower than the model writes, the deltas keep merging
(a running command's output update carries all the output so far), nothing
is dropped or reordered, and the backlog stays one update per kind. The
prompt answers only after :meth:`UpdateStream.close` and the pump has sent
everything.

The mapping: ``thinking_delta`` -> ``agent_thought_chunk``, ``text_delta`` ->
``agent_message_chunk``, ``tool_call_start`` -> ``tool_call`` (pending), the
call's arguments known -> ``tool_call_update`` (title, locations, raw input;
still pending), the call under way -> ``tool_call_update`` (in progress:
sent once, at the first of the user's approval, an edit applied, command
output), command output -> ``tool_call_update`` content (or, run in the client's terminal, the
terminal as its content), ``tool_result`` ->
``tool_call_update`` (completed or failed, with a ``diff`` per file an edit
changed and the result's text), ``context`` (the context fill after each
step or compaction) -> ``usage_update``, ``plan`` (``update_plan``) ->
``plan`` (the whole plan, each entry with its priority) (``used`` of ``size`` tokens, when
the window is known), ``subagent`` (a ``task`` call's child) -> ``tool_call_update``
of the task call, its content the child's steps and answer so far
(:class:`~rhema_lsp.runs.child_steps.ChildSteps`; one not yet sent is
replaced). So a call that waits for permission is ``pending`` until the
user answers, as the protocol says, and :meth:`UpdateStream.sent` lets the
permission request follow the updates queued before it.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    FileEditToolCallContent,
    TerminalToolCallContent,
    TextContentBlock,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallStatus,
    UsageUpdate,
)

from rhema_lsp.acp.calls import kind_of, title_of
from rhema_lsp.acp.costs import CostMeter
from rhema_lsp.acp.update_shapes import (
    FileDiff,
    SessionUpdate,
    UpdateSender,
    fenced,
    plan_update,
    text_content,
)
from rhema_lsp.engine import (
    ChildEvent,
    ContextFill,
    Event,
    PlanUpdate,
    StepEnd,
    TextDelta,
    ThinkingDelta,
    ToolCallArgsDelta,
    ToolOutputDelta,
    ToolResultEvent,
)
from rhema_lsp.engine import ToolCallStart as CallStarted
from rhema_lsp.runs.child_steps import ChildSteps
from rhema_lsp.runs.merge import DeltaMerger

__all__ = [
    "FileDiff",
    "SessionUpdate",
    "UpdateSender",
    "UpdateStream",
    "plan_update",
    "text_content",
]

logger = logging.getLogger(__name__)

OUTPUT_SHOWN = 32_000
"""Characters of a running command's output shown live (its tail)."""


@dataclass(slots=True)
class _Call:
    name: str
    args_text: str = ""
    output: list[str] = field(default_factory=list)
    diffs: list[FileDiff] = field(default_factory=list)
    started: bool = False
    terminal: str | None = None
    """The client's terminal the command runs in, shown as its content."""


class UpdateStream:
    """A prompt's updates on their way to the client (see the module docstring)."""

    def __init__(
        self, client: UpdateSender, session_id: str, meter: CostMeter | None = None
    ) -> None:
        self.client = client
        self.session_id = session_id
        self.meter = meter
        self._fill: ContextFill | None = None
        self._queue: deque[SessionUpdate] = deque()
        self._merger = DeltaMerger(self._translate)
        self._calls: dict[str, _Call] = {}
        self._children: dict[str, ChildSteps] = {}
        self._child_update: ToolCallProgress | None = None
        self._wake = anyio.Event()
        self._drained = anyio.Event()
        self._sending = False
        self._closed = False

    # -- the engine's side ---------------------------------------------------

    def emit(self, event: Event) -> None:
        """Hold a delta, or translate and queue what the client should see."""
        if self._merger.emit(event):
            self._wake.set()

    def _translate(self, event: Event) -> None:
        if isinstance(event, ContextFill):
            self._fill = event
            if self.meter is None or self.meter.price is None:  # else sent priced at step_end
                self._usage()
        elif isinstance(event, StepEnd):
            if self.meter is not None and self.meter.add(event.usage):
                self._usage()
        elif isinstance(event, PlanUpdate):
            self._enqueue(plan_update(event.entries))
        elif isinstance(event, ThinkingDelta):
            self._enqueue(
                AgentThoughtChunk(
                    session_update="agent_thought_chunk",
                    content=TextContentBlock(type="text", text=event.text),
                )
            )
        elif isinstance(event, TextDelta):
            self._enqueue(
                AgentMessageChunk(
                    session_update="agent_message_chunk",
                    content=TextContentBlock(type="text", text=event.text),
                )
            )
        elif isinstance(event, CallStarted):
            self._calls[event.id] = _Call(event.name)
            self._enqueue(
                ToolCallStart(
                    session_update="tool_call",
                    tool_call_id=event.id,
                    title=title_of(event.name, None),
                    kind=kind_of(event.name),
                    status="pending",
                )
            )
        elif isinstance(event, ToolCallArgsDelta):
            call = self._calls.get(event.id)
            if call is not None:
                call.args_text += event.delta
        elif isinstance(event, ToolOutputDelta):
            self._output(event.id, event.chunk)
        elif isinstance(event, ToolResultEvent):
            self._result(event)
        elif isinstance(event, ChildEvent):
            self._child(event)

    def _child(self, event: ChildEvent) -> None:
        steps = self._children.setdefault(event.id, ChildSteps())
        if not steps.take(event.event):
            return
        self.call_started(event.id)
        update = ToolCallProgress(
            session_update="tool_call_update",
            tool_call_id=event.id,
            content=[text_content(steps.markdown())],
        )
        if self._queue and self._queue[-1] is self._child_update:  # not sent yet: replaced
            assert self._child_update is not None
            if self._child_update.tool_call_id == event.id:
                self._queue[-1] = update
                self._child_update = update
                return
        self._child_update = update
        self._enqueue(update)

    def _output(self, call_id: str, chunk: str) -> None:
        call = self._calls.setdefault(call_id, _Call("run_command"))
        self.call_started(call_id)
        call.output.append(chunk)
        shown = "".join(call.output)[-OUTPUT_SHOWN:]
        self._enqueue(
            ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=call_id,
                content=[text_content(fenced(shown))],
            )
        )

    def _result(self, event: ToolResultEvent) -> None:
        call = self._calls.pop(event.id, None)
        content: list[Any] = []
        locations: list[ToolCallLocation] = []
        for diff in call.diffs if call is not None else []:
            content.append(
                FileEditToolCallContent(
                    type="diff", path=str(diff.path), old_text=diff.old, new_text=diff.new
                )
            )
            locations.append(ToolCallLocation(path=str(diff.path), line=diff.line))
        if call is not None and call.terminal is not None:  # the client keeps showing it
            content.append(TerminalToolCallContent(type="terminal", terminal_id=call.terminal))
        steps = self._children.pop(event.id, None)
        if steps is not None and steps.lines():
            content.append(text_content("\n".join(f"- {line}" for line in steps.lines())))
        if event.content:
            content.append(text_content(event.content))
        status: ToolCallStatus = "failed" if event.is_error else "completed"
        if call is None:  # a call the client never saw start (cancelled before it ran)
            self._enqueue(
                ToolCallStart(
                    session_update="tool_call",
                    tool_call_id=event.id,
                    title=title_of(event.name, None),
                    kind=kind_of(event.name),
                    status=status,
                    content=content or None,
                )
            )
            return
        self._enqueue(
            ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=event.id,
                status=status,
                content=content or None,
                locations=locations or None,
                raw_output={"content": event.content, "isError": event.is_error},
            )
        )

    # -- the tools' side -----------------------------------------------------

    def call_running(
        self, call_id: str, name: str, args: Any, locations: Sequence[ToolCallLocation]
    ) -> None:
        """The call's arguments are known and it is about to run (it may ask
        first: it stays pending until :meth:`call_started`)."""
        self._calls.setdefault(call_id, _Call(name))
        self.send(
            ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=call_id,
                title=title_of(name, args),
                kind=kind_of(name),
                locations=list(locations) or None,
                raw_input=args,
            )
        )

    def call_started(self, call_id: str) -> None:
        """The call is under way (approved, editing, or writing output):
        ``in_progress``, once."""
        call = self._calls.get(call_id)
        if call is None or call.started:
            return
        call.started = True
        self.send(
            ToolCallProgress(
                session_update="tool_call_update", tool_call_id=call_id, status="in_progress"
            )
        )

    def call_terminal(self, call_id: str, terminal_id: str) -> None:
        """The call's command runs in the client's terminal ``terminal_id``:
        under way, the terminal its content (the client shows its output)."""
        call = self._calls.setdefault(call_id, _Call("run_command"))
        call.terminal = terminal_id
        self.call_started(call_id)
        self.send(
            ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=call_id,
                content=[TerminalToolCallContent(type="terminal", terminal_id=terminal_id)],
            )
        )

    def call_changed(self, call_id: str, diffs: Sequence[FileDiff]) -> None:
        """The files the call changed, shown with its result."""
        call = self._calls.get(call_id)
        if call is not None:
            call.diffs.extend(diffs)

    # -- sending ---------------------------------------------------------------

    def send(self, update: SessionUpdate) -> None:
        """Queue ``update`` after every event emitted before it."""
        self._merger.flush()
        self._enqueue(update)

    def _usage(self) -> None:
        fill = self._fill
        if fill is not None and fill.window is not None:  # the protocol needs the size
            cost = self.meter.cost() if self.meter is not None else None
            self._enqueue(
                UsageUpdate(
                    session_update="usage_update", used=fill.tokens, size=fill.window, cost=cost
                )
            )

    def _enqueue(self, update: SessionUpdate) -> None:
        if self._closed:
            logger.debug("update after close dropped: %s", type(update).__name__)
            return
        self._queue.append(update)
        if self._drained.is_set():
            self._drained = anyio.Event()
        self._wake.set()

    async def pump(self) -> None:
        """Send queued updates in order until closed and drained."""
        while True:
            if not self._queue:
                self._merger.flush()
            if self._queue:
                update = self._queue.popleft()
                self._sending = True
                try:
                    await self.client.session_update(self.session_id, update)
                except (ConnectionError, OSError) as exc:
                    lost = len(self._queue) + 1
                    logger.warning("the client is gone; %d updates not sent: %s", lost, exc)
                    self._queue.clear()
                    self._closed = True
                    self._drained.set()
                    return
                finally:
                    self._sending = False
                continue
            self._drained.set()
            if self._closed:
                return
            self._wake = anyio.Event()
            await self._wake.wait()

    async def sent(self) -> None:
        """Wait until every update queued so far has been written (a request
        sent next, a permission request, reaches the client after them)."""
        self._merger.flush()
        while self._queue or self._sending:
            await self._drained.wait()

    def close(self) -> None:
        """No more updates; :meth:`pump` returns once the queue is sent."""
        self._merger.flush()
        self._closed = True
        self._wake.set()
