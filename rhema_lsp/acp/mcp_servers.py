"""The MCP servers an ACP client passes with ``session/new`` and ``session/load``.

ACP lets the editor hand the agent the MCP servers the user configured in
the editor. Each becomes one of the session's MCP servers, beside the user's
own (``mcpServers`` in the user config file), through the same hub: started
on the first prompt whose mode is in ``mcpModes``, every call asked through
``session/request_permission``, stopped when the agent exits.

- stdio (``command``, ``args``, ``env``) and Streamable HTTP (``type:
  http``, ``url``, ``headers``) are served; their values are the editor's
  and are used as given (literal header values included; never logged).
- SSE and MCP-over-ACP servers are refused: the log says which and why, and
  the session goes on without them (``initialize`` declares
  ``mcpCapabilities`` with ``http`` only, so a client should not send them).
- A name passed twice keeps its first entry; an invalid entry is named in
  the log and left out.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from acp.schema import AcpMcpServer, HttpMcpServer, McpServerStdio, SseMcpServer
from pydantic import ValidationError

from rhema_lsp.mcp import McpServerConfig

__all__ = ["ClientServer", "client_servers"]

logger = logging.getLogger(__name__)

ClientServer = HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio
"""One entry of ``mcpServers`` in ``session/new`` or ``session/load``."""


def _entry(server: HttpMcpServer | McpServerStdio) -> dict[str, object]:
    if isinstance(server, McpServerStdio):
        return {
            "type": "stdio",
            "command": server.command,
            "args": list(server.args),
            "env": {variable.name: variable.value for variable in server.env},
        }
    return {
        "type": "http",
        "url": server.url,
        "headers": {header.name: header.value for header in server.headers},
    }


def client_servers(servers: Sequence[ClientServer] | None) -> dict[str, McpServerConfig]:
    """The servers a client passed, as the MCP layer's entries, by name.

    Parameters
    ----------
    servers
        ``mcpServers`` of ``session/new`` or ``session/load``.

    Returns
    -------
    dict of str to McpServerConfig
        The servers this agent can run; each one left out is logged with
        the reason (never with its values).
    """
    kept: dict[str, McpServerConfig] = {}
    for server in servers or []:
        name = server.name.strip()
        if isinstance(server, SseMcpServer | AcpMcpServer):
            logger.warning(
                "MCP server %r from the editor is left out: its %s transport is not "
                "supported (use its Streamable HTTP URL, type http, or a stdio command)",
                name,
                server.type.upper(),
            )
            continue
        if not name:
            logger.warning("an MCP server from the editor has no name; left out")
            continue
        if name in kept:
            logger.warning("MCP server %r is passed twice by the editor; the first is kept", name)
            continue
        try:
            kept[name] = McpServerConfig.given(_entry(server))
        except ValidationError as exc:
            reasons = "; ".join(
                str(error["msg"]).removeprefix("Value error, ") for error in exc.errors()
            )
            logger.warning("MCP server %r from the editor is left out: %s", name, reasons)
    return kept
