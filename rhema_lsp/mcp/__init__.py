"""The user's Model Context Protocol servers as agent tools, safely.

A layer beside ``tools``: it may use the engine and the tools' ``Editor``
seam, never the server, and it never imports pygls. The package root is
light (pydantic only), because the settings import it at start-up; the SDK
(``mcp`` on PyPI) is loaded only by :mod:`rhema_lsp.mcp.connection` and the
modules it alone imports (calls, transports, oauth, failures, listings,
offers, asks, results), which :class:`~rhema_lsp.mcp.hub.McpHub` imports in a
worker thread on the first run that needs MCP tools.

- :mod:`~rhema_lsp.mcp.config`: an ``mcpServers`` entry, validated.
- :mod:`~rhema_lsp.mcp.userfile`: the user config file and the workspace's
  ``.mcp.json``; :mod:`~rhema_lsp.mcp.trust`: whether that file may be used.
- :mod:`~rhema_lsp.mcp.connection`: one server, supervised (its
  :mod:`~rhema_lsp.mcp.states`); :mod:`~rhema_lsp.mcp.calls`: the requests
  sent to it; :mod:`~rhema_lsp.mcp.failures`: why an attempt failed, and
  whether to retry.
- :mod:`~rhema_lsp.mcp.transports`: one attempt's stdio child or HTTP client.
- :mod:`~rhema_lsp.mcp.oauth`: OAuth 2.1 sign-in of an HTTP server (tokens
  in the user state directory).
- :mod:`~rhema_lsp.mcp.listings` and :mod:`~rhema_lsp.mcp.offers`: what a
  server offers (tools, prompts, resources), kept current.
- :mod:`~rhema_lsp.mcp.host` and :mod:`~rhema_lsp.mcp.asks`: what a server
  asks of us (roots, sampling, elicitation) and who answers.
- :mod:`~rhema_lsp.mcp.modern`: MCP 2026-07-28 beside the handshake era
  (the version negotiated in one place, list changes and cache hints).
- :mod:`~rhema_lsp.mcp.results`: a result as the text the model reads.
- :mod:`~rhema_lsp.mcp.schemas`: wire-safe names and schemas.
- :mod:`~rhema_lsp.mcp.catalog`: what a run offers (``find_tools`` past the limits).
- :mod:`~rhema_lsp.mcp.resolver`: the run's resolver (approval, replay safety).
- :mod:`~rhema_lsp.mcp.hub`: every server, and the resolver of each run;
  :mod:`~rhema_lsp.mcp.wanted`: which servers a run wants, from where.
"""

from rhema_lsp.mcp.config import McpServerConfig, parse_servers
from rhema_lsp.mcp.errors import (
    McpCallFailed,
    McpError,
    McpTimeout,
    McpUnavailable,
    McpUnstartable,
)

__all__ = [
    "McpCallFailed",
    "McpError",
    "McpServerConfig",
    "McpTimeout",
    "McpUnavailable",
    "McpUnstartable",
    "parse_servers",
]
