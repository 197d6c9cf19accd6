"""The language server: the editor contract of ``docs/protocol.md`` served by
pygls over stdio (or TCP, for debugging). The only package that imports pygls."""

from rhema_lsp.server.app import RhemaServer, create_server

__all__ = ["RhemaServer", "create_server"]
