"""Where one MCP server is in its life: :class:`ServerState`.

The supervisor (:class:`~rhema_lsp.mcp.connection.McpConnection`) moves a
server between these states; its calls (:mod:`rhema_lsp.mcp.calls`) are
sent only while it is ``ready``, and the hub and ``rhema.status`` show
them. Data only: this module imports nothing of the project.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["ServerState"]


class ServerState(StrEnum):
    """Where a server is in its life."""

    IDLE = "idle"
    STARTING = "starting"
    READY = "ready"
    RESTARTING = "restarting"
    AUTHORIZING = "authorizing"
    FAILED = "failed"
    STOPPED = "stopped"
