"""The ``rhema-lsp acp`` process: one ACP connection on stdin/stdout.

stdout carries only the protocol; the log goes to stderr (keys never appear
in it). The process ends the same way whether the client closes stdin or
sends ``SIGTERM`` (as CodeCompanion does when it exits): every running
prompt is cancelled and checkpointed (its partial answer kept) while the
connection is still up, so a client still listening gets its ``cancelled``
answers; then the session stores are closed, the MCP servers stopped, and
only then the connection closed.
"""

from __future__ import annotations

import logging
import sys
from typing import cast

from acp import Agent, stdio_streams
from acp.core import DEFAULT_STDIO_BUFFER_LIMIT_BYTES, AgentSideConnection

from rhema_lsp.acp.agent import RhemaAcpAgent
from rhema_lsp.runs.lifetime import serve_until_stopped
from rhema_lsp.runs.settings import Settings

__all__ = ["serve"]

logger = logging.getLogger(__name__)


def _log_to_stderr(level: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("rhema-lsp acp: %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(level.upper())


async def serve(settings: Settings) -> None:
    """Serve one ACP connection on stdio until the client hangs up or the
    process is told to terminate.

    Parameters
    ----------
    settings
        Provider, model, starting mode, limits and the command allow-list.
    """
    _log_to_stderr(settings.log_level)
    agent = RhemaAcpAgent(settings)
    output, input_ = await stdio_streams(limit=DEFAULT_STDIO_BUFFER_LIMIT_BYTES)
    # The SDK's Agent protocol lists every optional method; its router
    # serves only the ones an agent has, answering the rest "method not found".
    conn = AgentSideConnection(cast("Agent", agent), input_, output, listening=False)

    async def close() -> None:
        try:
            await agent.shutdown()
        finally:
            await conn.close()

    await serve_until_stopped(conn.listen(), close, name="rhema acp connection")
