"""The ACP agent: the connection's sessions, prompts and cancellation.

:class:`RhemaAcpAgent` implements the SDK's ``Agent`` interface. It owns the
ACP sessions of this connection (:mod:`~rhema_lsp.acp.sessions`: each one a
stored session of the folder it was started in), their editors, the running
prompts, the resolved provider and the run pipeline
(:class:`~rhema_lsp.runs.turn.Turns`, which keeps each session's context
budget for the life of the connection).

A prompt registers its run (one prompt per session at a time) and runs as a
turn of the pipeline (:func:`~rhema_lsp.acp.turns.run_prompt`): the same
lease, resume, commits, checkpoints in the store, cancellation and recorded
turn as through the language server, so an ACP turn can be rewound from an
editor or with ``rhema-lsp rewind``. ``session/cancel`` cancels the run: the
provider stream closes, no further tool starts, a running command is killed,
a pending permission request is abandoned, the answer so far is kept, the
session is checkpointed, and the prompt answers ``cancelled``.

MCP: the servers the client passes with ``session/new`` or ``session/load``
(:mod:`~rhema_lsp.acp.mcp_servers`) join the user's own in the agent's
:class:`~rhema_lsp.mcp.hub.McpHub`; a prompt whose mode is in ``mcpModes``
gets their tools, each call asked through ``session/request_permission``;
every server stops when the agent shuts down.

Options: each session's ``configOptions`` (mode, model and thinking, as
CodeCompanion and Zed switch them) come from :mod:`~rhema_lsp.acp.config`
and change through :mod:`~rhema_lsp.acp.options` (kept with the session in
its store, taken up again when it is reopened); a session's chosen model
and thinking level are its next request's.

Slash commands (:mod:`~rhema_lsp.acp.commands`, the built-in ones in
:mod:`~rhema_lsp.acp.builtin_commands`) are offered to each session as it
opens (``available_commands_update``; a new session's right after its
answer); a prompt naming one runs it instead of a turn.

The module holds the SDK's ``Agent`` methods together, one idea.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from acp import RequestError
from acp.schema import (
    AgentMessageChunk,
    AuthenticateResponse,
    ClientCapabilities,
    CloseSessionResponse,
    DeleteSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    ResumeSessionResponse,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    TextContentBlock,
)

from rhema_lsp.acp.builtin_commands import CommandSeat, Discard, builtin_commands
from rhema_lsp.acp.commands import update_message
from rhema_lsp.acp.config import MODE, SessionModels
from rhema_lsp.acp.editor import AcpClient
from rhema_lsp.acp.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    SessionBusy,
    UnknownSession,
    to_request_error,
)
from rhema_lsp.acp.handshake import initialize_result
from rhema_lsp.acp.mcp_servers import ClientServer, client_servers
from rhema_lsp.acp.options import SessionOptions, restore_choices
from rhema_lsp.acp.prompt import PromptBlock, user_prompt
from rhema_lsp.acp.replay import replay
from rhema_lsp.acp.sessions import AcpSession, Stores, list_page, open_acp_session, real_folder
from rhema_lsp.acp.turns import answer, run_prompt
from rhema_lsp.engine import ImageRefused, Session
from rhema_lsp.mcp.hub import McpHub
from rhema_lsp.providers import ProviderSettings, ResolvedProvider, resolve_provider
from rhema_lsp.runs.refs import TurnRef
from rhema_lsp.runs.registry import Run, RunRegistry, SessionRunningError
from rhema_lsp.runs.settings import Settings
from rhema_lsp.runs.turn import Turns
from rhema_lsp.sessions import (
    SessionBusyError,
    SessionStoreError,
    UnknownSessionError,
)

__all__ = ["RhemaAcpAgent"]

logger = logging.getLogger(__name__)


class RhemaAcpAgent:
    """The ACP agent of one connection (see the module docstring).

    Parameters
    ----------
    settings
        The agent's settings (from the command line); ``mode`` is each new
        session's starting mode.
    mcp
        The MCP servers of every session (default: a hub reading the user
        config file).
    turns
        The run pipeline (default: one on ``mcp``).
    """

    def __init__(
        self, settings: Settings, mcp: McpHub | None = None, turns: Turns | None = None
    ) -> None:
        self.settings = settings
        self.mcp = McpHub() if mcp is None else mcp
        self.turns = Turns(self.mcp) if turns is None else turns
        self.runs = RunRegistry()
        self.sessions: dict[str, AcpSession] = {}
        self.stores = Stores(settings.session_store)
        self._client: AcpClient | None = None
        self._capabilities = ClientCapabilities()
        self._provider: ResolvedProvider | None = None
        self.models = SessionModels(settings, self._resolved_provider)
        self.options = SessionOptions(self.models)
        self._closed = False
        self.withdraw_requests: Callable[[str], Awaitable[None]] | None = None
        """Withdraws the agent's unanswered requests about a session (set by
        the transport: ``$/cancel_request`` for each) once its prompt ends."""
        self.after_answer: Callable[[str, dict[str, Any]], None] | None = None
        """Queues a notification to follow the answer naming a session (set
        by the transport)."""
        self.commands = builtin_commands(
            CommandSeat(
                self.turns,
                self.runs,
                lambda s: s.settings(self.settings),
                lambda s: self.models.provider(s.model),
            )
        )

    # -- connection ------------------------------------------------------------

    def on_connect(self, conn: Any) -> None:
        """Keep the SDK's connection to the client."""
        self._client = conn

    @property
    def client(self) -> AcpClient:
        if self._client is None:
            raise RequestError(INTERNAL_ERROR, "the agent is not connected")
        return self._client

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        """Negotiate the protocol version (the one this agent speaks: the
        client's when it is that one, else this agent's latest, as the
        protocol says; never a version it does not speak); declare what this
        agent does."""
        self._capabilities = client_capabilities or ClientCapabilities()
        if client_info is not None:
            logger.info("client %s %s", client_info.name, client_info.version)
        # the answer rhema_lsp.acp.handshake sends before the SDK loads, the same
        return InitializeResponse.model_validate(initialize_result())

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse | None:
        """Nothing to authenticate: keys come from the agent's environment."""
        return AuthenticateResponse()

    # -- sessions ----------------------------------------------------------------

    async def _open(
        self,
        session_id: str,
        cwd: str,
        additional: list[str] | None,
        servers: list[ClientServer] | None,
        *,
        stored: bool,
    ) -> AcpSession:
        folder = real_folder(cwd, "cwd")
        roots = [folder] + [
            real_folder(extra, "additional directory") for extra in additional or []
        ]
        self.stores.name(roots)
        session = open_acp_session(
            session_id,
            roots,
            await self.stores.of(folder),
            self.client,
            self._capabilities,
            self.settings,
            client_servers(servers),
            stored=stored,
        )
        previous = self.sessions.get(session_id)
        if previous is not None and previous.languages is not None:
            await previous.languages.aclose()  # loaded again: its servers are replaced
        self.sessions[session_id] = session
        return session

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[ClientServer] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        """A new session on ``cwd`` (plus additional roots, and the client's
        MCP servers); stored on its first prompt."""
        session = await self._open(
            secrets.token_hex(8), cwd, additional_directories, mcp_servers, stored=False
        )
        if self.after_answer is not None:  # the client is told of the session first
            self.after_answer(session.id, update_message(session.id, self.commands.update()))
        return NewSessionResponse(
            session_id=session.id,
            modes=session.modes(),
            config_options=await self.options.listed(session),
        )

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[ClientServer] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse | None:
        """Open a stored session of ``cwd``'s folder (with the client's MCP
        servers), complete a round a crash left open, and replay its history."""
        session, history = await self._reopen(cwd, session_id, additional_directories, mcp_servers)
        for update in replay(history):
            await self.client.session_update(session_id, update)
        await self.client.session_update(session_id, self.commands.update())
        return LoadSessionResponse(
            modes=session.modes(), config_options=await self.options.listed(session)
        )

    async def resume_session(
        self,
        cwd: str,
        session_id: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[ClientServer] | None = None,
        **kwargs: Any,
    ) -> ResumeSessionResponse:
        """As ``session/load``, without replaying the history (the client
        still shows it)."""
        session, _ = await self._reopen(cwd, session_id, additional_directories, mcp_servers)
        await self.client.session_update(session_id, self.commands.update())
        return ResumeSessionResponse(
            modes=session.modes(), config_options=await self.options.listed(session)
        )

    async def _reopen(
        self,
        cwd: str,
        session_id: str,
        additional: list[str] | None,
        servers: list[ClientServer] | None,
    ) -> tuple[AcpSession, Session]:
        store = await self.stores.of(real_folder(cwd, "cwd"))
        try:
            info = await store.info(session_id)
        except UnknownSessionError as exc:
            raise to_request_error(UnknownSession(session_id, str(store.folder))) from exc
        except SessionStoreError as exc:
            raise RequestError(INTERNAL_ERROR, str(exc)) from exc
        session = await self._open(session_id, cwd, additional, servers, stored=True)
        await restore_choices(session)
        try:
            if self.runs.is_running(session_id):
                return session, await store.load(session_id)
            ref = TurnRef(session_id, info.turns)
            history, _ = await self.turns.reopen(
                session.place, ref, session.mode, self.settings, Discard()
            )
        except SessionStoreError as exc:
            raise RequestError(INTERNAL_ERROR, str(exc)) from exc
        return session, history

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        """Forget the session on this connection (its prompt, if one runs,
        is cancelled and answers ``cancelled``); it stays in its store."""
        session = self._session(session_id)
        self.runs.cancel(session_id)
        del self.sessions[session_id]
        if session.languages is not None:
            await session.languages.aclose()
        return CloseSessionResponse()

    async def delete_session(self, session_id: str, **kwargs: Any) -> DeleteSessionResponse:
        """Delete a stored session (of a folder this connection named): its
        prompt here, if one runs, is stopped first; a session another window
        runs is refused (-32602), one no store has is -32002."""
        session = self.sessions.get(session_id)
        store = session.store if session is not None else await self.stores.holding(session_id)
        self.runs.cancel(session_id)
        await self.runs.wait_finished(session_id)
        try:
            await store.delete(session_id)
        except SessionBusyError as exc:
            raise to_request_error(SessionBusy(str(exc))) from exc
        except SessionStoreError as exc:
            raise RequestError(INTERNAL_ERROR, str(exc)) from exc
        self.sessions.pop(session_id, None)
        return DeleteSessionResponse()

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        """The stored sessions of ``cwd``'s folder (else of every folder this
        client named: each session's ``cwd`` and additional directories), a
        page at a time (:func:`~rhema_lsp.acp.sessions.list_page`)."""
        if cwd:
            stores = [await self.stores.of(real_folder(cwd, "cwd"))]
        else:
            stores = await self.stores.named()
        return await list_page(stores, cursor)

    async def set_session_mode(
        self, mode_id: str, session_id: str, **kwargs: Any
    ) -> SetSessionModeResponse | None:
        """Switch the session's tool set; the next prompt uses it (one change
        with the ``mode`` option: :mod:`~rhema_lsp.acp.options`)."""
        await self.options.change(self._session(session_id), MODE, mode_id, self.client)
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse | None:
        """Change one of the session's options (:mod:`~rhema_lsp.acp.options`)."""
        session = self._session(session_id)
        options = await self.options.change(session, config_id, value, self.client)
        return SetSessionConfigOptionResponse(config_options=options)

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise to_request_error(UnknownSession(session_id, "this connection"))
        return session

    # -- prompts -----------------------------------------------------------------

    async def prompt(
        self, prompt: list[PromptBlock], session_id: str, **kwargs: Any
    ) -> PromptResponse:
        """Run one turn (see the module docstring)."""
        session = self._session(session_id)
        notice = self.stores.untold_notice(session.cwd)
        if notice is not None:  # the first prompt in that folder says it first
            await self._say(session_id, f"⚠ {notice}\n\n")
        try:
            asked = user_prompt(prompt, session.cwd)
        except ImageRefused as exc:
            raise RequestError(INVALID_PARAMS, f"an image of the prompt is refused: {exc}") from exc
        text = asked.text
        if not text.strip() and asked.images:
            text = "(the user attached an image)"
        if not text.strip():
            raise RequestError(INVALID_PARAMS, "the prompt is empty: type something to ask")
        command = self.commands.match(text)
        if command is not None:  # a slash command runs instead of a turn
            await self._say(session_id, await command[0].run(session, command[1]))
            return PromptResponse(stop_reason="end_turn")
        run = Run(session=session_id, turn=0)
        try:
            self.runs.add(run)
        except SessionRunningError as exc:
            raise to_request_error(SessionBusy(str(exc))) from exc
        try:
            settings = session.settings(self.settings)
            outcome = await run_prompt(
                self.turns,
                session,
                run,
                text,
                lambda: self.models.provider(session.model),
                settings,
                self.client,
                asked.images,
            )
        except SessionBusyError as exc:
            raise to_request_error(SessionBusy(str(exc))) from exc
        except SessionStoreError as exc:
            raise RequestError(INTERNAL_ERROR, str(exc)) from exc
        finally:
            self.runs.remove(run)
            if self.withdraw_requests is not None:
                with anyio.CancelScope(shield=True):
                    await self.withdraw_requests(session_id)
        return answer(outcome)

    async def _say(self, session_id: str, text: str) -> None:
        """An agent message chunk of ``text`` outside a turn."""
        chunk = TextContentBlock(type="text", text=text)
        await self.client.session_update(
            session_id, AgentMessageChunk(session_update="agent_message_chunk", content=chunk)
        )

    async def _resolved_provider(self) -> ResolvedProvider:
        if self._provider is None:
            self._provider = await resolve_provider(ProviderSettings.of(self.settings))
        return self._provider

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """``session/cancel``: stop the session's prompt, if one runs."""
        self.runs.cancel(session_id)

    # -- shutdown ----------------------------------------------------------------

    async def shutdown(self) -> None:
        """Cancel every prompt, give them a moment to checkpoint, close the
        stores, stop the MCP servers and the sessions' language servers
        (once: later calls return at once)."""
        if self._closed:
            return
        self._closed = True
        await self.runs.stop_all()
        await self.stores.close()
        await self.mcp.aclose()
        for session in list(self.sessions.values()):
            if session.languages is not None:
                await session.languages.aclose()
