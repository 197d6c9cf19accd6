"""What a turn runs with, as a front door hands it to the pipeline.

:class:`Workplace` is where a session's turns run (its folder's store, the
roots the tools are confined to, the editor that holds the documents, the
MCP servers the client passed); its :meth:`Workplace.tools` are the only way
the pipeline builds the tools, so every turn through every door journals its
changes into the store (:class:`~rhema_lsp.runs.checkpoints.StoreJournal`).
:class:`Backend` is a resolved model provider as far as the pipeline needs
one (``runs`` does not import ``providers``: the providers' resolved provider
fits it as it is). :class:`Plan` is what one run is asked to do, and
:class:`TurnOutput` where its events go.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from rhema_lsp.engine import (
    EventSink,
    ImagePart,
    Message,
    ModelProvider,
    Role,
    TextPart,
    ToolResolver,
)
from rhema_lsp.mcp import McpServerConfig
from rhema_lsp.runs.checkpoints import StoreJournal
from rhema_lsp.runs.driver import Outcome
from rhema_lsp.runs.points import PointHook
from rhema_lsp.runs.refs import TurnRef
from rhema_lsp.runs.settings import Settings
from rhema_lsp.sessions import SessionStore
from rhema_lsp.tools import Editor, LanguageService, WorkspaceTools
from rhema_lsp.tools.command_policy import CommandPolicy
from rhema_lsp.vocabulary import Mode

__all__ = [
    "Backend",
    "BackendSource",
    "Decorate",
    "Plan",
    "TurnOutput",
    "Workplace",
    "command_policy",
]


def command_policy(settings: Settings) -> CommandPolicy:
    """The settings' sandbox and allow-list, as the tools read them."""
    return CommandPolicy(
        settings.sandbox,
        settings.sandbox_network,
        settings.sandbox_writable,
        settings.command_allowlist,
    )


class Backend(Protocol):
    """A resolved model provider: the provider, the model it runs, its wire
    (which shapes MCP tools' schemas) and the model's context window in
    tokens (``None``: unknown)."""

    @property
    def provider(self) -> ModelProvider: ...

    @property
    def model(self) -> str: ...

    @property
    def protocol(self) -> str: ...

    @property
    def context_window(self) -> int | None: ...


BackendSource = Callable[[], Awaitable[Backend]]
"""Resolves the provider when a run needs it; raises the engine's
:class:`~rhema_lsp.engine.ProviderError` when none can be."""

Decorate = Callable[[WorkspaceTools, ToolResolver], ToolResolver]
"""Wraps a run's resolver (the workspace tools, plus MCP tools in the modes
that have them) in what a door adds around each call (ACP: locations, the
client's buffers, diffs)."""


@dataclass(frozen=True)
class Workplace:
    """Where a session's turns run (see the module docstring).

    Parameters
    ----------
    store
        The session store of the folder.
    folder
        The session's folder: relative paths and commands start here.
    roots
        The folders the tools are confined to (the folder itself if empty).
    editor
        Open documents, edit application and confirmations.
    client_servers
        The MCP servers the client passed for the session, by name.
    language
        Who answers the language tools (the editor's language servers or the
        agent's own); ``None``: no language intelligence.
    """

    store: SessionStore
    folder: Path
    roots: Sequence[Path]
    editor: Editor
    client_servers: Mapping[str, McpServerConfig] = field(default_factory=dict)
    language: LanguageService | None = None

    def tools(
        self, mode: Mode, settings: Settings, on_point: PointHook | None = None
    ) -> WorkspaceTools:
        """The confined tools of a run in ``mode``, checkpointing into the
        store (each change's points reported to ``on_point``)."""
        return WorkspaceTools(
            list(self.roots) or [self.folder],
            self.folder,
            mode,
            self.editor,
            command_allowlist=settings.command_allowlist,
            commands=command_policy(settings),
            review=settings.review,
            journal=StoreJournal(self.store, on_point),
            env=os.environ,
            language=self.language,
            diagnostics_wait=settings.diagnostics_wait,
        )


@dataclass(frozen=True)
class Plan:
    """What one run is asked to do.

    Parameters
    ----------
    prompt
        The user's message (context already rendered into it); ``None``
        continues the history as it is (``rhema.step`` on a session).
    title
        What the user typed: the turn's title in listings and rewind pickers.
    mode
        The tool set.
    max_steps
        The step limit of the turn.
    single_step
        Run exactly one step.
    system
        The system prompt (default: the mode's, for the folder).
    tools
        Whether the model is offered tools at all (``rhema.edit``'s rewrite
        is not).
    images
        The images attached to the prompt (from ``context``, the command's
        ``images``, an ACP prompt), after its text in the user's message.
    depth
        0 for a user's turn; 1 for a subagent's (which gets no ``task`` tool).
    worktree
        A new session runs in its own git worktree
        (:mod:`~rhema_lsp.runs.worktree_place`).
    """

    prompt: str | None
    title: str
    mode: Mode
    max_steps: int
    single_step: bool = False
    system: str | None = None
    tools: bool = True
    images: tuple[ImagePart, ...] = ()
    depth: int = 0
    worktree: bool = False

    def message(self) -> Message | None:
        """The user's message of the prompt: its text, then its images."""
        if self.prompt is None:
            return None
        return Message(role=Role.USER, content=[TextPart(text=self.prompt), *self.images])


class TurnOutput(Protocol):
    """Where one turn's events go: opened once the session's lease is held,
    closed (shielded from cancellation) after the turn is recorded and its
    ``turn_end`` emitted."""

    async def open(self, ref: TurnRef) -> EventSink:
        """Start showing turn ``ref``; the sink its events go to."""
        ...

    async def close(self, outcome: Outcome) -> None:
        """Everything is emitted: flush, and say how the turn ended."""
        ...
