"""Which protocol era a server speaks: negotiated, remembered, re-decided.

One :class:`Era` per connection holds the only version negotiation there is.
Its rules (MCP 2026-07-28, "Backward Compatibility" of the stdio and
Streamable HTTP transports):

- Not yet known (a connection's first start): the SDK's ``auto`` mode sends
  one ``server/discover`` at 2026-07-28 before anything else, with no
  notification before or after it. Any answer that is not positive modern
  evidence falls back to ``initialize`` at once: -32601 or any other error, an
  HTTP 400 whose body is no modern JSON-RPC error, a result that is malformed
  or names no modern version. Silence (or a line that is no JSON-RPC
  response) falls back after :data:`PROBE_S`, the SDK's probe bound as set
  here (its own is 10 s; the spec asks for "a reasonable timeout"). A
  -32022 naming only versions the client does not speak is final
  (:class:`~rhema_lsp.mcp.errors.McpUnstartable`): retrying cannot mend it.
- Known (the spec lets a client keep the verdict for the server's
  configuration): a legacy server is opened with ``initialize`` alone, so
  nothing precedes it on a restart; a modern one with its remembered
  ``DiscoverResult``, no probe.
- The assumption failing re-decides: a start that fails before its tools are
  listed forgets the verdict (the next start probes again), except that a
  server that claimed 2026-07-28 and then failed its first request with an
  error that is no modern one (it wants ``initialize``, as a 2025-06-18
  server does) is opened with ``initialize`` next time.

Imports the SDK: load it from :mod:`rhema_lsp.mcp.connection` only.
"""

from __future__ import annotations

import logging
from contextlib import AsyncExitStack
from typing import Any, Literal

import mcp_types
from mcp import Client
from mcp.client import session
from mcp.shared.exceptions import MCPError
from mcp_types.version import KNOWN_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from rhema_lsp.mcp.errors import McpUnstartable

__all__ = ["MODERN_ERRORS", "PROBE_S", "Era", "is_modern"]

logger = logging.getLogger(__name__)

PROBE_S = 2.0
"""Seconds a ``server/discover`` probe is given before the server is taken
for a legacy one (a run waits no longer than this for its servers anyway)."""
session.DISCOVER_TIMEOUT_SECONDS = PROBE_S  # read by the SDK at each probe

MODERN_ERRORS = frozenset(
    {
        mcp_types.HEADER_MISMATCH,
        mcp_types.MISSING_REQUIRED_CLIENT_CAPABILITY,
        mcp_types.UNSUPPORTED_PROTOCOL_VERSION,
    }
)
"""The JSON-RPC errors only a 2026-07-28 server sends."""


def is_modern(client: Client) -> bool:
    """Whether ``client``'s session speaks a stateless (2026-07-28) version."""
    return client.session.protocol_version in MODERN_PROTOCOL_VERSIONS


def _rpc_error(exc: BaseException) -> MCPError | None:
    """The JSON-RPC error at the root of ``exc`` (through causes and groups)."""
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, MCPError):
            return current
        if isinstance(current, BaseExceptionGroup):
            todo.extend(current.exceptions)
        todo.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return None


def _foreign(error: MCPError) -> bool:
    """Whether ``error`` is a -32022 naming no version this client speaks
    (one naming ours came from a probe that timed out: worth another start)."""
    if error.code != mcp_types.UNSUPPORTED_PROTOCOL_VERSION:
        return False
    try:
        data = mcp_types.UnsupportedProtocolVersionErrorData.model_validate(error.error.data)
    except ValidationError:
        return True
    return not any(version in KNOWN_PROTOCOL_VERSIONS for version in data.supported)


class Era:
    """What one connection knows of its server's era (see the module docstring)."""

    def __init__(self, server: str) -> None:
        self.server = server
        self.known: Literal["legacy"] | mcp_types.DiscoverResult | None = None
        """``"legacy"``, the modern server's ``DiscoverResult``, or not known."""
        self._claimed = False
        self._pinned = False

    def options(self) -> dict[str, Any]:
        """The :class:`mcp.Client` arguments that open the next session."""
        self._claimed = False
        self._pinned = self.known is not None
        if self.known == "legacy":
            return {"mode": "legacy"}
        if isinstance(self.known, mcp_types.DiscoverResult):
            mutual = [v for v in MODERN_PROTOCOL_VERSIONS if v in self.known.supported_versions]
            return {"mode": mutual[-1], "prior_discover": self.known}
        return {"mode": "auto"}

    async def enter(self, client: Client, stack: AsyncExitStack) -> Client:
        """Open ``client``'s session on ``stack`` (probe, handshake or neither)."""
        try:
            await stack.enter_async_context(client)
        except Exception as exc:
            self.known = None
            error = _rpc_error(exc)
            if error is not None and not self._pinned and _foreign(error):
                raise McpUnstartable(self._unsupported(error)) from exc
            raise
        self._claimed = is_modern(client)
        discovered = client.session.discover_result
        self.known = discovered if self._claimed and discovered is not None else "legacy"
        logger.info("MCP server %s speaks %s", self.server, client.protocol_version)
        return client

    def _unsupported(self, exc: MCPError) -> str:
        try:
            data = mcp_types.UnsupportedProtocolVersionErrorData.model_validate(exc.error.data)
            versions = ", ".join(data.supported) or "none"
        except ValidationError:
            versions = "not named"
        speaks = ", ".join(MODERN_PROTOCOL_VERSIONS)
        return (
            f"the MCP server {self.server} supports no protocol version this client speaks "
            f"(it names: {versions}; this client: {speaks} and the initialize handshake): {exc}"
        )

    def failed(self, exc: BaseException) -> None:
        """The start failed after the session opened: re-decide the era
        (see the module docstring)."""
        error = _rpc_error(exc)
        code = None if error is None else error.code
        if self._claimed and code is not None and code not in MODERN_ERRORS:
            logger.warning(
                "MCP server %s claimed 2026-07-28 in server/discover but answered as an "
                "older server (error %d); opening it with initialize next time",
                self.server,
                code,
            )
            self.known = "legacy"
        else:
            self.known = None
        self._claimed = False
