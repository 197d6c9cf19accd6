"""MCP 2026-07-28 beside the handshake era (2025-11-25, 2025-06-18, ...).

The SDK speaks both eras on the wire (the ``server/discover`` probe, the
per-request ``_meta`` envelope, Multi Round-Trip Requests driven through the
same sampling, elicitation and roots callbacks, ``subscriptions/listen``, the
response cache); this package decides how a connection uses it, behind
:class:`~rhema_lsp.mcp.connection.McpConnection`, so the hub and the resolver
never see the era:

- :mod:`~rhema_lsp.mcp.modern.era`: which era a server speaks, negotiated
  and remembered in one place;
- :mod:`~rhema_lsp.mcp.modern.follow`: what a 2026-07-28 server offers kept
  current (``subscriptions/listen``, the lists' cache hints).

Imports the SDK: load these only from :mod:`rhema_lsp.mcp.connection`.
"""
