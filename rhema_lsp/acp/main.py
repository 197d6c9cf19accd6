"""The ``rhema-lsp acp`` process: one ACP connection on stdin/stdout.

stdout carries only the protocol; the log goes to stderr (keys never appear
in it; Python warnings, such as the SDK's about unstable methods, become log
lines). The client's first line is read here: an ``initialize`` is answered
at once (:mod:`~rhema_lsp.acp.handshake`), before the SDK and the agent
machinery load, which they do off the event loop; then the connection
(:func:`~rhema_lsp.acp.connection.connect`) serves everything, the bytes
already read first. This module imports neither the SDK nor the agent.

The process ends the same way whether the client closes stdin or sends
``SIGTERM`` (as CodeCompanion does when it exits;
:func:`~rhema_lsp.runs.lifetime.serve_until_stopped`), at any point: every
running prompt is cancelled and checkpointed (its partial answer kept)
while the connection is still up, then the session stores are closed, the
MCP servers stopped, and only then the connection closed.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rhema_lsp.acp.handshake import replaying
from rhema_lsp.acp.ready import answer_early
from rhema_lsp.jsonrpc.stdio import FdReader, FdWriter
from rhema_lsp.providers.stored import follows_stored, with_stored
from rhema_lsp.runs.lifetime import serve_until_stopped

if TYPE_CHECKING:
    from rhema_lsp.runs.settings import Settings

__all__ = ["serve"]


def _log_to_stderr(level: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("rhema-lsp acp: %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(level.upper())
    logging.captureWarnings(True)


async def serve(raw_settings: Mapping[str, Any]) -> None:
    """Serve one ACP connection on stdio until the client hangs up.

    Parameters
    ----------
    raw_settings
        Provider, model, starting mode, limits and the command allow-list
        (the command line's, camelCase), validated once ``initialize`` is
        answered: a refused one is named on stderr and left at its default.
    """
    writer = FdWriter(sys.stdout.fileno())
    read = FdReader(sys.stdin.fileno()).read

    loading: asyncio.Future[Settings] | None = None

    async def load() -> Settings:
        # the settings model, the SDK and the agent machinery (a second of
        # imports, off the loop), the log set up before the SDK loads
        await asyncio.to_thread(importlib.import_module, "rhema_lsp.runs.settings")
        from rhema_lsp.runs.settings import parse_settings

        settings, problems = parse_settings(raw_settings)
        for problem in problems:
            sys.stderr.write(f"rhema-lsp acp: {problem}\n")
        _log_to_stderr(settings.log_level)
        await asyncio.to_thread(importlib.import_module, "rhema_lsp.acp.connection")
        return settings

    def start_loading() -> None:
        nonlocal loading
        if loading is None:
            loading = asyncio.ensure_future(load())

    async def connection() -> None:
        try:
            # the first answers, then the load; or the load meanwhile, when
            # the client waits after initialize (the thread would hold the
            # interpreter while answers are written: not before them)
            chosen = with_stored(raw_settings)  # what a sign-in stored, for the first answer
            early = await answer_early(read, writer.write, chosen, start_loading)
            start_loading()
            assert loading is not None
            settings = await loading
        finally:
            if loading is not None and not loading.done():
                loading.cancel()
        from rhema_lsp.acp.agent import RhemaAcpAgent
        from rhema_lsp.acp.connection import connect

        agent = RhemaAcpAgent(settings, follow_stored=follows_stored(raw_settings))
        rest = replaying(early.rest, read)
        await connect(agent, rest, writer.write, early.greeting, early.opened)

    await serve_until_stopped(connection(), writer.aclose, name="rhema acp connection")
