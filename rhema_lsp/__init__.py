"""rhema-lsp: an AI coding agent inside the editor, served as a language server."""

__version__ = "0.1.0"
