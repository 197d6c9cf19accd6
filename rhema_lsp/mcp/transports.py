"""The transport of one server attempt: a stdio child or a Streamable HTTP client.

:func:`open_transport` enters what the attempt needs on the caller's exit
stack (the stderr pump, the HTTP client) and returns the SDK transport.

- stdio: the command goes through the spawn gate
  (:func:`~rhema_lsp.tools.spawn.launch`): found on the ``PATH`` the child
  will get, without the working directory's or relative entries, and
  started by its absolute path; a missing command (or ``cwd``) is
  :class:`~rhema_lsp.mcp.errors.McpUnstartable` before anything is spawned.
  The child's environment is the SDK's minimal default, scrubbed, plus the
  entry's ``env``. Its stderr goes to the log line by line (logger
  ``rhema_lsp.mcp.server``) and the last lines are kept in
  :attr:`Attempt.stderr` for the error message.
- HTTP: every answer of 400 or more is remembered in :attr:`Attempt.http`
  (status, a short body, ``WWW-Authenticate``) before the SDK reduces it to
  a generic JSON-RPC error, so messages can say what the server said.
- A stdio child is stopped within about a second, however hung
  (:mod:`rhema_lsp.mcp.stopping`).
- ``${NAME}`` in values follows the connection's :data:`Placeholders`
  policy; values are never logged.
"""

from __future__ import annotations

import logging
import os
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import anyio
import anyio.to_thread
import httpx2
from mcp import StdioServerParameters
from mcp.client._transport import Transport, TransportStreams
from mcp.client.stdio import get_default_environment, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import SessionMessage

from rhema_lsp.mcp.config import McpServerConfig, Placeholders, expand_env, references
from rhema_lsp.mcp.errors import McpUnstartable
from rhema_lsp.mcp.stopping import bound_stops
from rhema_lsp.tools.spawn import Unlaunchable, launch

__all__ = [
    "STDERR_TAIL",
    "Attempt",
    "HttpFailure",
    "open_transport",
    "placeholder_value",
    "stdio_parameters",
    "watched",
]

server_log = logging.getLogger("rhema_lsp.mcp.server")
bound_stops()  # exiting never waits long on a hung child

STDERR_TAIL = 20
BODY_CHARS = 300
"""How much of an HTTP error's body a message keeps."""


@dataclass(frozen=True, slots=True)
class HttpFailure:
    """An HTTP answer of 400 or more, as the server gave it."""

    status: int
    body: str
    authenticate: str | None
    serial: int
    """Counts failures of the attempt: a caller compares it before and after a call."""

    def session_lost(self) -> bool:
        """Whether the server no longer knows the session: 404 (what the spec
        says), or 400 naming the session (what some servers answer)."""
        return self.status == 404 or (self.status == 400 and "session" in self.body.lower())

    def describe(self) -> str:
        """``HTTP 401: body`` (the body shortened, on one line)."""
        body = " ".join(self.body.split())
        return f"HTTP {self.status}: {body}" if body else f"HTTP {self.status}"


@dataclass(slots=True)
class Attempt:
    """What one attempt's transport saw: the stderr tail, the last HTTP failure."""

    stderr: deque[str] = field(default_factory=lambda: deque(maxlen=STDERR_TAIL))
    http: HttpFailure | None = None

    def tail(self, lines: int = 3) -> str:
        """The last ``lines`` lines of stderr, joined."""
        return "; ".join(list(self.stderr)[-lines:])


@asynccontextmanager
async def watched(inner: Transport, gone: anyio.Event) -> AsyncIterator[TransportStreams]:
    """``inner``'s streams, with ``gone`` set when the server's side ends
    (the child exited, the stream broke): the connection's cue to restart."""
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


