"""One MCP server, supervised: started on demand, reused, restarted, stopped.

:class:`McpConnection` owns one background task (the *supervisor*) that holds
the SDK's :class:`mcp.Client` open for as long as the server lives, because
the SDK's transports must be entered and left by the same task. Calls from
any task go through that client while it is ``ready``.

- Start: :meth:`McpConnection.ensure_started` starts the supervisor once and
  waits (boundedly) until the server is ``ready`` or has failed; a slow
  server keeps starting in the background and is there on the next turn.
- Crash: when the transport ends (the child exited, the stream broke), the
  tools disappear and the supervisor starts it again after a back-off
  (:data:`BACKOFF_S` doubling up to :data:`BACKOFF_MAX_S`); after
  :data:`RESTART_LIMIT` failures in a row it stays ``failed`` until the next
  turn asks for it again.
- stderr of a stdio server goes to the log line by line (logger
  ``rhema_lsp.mcp.server``); the last lines are kept for the error message.
- The child's environment is the SDK's minimal default (``HOME``, ``PATH``,
  ...) plus the entry's ``env``: none of the editor's keys leak to it.
  ``${NAME}`` in an ``env`` or header value is expanded, refused or kept as
  written, as the connection's :data:`Placeholders` policy says. Environment
  and header values are never logged.
- Calls: SDK errors are mapped here, once, to :mod:`rhema_lsp.mcp.errors`.
  A call cancelled by the run, or over its timeout, is abandoned with MCP's
  ``notifications/cancelled`` (the SDK sends it when the awaiting task is
  cancelled).
- Stop: :meth:`McpConnection.aclose` cancels the supervisor and waits for the
  SDK to close stdin, then terminate and kill the server's process group.

This module imports the SDK, which takes seconds to load: import it in a
worker thread (:func:`rhema_lsp.mcp.hub.load_connections`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal, TextIO

import anyio
import httpx2
import mcp_types
from mcp import Client, StdioServerParameters
from mcp.client._transport import Transport, TransportStreams
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from rhema_lsp import __version__
from rhema_lsp.mcp.config import McpServerConfig, expand_env, references
from rhema_lsp.mcp.errors import McpCallFailed, McpTimeout, McpUnavailable

__all__ = [
    "BACKOFF_MAX_S",
    "BACKOFF_S",
    "RESTART_LIMIT",
    "CallOutcome",
    "McpConnection",
    "McpTool",
    "Placeholders",
    "ServerState",
    "render_result",
]

logger = logging.getLogger(__name__)
server_log = logging.getLogger("rhema_lsp.mcp.server")

BACKOFF_S = 0.5
BACKOFF_MAX_S = 30.0
RESTART_LIMIT = 5
STABLE_S = 60.0
"""A server that ran this long before it stopped starts a fresh series of restarts."""
STDERR_TAIL = 20
MAX_TOOL_PAGES = 50

Placeholders = Literal["expand", "refuse", "keep"]
"""What ``${NAME}`` in an ``env`` or header value does: ``expand`` from the
server's environment (the user's own configuration), ``refuse`` to start (a
workspace file, which may not read the environment), or ``keep`` as written
(the values a client passes are final)."""


class ServerState(StrEnum):
    """Where a server is in its life."""

    IDLE = "idle"
    STARTING = "starting"
    READY = "ready"
    RESTARTING = "restarting"
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
        What ``${NAME}`` in a value does (see :data:`Placeholders`).
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
        backoff: Callable[[int], float] = backoff_delay,
    ) -> None:
        self.name = name
        self.config = config
        self.state = ServerState.IDLE
        self.error: str | None = None
        self.tools: list[McpTool] = []
        self.restarts = 0
        self._environ = environ
        self._cwd = cwd
        self._placeholders = placeholders
        self._backoff = backoff
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._changed = anyio.Event()
        self._stderr: deque[str] = deque(maxlen=STDERR_TAIL)

    # -- life ------------------------------------------------------------------

    def _set(self, state: ServerState) -> None:
        self.state = state
        self._changed.set()
        self._changed = anyio.Event()

    async def ensure_started(self, wait_s: float) -> None:
        """Start the server unless it runs; wait up to ``wait_s`` seconds for
        it to be ready (or to fail). A failed server is tried again."""
        if self._task is None or self._task.done():
            self.error = None
            self._set(ServerState.STARTING)
            self._task = asyncio.create_task(self._supervise(), name=f"mcp server {self.name}")
        with anyio.move_on_after(wait_s):
            while self.state is ServerState.STARTING:
                await self._changed.wait()

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
            started = anyio.current_time()
            try:
                await self._serve_once()
                reason = "the server closed the connection"
            except McpUnavailable as exc:
                reason = str(exc)
            except OSError as exc:
                reason = f"could not start {self.config.describe()!r}: {exc.strerror or exc}"
            except Exception as exc:  # noqa: BLE001 - any SDK or transport failure is this server's state, logged below
                reason = _describe(exc)
            self._client = None
            self.tools = []
            if anyio.current_time() - started > STABLE_S:
                failures = 0
            failures += 1
            tail = "; ".join(list(self._stderr)[-3:])
            self.error = f"{reason} (stderr: {tail})" if tail else reason
            if failures > RESTART_LIMIT:
                logger.error(
                    "MCP server %s failed %d times, giving up: %s", self.name, failures, self.error
                )
                self._set(ServerState.FAILED)
                return
            delay = self._backoff(failures)
            logger.warning(
                "MCP server %s stopped: %s; restarting in %.1f s", self.name, self.error, delay
            )
            self.restarts += 1
            self._set(ServerState.RESTARTING)
            await anyio.sleep(delay)
            self._set(ServerState.STARTING)

    async def _serve_once(self) -> None:
        gone = anyio.Event()
        self._stderr.clear()
        async with AsyncExitStack() as stack:
            client = Client(
                _watched(await self._transport(stack), gone),
                client_info=mcp_types.Implementation(name="rhema-lsp", version=__version__),
                cache=None,
            )
            await stack.enter_async_context(client)
            self.tools = await _list_tools(client)
            self._client = client
            self.error = None
            logger.info("MCP server %s ready with %d tools", self.name, len(self.tools))
            self._set(ServerState.READY)
            await gone.wait()

    async def _transport(self, stack: AsyncExitStack) -> Transport:
        config = self.config
        if config.command:
            parameters = self._stdio_parameters()
            read_end, write_end = os.pipe()
            group = await stack.enter_async_context(anyio.create_task_group())
            errlog: TextIO = os.fdopen(write_end, "w")
            done = anyio.Event()
            group.start_soon(self._pump_stderr, read_end, done)

            async def stop_pump() -> None:
                errlog.close()
                with anyio.move_on_after(1.0):
                    await done.wait()
                group.cancel_scope.cancel()

            stack.push_async_callback(stop_pump)
            return stdio_client(parameters, errlog=errlog)
        assert config.url is not None
        headers = {
            name: self._value(value, f"header {name}") for name, value in config.headers.items()
        }
        http = await stack.enter_async_context(
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0))
        )
        return streamable_http_client(config.url, http_client=http)

    def _stdio_parameters(self) -> StdioServerParameters:
        config = self.config
        assert config.command is not None
        env = {name: self._value(value, f"env {name}") for name, value in config.env.items()}
        return StdioServerParameters(
            command=config.command,
            args=list(config.args),
            env=env or None,
            cwd=os.path.expanduser(config.cwd) if config.cwd else self._cwd,
            encoding_error_handler="replace",
        )

    def _value(self, template: str, what: str) -> str:
        if self._placeholders == "keep" or not references(template):
            return template
        where = f"MCP server {self.name}: {what}"
        if self._placeholders == "refuse":
            raise McpUnavailable(
                f"{where} reads the environment, which a workspace .mcp.json may not: "
                "define this server in your user settings instead"
            )
        return expand_env(template, self._environ, what=where)

    async def _pump_stderr(self, fd: int, done: anyio.Event) -> None:
        os.set_blocking(fd, False)
        pending = b""
        try:
            while True:
                await anyio.wait_readable(fd)
                try:
                    chunk = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                if not chunk:
                    break
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    self._stderr_line(line)
        finally:
            if pending:
                self._stderr_line(pending)
            os.close(fd)
            done.set()

    def _stderr_line(self, raw: bytes) -> None:
        line = raw.decode("utf-8", "replace").rstrip()
        if line:
            self._stderr.append(line[:500])
            server_log.info("[%s] %s", self.name, line)

    # -- calls -----------------------------------------------------------------

    async def call(self, tool: str, arguments: dict[str, Any], timeout_s: float) -> CallOutcome:
        """Call ``tool``; cancellation and the timeout cancel it on the server.

        Raises
        ------
        McpUnavailable
            The server is not ready, or stopped during the call.
        McpTimeout
            No answer within ``timeout_s``.
        McpCallFailed
            The server answered with a protocol error.
        """
        client = self._client
        if client is None or self.state is not ServerState.READY:
            raise McpUnavailable(self._unavailable())
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
            raise McpCallFailed(
                f"the MCP server {self.name} refused the call: {exc.message}"
            ) from exc
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, httpx2.HTTPError) as exc:
            raise McpUnavailable(
                f"the connection to the MCP server {self.name} broke: {_describe(exc)}"
            ) from exc

        return CallOutcome(render_result(result), result.is_error)

    def _unavailable(self) -> str:
        why = f": {self.error}" if self.error else ""
        if self.state is ServerState.FAILED:
            return f"the MCP server {self.name} failed{why}; it is tried again next turn"
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


def render_result(result: mcp_types.CallToolResult) -> str:
    """A call's content as the text the model reads: text as it is, images
    and audio as a note, resources as links (embedded text resources in full)."""
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            parts.append(block.text)
        elif isinstance(block, mcp_types.ImageContent | mcp_types.AudioContent):
            kind = "image" if isinstance(block, mcp_types.ImageContent) else "audio"
            size = len(block.data) * 3 // 4
            parts.append(f"[{kind} {block.mime_type}, about {size} bytes: not shown to the model]")
        elif isinstance(block, mcp_types.ResourceLink):
            about = f": {block.description}" if block.description else ""
            parts.append(f"[resource {block.name} <{block.uri}>{about}]")
        elif isinstance(block, mcp_types.EmbeddedResource):
            resource = block.resource
            if isinstance(resource, mcp_types.TextResourceContents):
                parts.append(f"[resource <{resource.uri}>]\n{resource.text}")
            else:
                parts.append(
                    f"[resource <{resource.uri}> ({resource.mime_type or 'binary'}): not shown]"
                )
        else:
            parts.append(f"[{getattr(block, 'type', 'content')}: not shown]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, indent=2))
    return "\n".join(parts) if parts else "(no output)"


def _describe(exc: BaseException) -> str:
    """One line for an exception, the innermost of a group."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0][:300]
