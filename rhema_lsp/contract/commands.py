"""The contract's commands: each one's argument object, its result, and the
one table that names them.

A command is a :class:`CommandSpec` in :data:`COMMANDS`. The server
registers and dispatches from this table (each spec is served by one
handler), parses arguments with ``spec.args`` and sends results dumped
through ``spec.result``; the JSON Schema, the VS Code client's generated
types and the tables of ``docs/protocol.md`` are all made from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from pydantic import Field, TypeAdapter, model_validator

from rhema_lsp.contract.base import Args, Wire
from rhema_lsp.contract.events import RunStopReason, UsageTally
from rhema_lsp.engine.messages import Message

__all__ = [
    "CANCEL",
    "CHANGES",
    "CHECKPOINT_CONTENT",
    "CHECKPOINT_SCHEME",
    "COMMANDS",
    "COMPACT",
    "DELETE_SESSION",
    "EDIT",
    "FORK_SESSION",
    "MCP_PROMPT",
    "MCP_PROMPTS",
    "MCP_RESTART",
    "OPEN_SESSION",
    "REWIND",
    "SESSIONS",
    "STATUS",
    "STEP",
    "TURN",
    "UNDO_TURN",
    "CallSummary",
    "CancelArgs",
    "CancelResult",
    "ChangedFile",
    "ChangesArgs",
    "ChangesResult",
    "CheckpointContentArgs",
    "CheckpointContentResult",
    "CommandSpec",
    "CompactResult",
    "CompactionInfo",
    "ContextDiagnostic",
    "ContextRef",
    "DeleteResult",
    "Detached",
    "EditArgs",
    "EditResult",
    "FileConflict",
    "ForkArgs",
    "ForkResult",
    "McpPromptArgs",
    "McpPromptArgument",
    "McpPromptInfo",
    "McpPromptResult",
    "McpPromptsArgs",
    "McpRestartArgs",
    "McpServerStatus",
    "Mode",
    "OpenSessionArgs",
    "OpenSessionResult",
    "Position",
    "ProviderStatus",
    "Range",
    "ResumedCalls",
    "RewindArgs",
    "RewindResult",
    "RewindWhat",
    "SessionArgs",
    "SessionSummary",
    "SessionsArgs",
    "StatusArgs",
    "StatusResult",
    "StepArgs",
    "StepResult",
    "TurnArgs",
    "TurnChanges",
    "TurnResult",
    "UndoTurnArgs",
    "UndoTurnResult",
    "command_named",
]

NOT_BLANK = r"\S"
"""A prompt or instruction has something besides white space."""

Mode = Literal["ask", "edit", "agent"]
"""Which tools the model is offered: read-only, plus edits, plus commands."""

A = TypeVar("A", bound=Args)

RewindWhat = Literal["code", "conversation", "both"]
"""What a rewind takes back: the files, the conversation, or both."""

CHECKPOINT_SCHEME = "rhema-checkpoint"
"""The URI scheme of a stored pre-image (``rhema.checkpointContent`` reads one)."""


# -- arguments ---------------------------------------------------------------


class Position(Args):
    """A position in a document, in the negotiated position encoding."""

    line: int = Field(ge=0)
    character: int = Field(ge=0)


class Range(Args):
    """A range in a document."""

    start: Position
    end: Position


Severity = Literal["error", "warning", "information", "hint"]
"""How bad a reported problem is (the editor's diagnostic severity)."""


class ContextDiagnostic(Args):
    """A problem the editor reports in a context document (from any language
    server or linter), passed on to the model."""

    range: Range
    message: str = Field(min_length=1)
    severity: Severity = "error"
    source: str | None = None
    code: int | str | None = None


class ContextRef(Args):
    """A document (or a range of it) the prompt is about, with the problems
    the editor reports in it when the user attached them."""

    uri: str = Field(min_length=1)
    range: Range | None = None
    diagnostics: list[ContextDiagnostic] = Field(default_factory=list)


class TurnArgs(Args):
    """Run a whole turn: the prompt, then steps until the model stops asking
    for tools."""

    prompt: str = Field(min_length=1, pattern=NOT_BLANK)
    folder: str | None = None
    session: str | None = None
    context: list[ContextRef] = Field(default_factory=list)
    mode: Mode | None = None
    max_steps: int | None = Field(default=None, ge=1, le=500)
    detach: bool | None = None


class StepArgs(Args):
    """Run one step; without ``prompt``, continue the current turn."""

    session: str | None = None
    prompt: str | None = Field(default=None, min_length=1, pattern=NOT_BLANK)
    folder: str | None = None
    context: list[ContextRef] = Field(default_factory=list)
    mode: Mode | None = None
    detach: bool | None = None


class CancelArgs(Args):
    """Which run to stop; none: every run of this server."""

    session: str | None = None


class SessionsArgs(Args):
    """Which folder's sessions; none: every workspace folder's."""

    folder: str | None = None


class SessionArgs(Args):
    """One session."""

    session: str = Field(min_length=1)


class OpenSessionArgs(Args):
    """One session; ``full``: every stored message rather than the compacted
    view the model is sent."""

    session: str = Field(min_length=1)
    full: bool = False


class EditArgs(Args):
    """Rewrite the selection in place."""

    uri: str = Field(min_length=1)
    range: Range
    instruction: str = Field(min_length=1, pattern=NOT_BLANK)
    session: str | None = None
    detach: bool | None = None


class UndoTurnArgs(Args):
    """Which turn to revert (1-based); none: the last."""

    session: str = Field(min_length=1)
    turn: int | None = Field(default=None, ge=1)


class RewindArgs(Args):
    """Rewind a session to before ``turn``: its files (``code``), its
    conversation, or both; ``force`` overwrites files changed since;
    ``paths`` (file URIs, only with ``what: code``) restores just those
    files (rejecting one file's changes)."""

    session: str = Field(min_length=1)
    turn: int = Field(ge=1)
    what: RewindWhat = "both"
    force: bool = False
    paths: list[str] | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _paths_are_code(self) -> RewindArgs:
        if self.paths is not None and self.what != "code":
            raise ValueError("`paths` restores files only: it needs `what: code`")
        return self


class ForkArgs(Args):
    """Start a new session from ``session``'s conversation before ``turn``
    (none: all of it)."""

    session: str = Field(min_length=1)
    turn: int | None = Field(default=None, ge=1)


class ChangesArgs(Args):
    """The files a session's turns changed; ``turn``: that turn only."""

    session: str = Field(min_length=1)
    turn: int | None = Field(default=None, ge=1)


class CheckpointContentArgs(Args):
    """A ``rhema-checkpoint:`` URI from ``rhema.changes``."""

    uri: str = Field(min_length=1)


class McpPromptsArgs(Args):
    """No arguments."""


class McpPromptArgs(Args):
    """A server's prompt to fill: ``arguments`` by name (strings)."""

    server: str = Field(min_length=1)
    name: str = Field(min_length=1)
    arguments: dict[str, str] = Field(default_factory=dict)


class McpRestartArgs(Args):
    """The MCP server to restart, by its configured name."""

    name: str = Field(min_length=1)


class StatusArgs(Args):
    """``check``: start the configured MCP servers (or try them again) and
    wait for them, bounded, before answering: a health check."""

    check: bool = False


# -- results -----------------------------------------------------------------


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


class SessionSummary(Wire):
    """One stored session."""

    session: str
    folder: str
    title: str
    created_at: str
    updated_at: str
    turns: int
    running: bool


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
    messages), or with ``full`` every stored message."""

    session: str
    folder: str
    title: str
    messages: list[Message]
    resumed: ResumedCalls
    compaction: CompactionInfo | None = None


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
    """One turn and the files it changed."""

    turn: int
    title: str
    created_at: str
    in_conversation: bool
    files: list[ChangedFile]


class ChangesResult(Wire):
    """A session's turns, oldest first."""

    session: str
    turns: list[TurnChanges]


