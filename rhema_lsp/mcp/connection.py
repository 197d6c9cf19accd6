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
  entry) tries again.
- The transport (:mod:`rhema_lsp.mcp.transports`): a stdio child with the
  SDK's minimal environment plus the entry's ``env`` (none of the editor's
  keys), its stderr logged and its tail kept for the error message; or a
  Streamable HTTP client that remembers each HTTP error's status and body.
  Environment and header values are never logged.
- HTTP sessions: a call answered 404 (or 400 naming the session: the server
  restarted and forgot it) ends the session; the supervisor starts a new one
  at once (no back-off, not a failure) and the call is sent once more.
- OAuth (:mod:`rhema_lsp.mcp.oauth`): an HTTP server that answers 401 is
  signed in to with the SDK's OAuth client. The user's page opens through
  :attr:`McpConnection.opener`; meanwhile the server is ``authorizing`` (its
  ``error`` names the page), the start bound is lifted, and no run waits. A
  sign-in that fails is ``failed`` and not retried on its own (that would
  send the user to the page again and again): a restart signs in again.
- Calls: SDK errors are mapped here, once, to :mod:`rhema_lsp.mcp.errors`.
  A call cancelled by the run, or over its timeout, is abandoned with MCP's
  ``notifications/cancelled`` (the SDK sends it when the awaiting task is
  cancelled).
- Stop: :meth:`McpConnection.aclose` cancels the supervisor and waits for the
  SDK to close stdin, then terminate and kill the server's process group.

This module imports the SDK, which takes seconds to load: import it in a
worker thread (as :class:`~rhema_lsp.mcp.hub.McpHub` does).
"""

from __future__ import annotations

import asyncio
import errno
import logging
import math
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types
from mcp import Client
from mcp.client._transport import Transport, TransportStreams
from mcp.client.auth import OAuthFlowError
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from rhema_lsp import __version__
from rhema_lsp.mcp.config import DEFAULT_START_TIMEOUT_S, McpServerConfig, Placeholders
from rhema_lsp.mcp.errors import McpCallFailed, McpTimeout, McpUnavailable, McpUnstartable
from rhema_lsp.mcp.oauth import oauth_for
from rhema_lsp.mcp.results import render_result
from rhema_lsp.mcp.transports import Attempt, open_transport, placeholder_value

__all__ = [
    "BACKOFF_MAX_S",
    "BACKOFF_S",
    "RESTART_LIMIT",
    "CallOutcome",
    "McpConnection",
    "McpTool",
    "ServerState",
    "render_result",
]

logger = logging.getLogger(__name__)

BACKOFF_S = 0.5
BACKOFF_MAX_S = 30.0
RESTART_LIMIT = 5
STABLE_S = 60.0
"""A server that ran this long before it stopped starts a fresh series of restarts."""
MAX_TOOL_PAGES = 50
_UNSTARTABLE_ERRNOS = frozenset({errno.ENOENT, errno.EACCES, errno.ENOTDIR, errno.ENOEXEC})


class _SessionLost(Exception):
    """An HTTP server no longer knows the session ``client`` holds."""

    def __init__(self, client: Client, why: str) -> None:
        super().__init__(why)
        self.client = client


class ServerState(StrEnum):
    """Where a server is in its life."""

    IDLE = "idle"
    STARTING = "starting"
    READY = "ready"
    RESTARTING = "restarting"
    AUTHORIZING = "authorizing"
    FAILED = "failed"
    STOPPED = "stopped"


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """A call's result as text, and whether the server flagged it an error."""

    text: str
    is_error: bool


