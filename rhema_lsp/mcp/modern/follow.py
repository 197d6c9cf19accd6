"""What a 2026-07-28 server offers, kept current: change streams and cache hints.

A server of that era sends no notification outside a request, so its list
changes reach the client only through ``subscriptions/listen``, and its
lists say how long they stay fresh (``ttlMs``, ``cacheScope``). The rules:

- :func:`follow`: for each list the server declares ``listChanged`` for, one
  ``subscriptions/listen`` stream (in the session's task group) asks for
  that change; each change event lists that kind again through
  :meth:`~rhema_lsp.mcp.offers.Offers.on_message`, as a handshake-era
  ``list_changed`` notification does. The acknowledgment is awaited at most
  :data:`ACK_S` seconds; a refusal or a missing acknowledgment is logged
  naming ``subscriptions/listen`` and never sinks the server. A stream lost
  abruptly is opened again (at most :data:`RELISTEN_LIMIT` times in a row,
  each after :data:`RELISTEN_S`), and the lists fetched again (the spec has
  no replay); a graceful end from the server is final.
- :func:`refresh`: when a run takes the server up, each list it has is asked
  for again through the SDK's response cache: a list still fresh (within its
  ``ttlMs``) is served from the cache and nothing is sent; a stale one is
  fetched. A change event invalidates the cached list before it is fetched
  again (the SDK evicts it). Never a polling loop (the spec forbids TTL as a
  polling interval).

- :func:`roots_changed`: the workspace folders changed: a handshake-era
  server is told (``notifications/roots/list_changed``); a 2026-07-28 one
  asks for the roots in each round trip that needs them, so nothing is sent.

Handshake-era servers' lists are left alone here: they notify on their own.
Imports the SDK: load it from :mod:`rhema_lsp.mcp.connection` only.
"""

from __future__ import annotations

import logging
import warnings
from contextlib import AsyncExitStack

import anyio
import anyio.abc
import httpx2
from mcp import Client
from mcp.client.subscriptions import ListenNotSupportedError, SubscriptionLost
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.shared.subscriptions import event_to_notification

from rhema_lsp.mcp.modern.era import is_modern
from rhema_lsp.mcp.offers import Offers

__all__ = ["ACK_S", "RELISTEN_LIMIT", "RELISTEN_S", "follow", "refresh", "roots_changed"]

logger = logging.getLogger(__name__)

ACK_S = 5.0
"""Seconds a ``subscriptions/listen`` may take to be acknowledged."""
RELISTEN_LIMIT = 3
"""Streams lost in a row before the client stops listening to that server."""
RELISTEN_S = 1.0
"""Seconds before a lost stream is opened again."""


def _kinds(client: Client, *, changing: bool) -> list[str]:
    """The lists the server has (``changing``: those it declares ``listChanged`` for)."""
    capabilities = client.server_capabilities
    kinds = []
    for kind in ("tools", "prompts", "resources"):
        declared = getattr(capabilities, kind)
        if declared is not None and (not changing or getattr(declared, "list_changed", False)):
            kinds.append(kind)
    return kinds


def follow(client: Client, offers: Offers, server: str, group: anyio.abc.TaskGroup) -> None:
    """Listen for ``client``'s list changes in ``group`` (a 2026-07-28 server
    that declares some; see the module docstring)."""
    if not is_modern(client):
        return
    kinds = _kinds(client, changing=True)
    if kinds:
        group.start_soon(_listen, client, offers, server, kinds)


async def _listen(client: Client, offers: Offers, server: str, kinds: list[str]) -> None:
    lost = 0
    while lost <= RELISTEN_LIMIT:
        if lost:
            await anyio.sleep(RELISTEN_S)
            offers.relist_soon(*kinds)
        try:
            async with AsyncExitStack() as stack:
                with anyio.fail_after(ACK_S):
                    subscription = await stack.enter_async_context(
                        client.listen(
                            tools_list_changed="tools" in kinds,
                            prompts_list_changed="prompts" in kinds,
                            resources_list_changed="resources" in kinds,
                        )
                    )
                logger.info("MCP server %s: listening for changes of its %s", server, kinds)
                lost = 0
                async for event in subscription:
                    await offers.on_message(event_to_notification(event, {}))
            logger.info("MCP server %s ended its subscriptions/listen stream", server)
            return
        except SubscriptionLost as exc:
            lost += 1
            logger.info("MCP server %s: subscriptions/listen lost (%s)", server, exc)
        except (
            MCPError,
            TimeoutError,
            ListenNotSupportedError,
            anyio.BrokenResourceError,
            anyio.ClosedResourceError,
            httpx2.HTTPError,
        ) as exc:
            why = f"no acknowledgment within {ACK_S:g} s" if isinstance(exc, TimeoutError) else exc
            logger.warning(
                "MCP server %s: subscriptions/listen failed (%s); its list changes are "
                "seen when their cache hints expire",
                server,
                why,
            )
            return
    logger.warning("MCP server %s: subscriptions/listen lost %d times; not listening", server, lost)


def refresh(client: Client | None, offers: Offers) -> None:
    """A run takes the server up: list again what is stale (see the module docstring)."""
    if client is None or not is_modern(client):
        return
    offers.relist_soon(*_kinds(client, changing=False))


async def roots_changed(client: Client, server: str) -> None:
    """Tell a handshake-era server its roots changed (see the module docstring)."""
    if is_modern(client):
        return
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await client.send_roots_list_changed()
    except (MCPError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
        logger.info("MCP server %s: roots/list_changed not sent: %s", server, exc)
