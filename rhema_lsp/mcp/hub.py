"""``McpHub``: every MCP server of this language server, and the per-run resolver.

The hub is cheap to create and starts nothing on its own. A run whose mode
is in ``mcpModes`` asks :meth:`McpHub.resolver` for its tools; only then are
the SDK loaded (in a worker thread: it takes seconds) and the servers
started, all at once. The run waits once, for the servers in their first
attempt, at most ``mcpStartTimeout`` plus :data:`START_MARGIN_S` (less for
``ask``; never for a server remembered as slow: :mod:`.starting`); a failed
server is retried in the background, unwaited for. The servers live on for
later runs, each in the session folder of the run that first started it;
one whose entry changed is restarted, one no longer configured stopped.
:meth:`McpHub.status` with ``check`` starts the configured servers the same
way and reports what they did (a health check: a server waiting for the
user's sign-in is reported so, not waited for, unless ``sign_in``: the
terminal's ``rhema-lsp status``); :meth:`McpHub.restart` restarts one by
name and waits for its sign-in; :meth:`McpHub.prompts`,
:meth:`McpHub.resources` and :meth:`McpHub.read_resource` serve what the
servers offer. Where servers come from: :mod:`rhema_lsp.mcp.wanted`.
:meth:`McpHub.aclose` stops every server; nothing of the hub outlives it.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import anyio.to_thread

from rhema_lsp.engine.provider import ModelProvider
from rhema_lsp.engine.tools import ToolResolver
from rhema_lsp.mcp.catalog import RunServer
from rhema_lsp.mcp.config import SIGN_IN_WAIT_S, McpServerConfig
from rhema_lsp.mcp.errors import McpUnavailable
from rhema_lsp.mcp.host import RunHost, opener
from rhema_lsp.mcp.resolver import McpTools
from rhema_lsp.mcp.starting import SlowStarts, run_wait, sign_in_wait, wait_started
from rhema_lsp.mcp.trust import WorkspaceTrust
from rhema_lsp.mcp.wanted import (
    PLACEHOLDERS,
    McpOptions,
    Source,
    Wanted,
    from_client,
    from_settings,
    from_workspace,
    user_config,
)
from rhema_lsp.tools import WorkspaceTools
from rhema_lsp.tools.editor import Editor

if TYPE_CHECKING:
    from rhema_lsp.mcp.connection import McpConnection
    from rhema_lsp.mcp.listings import McpPrompt, McpResource

__all__ = ["START_MARGIN_S", "McpHub", "McpOptions", "ServerReport"]

logger = logging.getLogger(__name__)

START_MARGIN_S = 2.0
"""How much longer than an attempt's own bound a run waits for it to end."""


@dataclass(frozen=True, slots=True)
class ServerReport:
    """One server as ``rhema.status`` shows it."""

    name: str
    source: Source
    transport: Literal["stdio", "http"]
    state: str
    tools: int
    restarts: int
    error: str | None
    deferred: bool = False
    """Whether its tools were behind ``find_tools`` in the latest run."""


