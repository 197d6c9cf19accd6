"""The contract's results: what each command answers, camelCase on the wire
(``rhema.status``'s answer is :mod:`.status`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rhema_lsp.contract.base import Wire
from rhema_lsp.contract.events import PlanEntryBody, RunStopReason, UsageTally
from rhema_lsp.contract.worktrees import WorktreeInfo
from rhema_lsp.engine.messages import Message
from rhema_lsp.vocabulary import RewindWhat

__all__ = [
    "CallSummary",
    "CancelResult",
    "ChangedFile",
    "ChangesResult",
    "CheckpointContentResult",
    "CompactResult",
    "CompactionInfo",
    "DeleteResult",
    "Detached",
    "EditResult",
    "FileConflict",
    "ForkResult",
    "McpPromptArgument",
    "McpPromptInfo",
    "McpPromptResult",
    "McpResourceFailure",
    "McpResourceInfo",
    "McpResourcesResult",
    "NewConversationResult",
    "OpenSessionResult",
    "ResumedCalls",
    "RewindResult",
    "SessionSummary",
    "StepResult",
    "TurnChanges",
    "TurnResult",
    "UndoTurnResult",
]


class Detached(Wire):
    """A run that goes on after the command answered (``detach``): its
    outcome arrives as events, and as the transcript and a message for
    clients that do not render events."""

    session: str
    turn: int
    started: bool


class TurnResult(Wire):
    """How a turn ended."""

    session: str
    turn: int
    stop_reason: RunStopReason
    text: str
    steps: int
    usage: UsageTally
    worktree: WorktreeInfo | None = None


class CallSummary(Wire):
    """One tool call of a step."""

    id: str
    name: str
    is_error: bool


class StepResult(Wire):
    """How a step ended, with its tool calls."""

    session: str
    turn: int
    stop_reason: RunStopReason
    text: str
    tool_calls: list[CallSummary]
    usage: UsageTally


class CancelResult(Wire):
    """The sessions whose runs were asked to stop."""

    cancelled: list[str]


class NewConversationResult(Wire):
    """The folders whose next ask without a ``session`` starts a new session
    (clients that render no events; see "Conversations")."""

    folders: list[str]


class SessionSummary(Wire):
    """One stored session."""

    session: str
    folder: str
    title: str
    created_at: str
    updated_at: str
    turns: int
    running: bool
    worktree: WorktreeInfo | None = None


class ResumedCalls(Wire):
    """The calls a crash left without a result: run again, or reported
    interrupted."""

    rerun: list[str]
    interrupted: list[str]


class CompactionInfo(Wire):
    """The session's latest compaction: the first ``upto`` stored messages
    are summarised (or were dropped) in its summary message."""

    upto: int
    summary_tokens: int
    before: int
    after: int
    dropped: bool


class OpenSessionResult(Wire):
    """A session's history, completed if a crash left it mid-round: the
    compacted view the model is sent (a summary message, then the latest
    messages), or with ``full`` every stored message; each image by its
    reference (``sha256``, ``size``, ``name``; ``data`` empty); ``plan``:
    the plan the model set last (``update_plan``), ``null`` when it set
    none."""

    session: str
    folder: str
    title: str
    messages: list[Message]
    resumed: ResumedCalls
    compaction: CompactionInfo | None = None
    plan: list[PlanEntryBody] | None = None


class CompactResult(Wire):
    """Whether the session was compacted (``false``: nothing older than the
    latest round), and the estimated tokens of its next request before and
    after."""

    session: str
    compacted: bool
    before: int
    after: int
    summary_tokens: int


class DeleteResult(Wire):
    """Whether the session existed and is gone."""

    deleted: bool


class EditResult(Wire):
    """Whether the rewrite was applied, and how the model call ended."""

    session: str
    applied: bool
    stop_reason: RunStopReason
    text: str
    usage: UsageTally


class UndoTurnResult(Wire):
    """The documents reverted, those left alone because they changed since,
    and those to save (they were clean before the turn)."""

    reverted: list[str]
    conflicts: list[str]
    save: list[str] = Field(default_factory=list)


class FileConflict(Wire):
    """A file a rewind left alone, and why."""

    uri: str
    reason: str


class RewindResult(Wire):
    """What a rewind restored and left alone; ``save``: documents the client
    saves (clean before the turn); ``messages``: the conversation's length
    after a conversation rewind."""

    session: str
    turn: int
    what: RewindWhat
    restored: list[str]
    conflicts: list[FileConflict]
    save: list[str]
    messages: int | None


class ForkResult(Wire):
    """The new session."""

    session: str
    title: str
    turns: int


class ChangedFile(Wire):
    """One file a turn changed: its checkpoint (``before``, a
    ``rhema-checkpoint:`` URI; null when the turn created it) and its state
    now (``asLeft``: as the agent left it, ``changed``: changed since,
    ``restored``: rewound)."""

    uri: str
    path: str
    status: Literal["created", "modified", "deleted"]
    before: str | None
    state: Literal["asLeft", "changed", "restored"]


class TurnChanges(Wire):
    """One turn and the files it changed; ``interrupted``: it never ended
    (the server was killed during it) and is not running now."""

    turn: int
    title: str
    created_at: str
    in_conversation: bool
    files: list[ChangedFile]
    interrupted: bool = False


class ChangesResult(Wire):
    """A session's turns, oldest first."""

    session: str
    turns: list[TurnChanges]


class CheckpointContentResult(Wire):
    """The text of a stored pre-image."""

    uri: str
    text: str


class McpPromptArgument(Wire):
    """One argument of an MCP prompt."""

    name: str
    description: str
    required: bool


class McpPromptInfo(Wire):
    """An MCP server's prompt, which a client offers as a slash command
    (``command``), filled with ``rhema.mcpPrompt``."""

    server: str
    name: str
    title: str
    description: str
    arguments: list[McpPromptArgument]
    command: str


class McpPromptResult(Wire):
    """A filled prompt: the text to send as a turn's prompt."""

    text: str


class McpResourceInfo(Wire):
    """A resource an MCP server lists, which a client offers as an
    ``@``-mention: a ``context`` ref ``{server, uri}`` attaches it."""

    server: str
    uri: str
    name: str
    mime_type: str | None = None


class McpResourceFailure(Wire):
    """A server whose resources could not be listed, and why."""

    server: str
    error: str


class McpResourcesResult(Wire):
    """The resources of the MCP servers (at most 500, of all servers;
    ``truncated`` when more were listed) and the servers that failed."""

    resources: list[McpResourceInfo]
    failed: list[McpResourceFailure]
    truncated: bool = False
