"""The agent service: what a command handler works with.

:class:`AgentService` is created on the first command (pygls and the
settings are all a starting server loads). It holds the server's state
(:class:`~rhema_lsp.server.state.ServerState`: settings, folders, runs,
provider, pipeline) and the execution of its runs
(:class:`~rhema_lsp.server.execution.Execution`), and serves each command
of :data:`rhema_lsp.contract.COMMANDS` through the router
(:func:`~rhema_lsp.server.router.dispatch`) with the handler of
:mod:`rhema_lsp.server.handlers` that serves it: runs (``rhema.turn``,
``rhema.step``, ``rhema.edit``, ``rhema.cancel``), sessions, checkpoints,
status, MCP servers (each module loaded with its first command).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rhema_lsp.runs.settings import Settings
from rhema_lsp.server.execution import Execution
from rhema_lsp.server.router import Request, check_handlers, dispatch
from rhema_lsp.server.state import ServerState

if TYPE_CHECKING:
    from rhema_lsp.server.pygls_adapter import LspServer

__all__ = ["AgentService", "Request"]


class AgentService:
    """Serves the contract's commands (see the module docstring)."""

    def __init__(self, server: LspServer) -> None:
        check_handlers()
        self.state = ServerState(server)
        self.execution = Execution(self.state)

    @property
    def settings(self) -> Settings:
        return self.state.settings

    def update_settings(self, settings: Settings) -> None:
        """Adopt new settings."""
        self.state.update_settings(settings)

    async def execute(self, name: str, arguments: list[Any] | None, request: Request) -> Any:
        """Run one contract command with its raw arguments; the result as JSON
        (see :func:`~rhema_lsp.server.router.dispatch`)."""
        return await dispatch(self, name, arguments, request)

    async def shutdown(self) -> None:
        """Cancel every run, give them a moment to checkpoint, close the stores."""
        await self.execution.shutdown()
