"""The ACP sessions of one connection, and the stores they live in.

An :class:`AcpSession` is one ``session/new`` or ``session/load``: a stored
session of the folder it was started in (its ``cwd``; the same SQLite store
the LSP server keeps, so a session started here continues in VS Code and
back), the roots its tools are confined to, its mode, model and thinking
level, its editor and the MCP servers the client passed. :class:`Stores`
opens each folder's store once per connection and closes them all at
shutdown. The session modes offered (:data:`SESSION_MODES`) are the
contract's, one per tool set.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp.schema import (
    ClientCapabilities,
    ListSessionsResponse,
    SessionInfo,
    SessionMode,
    SessionModeState,
)

from rhema_lsp.acp.costs import CostMeter
from rhema_lsp.acp.editor import AcpClient, AcpEditor
from rhema_lsp.acp.elicitation import editor_class
from rhema_lsp.acp.errors import BadParams, UnknownSession
from rhema_lsp.acp.folders import folder_refusal
from rhema_lsp.acp.offers import mode_entries
from rhema_lsp.language import AgentLanguages
from rhema_lsp.mcp import McpServerConfig
from rhema_lsp.mcp.userfile import user_language_options, user_language_servers
from rhema_lsp.runs.choices import with_choices
from rhema_lsp.runs.settings import Settings, Thinking
from rhema_lsp.runs.stores import StoreRegistry
from rhema_lsp.runs.workplace import Workplace
from rhema_lsp.sessions import SessionStore, StoredChoices, StoreLocation, UnknownSessionError
from rhema_lsp.vocabulary import Mode

__all__ = ["LIST_PAGE", "SESSION_MODES", "AcpSession", "Stores", "list_page", "real_folder"]

logger = logging.getLogger(__name__)

SESSION_MODES = [SessionMode.model_validate(entry) for entry in mode_entries()]
"""The session modes, one per tool set."""


def real_folder(raw: str, what: str) -> Path:
    """``raw`` (a ``cwd`` or an additional directory) as a real folder
    (:func:`~rhema_lsp.acp.folders.folder_refusal`'s rule).

    Raises
    ------
    BadParams
        It is relative, no folder, or would confine nothing (``/``, the
        home directory or a folder above it, the system's own trees:
        :mod:`rhema_lsp.tools.roots`).
    """
    real, refusal = folder_refusal(raw, what)
    if real is None:
        raise BadParams(refusal or f"{what} {raw} is refused")
    return real


@dataclass
class AcpSession:
    """One ACP session of this connection."""

    id: str
    cwd: Path
    roots: list[Path]
    mode: Mode
    store: SessionStore
    editor: AcpEditor
    stored: bool
    """Whether the store has it yet (a new session is stored on its first prompt)."""
    mcp_servers: dict[str, McpServerConfig] = field(default_factory=dict)
    """The MCP servers the client passed for this session."""
    model: str | None = None
    """The model chosen for this session (``None``: the provider's own)."""
    languages: AgentLanguages | None = None
    """The agent's own language servers for this session (started lazily,
    stopped when the session is closed or the agent shuts down)."""
    thinking: Thinking = "default"
    """How much the model reasons (the ``thinking`` setting's levels)."""
    terminals: Any = None
    """The client's terminal requests, when it declared ``terminal``
    (:class:`~rhema_lsp.acp.terminals.TerminalClient`); ``None``: commands
    run in the agent's process."""
    booleans: bool = False
    """Whether the client takes boolean options (``session.configOptions.boolean``)."""
    network: bool | None = None
    """Its commands reach the network in the sandbox (``None``: the setting's)."""
    cost: CostMeter = field(default_factory=CostMeter)
    """What its model calls cost so far, on this connection."""
    worktree: bool = False
    """Whether it runs in its own git worktree (:mod:`~rhema_lsp.acp.worktrees`)."""

    @property
    def place(self) -> Workplace:
        """Where its turns run: its folder's store, its roots, its editor,
        its language servers."""
        return Workplace(
            self.store,
            self.cwd,
            self.roots,
            self.editor,
            self.mcp_servers,
            language=self.languages,
        )

    def settings(self, agent: Settings) -> Settings:
        """The settings of its requests: its mode, model and thinking level
        over the ``agent``'s, by the one rule both doors follow
        (:func:`~rhema_lsp.runs.choices.with_choices`)."""
        chosen = with_choices(
            agent, StoredChoices(mode=self.mode, model=self.model, thinking=self.thinking)
        )
        if self.network is None:
            return chosen
        return chosen.model_copy(update={"sandbox_network": self.network})

    def modes(self) -> SessionModeState:
        """Its mode among those offered, as ACP shows them."""
        return SessionModeState(current_mode_id=self.mode, available_modes=SESSION_MODES)


def open_acp_session(
    session_id: str,
    roots: list[Path],
    store: SessionStore,
    client: AcpClient,
    capabilities: ClientCapabilities,
    settings: Settings,
    servers: dict[str, McpServerConfig],
    *,
    stored: bool,
) -> AcpSession:
    """A session on ``roots`` (its folder first): its editor reads and writes
    through the client as far as the client declared ``fs``, its commands run
    in the client's terminals when it declared ``terminal``, and its own
    language servers take ``languageServers`` from the settings, then from
    the user config file."""
    fs = capabilities.fs
    editor = editor_class(capabilities)(
        client,
        session_id,
        roots,
        read_through=bool(fs and fs.read_text_file),
        write_through=bool(fs and fs.write_text_file),
    )
    unique = list(dict.fromkeys(roots))
    return AcpSession(
        id=session_id,
        cwd=roots[0],
        roots=unique,
        mode=settings.mode,
        thinking=settings.thinking,
        store=store,
        editor=editor,
        stored=stored,
        mcp_servers=servers,
        languages=AgentLanguages(
            editor,
            lambda: unique,
            settings.language_commands(),
            user_file=user_language_servers,
            options=settings.language_options(),
            user_options=user_language_options,
        ),
        terminals=client if capabilities.terminal else None,
        booleans=bool(
            capabilities.session
            and capabilities.session.config_options
            and capabilities.session.config_options.boolean is not None
        ),
    )


class Stores:
    """The stores of the folders this connection named, kept in the door
    kit's ``registry``, and the notices of those stores (a corrupt store
    moved aside, a ``.rhema`` that cannot hold one) not yet told to the user."""

    def __init__(self, registry: StoreRegistry, location: StoreLocation) -> None:
        self.location = location
        self._registry = registry
        self._notices: dict[Path, str] = {}
        self._named: dict[Path, None] = {}
        registry.on_notice = self._notices.__setitem__

    def opened(self) -> list[SessionStore]:
        """Every store opened so far."""
        return self._registry.opened()

    def name(self, folders: Sequence[Path]) -> None:
        """Remember ``folders`` (a session's ``cwd`` and additional
        directories) as named by the client: :meth:`named` lists their stores."""
        self._named.update(dict.fromkeys(folders))

    async def named(self) -> list[SessionStore]:
        """The stores of every folder the client named that has one (listing
        makes none: a folder without ``.rhema`` is left out, in the workspace
        location), and of every folder opened.

        Raises
        ------
        SessionStoreError
            One cannot be opened.
        """
        for folder in self._named:
            if self.location == "user" or (folder / ".rhema").exists():
                await self.of(folder)
        return self.opened()

    async def holding(self, session_id: str) -> SessionStore:
        """The store, among those :meth:`named` lists, that holds ``session_id``.

        Raises
        ------
        UnknownSession
            None does.
        SessionStoreError
            One cannot be read.
        """
        for store in await self.named():
            try:
                await store.info(session_id)
            except UnknownSessionError:
                continue
            return store
        raise UnknownSession(session_id, "the folders this client named")

    async def of(self, folder: Path) -> SessionStore:
        """``folder``'s store, opened on first use (once: the registry's lock).

        Raises
        ------
        SessionStoreError
            It cannot be opened.
        """
        return await self._registry.of(folder, self.location)

    def untold_notice(self, folder: Path) -> str | None:
        """``folder``'s store notice, once: ``None`` after it was asked for."""
        return self._notices.pop(folder, None)

    async def close(self) -> None:
        """Close every store (releasing their leases)."""
        await self._registry.close()


LIST_PAGE = 50
"""Sessions in one ``session/list`` answer."""


def _page_start(cursor: str | None) -> int:
    """Where the page ``cursor`` names starts.

    Raises
    ------
    BadParams
        ``cursor`` is not one this agent gave.
    """
    if cursor is None:
        return 0
    if not cursor.isdigit() or len(cursor) > 9:
        raise BadParams(f"cursor {cursor[:40]!r} is not one session/list gave")
    return int(cursor)


async def list_page(stores: Sequence[SessionStore], cursor: str | None) -> ListSessionsResponse:
    """The sessions of ``stores``, the latest first, :data:`LIST_PAGE` at a
    time from where ``cursor`` (a ``nextCursor`` given before) says.

    Raises
    ------
    BadParams
        ``cursor`` is not one this agent gave.
    SessionStoreError
        A store cannot be read.
    """
    start = _page_start(cursor)
    listed: list[SessionInfo] = []
    for store in stores:
        infos = await store.list()
        listed += [
            SessionInfo(
                session_id=info.id,
                cwd=str(store.folder),
                title=info.title,
                updated_at=info.updated_at,
            )
            for info in infos
        ]
    listed.sort(key=lambda info: (info.updated_at or "", info.session_id), reverse=True)
    end = start + LIST_PAGE
    more = str(end) if end < len(listed) else None
    return ListSessionsResponse(sessions=listed[start:end], next_cursor=more)