class McpHub:
    """The servers and the resolver of each run (see the module docstring).

    Parameters
    ----------
    environ
        Where ``${NAME}`` references are read from (default: this process's).
    config_path
        The user config file (default: :func:`~rhema_lsp.mcp.userfile.user_config_path`).
    backoff
        Seconds before a server's restart number *n* (default: the
        connection's doubling back-off; tests shorten it).
    state_dir
        Where OAuth tokens are kept (default: the user state directory).
    """

    def __init__(
        self,
        environ: Mapping[str, str] | None = None,
        *,
        config_path: Path | None = None,
        backoff: Callable[[int], float] | None = None,
        state_dir: Path | None = None,
    ) -> None:
        self.environ = os.environ if environ is None else environ
        self.config_path = config_path
        self.backoff = backoff
        self.state_dir = state_dir
        self._connections: dict[str, tuple[Wanted, McpConnection]] = {}
        self._trust = WorkspaceTrust(config_path)
        self._deferred: dict[str, bool] = {}
        self._reconciling = anyio.Lock()
        self._module: object | None = None
        self._slow = SlowStarts(state_dir)

    # -- the run's resolver ----------------------------------------------------

    async def resolver(
        self,
        inner: ToolResolver,
        mode: str,
        folder: Path,
        editor: Editor,
        wire: str,
        options: McpOptions,
        given: Mapping[str, McpServerConfig] | None = None,
        *,
        provider: ModelProvider | None = None,
        model: str = "",
        window: int | None = None,
    ) -> ToolResolver:
        """``inner`` plus the MCP tools of the servers that are ready, or
        ``inner`` itself when ``mode`` is not in ``mcpModes`` or no server is
        configured. Starts the servers it needs.

        Parameters
        ----------
        inner
            The run's workspace tools.
        mode
            The run's mode; only the modes of ``mcpModes`` get MCP tools.
        folder
            The session folder (its ``.mcp.json``; where client servers run).
        editor
            Asks the user (a workspace file, each call not allow-listed).
        wire
            The provider's wire, which shapes the tools' schemas.
        options
            The settings: ``mcpServers`` and ``mcpModes``.
        given
            The servers the client passed for this session, by name.
        provider, model
            The session's model, which a server's sampling requests use
            (each approved by the user); ``None`` refuses them.
        window
            The model's context window in tokens, if known: MCP tools that
            would take more than a tenth of it are deferred behind ``find_tools``.
        """
        if mode not in options.mcp_modes:
            return inner
        user = await user_config(self.config_path)
        wanted = from_settings(options, user)
        wanted += from_client(folder, given or {}, {w.name for w in wanted})
        wanted += await from_workspace(self._trust, folder, editor, user, {w.name for w in wanted})
        wanted = [w for w in wanted if not w.config.disabled]
        async with self._reconciling:
            await self._stop_stale(wanted)
            if not wanted:
                return inner
            connections = await self._connect(wanted, folder)
        roots = tuple(inner.ws.roots) if isinstance(inner, WorkspaceTools) else (folder,)
        host = RunHost(editor, roots, provider, model)
        for connection in connections:
            connection.use(host)
        await self._start(connections, options, editor)
        servers = [RunServer(w.name, c) for w, c in zip(wanted, connections, strict=True)]

        def deferral(deferred: bool) -> None:
            for server in servers:
                if deferred and not self._deferred.get(server.name):
                    logger.info(
                        "MCP server %s: its tools are behind find_tools in this run "
                        "(too many, or too large for the model's window)",
                        server.name,
                    )
                self._deferred[server.name] = deferred

        return McpTools(inner, servers, host, wire, window=window, on_deferral=deferral)

    async def _start(
        self,
        connections: Sequence[McpConnection],
        options: McpOptions,
        editor: Editor | None,
        *,
        check: bool = False,
        sign_in: bool = False,
    ) -> None:
        """Start ``connections``; wait once for those in their first attempt
        (with ``check``, try a failed one again; with ``sign_in``, wait while
        the user signs in too)."""
        bound = SIGN_IN_WAIT_S if sign_in else 0.0
        for connection in connections:
            connection.start_timeout = connection.config.start_timeout or options.mcp_start_timeout
            if editor is not None:
                connection.opener = opener(editor)
            if check and connection.state.value == "failed":
                await connection.restart()
            connection.start()
            bound = max(bound, connection.start_timeout)
        waits = (run_wait(self.environ), sign_in, check, sign_in_wait(self.environ))
        await wait_started(connections, bound + START_MARGIN_S, self._slow, *waits)

    async def _stop_stale(self, wanted: list[Wanted]) -> None:
        """Stop the servers no longer configured, or configured otherwise."""
        entries = {w.key: w.config for w in wanted}
        stale = [
            key
            for key, (was, _) in self._connections.items()
            if (key not in entries and was.folder is None)
            or (key in entries and entries[key] != was.config)
        ]
        for key in stale:
            _, connection = self._connections.pop(key)
            logger.info("MCP server %s is no longer configured so; stopping it", connection.name)
            await connection.aclose()

    async def _connect(self, wanted: list[Wanted], folder: Path | None) -> list[McpConnection]:
        if self._module is None:
            # the SDK takes seconds to import: never on the event loop
            self._module = await anyio.to_thread.run_sync(
                importlib.import_module, "rhema_lsp.mcp.connection"
            )
        from rhema_lsp.mcp.connection import McpConnection

        connections = []
        for want in wanted:
            if want.key not in self._connections:
                connection = McpConnection(
                    want.name,
                    want.config,
                    environ=self.environ,
                    cwd=want.folder or folder,
                    placeholders=PLACEHOLDERS.get(want.source, "expand"),
                    state_dir=self.state_dir,
                )
                if self.backoff is not None:
                    connection.backoff = self.backoff
                self._connections[want.key] = (want, connection)
            connections.append(self._connections[want.key][1])
        return connections

    # -- status and shutdown ---------------------------------------------------

    async def status(
        self,
        options: McpOptions,
        *,
        check: bool = False,
        sign_in: bool = False,
        editor: Editor | None = None,
    ) -> list[ServerReport]:
        """Every configured server and every workspace server started, with
        its state. Starts nothing, unless ``check``: then the configured
        servers are started (a failed one tried again) and waited for as a
        run does (a sign-in's page opened through ``editor``), and with
        ``sign_in`` while the user signs in as well."""
        user = await user_config(self.config_path)
        if check:
            configured = [w for w in from_settings(options, user) if not w.config.disabled]
            async with self._reconciling:
                await self._stop_stale(configured)
                connections = await self._connect(configured, None) if configured else []
            await self._start(connections, options, editor, check=True, sign_in=sign_in)
        reports = []
        for want in from_settings(options, user) + [
            w for w, _ in self._connections.values() if w.folder is not None
        ]:
            current = self._connections.get(want.key)
            connection = current[1] if current and current[0].config == want.config else None
            state = "idle"
            if want.config.disabled:
                connection, state = None, "disabled"
            reports.append(
                ServerReport(
                    name=want.name,
                    source=want.source,
                    transport=want.config.transport,
                    state=connection.state.value if connection else state,
                    tools=len(connection.tools) if connection else 0,
                    restarts=connection.restarts if connection else 0,
                    error=connection.error if connection else None,
                    deferred=self._deferred.get(want.name, False) if connection else False,
                )
            )
        return reports

    async def prompts(
        self, options: McpOptions, *, editor: Editor | None = None
    ) -> list[tuple[str, McpPrompt]]:
        """The prompts of the configured servers (started as a run starts
        them) and of every other server running, by server name."""
        await self._start_configured(options, editor)
        listed: list[tuple[str, McpPrompt]] = []
        for name, connection in self._running():
            if connection.state.value == "ready":
                listed += [(name, prompt) for prompt in connection.offers.prompts]
        return listed

    async def resources(
        self, options: McpOptions, *, editor: Editor | None = None
    ) -> tuple[list[tuple[str, McpResource]], list[tuple[str, str]]]:
        """The resources of the configured servers (started as a run starts
        them, waited for once within the start bound) and of every other
        server running, by server name; and each server that is not ready,
        with why."""
        await self._start_configured(options, editor)
        listed: list[tuple[str, McpResource]] = []
        failed: list[tuple[str, str]] = []
        for name, connection in self._running():
            if connection.state.value != "ready":
                state = connection.state.value
                reason = connection.error or "no reason given yet"
                failed.append((name, f"the MCP server {name} is {state}: {reason}"))
            elif connection.offers.has_resources:
                listed += [(name, resource) for resource in connection.offers.resources]
        return listed, failed

    async def read_resource(self, server: str, uri: str, timeout_s: float = 60.0) -> str:
        """The resource ``uri`` of the running server ``server`` as text, read
        as ``read_mcp_resource`` reads it
        (:meth:`~rhema_lsp.mcp.connection.McpConnection.read_resource`).

        Raises
        ------
        McpError
            No such running server, or the read failed (the message says why).
        """
        for name, connection in self._running():
            if name == server and connection.state.value == "ready":
                return await connection.read_resource(uri, timeout_s)
        raise McpUnavailable(
            f"the MCP server {server} is not running: list the resources again (rhema.mcpResources)"
        )

    async def _start_configured(self, options: McpOptions, editor: Editor | None) -> None:
        """Start the configured servers as a run does (one bounded wait)."""
        user = await user_config(self.config_path)
        configured = [w for w in from_settings(options, user) if not w.config.disabled]
        async with self._reconciling:
            await self._stop_stale(configured)
            started = await self._connect(configured, None) if configured else []
        await self._start(started, options, editor)

    def _running(self) -> list[tuple[str, McpConnection]]:
        """Each server started, by name (of several of a name, the first ready)."""
        running: dict[str, McpConnection] = {}
        for want, connection in self._connections.values():
            known = running.get(want.name)
            ready = connection.state.value == "ready"
            if known is None or (ready and known.state.value != "ready"):
                running[want.name] = connection
        return list(running.items())

    async def get_prompt(
        self, server: str, name: str, arguments: Mapping[str, str], timeout_s: float = 60.0
    ) -> str:
        """The prompt ``name`` of the running server ``server``, filled in.

        Raises
        ------
        McpError
            No such running server, or the server refused (the message says why).
        """
        for want, connection in self._connections.values():
            if want.name == server and connection.state.value == "ready":
                return await connection.get_prompt(name, dict(arguments), timeout_s)
        raise McpUnavailable(
            f"the MCP server {server} is not running: list the prompts again (rhema.mcpPrompts)"
        )

    async def restart(
        self, name: str, options: McpOptions, *, editor: Editor | None = None
    ) -> list[ServerReport]:
        """Restart every server called ``name`` (start it, if configured and
        not started yet) and wait for it as a health check does; the reports
        of the servers of that name, none when there is no such server."""
        user = await user_config(self.config_path)
        async with self._reconciling:
            targets = [c for w, c in self._connections.values() if w.name == name]
            if not targets:
                configured = [
                    w
                    for w in from_settings(options, user)
                    if w.name == name and not w.config.disabled
                ]
                targets = await self._connect(configured, None) if configured else []
        for connection in targets:
            logger.info("restarting the MCP server %s, as asked", name)
            await connection.restart()
        await self._start(targets, options, editor, check=True, sign_in=True)
        return [report for report in await self.status(options) if report.name == name]

    async def aclose(self) -> None:
        """Stop every server."""
        connections = [connection for _, connection in self._connections.values()]
        self._connections.clear()
        await self._slow.note(connections)
        async with anyio.create_task_group() as group:
            for connection in connections:
                group.start_soon(connection.aclose)