class CheckpointContentResult(Wire):
    """The text of a stored pre-image."""

    uri: str
    text: str


class ProviderStatus(Wire):
    """The resolved provider; every field but ``error`` is null when none resolved."""

    name: str | None
    model: str | None
    base_url: str | None
    source: str | None
    error: str | None = None
    context_window: int | None = None


class McpServerStatus(Wire):
    """One MCP server: where it is configured, how it runs, and its tools."""

    name: str
    source: Literal["settings", "user config", "workspace"]
    transport: Literal["stdio", "http"]
    state: Literal[
        "idle", "starting", "ready", "restarting", "authorizing", "failed", "stopped", "disabled"
    ]
    tools: int
    restarts: int
    error: str | None = None
    deferred: bool = False
    """Its tools were behind ``find_tools`` in the latest run (too many, or
    too large for the model's window)."""


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


class StatusResult(Wire):
    """The server's version, provider, folders, default mode, running sessions
    and MCP servers."""

    version: str
    provider: ProviderStatus
    folders: list[str]
    mode: Mode
    running: list[str]
    mcp_servers: list[McpServerStatus] = Field(default_factory=list)


# -- the table ---------------------------------------------------------------


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


TURN = CommandSpec("rhema.turn", TurnArgs, TurnResult | Detached, "run a whole turn", runs=True)
STEP = CommandSpec("rhema.step", StepArgs, StepResult | Detached, "run one step", runs=True)
CANCEL = CommandSpec("rhema.cancel", CancelArgs, CancelResult, "stop a run, or every run")
SESSIONS = CommandSpec(
    "rhema.sessions", SessionsArgs, list[SessionSummary], "list stored sessions, newest first"
)
OPEN_SESSION = CommandSpec(
    "rhema.openSession",
    OpenSessionArgs,
    OpenSessionResult,
    "load a session's history (the compacted view; `full`: every message)",
)
COMPACT = CommandSpec(
    "rhema.compact",
    SessionArgs,
    CompactResult,
    "summarise a session's older rounds now",
)
DELETE_SESSION = CommandSpec("rhema.deleteSession", SessionArgs, DeleteResult, "delete a session")
EDIT = CommandSpec(
    "rhema.edit", EditArgs, EditResult | Detached, "rewrite the selection in place", runs=True
)
UNDO_TURN = CommandSpec(
    "rhema.undoTurn",
    UndoTurnArgs,
    UndoTurnResult,
    "revert a turn's edits (none: the last): rhema.rewind of that turn's code",
)
STATUS = CommandSpec("rhema.status", StatusArgs, StatusResult, "version, provider and state")
MCP_PROMPTS = CommandSpec(
    "rhema.mcpPrompts",
    McpPromptsArgs,
    list[McpPromptInfo],
    "the MCP servers' prompts (slash commands); starts the servers",
)
MCP_PROMPT = CommandSpec(
    "rhema.mcpPrompt", McpPromptArgs, McpPromptResult, "fill an MCP prompt: the text of a turn"
)
MCP_RESTART = CommandSpec(
    "rhema.mcpRestart",
    McpRestartArgs,
    list[McpServerStatus],
    "restart an MCP server (a failed one, a sign-in) and wait for it",
)
REWIND = CommandSpec(
    "rhema.rewind",
    RewindArgs,
    RewindResult,
    "restore files and/or the conversation to before a turn",
)
FORK_SESSION = CommandSpec(
    "rhema.forkSession", ForkArgs, ForkResult, "start a new session from a turn"
)
CHANGES = CommandSpec(
    "rhema.changes", ChangesArgs, ChangesResult, "the files each turn changed, with checkpoints"
)
CHECKPOINT_CONTENT = CommandSpec(
    "rhema.checkpointContent",
    CheckpointContentArgs,
    CheckpointContentResult,
    "the text of a rhema-checkpoint: URI",
)

COMMANDS: tuple[CommandSpec[Any], ...] = (
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
)
"""Every command of the contract, in the order the docs list them."""

_BY_NAME = {spec.name: spec for spec in COMMANDS}


def command_named(name: str) -> CommandSpec[Any] | None:
    """The command called ``name``, if the contract has one."""
    return _BY_NAME.get(name)
