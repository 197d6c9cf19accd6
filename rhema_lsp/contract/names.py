"""The contract's command names, apart from their models.

The server advertises the commands in its ``initialize`` result and refuses
an unknown one before anything else loads; building the argument and result
models of :mod:`.commands` (most of the contract's import time) waits for the
first command. Each :class:`~rhema_lsp.contract.commands.CommandSpec` takes
its name from here, and :data:`~rhema_lsp.contract.commands.COMMANDS` its
order from :data:`COMMAND_NAMES` (``tests/unit/test_start_imports.py``
checks that every spec is in it).
"""

from __future__ import annotations

__all__ = ["COMMAND_NAMES"]

TURN = "rhema.turn"
STEP = "rhema.step"
CANCEL = "rhema.cancel"
SESSIONS = "rhema.sessions"
OPEN_SESSION = "rhema.openSession"
DELETE_SESSION = "rhema.deleteSession"
EDIT = "rhema.edit"
UNDO_TURN = "rhema.undoTurn"
REWIND = "rhema.rewind"
FORK_SESSION = "rhema.forkSession"
CHANGES = "rhema.changes"
CHECKPOINT_CONTENT = "rhema.checkpointContent"
COMPACT = "rhema.compact"
STATUS = "rhema.status"
MCP_RESTART = "rhema.mcpRestart"
MCP_PROMPTS = "rhema.mcpPrompts"
MCP_PROMPT = "rhema.mcpPrompt"
MCP_RESOURCES = "rhema.mcpResources"
NEW_CONVERSATION = "rhema.newConversation"
WORKTREE_DIFF = "rhema.worktreeDiff"
WORKTREE_APPLY = "rhema.worktreeApply"
WORKTREE_DISCARD = "rhema.worktreeDiscard"

COMMAND_NAMES: tuple[str, ...] = (
    TURN,
    STEP,
    CANCEL,
    SESSIONS,
    OPEN_SESSION,
    DELETE_SESSION,
    EDIT,
    UNDO_TURN,
    REWIND,
    FORK_SESSION,
    CHANGES,
    CHECKPOINT_CONTENT,
    COMPACT,
    STATUS,
    MCP_RESTART,
    MCP_PROMPTS,
    MCP_PROMPT,
    MCP_RESOURCES,
    NEW_CONVERSATION,
    WORKTREE_DIFF,
    WORKTREE_APPLY,
    WORKTREE_DISCARD,
)
"""Every command's name, in the order the docs list them."""
