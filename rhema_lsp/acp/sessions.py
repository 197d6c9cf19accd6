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

from acp import RequestError
from acp.schema import (
    ClientCapabilities,
    ListSessionsResponse,
    SessionInfo,
    SessionMode,
    SessionModeState,
)

from rhema_lsp.acp.editor import AcpClient, AcpEditor
from rhema_lsp.acp.errors import INTERNAL_ERROR, INVALID_PARAMS, UnknownSession, to_request_error
from rhema_lsp.acp.folders import folder_refusal
from rhema_lsp.acp.offers import mode_entries
from rhema_lsp.language import AgentLanguages
from rhema_lsp.mcp import McpServerConfig
from rhema_lsp.mcp.userfile import user_language_servers
from rhema_lsp.runs.settings import Settings, Thinking
from rhema_lsp.runs.workplace import Workplace
from rhema_lsp.sessions import SessionStore, SessionStoreError, StoreLocation, UnknownSessionError
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
    RequestError
        It is relative, no folder, or would confine nothing (``/``, the
        home directory).
    """
    real, refusal = folder_refusal(raw, what)
    if real is None:
        raise RequestError(INVALID_PARAMS, refusal or f"{what} {raw} is refused")
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
        """The settings of its requests: the ``agent``'s, with its mode,
        model and thinking level."""
        chosen = agent.model_copy(update={"thinking": self.thinking, "mode": self.mode})
        if self.model is not None:
            chosen = chosen.model_copy(update={"model": self.model})
        return chosen

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
    editor = AcpEditor(
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
            editor, lambda: unique, settings.language_commands(), user_file=user_language_servers
        ),
        terminals=client if capabilities.terminal else None,
    )


class Stores:
    """The session store of each folder this connection opened, and the
    notices of those stores (a corrupt store moved aside, a ``.rhema`` that
    cannot hold one) not yet told to the user."""

    def __init__(self, location: StoreLocation) -> None:
        self.location = location
        self._stores: dict[Path, SessionStore] = {}
        self._notices: dict[Path, str] = {}
        self._named: dict[Path, None] = {}

    def opened(self) -> list[SessionStore]:
        """Every store opened so far."""
        return list(self._stores.values())

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
        RequestError
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
        RequestError
            None does (-32002), or one cannot be read.
        """
        for store in await self.named():
            try:
                await store.info(session_id)
            except UnknownSessionError:
                continue
            except SessionStoreError as exc:
                raise RequestError(INTERNAL_ERROR, str(exc)) from exc
            return store
        raise to_request_error(UnknownSession(session_id, "the folders this client named"))

    async def of(self, folder: Path) -> SessionStore:
        """``folder``'s store, opened on first use.

        Raises
        ------
        RequestError
            It cannot be opened.
        """
        store = self._stores.get(folder)
        if store is None:
            try:
                store = await SessionStore.open(folder, location=self.location)
            except SessionStoreError as exc:
                raise RequestError(INTERNAL_ERROR, str(exc)) from exc
            if store.notice:
                logger.warning("%s", store.notice)
                self._notices[folder] = store.notice
            self._stores[folder] = store
        return store

    def untold_notice(self, folder: Path) -> str | None:
        """``folder``'s store notice, once: ``None`` after it was asked for."""
        return self._notices.pop(folder, None)

    async def close(self) -> None:
        """Close every store (releasing their leases)."""
        stores = self.opened()
        self._stores.clear()
        for store in stores:
            await store.close()


LIST_PAGE = 50
"""Sessions in one ``session/list`` answer."""


def _page_start(cursor: str | None) -> int:
    """Where the page ``cursor`` names starts.

    Raises
    ------
    RequestError
        ``cursor`` is not one this agent gave.
    """
    if cursor is None:
        return 0
    if not cursor.isdigit() or len(cursor) > 9:
        raise RequestError(INVALID_PARAMS, f"cursor {cursor[:40]!r} is not one session/list gave")
    return int(cursor)


async def list_page(stores: Sequence[SessionStore], cursor: str | None) -> ListSessionsResponse:
    """The sessions of ``stores``, the latest first, :data:`LIST_PAGE` at a
    time from where ``cursor`` (a ``nextCursor`` given before) says.

    Raises
    ------
    RequestError
        ``cursor`` is not one this agent gave, or a store cannot be read.
    """
    start = _page_start(cursor)
    listed: list[SessionInfo] = []
    for store in stores:
        try:
            infos = await store.list()
        except SessionStoreError as exc:
            raise RequestError(INTERNAL_ERROR, str(exc)) from exc
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
