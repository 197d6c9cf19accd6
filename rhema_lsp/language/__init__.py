"""The agent's own language servers: the ``LanguageService`` of every door
whose client does not answer language questions itself (plain LSP clients,
ACP, headless).

:class:`~rhema_lsp.language.pool.AgentLanguages` starts servers lazily per
folder and language (found on ``PATH`` by
:mod:`~rhema_lsp.language.servers`, or named in ``languageServers``), each a
:class:`~rhema_lsp.language.connection.Connection` over the child-process
JSON-RPC endpoint, fed the editor's view of each document. This package
speaks raw LSP JSON (no LSP library) and never blocks the event loop; every
process it starts ends with :meth:`AgentLanguages.aclose`.
"""

from typing import TYPE_CHECKING

from rhema_lsp.lazy import lazy_root

if TYPE_CHECKING:
    from rhema_lsp.language.pool import AgentLanguages, ServerStatus
    from rhema_lsp.language.servers import KNOWN, choose, language_of

__all__ = ["KNOWN", "AgentLanguages", "ServerStatus", "choose", "language_of"]

lazy_root(__name__)
