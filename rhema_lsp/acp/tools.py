"""The session's tools as an ACP session runs them.

:class:`AcpTools` wraps the run's resolver (the
:class:`~rhema_lsp.tools.WorkspaceTools`, plus the MCP tools in the modes
that have them: same specs, same confinement, same in-band failures) and
adds what ACP needs around each call: the paths it touches resolved to absolute paths (its
``locations``), the client's buffers of those files fetched before it runs
(see :class:`~rhema_lsp.acp.editor.AcpEditor`), a ``tool_call_update``
saying it runs, and afterwards the diffs of what it changed for the update
that carries its result.
"""

from __future__ import annotations

from pathlib import Path

import anyio.to_thread
from acp.schema import ToolCallLocation, ToolCallUpdate

from rhema_lsp.acp.calls import kind_of, title_of
from rhema_lsp.acp.editor import AcpEditor
from rhema_lsp.acp.updates import UpdateStream
from rhema_lsp.engine import (
    DelegatingResolver,
    Progress,
    StatusReporter,
    ToolCall,
    ToolContext,
    ToolResolver,
    ToolResult,
)
from rhema_lsp.tools import Access, ToolError, WorkspaceTools

__all__ = ["AcpTools"]

_PATH_ARGUMENTS = ("path", "from", "to")


class AcpTools(DelegatingResolver):
    """The run's tools with ACP's reads, locations and diffs.

    Parameters
    ----------
    workspace
        The confined tools (built on ``editor``); they resolve the paths a
        call names.
    editor
        The session's ACP editor.
    stream
        Where the prompt's updates go.
    inner
        What runs the calls: ``workspace`` itself, or ``workspace`` with the
        MCP tools around it.
    """

    def __init__(
        self,
        workspace: WorkspaceTools,
        editor: AcpEditor,
        stream: UpdateStream,
        inner: ToolResolver | None = None,
    ) -> None:
        super().__init__(workspace if inner is None else inner)
        self.workspace = workspace
        self.editor = editor
        self.stream = stream

    async def resolve_streaming(
        self,
        call: ToolCall,
        ctx: ToolContext,
        progress: Progress,
        status: StatusReporter | None = None,
    ) -> ToolResult:
        """Fetch the call's files, announce it, run it, collect its diffs."""
        paths = await self._paths(call)
        locations = [ToolCallLocation(path=str(path)) for path in paths]
        self.stream.call_running(call.id, call.name, call.args, locations)
        self.editor.begin_call(
            ToolCallUpdate(
                tool_call_id=call.id,
                title=title_of(call.name, call.args),
                kind=kind_of(call.name),
                locations=locations or None,
                raw_input=call.args,
            ),
            self.stream,
        )
        try:
            for path in paths:
                await self.editor.fetch(path)
            return await self.inner.resolve_streaming(call, ctx, progress, status)
        finally:
            self.stream.call_changed(call.id, self.editor.end_call())

    async def _paths(self, call: ToolCall) -> list[Path]:
        """The existing files the call names, as confined absolute paths; a
        path the tools will refuse is left to them to explain."""
        if not isinstance(call.args, dict):
            return []
        found: list[Path] = []
        for key in _PATH_ARGUMENTS:
            raw = call.args.get(key)
            if not isinstance(raw, str) or not raw:
                continue
            try:
                target = await anyio.to_thread.run_sync(self.workspace.ws.resolve, raw, Access.READ)
            except ToolError:
                continue
            if target.kind == "file":
                found.append(target.path)
        return found
