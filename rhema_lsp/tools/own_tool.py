"""A resolver that adds one tool of its own to the tools it wraps.

The plan's ``update_plan``, the skills' ``skill`` and the subagents' ``task``
are each a wrapper around the run's resolver that offers every inner tool
but its own name, then its own tool, and answers that one itself. The
pattern is written here once:

- :meth:`OwnToolResolver.specs`: the inner tools without the name, then the
  tool (a subclass may trim the inner list, as the plan does for the cap);
- :meth:`OwnToolResolver.replay_safety` and
  :meth:`OwnToolResolver.concurrent`: the tool's own answers
  (:attr:`~OwnToolResolver.safety`, :attr:`~OwnToolResolver.alone`), else
  the inner resolver's;
- a call of the tool goes to :meth:`OwnToolResolver.own`, whose
  :class:`~rhema_lsp.tools.errors.ToolError` becomes the call's failed
  result; every other call goes to the inner resolver.
"""

from __future__ import annotations

from typing import ClassVar

from rhema_lsp.engine.messages import ToolCall, ToolResult
from rhema_lsp.engine.request import ToolSpec
from rhema_lsp.engine.tools import (
    DelegatingResolver,
    Progress,
    ReplaySafety,
    StatusReporter,
    ToolContext,
)
from rhema_lsp.tools.errors import ToolError

__all__ = ["OwnToolResolver"]


class OwnToolResolver(DelegatingResolver):
    """``inner``'s tools plus :meth:`own_spec`, answered by :meth:`own`."""

    safety: ClassVar[ReplaySafety] = ReplaySafety.SAFE
    """Whether a call of the tool may run again after a crash."""
    alone: ClassVar[bool] = False
    """``True``: a call of the tool runs alone; ``False``: beside other calls."""

    def own_spec(self) -> ToolSpec:
        """The tool this resolver adds."""
        raise NotImplementedError

    async def own(self, call: ToolCall, progress: Progress) -> ToolResult:
        """Answer a call of the tool; a :class:`ToolError` fails the call."""
        raise NotImplementedError

    def inner_specs(self) -> list[ToolSpec]:
        """The inner tools, the one of the same name left out."""
        name = self.own_spec().name
        return [spec for spec in self.inner.specs() if spec.name != name]

    def specs(self) -> list[ToolSpec]:
        """The inner tools, then this one."""
        return [*self.inner_specs(), self.own_spec()]

    def replay_safety(self, name: str) -> ReplaySafety:
        """:attr:`safety` for the tool, else as the inner resolver says."""
        if name == self.own_spec().name:
            return self.safety
        return self.inner.replay_safety(name)

    def concurrent(self, call: ToolCall) -> bool:
        """Not :attr:`alone` for the tool, else as the inner resolver says."""
        if call.name == self.own_spec().name:
            return not self.alone
        return self.inner.concurrent(call)

    async def resolve_streaming(
        self,
        call: ToolCall,
        ctx: ToolContext,
        progress: Progress,
        status: StatusReporter | None = None,
    ) -> ToolResult:
        """Answer the tool's call, or run the call through the inner resolver."""
        if call.name != self.own_spec().name:
            return await self.inner.resolve_streaming(call, ctx, progress, status)
        try:
            return await self.own(call, progress)
        except ToolError as exc:
            return ToolResult.failure(call.id, str(exc))
