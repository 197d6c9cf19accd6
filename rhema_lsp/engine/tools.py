"""The capability seam: one primitive, not a registry.

A :class:`ToolResolver` decides which tools the model sees
(:meth:`~ToolResolver.specs`) and turns a call into a :class:`ToolResult`.
Errors never abort a step: a bad argument, an unknown tool, a refused path
are ``is_error`` results the model reacts to. Each tool declares its
:class:`ReplaySafety`: whether a committed call that lost its result to a
crash may be run again on resume, or must be reported interrupted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Protocol

import anyio

from rhema_lsp.engine.events import ToolStatus
from rhema_lsp.engine.messages import ToolCall, ToolResult
from rhema_lsp.engine.request import ToolSpec
from rhema_lsp.engine.truncate import TOOL_RESULT_CAP

__all__ = [
    "CancelSignal",
    "DelegatingResolver",
    "Progress",
    "ReplaySafety",
    "StatusReporter",
    "StreamingToolResolver",
    "ToolContext",
    "ToolResolver",
]

Progress = Callable[[str], None]
"""Receives a running tool's output, complete lines at a time."""

StatusReporter = Callable[[ToolStatus], None]
"""Receives a running tool's live status."""


class ReplaySafety(StrEnum):
    """Whether running a call again after an interruption can repeat a side
    effect. ``UNSAFE`` is the default: an unclassified tool is treated as
    side-effecting."""

    UNSAFE = "unsafe"
    SAFE = "safe"


class CancelSignal:
    """A run's request to stop, which in-flight tools poll or wait on.

    Drivers cancel the run's anyio scope, which interrupts every await; the
    signal is for work that an await cannot interrupt (a child process, a
    worker thread) and for tools that want to stop between units of work.
    Set it from the event loop's thread.
    """

    def __init__(self) -> None:
        self._set = False
        self._waiters: list[anyio.Event] = []

    def is_set(self) -> bool:
        """Whether the run was asked to stop."""
        return self._set

    def set(self) -> None:
        """Ask the run to stop; wakes every waiter."""
        self._set = True
        for waiter in self._waiters:
            waiter.set()
        self._waiters.clear()

    async def wait(self) -> None:
        """Return once the run was asked to stop."""
        if self._set:
            return
        waiter = anyio.Event()
        self._waiters.append(waiter)
        await waiter.wait()


@dataclass(slots=True)
class ToolContext:
    """The per-run environment of tool executions, fixed before the step.

    Parameters
    ----------
    cwd
        The folder tools run in (the session's workspace folder).
    run_id
        The driver's id for this run, for tracing.
    cancel
        Set by the driver to ask in-flight tools to stop.
    result_cap
        The bytes of a result the model sees (the ``toolOutputCap`` setting).
    """

    cwd: Path = field(default_factory=lambda: Path("."))
    run_id: str = ""
    cancel: CancelSignal = field(default_factory=CancelSignal)
    result_cap: int = TOOL_RESULT_CAP


class ToolResolver(Protocol):
    """Turns a model's tool calls into results.

    Subclass it to inherit the defaults of :meth:`replay_safety` (unsafe),
    :meth:`concurrent` (no), :meth:`resolve_streaming` (ignores progress)
    and :meth:`report_status`.
    Implementations must not raise for a bad call: they return
    :meth:`ToolResult.failure` instead.
    """

    def specs(self) -> list[ToolSpec]:
        """The tools offered to the model this step."""
        ...

    def replay_safety(self, name: str) -> ReplaySafety:
        """Whether a committed call to ``name`` may be re-run on resume."""
        return ReplaySafety.UNSAFE

    def concurrent(self, call: ToolCall) -> bool:
        """Whether ``call`` may run at the same time as its neighbours of the
        step that say so too (their results still recorded in order). The
        default, ``False``, runs it alone."""
        return False

    async def resolve(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        """Run one call and return its result."""
        ...

    async def resolve_streaming(
        self,
        call: ToolCall,
        ctx: ToolContext,
        progress: Progress,
        status: StatusReporter | None = None,
    ) -> ToolResult:
        """Run one call, reporting output lines through ``progress`` (and
        live status through ``status``) as they land; the full text still
        arrives in the result. The default ignores both."""
        return await self.resolve(call, ctx)


class StreamingToolResolver(ToolResolver):
    """A resolver whose calls always run through :meth:`resolve_streaming`.

    Subclasses implement :meth:`resolve_streaming` only; :meth:`resolve` is
    the same call with its progress dropped.
    """

    async def resolve(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        """Run one call, ignoring its progress."""
        return await self.resolve_streaming(call, ctx, _ignore_progress)

    async def resolve_streaming(
        self,
        call: ToolCall,
        ctx: ToolContext,
        progress: Progress,
        status: StatusReporter | None = None,
    ) -> ToolResult:
        """Run one call, reporting output through ``progress`` and ``status``."""
        raise NotImplementedError


class DelegatingResolver(StreamingToolResolver):
    """A resolver around ``inner`` (a door's, the rules', the plan's):
    every method answers as ``inner`` does unless a subclass overrides it,
    so a wrapper cannot drop one by forgetting it (a wrapper that did not
    pass :meth:`concurrent` on ran its MCP calls one at a time)."""

    def __init__(self, inner: ToolResolver) -> None:
        self.inner = inner

    def specs(self) -> list[ToolSpec]:
        """As the inner resolver says."""
        return self.inner.specs()

    def replay_safety(self, name: str) -> ReplaySafety:
        """As the inner resolver says."""
        return self.inner.replay_safety(name)

    def concurrent(self, call: ToolCall) -> bool:
        """As the inner resolver says."""
        return self.inner.concurrent(call)

    async def resolve_streaming(
        self,
        call: ToolCall,
        ctx: ToolContext,
        progress: Progress,
        status: StatusReporter | None = None,
    ) -> ToolResult:
        """The inner resolver's call."""
        return await self.inner.resolve_streaming(call, ctx, progress, status)


def _ignore_progress(_chunk: str) -> None:
    """Progress nobody reads."""
