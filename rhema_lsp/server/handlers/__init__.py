"""The contract's command handlers, one module per thing they serve.

- :mod:`.runs`: ``rhema.turn``, ``rhema.step``, ``rhema.edit``, ``rhema.cancel``,
  ``rhema.newConversation``;
- :mod:`.sessions`: ``rhema.sessions``, ``rhema.openSession``,
  ``rhema.compact``, ``rhema.deleteSession``, ``rhema.forkSession``;
- :mod:`.checkpoints`: ``rhema.undoTurn``, ``rhema.rewind``,
  ``rhema.changes``, ``rhema.checkpointContent``;
- :mod:`.status`: ``rhema.status``;
- :mod:`.mcp`: ``rhema.mcpRestart``, ``rhema.mcpPrompts``, ``rhema.mcpPrompt``,
  ``rhema.mcpResources``;
- :mod:`.worktrees`: ``rhema.worktreeDiff``, ``rhema.worktreeApply``,
  ``rhema.worktreeDiscard``.

Each handler is registered with :func:`~rhema_lsp.server.router.serves`; it
turns typed arguments into a plan or a session operation and its outcome
into the command's typed result, and parses, owns and catches nothing else.

A module loads when its first command comes (:func:`load`, from the
router): the first ``rhema.status`` does not load what runs turns (the
run output, the stream, the transcript, rewind). :data:`MODULES` names
the module of every command; ``tests/unit/contract/test_contract.py``
checks it against the contract and the handlers each module registers.
"""

from __future__ import annotations

import importlib

__all__ = ["MODULES", "load"]

MODULES: dict[str, str] = {
    **dict.fromkeys(
        ("rhema.turn", "rhema.step", "rhema.edit", "rhema.cancel", "rhema.newConversation"),
        "runs",
    ),
    **dict.fromkeys(
        (
            "rhema.sessions",
            "rhema.openSession",
            "rhema.compact",
            "rhema.deleteSession",
            "rhema.forkSession",
        ),
        "sessions",
    ),
    **dict.fromkeys(
        ("rhema.undoTurn", "rhema.rewind", "rhema.changes", "rhema.checkpointContent"),
        "checkpoints",
    ),
    "rhema.status": "status",
    **dict.fromkeys(
        ("rhema.mcpRestart", "rhema.mcpPrompts", "rhema.mcpPrompt", "rhema.mcpResources"), "mcp"
    ),
    **dict.fromkeys(
        ("rhema.worktreeDiff", "rhema.worktreeApply", "rhema.worktreeDiscard"), "worktrees"
    ),
}
"""The handler module of each command."""


def load(command: str | None = None) -> None:
    """Import the handler module of ``command`` (registering its handlers),
    or every handler module; a module already loaded is left as it is."""
    modules = set(MODULES.values()) if command is None else {MODULES[command]}
    for module in sorted(modules):
        importlib.import_module(f"{__name__}.{module}")
