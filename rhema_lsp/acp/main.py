"""The ``rhema-lsp acp`` process: one ACP connection on stdin/stdout.

stdout carries only the protocol; the log goes to stderr (keys never appear
in it; Python warnings, such as the SDK's about unstable methods, become log
lines). The SDK's connection runs on :class:`~rhema_lsp.acp.transport.LineTransport`
rather than its own stdio streams, so every line is checked first and stdin
and stdout may be files as well as pipes. The process ends the same way
whether the client closes stdin or sends ``SIGTERM`` (as CodeCompanion does
when it exits; :func:`~rhema_lsp.runs.lifetime.serve_until_stopped`): every
running prompt is cancelled and checkpointed (its partial answer kept) while
the connection is still up, so a client still listening gets its
``cancelled`` answers; then the session stores are closed, the MCP servers
stopped, and only then the connection closed.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Awaitable, Callable
from typing import cast

import anyio
from acp import Agent
from acp.agent.connection import AgentSideConnection

from rhema_lsp.acp.agent import RhemaAcpAgent
from rhema_lsp.acp.transport import LineTransport
from rhema_lsp.jsonrpc.stdio import FdReader, FdWriter
from rhema_lsp.runs.lifetime import serve_until_stopped
from rhema_lsp.runs.settings import Settings

__all__ = ["connect", "serve"]


def _log_to_stderr(level: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("rhema-lsp acp: %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(level.upper())
    logging.captureWarnings(True)


async def connect(
    agent: RhemaAcpAgent,
    read: Callable[[], Awaitable[bytes]],
    write: Callable[[bytes], Awaitable[None]],
) -> None:
    """Serve ``agent`` on one connection (bytes from ``read``, to ``write``)
    until the client hangs up or the task is cancelled, then shut the agent
    down (its prompts answered ``cancelled`` on the still open connection)
    and close the connection."""
    transport = LineTransport(
        read, write, cancel_prompt=lambda session: bool(agent.runs.cancel(session))
    )
    # The SDK's Agent protocol lists every optional method; its router
    # serves only the ones an agent has, answering the rest "method not found".
    agent.withdraw_requests = transport.withdraw
    # session/resume and session/close are "unstable" in the SDK's router.
    connection = AgentSideConnection(
        cast("Agent", agent), transport, listening=False, use_unstable_protocol=True
    )
    try:
        await connection.listen()
    finally:
        with anyio.CancelScope(shield=True):
            try:
                await agent.shutdown()
            finally:
                await connection.close()


async def serve(settings: Settings) -> None:
    """Serve one ACP connection on stdio until the client hangs up.

    Parameters
    ----------
    settings
        Provider, model, starting mode, limits and the command allow-list.
    """
    _log_to_stderr(settings.log_level)
    writer = FdWriter(sys.stdout.fileno())
    connection = connect(RhemaAcpAgent(settings), FdReader(sys.stdin.fileno()).read, writer.write)
    await serve_until_stopped(connection, writer.aclose, name="rhema acp connection")
