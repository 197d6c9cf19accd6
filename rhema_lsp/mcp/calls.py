"""The requests sent to one ready MCP server: tool calls, resource reads,
prompts.

:class:`McpCalls` is the part of
:class:`~rhema_lsp.mcp.connection.McpConnection` that sends a request
through the client its supervisor holds open, and the rules every request
keeps: only while the server is ``ready`` (a request to a server that is
starting or restarting waits for it, at most :data:`RESTART_WAIT_S`); bounded by its timeout (a
request cancelled by the run, or over its timeout, is abandoned with MCP's
``notifications/cancelled``, which the SDK sends when the awaiting task is
cancelled); the SDK's errors mapped here, once, to
:mod:`rhema_lsp.mcp.errors`; an HTTP server that lost the session (404, or
400 naming it) gets a new one and the request is sent once more, never
twice more; a request answered ``-32042`` (a page to visit first) is sent
once more after the user visited it (:mod:`rhema_lsp.mcp.pages`). The
server's life (start, restart, stop) is the connection's.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio
import httpx2
import mcp_types
from mcp import Client, InputRequiredRoundsExceededError
from mcp.shared.exceptions import MCPError

from rhema_lsp.engine import ImagePart
from rhema_lsp.mcp.errors import McpCallFailed, McpTimeout, McpUnavailable
from rhema_lsp.mcp.failures import describe
from rhema_lsp.mcp.host import RunHost
from rhema_lsp.mcp.listings import prompt_text
from rhema_lsp.mcp.modern.era import is_modern  # 2026-07-28 has no session
from rhema_lsp.mcp.pages import Completions, required_pages, visit_required
from rhema_lsp.mcp.results import render_contents, render_result
from rhema_lsp.mcp.states import ServerState
from rhema_lsp.mcp.transports import Attempt

__all__ = ["RESTART_WAIT_S", "CallOutcome", "McpCalls", "Progress"]

logger = logging.getLogger("rhema_lsp.mcp.connection")
"""The connection's logger: a call's lines are the server's."""

_R = TypeVar("_R")

RESTART_WAIT_S = 20.0
"""The longest a request waits for a starting or restarting server."""
Progress = Callable[[float, float | None, str | None], None]
"""Receives a call's progress: done so far, the total if known, a message."""


class _PagesRequired(Exception):
    """The server answered ``-32042``: pages to visit before the request."""

    def __init__(self, error: MCPError) -> None:
        super().__init__(error.message)
        self.error = error


class _SessionLost(Exception):
    """An HTTP server no longer knows the session ``client`` holds."""

    def __init__(self, client: Client, why: str) -> None:
        super().__init__(why)
        self.client = client


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """A call's result as text, whether the server flagged it an error, and
    the images it returned."""

    text: str
    is_error: bool
    images: tuple[ImagePart, ...] = ()


