"""The contract's results: what each command answers, camelCase on the wire."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rhema_lsp.contract.base import Wire
from rhema_lsp.contract.events import PlanEntryBody, RunStopReason, UsageTally
from rhema_lsp.engine.messages import Message
from rhema_lsp.vocabulary import Mode, RewindWhat

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
    "LanguageServerStatus",
    "McpPromptArgument",
    "McpPromptInfo",
    "McpPromptResult",
    "McpResourceFailure",
    "McpResourceInfo",
    "McpResourcesResult",
    "McpServerStatus",
    "OpenSessionResult",
    "ProviderSetup",
    "ProviderStatus",
    "ResumedCalls",
    "RewindResult",
    "RulesStatus",
    "SessionSummary",
    "SetupDemo",
    "SetupPreset",
    "SetupServer",
    "StatusResult",
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


class ProviderStatus(Wire):
    """The resolved provider; every field but ``error`` is null when none resolved."""

    name: str | None
    model: str | None
    base_url: str | None
    source: str | None
    error: str | None = None
    context_window: int | None = None


class LanguageServerStatus(Wire):
    """One of the agent's own language servers: found on ``PATH`` (or
    configured) for a language, and whether it runs."""

    language: str
    name: str
    command: list[str]
    state: Literal["available", "running", "stopped"]
    """``available``: found, started on the first question; ``stopped``:
    it ran and exited (started again on the next question)."""
    folder: str | None = None
    pid: int | None = None


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


class SetupServer(Wire):
    """A local model server that answered on its default loopback port: the
    preset that names it, what usually listens there, and the models it lists
    (none: it needs a model loaded, or ``model`` set)."""

    preset: str
    label: str
    base_url: str
    models: list[str]


class SetupPreset(Wire):
    """A preset the ``provider`` setting can name: ``hosted`` ones need their
    key in the server's environment (``keyVar``; ``keyPresent`` says whether it
    is there, never its value), ``local`` ones a server at ``baseUrl``."""

    name: str
    kind: Literal["hosted", "local"]
    key_var: str | None
    key_present: bool
    base_url: str
    model: str


class SetupDemo(Wire):
    """The embedded demo model (``provider: embedded``): never chosen unless
    named; ``available`` when installed (``install`` installs it), ``note``
    the label to show with it."""

    name: Literal["embedded"]
    model: str
    available: bool
    install: str
    note: str


class ProviderSetup(Wire):
    """What the user can choose a provider from (a client's setup screen):
    ``configured`` whether a ``provider`` or ``baseUrl`` setting is set, the
    local ``servers`` found, the names of the provider ``keys`` present in the
    server's environment, every preset, and the demo model."""

    configured: bool
    servers: list[SetupServer]
    keys: list[str]
    presets: list[SetupPreset]
    demo: SetupDemo


class RulesStatus(Wire):
    """One project rules file of a folder: ``path`` relative to the folder
    (the user's own by its full path), ``scope`` (``user``, ``root``: in the
    system prompt of every turn; ``nested``: given by a turn that worked in
    its directory), its size in ``bytes``, whether only its start is given
    (``truncated``), and why it is not read at all (``refused``: a symbolic
    link out of the workspace, not a regular file, ...)."""

    folder: str
    path: str
    scope: Literal["user", "root", "nested"]
    bytes: int
    truncated: bool = False
    refused: str | None = None


class StatusResult(Wire):
    """The server's version, provider (with the choices for setting one up),
    folders, default mode, running sessions, MCP servers, the project
    rules in use and who answers the language tools."""

    version: str
    provider: ProviderStatus
    setup: ProviderSetup
    folders: list[str]
    mode: Mode
    running: list[str]
    mcp_servers: list[McpServerStatus] = Field(default_factory=list)
    rules: list[RulesStatus] = Field(default_factory=list)
    language_servers: list[LanguageServerStatus] = Field(default_factory=list)
    """The agent's own language servers that are started or found."""
    language_answers: Literal["editor", "agent"] = "agent"
    """Who answers the language tools: the editor's own language servers
    (``editor``: the client declared ``language``; the agent's own serve the
    files the editor has no server for) or the agent's own (``agent``)."""
