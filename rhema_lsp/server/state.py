"""What the server holds across commands: its sessions' and runs' state.

:class:`ServerState` is read by every command handler and shared by every
run: the settings, the editor, the workspace folders, the client's
features, which session a plain client's ask continues
(:mod:`~rhema_lsp.server.conversation`), the editor's and the agent's own language servers
(:meth:`ServerState.language` chooses who answers the language tools), each
session's event sequence numbers, and the door kit
(:class:`~rhema_lsp.runs.door.Door`, the same the ACP agent holds: the
stores, the running runs, the provider cache, the MCP hub and the run
pipeline). It runs nothing itself:
runs are executed by :mod:`rhema_lsp.server.execution`, and shown by
:mod:`rhema_lsp.server.output`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Literal

from rhema_lsp.language import AgentLanguages
from rhema_lsp.mcp.hub import McpHub
from rhema_lsp.mcp.userfile import user_language_options, user_language_servers
from rhema_lsp.providers import ProviderSettings, ResolvedProvider, resolve_provider
from rhema_lsp.runs.backends import Backends
from rhema_lsp.runs.door import Door
from rhema_lsp.runs.settings import Settings
from rhema_lsp.runs.workplace import Workplace
from rhema_lsp.server.clients import ClientFeatures
from rhema_lsp.server.conversation import Conversations
from rhema_lsp.server.editor_language import EditorFirst, EditorLanguage
from rhema_lsp.server.folders import Folders, FolderState
from rhema_lsp.server.lsp_editor import LspEditor
from rhema_lsp.tools import LanguageService

if TYPE_CHECKING:
    from rhema_lsp.server.pygls_adapter import LspServer

__all__ = ["ServerState"]

logger = logging.getLogger(__name__)


class ServerState:
    """The sessions and runs of this server (see the module docstring)."""

    def __init__(self, server: LspServer) -> None:
        self.server = server
        self.settings = Settings()
        self.editor = LspEditor(server)
        self.editor_language = EditorLanguage(server, self.editor)
        self.door: Door[ProviderSettings, ResolvedProvider] = Door(
            McpHub(), Backends(ProviderSettings.of, _resolve)
        )
        self.mcp, self.turns, self.runs = self.door.mcp, self.door.turns, self.door.runs
        self.folders = Folders(server, self.door.stores)
        self.client = ClientFeatures()
        self.conversations = Conversations()
        self.languages = AgentLanguages(
            self.editor,
            self.folders.roots,
            user_file=user_language_servers,
            user_options=user_language_options,
        )
        self._seq: dict[str, int] = {}

    def update_settings(self, settings: Settings) -> None:
        """Adopt new settings; the provider is resolved again on next use."""
        self.settings = settings
        self.editor.approval_timeout = settings.approval_timeout
        self.languages.configured = settings.language_commands()
        self.languages.options = settings.language_options()

    async def provider(self, model: str | None = None) -> ResolvedProvider:
        """The provider the settings name; with ``model`` (a session's stored
        choice), the same provider for that model (the door kit's cache:
        :class:`~rhema_lsp.runs.backends.Backends`).

        Raises
        ------
        ProviderError
            None can be set up from the settings and the environment.
        """
        return await self.door.backends.of(self.settings, model)

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

    async def forget(self, session: str) -> None:
        """Drop what the server keeps of a deleted session (the door kit
        forgets the pipeline's)."""
        self._seq.pop(session, None)


async def _resolve(wanted: ProviderSettings) -> ResolvedProvider:
    chosen = await resolve_provider(wanted)
    logger.info(
        "provider %s, model %s at %s (%s, %s wire); context window %s",
        chosen.name,
        chosen.model,
        chosen.base_url or "(in process)",
        chosen.source,
        chosen.protocol,
        chosen.context_window or "unknown",
    )
    return chosen
