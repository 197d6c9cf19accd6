"""A subagent's run as its parent sees it: its events, its cancellation, its model.

The ``task`` tool (:mod:`~rhema_lsp.runs.subagents`) runs a child turn
through the pipeline; this module holds what ties that child to its parent,
and the rules each part keeps:

- **Its events** (:class:`ChildOutput`): every event of the child's turn
  (its steps, streamed answer, tool calls and results, ``turn_end`` last)
  reaches the parent's sink wrapped in a
  :class:`~rhema_lsp.engine.ChildEvent` stamped with the parent's ``task``
  call id and the child's session, in the order the child emitted them. So
  every door shows the child nested in the task call and live: LSP clients
  get ``subagent`` events, ACP the task call's content, plain clients the
  transcript. Without a parent sink (a parent run that has none), the
  child's tool calls are the call's progress lines.
- **Its cancellation** (:func:`child_run`): a child is a
  :class:`~rhema_lsp.runs.registry.Run` of its own, registered under its
  session in the door's registry while it runs, so ``rhema.cancel
  {session}`` (or ACP's) stops that child alone: its turn ends
  ``cancelled`` and the parent's call gets a cancelled result
  (:data:`CANCELLED`) while the parent goes on. Cancelling the parent
  cancels the child (:func:`follow_parent`): the child runs inside the
  parent's call, and its own cancel signal is set with the parent's.
- **Its session** (:func:`new_child_id`): ``<parent>-task-<turn>-<n>``,
  the first such id not stored yet (a turn continued by ``rhema.step`` keeps
  its number, and its earlier children their ids).
- **Its model** (:func:`child_backend`): an agent definition's ``model``
  runs the child on the parent's provider with that model name
  (``inherit``, or none, keeps the parent's model), as a custom command's
  ``model`` does for a turn.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from rhema_lsp.engine import ChildEvent, Event, EventSink, ModelProvider, Progress, ToolCallStart
from rhema_lsp.runs.driver import Outcome
from rhema_lsp.runs.refs import TurnRef
from rhema_lsp.runs.registry import Run, RunRegistry
from rhema_lsp.runs.workplace import Backend, BackendSource
from rhema_lsp.sessions import SessionStore, UnknownSessionError

__all__ = [
    "CANCELLED",
    "ChildOutput",
    "child_backend",
    "child_run",
    "follow_parent",
    "new_child_id",
]

CANCELLED = "The user cancelled this subagent before it finished; its answer so far: "
"""The start of a cancelled child's tool result (its partial answer follows)."""


@dataclass
class ChildOutput:
    """A child turn's output: each event wrapped for the parent's sink
    (see the module docstring), or its tool calls as ``progress`` lines."""

    call_id: str
    session: str
    progress: Progress
    parent: EventSink | None = None

    async def open(self, ref: TurnRef) -> EventSink:
        return self

    def emit(self, event: Event) -> None:
        if self.parent is not None:
            self.parent.emit(ChildEvent(self.call_id, self.session, event))
        elif isinstance(event, ToolCallStart):
            self.progress(f"→ {event.name}\n")

    async def close(self, outcome: Outcome) -> None:
        return None


async def follow_parent(parent: Run, child: Run) -> None:
    """Cancel ``child`` once ``parent`` is asked to stop (a task the
    child's call owns, cancelled when the child ends)."""
    await parent.signal.wait()
    child.cancel()


@dataclass(frozen=True)
class _Named:
    """The parent's backend with another model name (the window unknown)."""

    inner: Backend
    name: str

    @property
    def provider(self) -> ModelProvider:
        return self.inner.provider

    @property
    def model(self) -> str:
        return self.name

    @property
    def protocol(self) -> str:
        return self.inner.protocol

    @property
    def context_window(self) -> int | None:
        return None


def child_backend(parent: BackendSource, model: str | None) -> BackendSource:
    """The backend a child of an agent whose ``model`` is ``model`` runs on."""
    wanted = (model or "").strip()
    if not wanted or wanted == "inherit":
        return parent

    async def source() -> Backend:
        backend = await parent()
        return backend if backend.model == wanted else _Named(backend, wanted)

    return source


def child_run(parent: Run, session: str, runs: RunRegistry | None) -> Run:
    """A child's own run on ``session``, registered in ``runs`` (the door's)
    so it can be cancelled by its session; the caller removes it."""
    child = Run(session=session, turn=1)
    if runs is not None:
        runs.add(child)
    return child


async def new_child_id(store: SessionStore, parent: Run, numbers: Iterator[int]) -> str:
    """The session id of ``parent``'s next child (see the module docstring).

    Raises
    ------
    SessionStoreError
        The store cannot be read.
    """
    while True:
        candidate = f"{parent.session}-task-{parent.turn}-{next(numbers)}"
        try:
            await store.info(candidate)
        except UnknownSessionError:
            return candidate
