"""One MCP server, supervised: started on demand, reused, restarted, stopped.

:class:`McpConnection` owns one background task (the *supervisor*) that holds
the SDK's :class:`mcp.Client` open for as long as the server lives, because
the SDK's transports must be entered and left by the same task. Calls from
any task go through that client while it is ``ready``.

- Start: :meth:`McpConnection.start` starts the supervisor; the first
  attempt is ``starting`` and :meth:`McpConnection.wait_started` waits for
  it. An attempt must finish ``initialize`` and the tool listing within the
  start timeout (``mcpStartTimeout``), or it fails.
- Failure: a start that fails is ``failed`` at once, with its reason in
  ``error``, and is retried in the background after a back-off
  (:data:`BACKOFF_S` doubling up to :data:`BACKOFF_MAX_S`); a retry keeps
  the state ``failed`` until it succeeds, so nobody waits for it. A crash of
  a ready server is ``restarting`` the same way. After :data:`RESTART_LIMIT`
  failures in a row it stays ``failed`` until :meth:`~McpConnection.start`
  is called again (the next turn). A failure retrying cannot mend (no such
  command, a refused entry: :class:`~rhema_lsp.mcp.errors.McpUnstartable`)
  is ``failed`` for good: only :meth:`~McpConnection.restart` (or a changed
  entry) tries again. A ready server that stops answering ``ping``
  (:mod:`rhema_lsp.mcp.liveness`) is restarted like a crashed one.
- The transport (:mod:`rhema_lsp.mcp.transports`): a stdio child with the
  SDK's minimal environment plus the entry's ``env`` (none of the editor's
  keys), its stderr logged and its tail kept for the error message; or a
  Streamable HTTP client that remembers each HTTP error's status and body.
  Environment and header values are never logged.
- HTTP sessions: a call answered 404 (or 400 naming the session: the server
  restarted and forgot it) ends the session; the supervisor starts a new one
  at once (no back-off, not a failure) and the call is sent once more
  (:mod:`rhema_lsp.mcp.calls`).
- OAuth (:mod:`rhema_lsp.mcp.oauth`): an HTTP server that answers 401 is
  signed in to with the SDK's OAuth client. The user's page opens through
  :attr:`McpConnection.opener`; meanwhile the server is ``authorizing`` (its
  ``error`` names the page), the start bound is lifted, and no run waits. A
  sign-in that fails is ``failed`` and not retried on its own (that would
  send the user to the page again and again): a restart signs in again.
- Calls (:class:`~rhema_lsp.mcp.calls.McpCalls`, which the connection
  is): sent through the ready client, SDK errors mapped once to
  :mod:`rhema_lsp.mcp.errors`, abandoned with ``notifications/cancelled``
  when cancelled or over their timeout. Its states:
  :class:`~rhema_lsp.mcp.states.ServerState`.
- Stop: :meth:`McpConnection.aclose` cancels the supervisor and waits for the
  SDK to close stdin, then terminate and kill the server's process group.

This module imports the SDK, which takes seconds to load: import it in a
worker thread (as :class:`~rhema_lsp.mcp.hub.McpHub` does).
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from functools import partial
from pathlib import Path

import anyio
import anyio.abc
import mcp_types
from mcp import Client
from mcp.client.caching import CacheConfig
from mcp.client.session import IncomingMessage

from rhema_lsp import __version__
from rhema_lsp.mcp.approvals import Approvals
from rhema_lsp.mcp.asks import callbacks
from rhema_lsp.mcp.calls import CallOutcome, McpCalls, Progress
from rhema_lsp.mcp.config import DEFAULT_START_TIMEOUT_S, McpServerConfig, Placeholders
from rhema_lsp.mcp.failures import (
    BACKOFF_MAX_S,
    BACKOFF_S,
    Failure,
    backoff_delay,
    classify,
)
from rhema_lsp.mcp.host import RunHost
from rhema_lsp.mcp.listings import McpPrompt, McpResource, McpTool
from rhema_lsp.mcp.liveness import PING_BOUND_S, PING_EVERY_S, watch_alive
from rhema_lsp.mcp.modern.era import Era, is_modern
from rhema_lsp.mcp.modern.follow import follow, refresh, roots_changed
from rhema_lsp.mcp.oauth_clients import auth_for
from rhema_lsp.mcp.offers import Offers, log_message
from rhema_lsp.mcp.pages import Completions
from rhema_lsp.mcp.results import render_result
from rhema_lsp.mcp.states import ServerState
from rhema_lsp.mcp.transports import Attempt, open_transport, placeholder_value, watched

__all__ = [
    "BACKOFF_MAX_S",
    "BACKOFF_S",
    "RESTART_LIMIT",
    "CallOutcome",
    "McpConnection",
    "McpPrompt",
    "McpResource",
    "McpTool",
    "Progress",
    "ServerState",
    "render_result",
]

logger = logging.getLogger(__name__)

RESTART_LIMIT = 5
STABLE_S = 60.0
"""A server that ran this long before it stopped starts a fresh series of restarts."""


class McpConnection(McpCalls):
    """One configured MCP server (see the module docstring).

    Parameters
    ----------
    name
        The server's name in the configuration.
    config
        Its entry.
    environ
        Where ``${NAME}`` references are read from (the server's environment).
    cwd
        The working directory of a stdio server when its entry sets none.
    placeholders
        What ``${NAME}`` in a value does (see :data:`~rhema_lsp.mcp.config.Placeholders`).
    start_timeout
        Seconds an attempt may take to initialize and list its tools.
    state_dir
        Where OAuth tokens are kept (default: the user state directory).
    backoff
        Seconds before restart number *n* (tests shorten it).
    ping
        Seconds between pings of the ready server, and each one's bound
        (:mod:`rhema_lsp.mcp.liveness`; tests shorten them).
    """

    def __init__(
        self,
        name: str,
        config: McpServerConfig,
        *,
        environ: Mapping[str, str],
        cwd: Path | None = None,
        placeholders: Placeholders = "expand",
        start_timeout: float = DEFAULT_START_TIMEOUT_S,
        state_dir: Path | None = None,
        backoff: Callable[[int], float] = backoff_delay,
        ping: tuple[float, float] = (PING_EVERY_S, PING_BOUND_S),
    ) -> None:
        self.name = name
        self.config = config
        self.state = ServerState.IDLE
        self.error: str | None = None
        self.offers = Offers(name)
        """What the server offers now (its tools, prompts, resources)."""
        self.restarts = 0
        self.start_timeout = start_timeout
        self.state_dir = state_dir
        self.opener: Callable[[str], Awaitable[bool]] | None = None
        """Opens a page for the user (set by the hub from the latest run's editor)."""
        self.host: RunHost | None = None
        """The run the server's requests go to (see :meth:`use`)."""
        self.completions, self.approvals = Completions(), Approvals()
        self._value = placeholder_value(name, placeholders, environ)
        self._cwd = cwd
        self.backoff = backoff
        self.ping = ping
        """Seconds between pings of the ready server, and each one's bound."""
        self._frozen: str | None = None
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._changed = anyio.Event()
        self._unstartable = False
        self._start_failed = False
        self._renewing = False
        self._signing_in = False
        self._gone = anyio.Event()
        self._bound = anyio.CancelScope()
        self._group: anyio.abc.TaskGroup | None = None
        self._changes = 0
        self._attempt = Attempt()
        self._era = Era(name)

    # -- life ------------------------------------------------------------------

    @property
    def tools(self) -> list[McpTool]:
        """The tools it offers now (none unless ready)."""
        return self.offers.tools

    @property
    def version(self) -> int:
        """Goes up whenever what it offers, or its state, changed."""
        return self.offers.version + self._changes

    def _set(self, state: ServerState) -> None:
        self._changes += 1
        self.state = state
        self._changed.set()
        self._changed = anyio.Event()

    def start(self) -> None:
        """Start the supervisor unless it runs, or the server cannot start as
        configured. The first attempt is ``starting``; a server that failed
        before stays ``failed`` while it is tried again in the background."""
        if self._unstartable or (self._task is not None and not self._task.done()):
            return
        if self.state in (ServerState.IDLE, ServerState.STOPPED):
            self.error = None
            self._set(ServerState.STARTING)
        self._task = asyncio.create_task(self._supervise(), name=f"mcp server {self.name}")

    def use(self, host: RunHost) -> None:
        """Send the server's requests to ``host`` from now on; tell the server
        when its roots (the workspace folders) changed."""
        changed = self.host is not None and self.host.roots != host.roots
        self.host = host
        refresh(self._client, self.offers)  # 2026-07-28: what is stale is listed again
        if changed and self._client is not None and self._group is not None:
            self._group.start_soon(roots_changed, self._client, self.name)

    async def wait_started(self, *, sign_in: bool = False) -> None:
        """Wait while the first attempt is in progress (``starting``), and
        with ``sign_in`` while the user is signing in (``authorizing``)."""
        waiting = (
            {ServerState.STARTING, ServerState.AUTHORIZING} if sign_in else {ServerState.STARTING}
        )
        while self.state in waiting:
            await self._changed.wait()

    async def ensure_started(self, wait_s: float) -> None:
        """:meth:`start`, then wait up to ``wait_s`` seconds for the first attempt."""
        self.start()
        with anyio.move_on_after(wait_s):
            await self.wait_started()

    async def restart(self) -> None:
        """Stop the server and start it afresh (the user asked): the restart
        limit and an unstartable verdict are forgotten."""
        await self.aclose()
        self._era = Era(self.name)  # probed afresh
        self._unstartable = False
        self.restarts = 0
        self.start()

    async def aclose(self) -> None:
        """Stop the server and its supervisor; wait until the process is gone."""
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            with anyio.CancelScope(shield=True):
                await asyncio.wait([task])
        self._forget()
        self._set(ServerState.STOPPED)

    async def _supervise(self) -> None:
        failures = 0
        while True:
            began = anyio.current_time()
            self._start_failed = self._signing_in = False
            try:
                self._frozen = None
                await self._serve_once()
                failure = Failure(self._frozen or "the server closed the connection", True)
            except Exception as exc:  # noqa: BLE001 - any SDK or transport failure is this server's state, logged below
                failure = self._classify(exc)
            if self._renewing:  # a new session was asked for: no failure, no wait
                self._renewing = False
                self.restarts += 1
                continue
            if not self._start_failed:  # else recorded when it happened
                self._record(failure, ServerState.RESTARTING)
            if self._unstartable:
                logger.error("MCP server %s cannot start: %s", self.name, self.error)
                return
            if anyio.current_time() - began > STABLE_S:
                failures = 0
            failures += 1
            if failures > RESTART_LIMIT:
                logger.error(
                    "MCP server %s failed %d times, giving up until the next turn: %s",
                    self.name,
                    failures,
                    self.error,
                )
                self._set(ServerState.FAILED)
                return
            delay = self.backoff(failures)
            logger.warning(
                "MCP server %s is not available: %s; trying again in %.1f s",
                self.name,
                self.error,
                delay,
            )
            self.restarts += 1
            await anyio.sleep(delay)

    def _forget(self) -> None:
        self._client = None
        self._group = None
        self.offers.clear()

    def _record(self, failure: Failure, state: ServerState) -> None:
        """Note a failure now: its reason (with the stderr tail) and the state."""
        self._forget()
        tail = self._attempt.tail()
        self.error = f"{failure.reason} (stderr: {tail})" if tail else failure.reason
        self._unstartable = not failure.retryable
        self._start_failed = state is ServerState.FAILED
        self._set(ServerState.FAILED if self._unstartable else state)

    async def _serve_once(self) -> None:
        gone = self._gone = anyio.Event()
        self._attempt = Attempt()
        # The bound covers the start only; the scope encloses the stack, since
        # the SDK's task groups must be left inside the scope they were entered in.
        bound = self._bound = anyio.CancelScope(deadline=anyio.current_time() + self.start_timeout)
        with bound:
            async with AsyncExitStack() as stack:
                try:
                    client = await self._open(stack, gone)
                    await self.offers.load(client)
                except anyio.get_cancelled_exc_class():
                    if bound.cancel_called:  # the bound, not a stop: failed now
                        self._record(self._classify(TimeoutError()), ServerState.FAILED)
                    raise
                except Exception as exc:
                    self._era.failed(exc)
                    # failed now, not once the transport has unwound (a kill takes seconds)
                    self._record(self._classify(exc), ServerState.FAILED)
                    raise
                bound.deadline = math.inf
                self._group = await stack.enter_async_context(anyio.create_task_group())
                stack.callback(self._group.cancel_scope.cancel)
                self.offers.follow(client, self._group)
                follow(client, self.offers, self.name, self._group)
                if not is_modern(client):  # no ping in 2026-07-28
                    self._group.start_soon(watch_alive, client, self.name, self._froze, *self.ping)
                self._client = client
                self.error = None
                logger.info("MCP server %s ready with %d tools", self.name, len(self.tools))
                self._set(ServerState.READY)
                await gone.wait()
        if bound.cancelled_caught:
            raise TimeoutError

    def _froze(self, why: str) -> None:
        """The ready server stopped answering: end the session (it restarts)."""
        self._frozen = why
        self._gone.set()

    async def _open(self, stack: AsyncExitStack, gone: anyio.Event) -> Client:
        auth = None
        if self.config.url is not None:
            auth = await auth_for(
                self.name, self.config.url, self.config.oauth, self._sign_in, self._value,
                self.state_dir,
            )  # fmt: skip
        transport = await open_transport(
            self.name,
            self.config,
            stack,
            self._attempt,
            value=self._value,
            cwd=self._cwd,
            auth=auth,
        )
        client = Client(
            watched(transport, gone),
            client_info=mcp_types.Implementation(name="rhema-lsp", version=__version__),
            cache=CacheConfig(),
            message_handler=self._on_message,
            logging_callback=partial(log_message, self.name),
            log_level="info",
            **callbacks(self.name, lambda: self.host),
            **self._era.options(),
        )
        return await self._era.enter(client, stack)

    async def _on_message(self, message: IncomingMessage) -> None:
        if not await self.completions.hear(message, self.host):
            await self.offers.on_message(message)

    def _classify(self, exc: BaseException) -> Failure:
        return classify(
            exc,
            self.config,
            start_timeout=self.start_timeout,
            signing_in=self._signing_in,
            http=self._attempt.http,
        )

    async def _sign_in(self, page: str) -> None:
        """The server wants OAuth: send the user to ``page``. Signing in is
        the user's time, not the server's: the start bound is lifted (the
        sign-in has its own), and the state says what is awaited."""
        self._bound.deadline = math.inf
        self._signing_in = True
        self.error = f"waiting for you to sign in to the MCP server {self.name} at {page}"
        self._set(ServerState.AUTHORIZING)
        opened = await self.opener(page) if self.opener is not None else False
        logger.warning(
            "MCP server %s needs you to sign in: %s %s",
            self.name,
            "the page was opened," if opened else "open",
            page,
        )