async def open_transport(
    name: str,
    config: McpServerConfig,
    stack: AsyncExitStack,
    attempt: Attempt,
    *,
    value: Callable[[str, str], str],
    cwd: Path | None,
    auth: httpx2.Auth | None = None,
) -> Transport:
    """The SDK transport for one attempt at ``config``.

    Parameters
    ----------
    value
        ``value(template, what)``: a setting's value with ``${NAME}`` handled
        by the connection's policy (raises ``McpUnstartable``).
    cwd
        A stdio server's working directory when its entry sets none.
    auth
        The HTTP client's authentication (OAuth), if any.

    Raises
    ------
    McpUnstartable
        The command or the working directory does not exist, or a value is refused.
    """
    if config.command:
        # looking the command up reads the disk: off the event loop
        parameters = await anyio.to_thread.run_sync(stdio_parameters, name, config, value, cwd)
        read_end, write_end = os.pipe()
        group = await stack.enter_async_context(anyio.create_task_group())
        errlog: TextIO = os.fdopen(write_end, "w")
        done = anyio.Event()
        group.start_soon(_pump_stderr, name, read_end, attempt, done)

        async def stop_pump() -> None:
            errlog.close()
            with anyio.move_on_after(1.0):
                await done.wait()
            group.cancel_scope.cancel()

        stack.push_async_callback(stop_pump)
        return stdio_client(parameters, errlog=errlog)
    assert config.url is not None
    headers = {header: value(text, f"header {header}") for header, text in config.headers.items()}

    async def remember(response: httpx2.Response) -> None:
        if response.status_code < 400:
            return
        await response.aread()
        serial = attempt.http.serial + 1 if attempt.http else 1
        attempt.http = HttpFailure(
            response.status_code,
            response.text[:BODY_CHARS],
            response.headers.get("www-authenticate"),
            serial,
        )

    http = await stack.enter_async_context(
        httpx2.AsyncClient(
            headers=headers,
            timeout=httpx2.Timeout(30.0, read=300.0),
            auth=auth,
            event_hooks={"response": [remember]},
        )
    )
    return streamable_http_client(config.url, http_client=http)


def stdio_parameters(
    name: str, config: McpServerConfig, value: Callable[[str, str], str], cwd: Path | None
) -> StdioServerParameters:
    """The SDK's parameters of a stdio server, its command found.

    Raises
    ------
    McpUnstartable
        No such command or working directory, or a refused value.
    """
    assert config.command is not None
    env = {key: value(text, f"env {key}") for key, text in config.env.items()}
    folder = Path(os.path.expanduser(config.cwd)) if config.cwd else cwd
    if folder is not None and not folder.is_dir():
        raise McpUnstartable(
            f"MCP server {name}: its working directory {str(folder)!r} does not exist: "
            "fix `cwd` in its entry"
        )
    roots = [folder] if folder is not None else []
    command = [os.path.expanduser(config.command), *config.args]
    try:
        started = launch(
            command, roots=roots, cwd=folder, inherit=get_default_environment(), given=env
        )
    except Unlaunchable:
        where = "not an executable file" if os.sep in config.command else "not found on PATH"
        raise McpUnstartable(
            f"MCP server {name}: no such command {config.command!r} ({where}; "
            "the workspace and relative PATH entries are not searched): "
            "install it or fix `command` in its entry"
        ) from None
    return StdioServerParameters(
        command=started.argv[0],
        args=list(started.argv[1:]),
        env=started.env,
        cwd=folder,
        encoding_error_handler="replace",
    )


def placeholder_value(
    name: str, policy: Placeholders, environ: Mapping[str, str]
) -> Callable[[str, str], str]:
    """The ``value(template, what)`` of a connection whose policy is ``policy``."""

    def value(template: str, what: str) -> str:
        if policy == "keep" or not references(template):
            return template
        where = f"MCP server {name}: {what}"
        if policy == "refuse":
            raise McpUnstartable(
                f"{where} reads the environment, which a workspace .mcp.json may not: "
                "define this server in your user settings instead"
            )
        return expand_env(template, environ, what=where)

    return value


async def _pump_stderr(name: str, fd: int, attempt: Attempt, done: anyio.Event) -> None:
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
                _stderr_line(name, line, attempt)
    finally:
        if pending:
            _stderr_line(name, pending, attempt)
        os.close(fd)
        done.set()


def _stderr_line(name: str, raw: bytes, attempt: Attempt) -> None:
    line = raw.decode("utf-8", "replace").rstrip()
    if line:
        attempt.stderr.append(line[:500])
        server_log.info("[%s] %s", name, line)
