"""The MCP layer's exceptions, mapped from the SDK's at one boundary.

::

    McpError                 anything an MCP server did not do for us
     ├── McpUnavailable      the server is not running: it failed to start,
     │    │                  crashed, or is waiting out its restart back-off
     │    └── McpUnstartable it cannot start as configured (no such command,
     │                       a refused entry): retrying would not help
     └── McpCallFailed       the server answered a request with a JSON-RPC error,
          └── McpTimeout     or did not answer within the call's timeout

:mod:`rhema_lsp.mcp.connection` raises only these (``raise ... from exc``);
:class:`~rhema_lsp.mcp.resolver.McpTools` turns every one of them into an
in-band tool error whose message is what the model reads.
"""

from __future__ import annotations

__all__ = ["McpCallFailed", "McpError", "McpTimeout", "McpUnavailable", "McpUnstartable"]


class McpError(Exception):
    """An MCP server did not do what was asked; the message says what to do next."""


class McpUnavailable(McpError):
    """The server is not running (start failed, crashed, restarting)."""


class McpUnstartable(McpUnavailable):
    """The server cannot start as configured; it is not retried until its
    entry changes or the user restarts it."""


class McpCallFailed(McpError):
    """The server answered with a protocol error."""


class McpTimeout(McpCallFailed):
    """The server did not answer in time; the call was cancelled on the server."""