@dataclass(frozen=True, slots=True)
class McpTool:
    """A tool a server lists: its own name, description and input schema."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True, slots=True)
class _Failure:
    reason: str
    retryable: bool


def backoff_delay(failures: int) -> float:
    """Seconds to wait before restart number ``failures``."""
    return float(min(BACKOFF_S * 2 ** max(failures - 1, 0), BACKOFF_MAX_S))


@asynccontextmanager
async def _watched(inner: Transport, gone: anyio.Event) -> AsyncIterator[TransportStreams]:
    """``inner``'s streams, with ``gone`` set when the server's side ends."""
    async with inner as (read, write):
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def forward() -> None:
            try:
                async with send:
                    async for item in read:
                        await send.send(item)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass  # the session closed its end: we are shutting down
            finally:
                gone.set()

        async with anyio.create_task_group() as group:
            group.start_soon(forward)
            try:
                yield receive, write
            finally:
                group.cancel_scope.cancel()
                receive.close()


class McpConnection:
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
    ) -> None:
        self.name = name
        self.config = config
        self.state = ServerState.IDLE
        self.error: str | None = None
        self.tools: list[McpTool] = []
        self.restarts = 0
        self.start_timeout = start_timeout
        self.state_dir = state_dir
        self.opener: Callable[[str], Awaitable[bool]] | None = None
        """Opens a page for the user (set by the hub from the latest run's editor)."""
        self._value = placeholder_value(name, placeholders, environ)
        self._cwd = cwd
        self.backoff = backoff
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._changed = anyio.Event()
        self._unstartable = False
        self._start_failed = False
        self._renewing = False
        self._signing_in = False
        self._gone = anyio.Event()
        self._bound = anyio.CancelScope()
        self._attempt = Attempt()

    # -- life ------------------------------------------------------------------

    def _set(self, state: ServerState) -> None:
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
        self._client = None
        self.tools = []
        self._set(ServerState.STOPPED)

    async def _supervise(self) -> None:
        failures = 0
        while True:
            began = anyio.current_time()
            self._start_failed = self._signing_in = False
            try:
                await self._serve_once()
                failure = _Failure("the server closed the connection", True)
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

    def _record(self, failure: _Failure, state: ServerState) -> None:
        """Note a failure now: its reason (with the stderr tail) and the state."""
        self._client = None
        self.tools = []
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
                    tools = await _list_tools(client)
                except anyio.get_cancelled_exc_class():
                    if bound.cancel_called:  # the bound, not a stop: failed now
                        self._record(self._classify(TimeoutError()), ServerState.FAILED)
                    raise
                except Exception as exc:
                    # failed now, not once the transport has unwound (a kill takes seconds)
                    self._record(self._classify(exc), ServerState.FAILED)
                    raise
                bound.deadline = math.inf
                self.tools = tools
                self._client = client
                self.error = None
                logger.info("MCP server %s ready with %d tools", self.name, len(self.tools))
                self._set(ServerState.READY)
                await gone.wait()
        if bound.cancelled_caught:
            raise TimeoutError

    async def _open(self, stack: AsyncExitStack, gone: anyio.Event) -> Client:
        auth = None
        if self.config.url is not None:
            auth = await oauth_for(self.config.url, self._sign_in, state_dir=self.state_dir)
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
            _watched(transport, gone),
            client_info=mcp_types.Implementation(name="rhema-lsp", version=__version__),
            cache=None,
        )
        await stack.enter_async_context(client)
        return client

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

    def _classify(self, exc: BaseException) -> _Failure:
        """Why an attempt failed, and whether trying again may help."""
        inner = _innermost(exc)
        if isinstance(inner, McpUnstartable):
            return _Failure(str(inner), False)
        if isinstance(inner, OAuthFlowError) or self._signing_in:
            # not retried on its own: that would send the user to the page again and again
            http = f" ({self._attempt.http.describe()})" if self._attempt.http else ""
            return _Failure(
                f"signing in did not complete: {_describe(inner)}{http}; restart the server "
                "(rhema.mcpRestart, or rhema-lsp status) to sign in again",
                False,
            )
        if isinstance(inner, TimeoutError):
            return _Failure(
                f"it did not finish starting (initialize and list its tools) within "
                f"{self.start_timeout:g} s: check that it is an MCP server, or raise "
                "the mcpStartTimeout setting",
                True,
            )
        if isinstance(inner, OSError) and self.config.command:
            why = f"could not start {self.config.describe()!r}: {inner.strerror or inner}"
            return _Failure(why, inner.errno not in _UNSTARTABLE_ERRNOS)
        if isinstance(inner, McpUnavailable):
            return _Failure(str(inner), True)
        return _Failure(_describe(inner), True)

    # -- calls -----------------------------------------------------------------

    async def call(self, tool: str, arguments: dict[str, Any], timeout_s: float) -> CallOutcome:
        """Call ``tool``; cancellation and the timeout cancel it on the server.
        An HTTP server that lost the session (404, or 400 naming the session)
        gets a new one (initialize again) and the call is sent once more.

        Raises
        ------
        McpUnavailable
            The server is not ready, or stopped during the call.
        McpTimeout
            No answer within ``timeout_s``.
        McpCallFailed
            The server answered with a protocol error (an HTTP error's status
            and the start of its body in the message).
        """
        try:
            return await self._call_once(tool, arguments, timeout_s)
        except _SessionLost as lost:
            logger.info("MCP server %s lost the session (%s); starting a new one", self.name, lost)
            await self._renew(lost.client)
        try:
            return await self._call_once(tool, arguments, timeout_s)
        except _SessionLost as again:
            raise McpUnavailable(
                f"the MCP server {self.name} lost the session again right after a new one "
                f"was started ({again}); try again later"
            ) from again

    async def _call_once(
        self, tool: str, arguments: dict[str, Any], timeout_s: float
    ) -> CallOutcome:
        client, attempt = self._client, self._attempt
        if client is None or self.state is not ServerState.READY:
            raise McpUnavailable(self._unavailable())
        seen = attempt.http.serial if attempt.http else 0
        try:
            with anyio.fail_after(timeout_s):
                result = await client.call_tool(tool, arguments)
        except TimeoutError as exc:
            raise McpTimeout(
                f"the MCP server {self.name} did not answer within {timeout_s:g} s; the call "
                "was cancelled (raise the server's `timeout` setting if it needs longer)"
            ) from exc
        except MCPError as exc:
            if exc.code == mcp_types.CONNECTION_CLOSED:
                raise McpUnavailable(
                    f"the MCP server {self.name} stopped during the call; it is being "
                    "restarted, so try again in a moment"
                ) from exc
            http = attempt.http if attempt.http and attempt.http.serial > seen else None
            if http is not None and http.session_lost():
                raise _SessionLost(client, http.describe()) from exc
            detail = f" ({http.describe()})" if http is not None else ""
            raise McpCallFailed(
                f"the MCP server {self.name} refused the call: {exc.message}{detail}"
            ) from exc
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, httpx2.HTTPError) as exc:
            raise McpUnavailable(
                f"the connection to the MCP server {self.name} broke: {_describe(exc)}"
            ) from exc
        return CallOutcome(render_result(result), result.is_error)

    async def _renew(self, client: Client) -> None:
        """End the session of ``client`` (unless another call did already)
        and wait, within the start bound, for the new one."""
        if self._client is client and self.state is ServerState.READY:
            self._renewing = True
            self._client = None
            self._set(ServerState.RESTARTING)
            self._gone.set()
        with anyio.move_on_after(self.start_timeout + 1.0):
            while self.state is ServerState.RESTARTING:
                await self._changed.wait()

    def _unavailable(self) -> str:
        why = f": {self.error}" if self.error else ""
        if self._unstartable:
            return f"the MCP server {self.name} cannot start{why}"
        if self.state is ServerState.FAILED:
            return f"the MCP server {self.name} failed{why}; it is being tried again"
        return f"the MCP server {self.name} is {self.state.value}{why}; try again in a moment"


async def _list_tools(client: Client) -> list[McpTool]:
    tools: list[McpTool] = []
    cursor: str | None = None
    for _ in range(MAX_TOOL_PAGES):
        page = await client.list_tools(cursor=cursor)
        for tool in page.tools:
            description = tool.description or tool.title or ""
            tools.append(McpTool(tool.name, description, dict(tool.input_schema)))
        cursor = page.next_cursor
        if cursor is None:
            break
    return tools


def _innermost(exc: BaseException) -> BaseException:
    """The one exception a group of one wraps (task groups wrap what they raise)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def _describe(exc: BaseException) -> str:
    """One line for an exception, the innermost of a group."""
    inner = _innermost(exc)
    text = str(inner) or type(inner).__name__
    return text.splitlines()[0][:300]