class McpCalls:
    """A server's requests (see the module docstring); the supervisor's
    state they read is the connection's."""

    name: str
    state: ServerState
    error: str | None
    start_timeout: float
    _client: Client | None
    _attempt: Attempt
    _unstartable: bool
    _renewing: bool
    _gone: anyio.Event
    _changed: anyio.Event
    host: RunHost | None
    completions: Completions

    def _set(self, state: ServerState) -> None:
        """Move the server to ``state`` (the connection's)."""
        raise NotImplementedError

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any],
        timeout_s: float,
        report: Progress | None = None,
    ) -> CallOutcome:
        """Call ``tool``; cancellation and the timeout cancel it on the server.
        The request carries a ``progressToken``: the server's progress reaches
        ``report``.

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

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            if report is not None:
                report(progress, total, message)

        async def send(client: Client) -> mcp_types.CallToolResult:
            return await client.call_tool(tool, arguments, progress_callback=on_progress)

        result = await self._request(send, timeout_s, "call")
        text, images = render_result(result, self.name)
        return CallOutcome(text, result.is_error, images)

    async def read_resource(self, uri: str, timeout_s: float) -> str:
        """The resource at ``uri`` as text (raises as :meth:`call` does)."""

        async def send(client: Client) -> mcp_types.ReadResourceResult:
            return await client.read_resource(uri)

        return render_contents(await self._request(send, timeout_s, "read of the resource"))

    async def get_prompt(self, name: str, arguments: dict[str, str], timeout_s: float) -> str:
        """The prompt ``name`` filled with ``arguments``, as the text of a turn."""

        async def send(client: Client) -> mcp_types.GetPromptResult:
            return await client.get_prompt(name, arguments)

        return prompt_text(await self._request(send, timeout_s, "prompt request"))

    async def _request(
        self, send: Callable[[Client], Awaitable[_R]], timeout_s: float, what: str
    ) -> _R:
        """:meth:`_request_renewed`; after ``-32042``, the pages visited and
        the request sent once more."""
        try:
            return await self._request_renewed(send, timeout_s, what)
        except _PagesRequired as needed:
            pages = required_pages(needed.error)
            await visit_required(self.name, self.host, pages, self.completions)
        try:
            return await self._request_renewed(send, timeout_s, what)
        except _PagesRequired as again:
            raise McpCallFailed(
                f"the MCP server {self.name} refused the {what} again after the page was "
                f"visited: {again.error.message}"
            ) from again

    async def _request_renewed(
        self, send: Callable[[Client], Awaitable[_R]], timeout_s: float, what: str
    ) -> _R:
        """``send`` through the ready client, its errors mapped. An HTTP server
        that lost the session (404, or 400 naming the session) gets a new one
        (initialize again) and the request is sent once more."""
        try:
            return await self._request_once(send, timeout_s, what)
        except _SessionLost as lost:
            logger.info("MCP server %s lost the session (%s); starting a new one", self.name, lost)
            await self._renew(lost.client)
        try:
            return await self._request_once(send, timeout_s, what)
        except _SessionLost as again:
            raise McpUnavailable(
                f"the MCP server {self.name} lost the session again right after a new one "
                f"was started ({again}); try again later"
            ) from again

    async def _request_once(
        self, send: Callable[[Client], Awaitable[_R]], timeout_s: float, what: str
    ) -> _R:
        await self._wait_restarted(timeout_s)
        client, attempt = self._client, self._attempt
        if client is None or self.state is not ServerState.READY:
            raise McpUnavailable(self._unavailable())
        seen = attempt.http.serial if attempt.http else 0
        try:
            with anyio.fail_after(timeout_s):
                return await send(client)
        except TimeoutError as exc:
            raise McpTimeout(
                f"the MCP server {self.name} did not answer within {timeout_s:g} s; the {what} "
                "was cancelled (raise the server's `timeout` setting if it needs longer)"
            ) from exc
        except MCPError as exc:
            if exc.code == mcp_types.CONNECTION_CLOSED:
                raise McpUnavailable(
                    f"the MCP server {self.name} stopped during the {what}; it is being "
                    "restarted, so try again in a moment"
                ) from exc
            if exc.code == mcp_types.URL_ELICITATION_REQUIRED:
                raise _PagesRequired(exc) from exc
            http = attempt.http if attempt.http and attempt.http.serial > seen else None
            if http is not None and http.session_lost() and not is_modern(client):
                raise _SessionLost(client, http.describe()) from exc
            detail = f" ({http.describe()})" if http is not None else ""
            raise McpCallFailed(
                f"the MCP server {self.name} refused the {what}: {exc.message}{detail}"
            ) from exc
        except InputRequiredRoundsExceededError as exc:  # 2026-07-28: it asks and asks
            raise McpCallFailed(f"the MCP server {self.name} kept asking for input") from exc
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, httpx2.HTTPError) as exc:
            raise McpUnavailable(
                f"the connection to the MCP server {self.name} broke: {describe(exc)}"
            ) from exc

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

    async def _wait_restarted(self, timeout_s: float) -> None:
        """While the server starts or restarts, wait for it: at most
        :data:`RESTART_WAIT_S` (or the request's own timeout, if shorter)."""
        with anyio.move_on_after(min(RESTART_WAIT_S, timeout_s)):
            while self.state in (ServerState.STARTING, ServerState.RESTARTING):
                await self._changed.wait()

    def _unavailable(self) -> str:
        why = f": {self.error}" if self.error else ""
        if self._unstartable:
            return f"the MCP server {self.name} cannot start{why}"
        if self.state is ServerState.FAILED:
            return f"the MCP server {self.name} failed{why}; it is being tried again"
        return f"the MCP server {self.name} is {self.state.value}{why}; try again in a moment"
