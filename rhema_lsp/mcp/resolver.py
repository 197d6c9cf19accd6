"""``McpTools``: the run's resolver, the workspace tools plus the MCP tools.

Built per run by :meth:`rhema_lsp.mcp.hub.McpHub.resolver` from the servers
that were ready when the run started. Calls to the built-in tools go to the
inner resolver untouched. An MCP call:

- is offered as ``<server>__<tool>`` with its sanitised schema;
- asks the user through the :class:`~rhema_lsp.tools.editor.Editor`'s
  ``confirm`` (as ``run_command`` does) unless the server's ``allow`` lists
  the tool; a refusal is an in-band error and nothing is called;
- is replay-``unsafe`` unless the server's ``safe`` lists the tool (the
  server's own ``readOnlyHint`` is not trusted);
- ends in-band whatever happens: a protocol error, a crash, a timeout or a
  server flagging ``isError`` are ``is_error`` results naming the server;
- stops when the run's cancel signal is set (or its scope is cancelled),
  which abandons the request with MCP's ``notifications/cancelled``.

The engine caps the result like every other.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio

from rhema_lsp.engine.events import ToolStatus
from rhema_lsp.engine.messages import ToolCall, ToolResult
from rhema_lsp.engine.request import ToolSpec
from rhema_lsp.engine.tools import (
    Progress,
    ReplaySafety,
    StatusReporter,
    StreamingToolResolver,
    ToolContext,
    ToolResolver,
)
from rhema_lsp.mcp.errors import McpError
from rhema_lsp.tools.editor import DENY, Editor

if TYPE_CHECKING:
    from rhema_lsp.mcp.connection import McpConnection

__all__ = ["McpTools", "OfferedTool"]

_PREVIEW = 600


@dataclass(frozen=True, slots=True)
class OfferedTool:
    """An MCP tool as offered to the model."""

    spec: ToolSpec
    server: str
    tool: str
    connection: McpConnection


def _preview(args: dict[str, Any]) -> str:
    text = json.dumps(args, ensure_ascii=False)
    return text if len(text) <= _PREVIEW else text[: _PREVIEW - 3] + "..."


class McpTools(StreamingToolResolver):
    """The inner resolver's tools plus ``offered`` (see the module docstring).

    Parameters
    ----------
    inner
        The workspace tools of the run.
    offered
        The MCP tools, with their exposed names in ``spec.name``.
    editor
        Asks the user to approve calls.
    """

    def __init__(self, inner: ToolResolver, offered: Sequence[OfferedTool], editor: Editor) -> None:
        self.inner = inner
        self.offered = {tool.spec.name: tool for tool in offered}
        self.editor = editor

    def specs(self) -> list[ToolSpec]:
        """The inner tools, then the MCP tools."""
        return [*self.inner.specs(), *(tool.spec for tool in self.offered.values())]

    def replay_safety(self, name: str) -> ReplaySafety:
        """``SAFE`` for MCP tools the user marked safe; else as the inner resolver says."""
        tool = self.offered.get(name)
        if tool is None:
            return self.inner.replay_safety(name)
        safe = tool.connection.config.is_safe(tool.tool)
        return ReplaySafety.SAFE if safe else ReplaySafety.UNSAFE

    async def resolve_streaming(
        self,
        call: ToolCall,
        ctx: ToolContext,
        progress: Progress,
        status: StatusReporter | None = None,
    ) -> ToolResult:
        """Run one call: an MCP call here, any other through the inner resolver."""
        tool = self.offered.get(call.name)
        if tool is None:
            return await self.inner.resolve_streaming(call, ctx, progress, status)
        if not isinstance(call.args, dict):
            return ToolResult.failure(call.id, f"{call.name}: arguments must be a JSON object")
        args: dict[str, Any] = dict(call.args)

        def report(activity: str) -> None:
            if status is not None:
                status(ToolStatus(activity=activity))

        config = tool.connection.config
        if not config.allows(tool.tool):
            report("waiting for approval")
            answer = await self.editor.confirm(
                f"Rhema wants to call the MCP tool {tool.tool} of the server {tool.server} "
                f"({config.describe()}) with {_preview(args)}",
                [DENY, "Allow"],
            )
            if answer != "Allow":
                return ToolResult.failure(
                    call.id,
                    f"the user did not approve calling {tool.tool} on the MCP server "
                    f"{tool.server}; nothing was called",
                )
        report(f"calling {tool.tool} on {tool.server}")
        outcome = None
        failure: McpError | None = None
        async with anyio.create_task_group() as group:

            async def stop_on_cancel() -> None:
                await ctx.cancel.wait()
                group.cancel_scope.cancel()

            async def call_it() -> None:
                nonlocal outcome, failure
                try:
                    outcome = await tool.connection.call(tool.tool, args, config.timeout)
                except McpError as exc:
                    failure = exc
                group.cancel_scope.cancel()

            group.start_soon(stop_on_cancel)
            group.start_soon(call_it)
        if failure is not None:
            return ToolResult.failure(call.id, str(failure))
        if outcome is None:
            return ToolResult.failure(
                call.id, f"cancelled; the MCP server {tool.server} was asked to stop the call"
            )
        if outcome.is_error:
            return ToolResult.failure(call.id, outcome.text)
        return ToolResult.success(call.id, outcome.text)
