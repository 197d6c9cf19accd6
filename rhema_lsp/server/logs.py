"""The server's own log: to stderr, and to the editor as ``window/logMessage``
at the level the ``logLevel`` setting names.

Only the ``rhema_lsp`` loggers go to the editor. pygls' logger stays at
WARNING: at INFO it logs every message body, file contents and all.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, ClassVar

from lsprotocol import types

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

__all__ = ["EditorLogHandler"]

_LEVELS = {
    "error": logging.ERROR,
    "warning": logging.WARNING,
    "info": logging.INFO,
    "debug": logging.DEBUG,
}
_TYPES = {
    logging.ERROR: types.MessageType.Error,
    logging.WARNING: types.MessageType.Warning,
    logging.INFO: types.MessageType.Info,
    logging.DEBUG: types.MessageType.Log,
}


class EditorLogHandler(logging.Handler):
    """Sends log records to the editor."""

    current: ClassVar[EditorLogHandler | None] = None

    def __init__(self, server: LanguageServer) -> None:
        super().__init__(logging.WARNING)
        self._server = server

    @classmethod
    def install(cls, server: LanguageServer) -> None:
        """Route the ``rhema_lsp`` loggers to stderr and to ``server``'s client."""
        root = logging.getLogger("rhema_lsp")
        root.setLevel(logging.WARNING)
        root.propagate = False
        for handler in list(root.handlers):
            root.removeHandler(handler)
        stderr = logging.StreamHandler()
        stderr.setFormatter(logging.Formatter("rhema-lsp %(levelname)s %(name)s: %(message)s"))
        root.addHandler(stderr)
        cls.current = cls(server)
        root.addHandler(cls.current)

    @classmethod
    def set_level(cls, name: str) -> None:
        """Apply the ``logLevel`` setting."""
        level = _LEVELS.get(name, logging.WARNING)
        logging.getLogger("rhema_lsp").setLevel(level)
        if cls.current is not None:
            cls.current.setLevel(level)

    def emit(self, record: logging.LogRecord) -> None:
        level = max(lvl for lvl in _TYPES if lvl <= max(record.levelno, logging.DEBUG))
        try:
            self._server.window_log_message(
                types.LogMessageParams(type=_TYPES[level], message=self.format(record))
            )
        except Exception:  # noqa: BLE001 -- logging must never raise; stderr still has it
            self.handleError(record)
