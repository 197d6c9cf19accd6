"""The ``rhema-lsp acp`` process: one ACP connection on stdin/stdout.

stdout carries only the protocol; the log goes to stderr (keys never appear
in it). When the client closes stdin the connection ends, every running
prompt is cancelled and checkpointed, the session stores are closed and the
MCP servers stopped before the process exits.
"""

from __future__ import annotations

import logging
import sys
from typing import cast

import anyio
from acp import Agent, run_agent

from rhema_lsp.acp.agent import RhemaAcpAgent
from rhema_lsp.runs.settings import Settings

__all__ = ["serve"]


def _log_to_stderr(level: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("rhema-lsp acp: %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(level.upper())


async def serve(settings: Settings) -> None:
    """Serve one ACP connection on stdio until the client hangs up.

    Parameters
    ----------
    settings
        Provider, model, starting mode, limits and the command allow-list.
    """
    _log_to_stderr(settings.log_level)
    agent = RhemaAcpAgent(settings)
    try:
        # The SDK's Agent protocol lists every optional method; its router
        # serves only the ones an agent has, answering the rest "method not found".
        await run_agent(cast("Agent", agent))
    finally:
        with anyio.CancelScope(shield=True):
            await agent.shutdown()
