"""Whether a ready MCP server still answers: :func:`watch_alive`.

A server can stop answering without its process ending or its connection
closing (stopped with ``SIGSTOP``, deadlocked, its event loop blocked):
every call to it would then wait its whole timeout. So while a server is
ready, its connection sends ``ping`` every :data:`PING_EVERY_S` seconds
and allows it :data:`PING_BOUND_S` to answer. Any answer proves the server
alive, an error answer included (a server may refuse ``ping`` and still
work); no answer within the bound marks it frozen: the connection ends the
session and restarts it, as after a crash (its tools stay offered while it
restarts, :mod:`rhema_lsp.mcp.catalog`).

Only servers of the handshake era are pinged (2026-07-28 removed ``ping``:
its requests are stateless, each bounded by its own timeout).

The rules it keeps: one ping in flight at a time, never more often than
``every``; it runs in the session's own task group, so it ends with the
session; it imports the SDK (load it from :mod:`rhema_lsp.mcp.connection`
only).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable

import anyio
import httpx2
from mcp import Client
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

__all__ = ["PING_BOUND_S", "PING_EVERY_S", "watch_alive"]

logger = logging.getLogger("rhema_lsp.mcp.connection")

PING_EVERY_S = 30.0
"""Seconds between two pings of a ready server."""

PING_BOUND_S = 10.0
"""Seconds a server may take to answer a ping before it is taken as frozen."""


async def watch_alive(
    client: Client,
    name: str,
    frozen: Callable[[str], None],
    every: float = PING_EVERY_S,
    bound: float = PING_BOUND_S,
) -> None:
    """Ping ``client``'s server every ``every`` seconds until one ping goes
    unanswered for ``bound`` seconds: then tell ``frozen`` why and return.
    A broken connection ends the watch (the session is ending anyway)."""
    while True:
        await anyio.sleep(every)
        try:
            with anyio.fail_after(bound), warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)  # not after 2026
                await client.send_ping()
        except TimeoutError:
            why = f"it did not answer a ping within {bound:g} s (frozen?); restarting it"
            logger.warning("MCP server %s: %s", name, why)
            frozen(why)
            return
        except MCPError as exc:
            logger.debug("MCP server %s answered ping with an error (alive): %s", name, exc)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, httpx2.HTTPError):
            return
