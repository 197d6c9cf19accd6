"""What one session with a server offers, kept current: :class:`Offers`.

Filled when the session starts (:meth:`Offers.load`: tools, prompts,
resources, instructions; the server's log asked for at ``info`` in the
handshake era, where ``logging/setLevel`` governs it; only the tool listing
must succeed: an optional request that fails or hangs is logged naming its
method and the server starts without it), then kept current by
the server's notifications (:meth:`Offers.on_message`): a
``notifications/*/list_changed`` lists that kind again in the background,
and :attr:`Offers.version` goes up, so the run's resolver offers the new
list in its next request. A server's log message (:func:`log_message`) goes
to the log at its own level (logger ``rhema_lsp.mcp.server``). Imports the
SDK: load it from :mod:`rhema_lsp.mcp.connection` only.
"""

from __future__ import annotations

import json
import logging
import warnings
from collections.abc import Awaitable
from typing import Any, TypeVar

import anyio
import anyio.abc
import httpx2
import mcp_types
from mcp import Client
from mcp.client.session import IncomingMessage
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from rhema_lsp.mcp.errors import McpUnavailable
from rhema_lsp.mcp.listings import (
    McpPrompt,
    McpResource,
    McpTool,
    list_prompts,
    list_resources,
    list_tools,
)
from rhema_lsp.mcp.transports import server_log

__all__ = ["OPTIONAL_S", "Offers", "log_message"]

logger = logging.getLogger(__name__)

_T = TypeVar("_T")

OPTIONAL_S = 3.0
"""Seconds an optional request of the start may take (see :meth:`Offers.load`)."""

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "notice": logging.INFO,
           "warning": logging.WARNING}  # fmt: skip
"""MCP log levels as the log's; anything more severe is an error."""
_KINDS: dict[type, str] = {
    mcp_types.ToolListChangedNotification: "tools",
    mcp_types.PromptListChangedNotification: "prompts",
    mcp_types.ResourceListChangedNotification: "resources",
}


class Offers:
    """The tools, prompts, resources and instructions of a server's session."""

    def __init__(self, server: str) -> None:
        self.server = server
        self.tools: list[McpTool] = []
        self.kept: list[McpTool] = []
        """The tools of the last session that listed them, kept when it ends
        (a restarting server's are offered meanwhile)."""
        self.prompts: list[McpPrompt] = []
        self.resources: list[McpResource] = []
        self.instructions: str | None = None
        self.has_resources = False
        self.version = 0
        """Goes up whenever a list changes."""
        self._client: Client | None = None
        self._group: anyio.abc.TaskGroup | None = None

    async def load(self, client: Client) -> None:
        """Learn what the server offers (see the module docstring). Only the
        tool listing must succeed: the optional requests (prompts,
        resources, ``logging/setLevel``) that fail or do not answer within
        :data:`OPTIONAL_S` are logged naming the method, and the server
        starts without them."""
        capabilities = client.server_capabilities
        try:
            self.tools = self.kept = await list_tools(client, self.server)
        except MCPError as exc:
            raise McpUnavailable(f"tools/list failed: {exc}") from exc
        prompts = await self._optional("prompts/list", list_prompts(client), capabilities.prompts)
        self.prompts = prompts or []
        self.has_resources = capabilities.resources is not None
        resources = await self._optional(
            "resources/list", list_resources(client), self.has_resources
        )
        self.resources = resources or []
        self.instructions = client.instructions
        self.version += 1
        if capabilities.logging is not None and client.protocol_version < "2026":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await self._optional("logging/setLevel", client.set_logging_level("info"), True)

    async def _optional(self, method: str, request: Awaitable[_T], wanted: object) -> _T | None:
        """``request``'s answer, or ``None`` when it is not ``wanted`` (the
        capability is not declared), fails or takes over :data:`OPTIONAL_S`
        (logged, naming ``method``): an optional request never sinks a start."""
        if not wanted:
            close = getattr(request, "close", None)
            if close is not None:
                close()  # a coroutine never awaited
            return None
        try:
            with anyio.fail_after(OPTIONAL_S):
                return await request
        except (MCPError, TimeoutError, anyio.BrokenResourceError, httpx2.HTTPError) as exc:
            why = f"no answer within {OPTIONAL_S:g} s" if isinstance(exc, TimeoutError) else exc
            logger.warning(
                "MCP server %s: %s failed (%s); it starts without it", self.server, method, why
            )
            return None

    def follow(self, client: Client, group: anyio.abc.TaskGroup) -> None:
        """Keep the lists current for ``client``'s session, listing again in ``group``."""
        self._client, self._group = client, group

    def clear(self) -> None:
        """The session ended: nothing is offered (the tools are :attr:`kept`)."""
        self._client = self._group = None
        self.tools, self.prompts, self.resources, self.instructions = [], [], [], None
        self.has_resources = False
        self.version += 1

    async def on_message(self, message: IncomingMessage) -> None:
        """A server's notification: a changed list is listed again, in the background."""
        kind = next((k for t, k in _KINDS.items() if isinstance(message, t)), None)
        if kind is not None:
            self.relist_soon(kind)

    def relist_soon(self, *kinds: str) -> None:
        """List ``kinds`` again, one after another, in the background."""
        client, group = self._client, self._group
        if client is not None and group is not None:
            group.start_soon(self._relist_all, client, kinds)

    async def _relist_all(self, client: Client, kinds: tuple[str, ...]) -> None:
        for kind in kinds:
            await self._relist(client, kind)

    async def _relist(self, client: Client, kind: str) -> None:
        try:
            with anyio.fail_after(60):
                if kind == "tools":
                    listed: list[Any] = await list_tools(client, self.server)
                elif kind == "prompts":
                    listed = await list_prompts(client)
                else:
                    listed = await list_resources(client)
        except (MCPError, TimeoutError, anyio.BrokenResourceError, httpx2.HTTPError) as exc:
            logger.warning(
                "MCP server %s: its %s could not be listed again: %s", self.server, kind, exc
            )
            return
        if client is not self._client or listed == getattr(self, kind):
            return  # a new session started meanwhile, with lists of its own; or no change
        setattr(self, kind, listed)
        if kind == "tools":
            self.kept = listed
        self.version += 1
        logger.info("MCP server %s changed its %s: %d now", self.server, kind, len(listed))


async def log_message(server: str, params: mcp_types.LoggingMessageNotificationParams) -> None:
    """A server's log message, into the log at its own level."""
    level = _LEVELS.get(params.level, logging.ERROR)
    data = params.data if isinstance(params.data, str) else json.dumps(params.data)
    source = f"{server}/{params.logger}" if params.logger else server
    server_log.log(level, "[%s] %s", source, data[:2000])
