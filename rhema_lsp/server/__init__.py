"""The language server: the editor contract of ``docs/protocol.md`` served by
pygls over stdio (or TCP, for debugging). The only package that imports pygls."""

from rhema_lsp.server.app import RhemaServer
from rhema_lsp.server.features import create_server

__all__ = ["RhemaServer", "create_server"]
