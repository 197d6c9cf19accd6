"""What the server holds across commands: its sessions' and runs' state.

:class:`ServerState` is read by every command handler and shared by every
run: the settings, the provider they resolve to (resolved once per
settings), the editor, the workspace folders with their stores, the running
runs, the client's features, the MCP hub, the editor's and the agent's
own language servers (:meth:`ServerState.language` chooses who answers
the language tools), the run pipeline
(:class:`~rhema_lsp.runs.turn.Turns`, which keeps each session's context
budget) and each session's event sequence numbers. It runs nothing itself:
runs are executed by :mod:`rhema_lsp.server.execution`, and shown by
:mod:`rhema_lsp.server.output`.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING, Literal

import anyio

from rhema_lsp.language import AgentLanguages
from rhema_lsp.mcp.hub import McpHub
from rhema_lsp.mcp.userfile import user_language_options, user_language_servers
from rhema_lsp.providers import ProviderSettings, ResolvedProvider, resolve_provider
from rhema_lsp.runs.registry import RunRegistry
from rhema_lsp.runs.settings import Settings
from rhema_lsp.runs.turn import Turns
from rhema_lsp.runs.workplace import Workplace
from rhema_lsp.server.clients import ClientFeatures
from rhema_lsp.server.editor_language import EditorFirst, EditorLanguage
from rhema_lsp.server.folders import Folders, FolderState
from rhema_lsp.server.lsp_editor import LspEditor
from rhema_lsp.tools import LanguageService

if TYPE_CHECKING:
    from rhema_lsp.server.app import RhemaServer

__all__ = ["ServerState"]

logger = logging.getLogger(__name__)


class ServerState:
    """The sessions and runs of this server (see the module docstring)."""

    def __init__(self, server: RhemaServer) -> None:
        self.server = server
        self.settings = Settings()
        self.editor = LspEditor(server)
        self.editor_language = EditorLanguage(server, self.editor)
        self.folders = Folders(server)
        self.runs = RunRegistry()
        self.client = ClientFeatures()
        self.mcp = McpHub()
        self.turns = Turns(self.mcp)
        self.languages = AgentLanguages(
            self.editor,
            self.folders.roots,
            user_file=user_language_servers,
            user_options=user_language_options,
        )
        self._provider: ResolvedProvider | None = None
        self._provider_key: ProviderSettings | None = None
        self._for_model: dict[ProviderSettings, ResolvedProvider] = {}
        self._resolving = anyio.Lock()
        self._seq: dict[str, int] = {}

    def update_settings(self, settings: Settings) -> None:
        """Adopt new settings; the provider is resolved again on next use."""
        self.settings = settings
        self.editor.approval_timeout = settings.approval_timeout
        self.languages.configured = settings.language_commands()
        self.languages.options = settings.language_options()

    async def provider(self, model: str | None = None) -> ResolvedProvider:
        """The provider the settings name, resolved once per settings (callers
        at the same time, a status and a turn, share one resolution); with
        ``model`` (a session's stored choice) other than the settings', the
        same provider for that model (resolved once per model and settings).

        Raises
        ------
        ProviderError
            None can be set up from the settings and the environment.
        """
        async with self._resolving:
            provider = await self._resolve()
            if model is None or model == provider.model:
                return provider
            wanted = dataclasses.replace(ProviderSettings.of(self.settings), model=model)
            if wanted not in self._for_model:
                self._for_model[wanted] = await resolve_provider(wanted)
            return self._for_model[wanted]

    async def _resolve(self) -> ResolvedProvider:
        wanted = ProviderSettings.of(self.settings)
        if self._provider is None or self._provider_key != wanted:
            self._provider = await resolve_provider(wanted)
            self._provider_key = wanted
            chosen = self._provider
            logger.info(
                "provider %s, model %s at %s (%s, %s wire); context window %s",
                chosen.name,
                chosen.model,
                chosen.base_url or "(in process)",
                chosen.source,
                chosen.protocol,
                chosen.context_window or "unknown",
            )
        return self._provider

    def next_seq(self, session: str) -> int:
        """The session's next ``rhema/event`` sequence number."""
        value = self._seq.get(session, 0) + 1
        self._seq[session] = value
        return value

    async def state_of(self, session: str) -> FolderState:
        """The folder state whose store holds ``session``.

        Raises
        ------
        UnknownSessionError
            No workspace folder's store has it.
        """
        return await self.folders.find(session, self.settings.session_store)

    def place(self, state: FolderState) -> Workplace:
        """Where the runs of ``state``'s folder run: its store, confined to
        every workspace folder, through the client."""
        roots = self.folders.roots() or [state.path]
        return Workplace(state.store, state.path, roots, self.editor, language=self.language())

    def language(self) -> LanguageService | None:
        """Who answers the language tools (the one place this choice is
        made): the editor's own language servers when the client declared
        ``language`` (``rhema/language``), the agent's own for what none of
        them serves; else the agent's own."""
        if self.language_answers() == "editor":
            return EditorFirst(self.editor_language, self.languages)
        return self.languages

    def language_answers(self) -> Literal["editor", "agent"]:
        """Whose servers :meth:`language` asks first, as ``rhema.status`` says it."""
        return "editor" if self.client.language else "agent"

    def forget(self, session: str) -> None:
        """Drop what is kept of a deleted session."""
        self._seq.pop(session, None)
        self.turns.forget(session)
