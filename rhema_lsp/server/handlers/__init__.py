"""The contract's command handlers, one module per thing they serve.

- :mod:`.runs`: ``rhema.turn``, ``rhema.step``, ``rhema.edit``, ``rhema.cancel``;
- :mod:`.sessions`: ``rhema.sessions``, ``rhema.openSession``,
  ``rhema.compact``, ``rhema.deleteSession``, ``rhema.forkSession``;
- :mod:`.checkpoints`: ``rhema.undoTurn``, ``rhema.rewind``,
  ``rhema.changes``, ``rhema.checkpointContent``;
- :mod:`.status`: ``rhema.status``;
- :mod:`.mcp`: ``rhema.mcpRestart``, ``rhema.mcpPrompts``, ``rhema.mcpPrompt``,
  ``rhema.mcpResources``.

Each handler is registered with :func:`~rhema_lsp.server.router.serves`; it
turns typed arguments into a plan or a session operation and its outcome
into the command's typed result, and parses, owns and catches nothing else.
"""

from __future__ import annotations

__all__ = ["load"]


def load() -> None:
    """Import every handler module (registering its handlers)."""
    from rhema_lsp.server.handlers import checkpoints, mcp, runs, sessions, status

    del checkpoints, mcp, runs, sessions, status
