"""The contract's commands: the one table that names them, each with its
argument object (:mod:`.arguments`) and its result (:mod:`.results`).

A command is a :class:`CommandSpec` in :data:`COMMANDS`. The server
registers and dispatches from this table (each spec is served by one
handler), parses arguments with ``spec.args`` and sends results dumped
through ``spec.result``; the JSON Schema, the VS Code client's generated
types and the tables of ``docs/protocol.md`` are all made from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import TypeAdapter

import rhema_lsp.contract.names as names
from rhema_lsp.contract.arguments import (
    CancelArgs,
    ChangesArgs,
    CheckpointContentArgs,
    EditArgs,
    ForkArgs,
    McpPromptArgs,
    McpPromptsArgs,
    McpResourcesArgs,
    McpRestartArgs,
    OpenSessionArgs,
    RewindArgs,
    SessionArgs,
    SessionsArgs,
    StatusArgs,
    StepArgs,
    TurnArgs,
    UndoTurnArgs,
)
from rhema_lsp.contract.base import Args
from rhema_lsp.contract.results import (
    CancelResult,
    ChangesResult,
    CheckpointContentResult,
    CompactResult,
    DeleteResult,
    Detached,
    EditResult,
    ForkResult,
    McpPromptInfo,
    McpPromptResult,
    McpResourcesResult,
    NewConversationResult,
    OpenSessionResult,
    RewindResult,
    SessionSummary,
    StepResult,
    TurnResult,
    UndoTurnResult,
)
from rhema_lsp.contract.status import McpServerStatus, StatusResult
from rhema_lsp.contract.worktrees import (
    WorktreeApplyResult,
    WorktreeDiffResult,
    WorktreeDiscardResult,
)

__all__: list[str] = [
    "CANCEL",
    "CHANGES",
    "CHECKPOINT_CONTENT",
    "COMMANDS",
    "COMPACT",
    "DELETE_SESSION",
    "EDIT",
    "FORK_SESSION",
    "MCP_PROMPT",
    "MCP_PROMPTS",
    "MCP_RESOURCES",
    "MCP_RESTART",
    "NEW_CONVERSATION",
    "OPEN_SESSION",
    "REWIND",
    "SESSIONS",
    "STATUS",
    "STEP",
    "TURN",
    "UNDO_TURN",
    "WORKTREE_APPLY",
    "WORKTREE_DIFF",
    "WORKTREE_DISCARD",
    "CommandSpec",
    "command_named",
]

A = TypeVar("A", bound=Args)


@dataclass(frozen=True, eq=False)
class CommandSpec(Generic[A]):
    """One command of the contract.

    Attributes
    ----------
    name
        The ``workspace/executeCommand`` id.
    args
        The model of its one argument object.
    result
        The type of its result (a model, or a list of models).
    summary
        One line for the docs.
    runs
        Whether it runs the model (cancellable, with progress and events).
    """

    name: str
    args: type[A]
    result: Any
    summary: str
    runs: bool = False

    def parse(self, raw: Any) -> A:
        """Validate ``raw`` as this command's argument object."""
        return self.args.model_validate(raw)

    def dump(self, result: Any) -> Any:
        """``result`` as the JSON the contract sends."""
        return _adapter(self.result).dump_python(result, mode="json", by_alias=True)


_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}


def _adapter(kind: Any) -> TypeAdapter[Any]:
    adapter = _ADAPTERS.get(kind)
    if adapter is None:
        adapter = _ADAPTERS[kind] = TypeAdapter(kind)
    return adapter


