"""The contract's argument objects: one model per command, camelCase on the
wire, validated once by the router (unknown fields are named and refused)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from rhema_lsp.contract.base import Args
from rhema_lsp.vocabulary import Mode, RewindWhat

__all__ = [
    "CHECKPOINT_SCHEME",
    "CancelArgs",
    "ChangesArgs",
    "CheckpointContentArgs",
    "ContextDiagnostic",
    "ContextRef",
    "EditArgs",
    "ForkArgs",
    "ImageArg",
    "McpPromptArgs",
    "McpPromptsArgs",
    "McpResourcesArgs",
    "McpRestartArgs",
    "Mode",
    "OpenSessionArgs",
    "Position",
    "Range",
    "RewindArgs",
    "RewindWhat",
    "SessionArgs",
    "SessionsArgs",
    "StatusArgs",
    "StepArgs",
    "TurnArgs",
    "UndoTurnArgs",
]

NOT_BLANK = r"\S"
"""A prompt or instruction has something besides white space."""

CHECKPOINT_SCHEME = "rhema-checkpoint"
"""The URI scheme of a stored pre-image (``rhema.checkpointContent`` reads one)."""


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
    server: str | None = Field(default=None, min_length=1)
    """An MCP server's name: ``uri`` is then one of its resources
    (``rhema.mcpResources``), read from the server (no range, no diagnostics)."""


IMAGE_DATA_MAX = 28_000_000
"""The longest ``data`` of an attached image: 20 MiB of image as base64."""


class ImageArg(Args):
    """An image attached to the prompt by value (pasted, dropped, named on
    the command line): its bytes as base64. Its type is read from the bytes
    (PNG, JPEG, GIF or WebP), never from ``name``."""

    data: str = Field(min_length=1, max_length=IMAGE_DATA_MAX)
    name: str | None = Field(default=None, max_length=500)


class TurnArgs(Args):
    """Run a whole turn: the prompt, then steps until the model stops asking
    for tools."""

    prompt: str = Field(min_length=1, pattern=NOT_BLANK)
    folder: str | None = None
    session: str | None = None
    context: list[ContextRef] = Field(default_factory=list)
    images: list[ImageArg] = Field(default_factory=list, max_length=20)
    mode: Mode | None = None
    max_steps: int | None = Field(default=None, ge=1, le=500)
    detach: bool | None = None
    worktree: bool = False
    """Run a new session in its own git worktree (``rhema.worktreeApply``
    brings its changes in); a session that has one always runs there."""


class StepArgs(Args):
    """Run one step; without ``prompt``, continue the current turn."""

    session: str | None = None
    prompt: str | None = Field(default=None, min_length=1, pattern=NOT_BLANK)
    folder: str | None = None
    context: list[ContextRef] = Field(default_factory=list)
    images: list[ImageArg] = Field(default_factory=list, max_length=20)
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


class McpResourcesArgs(Args):
    """No arguments."""


class McpRestartArgs(Args):
    """The MCP server to restart, by its configured name."""

    name: str = Field(min_length=1)


class StatusArgs(Args):
    """``check``: start the configured MCP servers (or try them again) and
    wait for them, bounded, before answering: a health check; a server
    waiting for the user's sign-in is answered as ``authorizing``. With
    ``signIn`` as well, wait (up to five minutes) while the user signs in:
    for a client with no other way to show that (the terminal's
    ``rhema-lsp status``)."""

    check: bool = False
    sign_in: bool = False
