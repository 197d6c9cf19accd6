"""The server's own log: to stderr, and to the editor as ``window/logMessage``
at the level the ``logLevel`` setting names.

Only the ``rhema_lsp`` loggers go to the editor. pygls' logger stays at
WARNING: at INFO it logs every message body, file contents and all.

A record the editor was sent is not written to stderr as well: an editor
shows the server's stderr in the same place as its log messages (VS Code's
"Rhema Server" channel), so each line would show twice. Stderr keeps what
could not be sent (before the connection, or after it broke).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, ClassVar

from lsprotocol import types

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

__all__ = ["EditorLogHandler"]

_SENT = "rhema_sent_to_editor"

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


def _connected(server: LanguageServer) -> bool:
    """Whether ``server`` has a live connection to send a log message on."""
    return getattr(server.protocol, "writer", None) is not None


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
        cls.current = cls(server)
        root.addHandler(cls.current)
        stderr = logging.StreamHandler()
        stderr.setFormatter(logging.Formatter("rhema-lsp %(levelname)s %(name)s: %(message)s"))
        stderr.addFilter(lambda record: not getattr(record, _SENT, False))
        root.addHandler(stderr)

    @classmethod
    def set_level(cls, name: str) -> None:
        """Apply the ``logLevel`` setting."""
        level = _LEVELS.get(name, logging.WARNING)
        logging.getLogger("rhema_lsp").setLevel(level)
        if cls.current is not None:
            cls.current.setLevel(level)

    def emit(self, record: logging.LogRecord) -> None:
        level = max(lvl for lvl in _TYPES if lvl <= max(record.levelno, logging.DEBUG))
        if not _connected(self._server):
            return  # not connected (yet, or any more): stderr has it
        try:
            self._server.window_log_message(
                types.LogMessageParams(type=_TYPES[level], message=self.format(record))
            )
        except Exception:  # noqa: BLE001 -- logging must never raise; stderr has it
            return
        setattr(record, _SENT, True)