TURN = CommandSpec(names.TURN, TurnArgs, TurnResult | Detached, "run a whole turn", runs=True)
STEP = CommandSpec(names.STEP, StepArgs, StepResult | Detached, "run one step", runs=True)
CANCEL = CommandSpec(names.CANCEL, CancelArgs, CancelResult, "stop a run, or every run")
SESSIONS = CommandSpec(
    names.SESSIONS, SessionsArgs, list[SessionSummary], "list stored sessions, newest first"
)
OPEN_SESSION = CommandSpec(
    names.OPEN_SESSION,
    OpenSessionArgs,
    OpenSessionResult,
    "load a session's history (the compacted view; `full`: every message)",
)
COMPACT = CommandSpec(
    names.COMPACT,
    SessionArgs,
    CompactResult,
    "summarise a session's older rounds now",
)
DELETE_SESSION = CommandSpec(names.DELETE_SESSION, SessionArgs, DeleteResult, "delete a session")
EDIT = CommandSpec(
    names.EDIT, EditArgs, EditResult | Detached, "rewrite the selection in place", runs=True
)
UNDO_TURN = CommandSpec(
    names.UNDO_TURN,
    UndoTurnArgs,
    UndoTurnResult,
    "revert a turn's edits (none: the last): rhema.rewind of that turn's code",
)
STATUS = CommandSpec(names.STATUS, StatusArgs, StatusResult, "version, provider and state")
MCP_PROMPTS = CommandSpec(
    names.MCP_PROMPTS,
    McpPromptsArgs,
    list[McpPromptInfo],
    "the MCP servers' prompts (slash commands); starts the servers",
)
MCP_PROMPT = CommandSpec(
    names.MCP_PROMPT, McpPromptArgs, McpPromptResult, "fill an MCP prompt: the text of a turn"
)
MCP_RESOURCES = CommandSpec(
    names.MCP_RESOURCES,
    McpResourcesArgs,
    McpResourcesResult,
    "the MCP servers' resources (@-mentions); starts the servers",
)
MCP_RESTART = CommandSpec(
    names.MCP_RESTART,
    McpRestartArgs,
    list[McpServerStatus],
    "restart an MCP server (a failed one, a sign-in) and wait for it",
)
REWIND = CommandSpec(
    names.REWIND,
    RewindArgs,
    RewindResult,
    "restore files and/or the conversation to before a turn",
)
FORK_SESSION = CommandSpec(
    names.FORK_SESSION, ForkArgs, ForkResult, "start a new session from a turn"
)
CHANGES = CommandSpec(
    names.CHANGES, ChangesArgs, ChangesResult, "the files each turn changed, with checkpoints"
)
CHECKPOINT_CONTENT = CommandSpec(
    names.CHECKPOINT_CONTENT,
    CheckpointContentArgs,
    CheckpointContentResult,
    "the text of a rhema-checkpoint: URI",
)
NEW_CONVERSATION = CommandSpec(
    names.NEW_CONVERSATION,
    SessionsArgs,
    NewConversationResult,
    "a plain client's next ask (none: in every folder) starts a new session",
)
WORKTREE_DIFF = CommandSpec(
    names.WORKTREE_DIFF,
    SessionArgs,
    WorktreeDiffResult,
    "a worktree session's changes, one per file, for review",
)
WORKTREE_APPLY = CommandSpec(
    names.WORKTREE_APPLY,
    SessionArgs,
    WorktreeApplyResult,
    "merge a worktree session's changes into the checkout (conflicts: nothing written)",
)
WORKTREE_DISCARD = CommandSpec(
    names.WORKTREE_DISCARD,
    SessionArgs,
    WorktreeDiscardResult,
    "remove a worktree session's worktree and branch",
)

_BY_NAME: dict[str, CommandSpec[Any]] = {
    spec.name: spec for spec in list(globals().values()) if isinstance(spec, CommandSpec)
}

COMMANDS: tuple[CommandSpec[Any], ...] = tuple(_BY_NAME[name] for name in names.COMMAND_NAMES)
"""Every command of the contract (each spec above), in the order the docs
list them: the order of :data:`~rhema_lsp.contract.names.COMMAND_NAMES`."""


def command_named(name: str) -> CommandSpec[Any] | None:
    """The command called ``name``, if the contract has one."""
    return _BY_NAME.get(name)
