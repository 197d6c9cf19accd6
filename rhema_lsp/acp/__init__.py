"""The second front door: rhema-lsp as an Agent Client Protocol agent.

``rhema-lsp acp`` serves ACP (JSON-RPC over stdio, the editor runs the agent
as a subprocess) for Zed, JetBrains IDEs, Neovim and Emacs ACP clients, on
the official Python SDK (``agent-client-protocol``). It runs the same engine,
providers, tools and sessions as the LSP server, through the shared run loop
of :mod:`rhema_lsp.runs`; it never imports :mod:`rhema_lsp.server` nor pygls.
The mapping onto ACP is described in ``docs/acp.md``.

Modules: :mod:`~rhema_lsp.acp.agent` (sessions, prompts, cancellation),
:mod:`~rhema_lsp.acp.updates` (events to ``session/update``),
:mod:`~rhema_lsp.acp.editor` (the tools' editor over ``fs/*`` and
``session/request_permission``), :mod:`~rhema_lsp.acp.tools` (locations,
fetches and diffs around each call), :mod:`~rhema_lsp.acp.prompt`,
:mod:`~rhema_lsp.acp.replay`, :mod:`~rhema_lsp.acp.calls`,
:mod:`~rhema_lsp.acp.mcp_servers` (the MCP servers the client passes),
:mod:`~rhema_lsp.acp.errors`, :mod:`~rhema_lsp.acp.transport` (every line
checked before the SDK sees it, and ``$/cancel_request``),
:mod:`~rhema_lsp.acp.connection` (the SDK's connection on it),
:mod:`~rhema_lsp.acp.ready` (``initialize`` and ``session/new`` answered
before the SDK loads, and the lifecycle gate), :mod:`~rhema_lsp.acp.handshake`
(the ``initialize`` answer), :mod:`~rhema_lsp.acp.offers` (a session's modes
and options as JSON), :mod:`~rhema_lsp.acp.folders` (a session's roots) and
:mod:`~rhema_lsp.acp.main` (the process).
"""

from typing import TYPE_CHECKING

from rhema_lsp.lazy import lazy_root

if TYPE_CHECKING:
    from rhema_lsp.acp.agent import RhemaAcpAgent
    from rhema_lsp.acp.main import serve

__all__ = ["RhemaAcpAgent", "serve"]

lazy_root(__name__)
