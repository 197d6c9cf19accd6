"""The session's tools as an ACP session runs them.

:class:`AcpTools` wraps the run's resolver (the
:class:`~rhema_lsp.tools.WorkspaceTools`, plus the MCP tools in the modes
that have them: same specs, same confinement, same in-band failures) and
adds what ACP needs around each call: the paths it touches resolved to absolute paths (its
``locations``), the client's buffers of those files fetched before it runs
(see :class:`~rhema_lsp.acp.editor.AcpEditor`; a protected file, ``.env*``
and keys, only by a call that reads it and only once the user allowed it,
so the client never hands one over before the user said yes), a ``tool_call_update``
saying it runs, and afterwards the diffs of what it changed for the update
that carries its result.
"""

from __future__ import annotations

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
from rhema_lsp.tools.gate import protected_reason
from rhema_lsp.tools.workspace import Target

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
        targets = await self._targets(call)
        locations = [ToolCallLocation(path=str(target.path)) for target in targets]
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
            for target in targets:
                if await self._may_fetch(call, target):
                    await self.editor.fetch(target.path)
            return await self.inner.resolve_streaming(call, ctx, progress, status)
        finally:
            self.stream.call_changed(call.id, self.editor.end_call())

    async def _may_fetch(self, call: ToolCall, target: Target) -> bool:
        """Whether the client's text of ``target`` may be fetched for
        ``call``: a protected file (``.env*``, keys) only by a call that
        reads it, once the user allowed it (the gate's question, asked here
        first: the call's own is then answered from it); never for any
        other call (an edit works on the disk's text, checked before it is
        written)."""
        if protected_reason(target) is None:
            return True
        if kind_of(call.name) != "read":
            return False
        try:
            await self.workspace.gate.allow_read(target)
        except ToolError:
            return False  # refused: nothing fetched; the call is refused the same way
        return True

    async def _targets(self, call: ToolCall) -> list[Target]:
        """The existing files the call names, confined; a path the tools will
        refuse is left to them to explain."""
        if not isinstance(call.args, dict):
            return []
        found: list[Target] = []
        for key in _PATH_ARGUMENTS:
            raw = call.args.get(key)
            if not isinstance(raw, str) or not raw:
                continue
            try:
                target = await anyio.to_thread.run_sync(self.workspace.ws.resolve, raw, Access.READ)
            except ToolError:
                continue
            if target.kind == "file":
                found.append(target)
        return found
