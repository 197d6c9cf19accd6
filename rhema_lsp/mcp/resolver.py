"""``McpTools``: the run's resolver, the workspace tools plus the MCP tools.

Built per run by :meth:`rhema_lsp.mcp.hub.McpHub.resolver` over the run's
servers. What it offers is worked out again whenever a server's lists or
state changed (a ``tools/list_changed``, a restart), so the next request
sees it (:mod:`rhema_lsp.mcp.catalog`). Calls to the built-in tools go to
the inner resolver untouched. An MCP call:

- is offered as ``<server>__<tool>`` with its sanitised schema;
- asks the user through the :class:`~rhema_lsp.tools.editor.Editor`'s
  ``confirm`` (as ``run_command`` does) unless the server's ``allow`` lists
  the tool or the user chose "always allow this tool" this session
  (:mod:`rhema_lsp.mcp.approvals`); a refusal is an in-band error and
  nothing is called;
- carries a ``progressToken``; the server's progress is the call's
  ``tool_status``;
- sends the server's own requests during it (sampling, elicitation, roots)
  to this run (:class:`~rhema_lsp.mcp.host.RunHost`);
- is replay-``unsafe`` unless the server's ``safe`` lists the tool (the
  server's own ``readOnlyHint`` is not trusted);
- named before its server finished starting (the run waits for its servers
  only so long), waits for that start, bounded;
- ends in-band whatever happens: a protocol error, a crash, a timeout or a
  server flagging ``isError`` are ``is_error`` results naming the server;
- stops when the run's cancel signal is set (or its scope is cancelled),
  which abandons the request with MCP's ``notifications/cancelled``;
- runs at the same time as its MCP neighbours of the step
  (:meth:`McpTools.concurrent`; the engine records the results in order),
  their approvals asked one at a time.

``list_mcp_resources`` and ``read_mcp_resource`` read what the servers
list and link to; they change nothing, so they ask nothing and are replay
``safe``. When the MCP tools are deferred (too many for one request, or too
large for the window: :func:`~rhema_lsp.mcp.catalog.deferring`), the
request carries ``find_tools`` in their place and the tools it found (the
latest kept, within :data:`~rhema_lsp.mcp.catalog.MAX_TOOLS`); a deferred
tool is still called when the model names it. The engine caps every result
like every other.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio

from rhema_lsp.engine.events import ToolStatus
from rhema_lsp.engine.messages import ToolCall, ToolResult
from rhema_lsp.engine.request import ToolSpec
from rhema_lsp.engine.tools import (
    DelegatingResolver,
    Progress,
    ReplaySafety,
    StatusReporter,
    ToolContext,
    ToolResolver,
)
from rhema_lsp.mcp.catalog import (
    FIND_TOOLS,
    LIST_RESOURCES,
    MAX_TOOLS,
    READ_RESOURCE,
    OfferedTool,
    RunServer,
    deferring,
    find_spec,
    instructions,
    offer,
    resource_specs,
    search,
)
from rhema_lsp.mcp.errors import McpError
from rhema_lsp.mcp.host import RunHost
from rhema_lsp.mcp.schemas import exposed_name

__all__ = ["McpTools", "mcp_instructions"]

_PREVIEW = 600
_RESOURCE_TIMEOUT_S = 60.0
_LISTED = 200


def _preview(args: dict[str, Any]) -> str:
    text = json.dumps(args, ensure_ascii=False)
    return text if len(text) <= _PREVIEW else text[: _PREVIEW - 3] + "..."


def mcp_instructions(resolver: ToolResolver | None) -> str:
    """What the run's MCP servers ask of the model, for the system prompt
    (empty when the resolver has no MCP servers): the doors append it."""
    if not isinstance(resolver, McpTools):
        return ""
    text = instructions(resolver.servers)
    return f"\n\n{text}" if text else ""


class McpTools(DelegatingResolver):
    """The inner resolver's tools plus the servers' (see the module docstring).

    Parameters
    ----------
    inner
        The workspace tools of the run.
    servers
        The run's MCP servers.
    host
        The run: its editor approves calls; the servers' requests go to it.
    wire
        The provider's wire, which shapes the schemas.
    window
        The model's context window in tokens, if known (the deferral's measure).
    on_deferral
        Told whether the MCP tools are deferred, whenever that is worked out.
    """

    def __init__(
        self,
        inner: ToolResolver,
        servers: Sequence[RunServer],
        host: RunHost,
        wire: str,
        *,
        window: int | None = None,
        on_deferral: Callable[[bool], None] | None = None,
    ) -> None:
        super().__init__(inner)
        self.servers = list(servers)
        self.host = host
        self.editor = host.editor
        self.wire = wire
        self.window = window
        self.deferred = False
        self._on_deferral = on_deferral
        self._seen: tuple[int, ...] | None = None
        self._offered: dict[str, OfferedTool] = {}
        self._extra: list[ToolSpec] = []
        self._loaded: list[str] = []
        self._asking = anyio.Lock()

    @property
    def offered(self) -> dict[str, OfferedTool]:
        """The MCP tools offered now, by exposed name."""
        versions = tuple(server.connection.version for server in self.servers)
        if versions != self._seen:
            self._seen = versions
            taken = {spec.name for spec in self.inner.specs()}
            tools = offer(self.servers, taken, self.wire)
            self._offered = {tool.spec.name: tool for tool in tools}
            taken |= set(self._offered)
            self._extra = [s for s in resource_specs(self.servers) if s.name not in taken]
            others = len(taken) - len(self._offered) + len(self._extra) + 1
            self.deferred = FIND_TOOLS not in taken and deferring(tools, others, self.window)
            if self._on_deferral is not None:
                self._on_deferral(self.deferred)
        return self._offered

    def specs(self) -> list[ToolSpec]:
        """The inner tools, then the MCP tools (or ``find_tools`` and the
        tools it found), then the resource tools; never more than
        :data:`~rhema_lsp.mcp.catalog.MAX_TOOLS`."""
        offered = self.offered
        inner = self.inner.specs()
        if not self.deferred:
            specs = [*inner, *(tool.spec for tool in offered.values()), *self._extra]
            return specs[:MAX_TOOLS]
        room = max(MAX_TOOLS - len(inner) - len(self._extra) - 1, 0)
        loaded = [offered[name].spec for name in self._loaded if name in offered]
        kept = loaded[len(loaded) - room :] if room else []
        return [*inner, find_spec(list(offered.values())), *self._extra, *kept]

    def replay_safety(self, name: str) -> ReplaySafety:
        """``SAFE`` for MCP tools the user marked safe and the resource tools;
        else as the inner resolver says."""
        tool = self.offered.get(name)
        if tool is None:
            if name in {spec.name for spec in self._extra} or name == FIND_TOOLS:
                return ReplaySafety.SAFE
            return self.inner.replay_safety(name)
        safe = tool.connection.config.is_safe(tool.tool)
        return ReplaySafety.SAFE if safe else ReplaySafety.UNSAFE

    def concurrent(self, call: ToolCall) -> bool:
        """MCP calls (and resource reads) run together with their MCP
        neighbours of the step: each is the server's own request. Their
        approvals are still asked one at a time."""
        return call.name in self.offered or call.name in {spec.name for spec in self._extra}

    async def resolve_streaming(
        self,
        call: ToolCall,
        ctx: ToolContext,
        progress: Progress,
        status: StatusReporter | None = None,
    ) -> ToolResult:
        """Run one call: an MCP call here, any other through the inner resolver."""
        tool = self.offered.get(call.name) or await self._started_with(call.name)
        extra = {spec.name for spec in self._extra}
        if call.name == FIND_TOOLS and self.deferred:
            return self._find(call)
        if tool is None and call.name not in extra:
            return await self.inner.resolve_streaming(call, ctx, progress, status)
        if not isinstance(call.args, dict):
            return ToolResult.failure(call.id, f"{call.name}: arguments must be a JSON object")
        args: dict[str, Any] = dict(call.args)

        def report(activity: str) -> None:
            if status is not None:
                status(ToolStatus(activity=activity))

        if tool is None:
            return await self._resource_call(call, args, ctx, report)
        config, approvals = tool.connection.config, tool.connection.approvals
        if not config.allows(tool.tool) and not approvals.allowed(tool.tool):
            report("waiting for approval")
            async with self._asking:
                approved = await approvals.ask(
                    self.editor,
                    tool.tool,
                    f"Rhema wants to call the MCP tool {tool.tool} of the server {tool.server} "
                    f"({config.describe()}) with {_preview(args)}",
                )
            if not approved:
                return ToolResult.failure(
                    call.id,
                    f"the user did not approve calling {tool.tool} on the MCP server "
                    f"{tool.server}; nothing was called",
                )
        activity = f"calling {tool.tool} on {tool.server}"
        report(activity)

        def on_progress(done: float, total: float | None, message: str | None) -> None:
            amount = f"{done:g}/{total:g}" if total else f"{done:g}"
            report(f"{activity}: {message} ({amount})" if message else f"{activity}: {amount}")

        tool.connection.use(self.host)
        timeout = config.timeout
        return await _cancellable(
            call.id,
            tool.server,
            ctx,
            lambda: tool.connection.call(tool.tool, args, timeout, on_progress),
        )

    async def _started_with(self, name: str) -> OfferedTool | None:
        """The tool ``name`` once the server whose tools it would be among has
        started, when one is starting still (a run does not wait long for
        its servers: a call names one before its tools were offered);
        bounded by the server's start bound. ``None`` for any other name."""
        for server in self.servers:
            if server.connection.state.value == "starting" and name.startswith(
                exposed_name(server.name, "")
            ):
                with anyio.move_on_after(server.connection.start_timeout):
                    await server.connection.wait_started()
                return self.offered.get(name)
        return None

    def _find(self, call: ToolCall) -> ToolResult:
        """Search the deferred tools; load the matches into the next request."""
        query = call.args.get("query") if isinstance(call.args, dict) else None
        if not isinstance(query, str) or not query.strip():
            return ToolResult.failure(call.id, f"{FIND_TOOLS}: give `query`, what you need done")
        found = search(list(self.offered.values()), query)
        if not found:
            return ToolResult.failure(
                call.id,
                f"no MCP tool matched {query!r}: try other words, or fewer",
            )
        for tool in found:
            if tool.spec.name in self._loaded:
                self._loaded.remove(tool.spec.name)
            self._loaded.append(tool.spec.name)
        lines = [f"- {tool.spec.name}: {tool.spec.description[:200]}" for tool in found]
        return ToolResult.success(
            call.id,
            "Loaded into your next request; call them by name:\n" + "\n".join(lines),
        )

    async def _resource_call(
        self,
        call: ToolCall,
        args: dict[str, Any],
        ctx: ToolContext,
        report: Callable[[str], None],
    ) -> ToolResult:
        wanted = args.get("server")
        servers = [s for s in self.servers if s.ready and s.connection.offers.has_resources]
        if wanted is not None:
            servers = [s for s in servers if s.name == wanted]
            if not servers:
                names = ", ".join(s.name for s in self.servers if s.connection.offers.has_resources)
                return ToolResult.failure(
                    call.id, f"{call.name}: no MCP server {wanted!r} with resources; try {names}"
                )
        if call.name == LIST_RESOURCES:
            lines = [
                f"{s.name}: {r.uri} — {r.name}" + (f": {r.description}" if r.description else "")
                for s in servers
                for r in s.connection.offers.resources[:_LISTED]
            ]
            return ToolResult.success(call.id, "\n".join(lines) or "(no resources listed)")
        uri = args.get("uri")
        if call.name != READ_RESOURCE or not isinstance(uri, str) or wanted is None:
            return ToolResult.failure(call.id, f"{call.name}: give `server` and `uri`")
        server = servers[0]
        report(f"reading {uri} from {server.name}")
        server.connection.use(self.host)

        async def read() -> Any:
            return await server.connection.read_resource(uri, _RESOURCE_TIMEOUT_S)

        return await _cancellable(call.id, server.name, ctx, read)


async def _cancellable(
    call_id: str, server: str, ctx: ToolContext, request: Callable[[], Awaitable[Any]]
) -> ToolResult:
    """``request``'s outcome as a result; the run's cancel signal stops it."""
    outcome: Any = None
    failure: McpError | None = None
    async with anyio.create_task_group() as group:

        async def stop_on_cancel() -> None:
            await ctx.cancel.wait()
            group.cancel_scope.cancel()

        async def run() -> None:
            nonlocal outcome, failure
            try:
                outcome = await request()
            except McpError as exc:
                failure = exc
            group.cancel_scope.cancel()

        group.start_soon(stop_on_cancel)
        group.start_soon(run)
    if failure is not None:
        return ToolResult.failure(call_id, str(failure))
    if outcome is None:
        return ToolResult.failure(
            call_id, f"cancelled; the MCP server {server} was asked to stop the call"
        )
    if isinstance(outcome, str):
        return ToolResult.success(call_id, outcome)
    if outcome.is_error:
        return ToolResult(id=call_id, content=outcome.text, is_error=True, images=outcome.images)
    return ToolResult(id=call_id, content=outcome.text, images=outcome.images)
