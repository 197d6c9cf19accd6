"""The contract's answer to ``rhema.status``: the version, the provider (or
how to set one up), the language servers, the MCP servers, the project
rules. camelCase on the wire, as every result (:mod:`.results` holds the
other commands' results); what the server and the agent report here is
read from the lower layers and never includes a key.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rhema_lsp.contract.base import Wire
from rhema_lsp.vocabulary import Mode

__all__ = [
    "CompletionStatus",
    "ExtensionStatus",
    "LanguageServerStatus",
    "McpServerStatus",
    "ProviderSetup",
    "ProviderStatus",
    "RulesStatus",
    "SetupDemo",
    "SetupPreset",
    "SetupServer",
    "StatusResult",
]


class ProviderStatus(Wire):
    """The resolved provider; every field but ``error`` is null when none resolved."""

    name: str | None
    model: str | None
    base_url: str | None
    source: str | None
    error: str | None = None
    context_window: int | None = None


class CompletionStatus(Wire):
    """Which model completes as the user types (inline completion and next
    edits): the ``completion*`` settings over the chat's provider."""

    enabled: bool
    provider: str | None
    model: str | None
    base_url: str | None = None


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


class ExtensionStatus(Wire):
    """One skill or custom slash command of a folder (``kind``), by ``name``
    (``/name`` types it), its ``description`` and the file it comes from
    (``path``, relative to the folder; the user's own by its full path); or a
    file left out (``problem``: malformed, too large, a link out of the
    workspace, ...; then ``name`` is empty)."""

    folder: str
    kind: Literal["skill", "command"]
    name: str
    path: str
    description: str = ""
    argument_hint: str = ""
    problem: str | None = None


class StatusResult(Wire):
    """The server's version, provider (with the choices for setting one up),
    folders, default mode, running sessions, MCP servers, the project
    rules in use, who answers the language tools and the command sandbox."""

    version: str
    provider: ProviderStatus
    setup: ProviderSetup
    folders: list[str]
    mode: Mode
    running: list[str]
    mcp_servers: list[McpServerStatus] = Field(default_factory=list)
    rules: list[RulesStatus] = Field(default_factory=list)
    extensions: list[ExtensionStatus] = Field(default_factory=list)
    """The skills and custom slash commands of each folder, and the files left out."""
    language_servers: list[LanguageServerStatus] = Field(default_factory=list)
    """The agent's own language servers that are started or found."""
    completion: CompletionStatus | None = None
    """Which model completes as the user types."""
    language_answers: Literal["editor", "agent"] = "agent"
    """Who answers the language tools: the editor's own language servers
    (``editor``: the client declared ``language``; the agent's own serve the
    files the editor has no server for) or the agent's own (``agent``)."""
    sandbox: str = ""
    """Whether ``run_command`` runs sandboxed and by what, one line starting
    ``sandbox:`` (``sandbox: off (setting) — ...``, ``sandbox: bubblewrap
    (...)``)."""
