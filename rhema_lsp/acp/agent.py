"""The ACP agent: the connection's sessions, prompts and cancellation.

:class:`RhemaAcpAgent` implements the SDK's ``Agent`` interface. It owns the
ACP sessions of this connection (:mod:`~rhema_lsp.acp.sessions`: each one a
stored session of the folder it was started in) and their editors; the
stores, the running prompts, the provider cache and the run pipeline are
the door kit's (:class:`~rhema_lsp.runs.door.Door`, the same the language
server holds: the same setup steps in the same order). Every method the SDK
calls maps its errors at one boundary (:func:`~rhema_lsp.acp.errors.answers`).

A prompt registers its run through the door kit (one prompt per session at
a time: a busy session refuses it before any turn number is reserved) and
runs as a turn of the pipeline (:func:`~rhema_lsp.acp.turns.run_prompt`), so
an ACP turn can be rewound from an editor or with ``rhema-lsp rewind``.
``session/cancel`` cancels the run: the stream closes, no further tool
starts, the answer so far is kept, and the prompt answers ``cancelled``.

MCP: the servers the client passes with ``session/new`` or ``session/load``
(:mod:`~rhema_lsp.acp.mcp_servers`) join the user's own in the hub; their
calls are asked through ``session/request_permission``.

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
from acp.schema import (
    AgentMessageChunk,
    AuthenticateResponse,
    ClientCapabilities,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    ResumeSessionResponse,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    TextContentBlock,
)

from rhema_lsp.acp.auth import StoredProvider, sign_in_locally
from rhema_lsp.acp.builtin_commands import CommandSeat, Discard, builtin_commands
from rhema_lsp.acp.config import MODE, SessionModels
from rhema_lsp.acp.custom_commands import offered, offered_message
from rhema_lsp.acp.editor import AcpClient
from rhema_lsp.acp.errors import AcpAgentError, BadParams, UnknownSession, answers
from rhema_lsp.acp.handshake import images_offered, initialize_result
from rhema_lsp.acp.lifecycle import SessionLifecycle
from rhema_lsp.acp.mcp_prompts import McpPromptCommands
from rhema_lsp.acp.mcp_servers import ClientServer, client_servers
from rhema_lsp.acp.options import SessionOptions, restore_choices
from rhema_lsp.acp.prompt import PromptBlock, user_prompt
from rhema_lsp.acp.replay import replay
from rhema_lsp.acp.sessions import AcpSession, Stores, open_acp_session, real_folder
from rhema_lsp.acp.turns import answer, run_prompt
from rhema_lsp.acp.worktrees import take_up_worktree
from rhema_lsp.engine import Session
from rhema_lsp.mcp.hub import McpHub
from rhema_lsp.providers import ProviderSettings, ResolvedProvider, resolve_provider
from rhema_lsp.runs.backends import Backends
from rhema_lsp.runs.door import Door
from rhema_lsp.runs.outside import reopen
from rhema_lsp.runs.refs import TurnRef
from rhema_lsp.runs.settings import Settings
from rhema_lsp.runs.turn import Turns
from rhema_lsp.runs.workplace import Plan
from rhema_lsp.sessions import UnknownSessionError

__all__ = ["RhemaAcpAgent"]

logger = logging.getLogger(__name__)


class RhemaAcpAgent(SessionLifecycle):
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
    follow_stored
        The provider is the one a sign-in stored (:mod:`~rhema_lsp.acp.auth`).
    """

    def __init__(
        self,
        settings: Settings,
        mcp: McpHub | None = None,
        turns: Turns | None = None,
        *,
        follow_stored: bool = False,
    ) -> None:
        self.chosen = StoredProvider(settings, follow=follow_stored)  # the sign-in's
        self.settings = self.chosen.settings
        self.door: Door[ProviderSettings, ResolvedProvider] = Door(
            McpHub() if mcp is None else mcp,
            Backends(ProviderSettings.of, resolve_provider),
            turns=turns,
        )
        self.mcp, self.turns, self.runs = self.door.mcp, self.door.turns, self.door.runs
        self.sessions: dict[str, AcpSession] = {}
        self.stores = Stores(self.door.stores, settings.session_store)
        self._client: AcpClient | None = None
        self._capabilities = ClientCapabilities()
        self.models = SessionModels(settings, self._provider)
        self.options = SessionOptions(self.models)
        self.withdraw_requests: Callable[[str], Awaitable[None]] | None = None
        """Withdraws the agent's unanswered requests about a session (set by
        the transport: ``$/cancel_request`` for each) once its prompt ends."""
        self.after_answer: Callable[[str, dict[str, Any]], None] | None = None
        """Queues a notification to follow the answer naming a session (set
        by the transport)."""
        self.mcp_prompts = McpPromptCommands(self.mcp, lambda: self.settings)
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
            raise AcpAgentError("the agent is not connected")
        return self._client

    @answers
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
        images = images_offered(self.settings.model_dump(by_alias=True))  # = the early answer
        terminal = bool(self._capabilities.auth and self._capabilities.auth.terminal)
        return InitializeResponse.model_validate(initialize_result(images, terminal))

    @answers
    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse | None:
        """Agent Auth: a model server on this machine, stored as the choice
        the next session uses (:mod:`~rhema_lsp.acp.auth`)."""
        await sign_in_locally(method_id)
        self._follow_choice()
        return AuthenticateResponse()

    def _follow_choice(self) -> None:
        """Take up the stored provider choice when a sign-in changed it."""
        if self.chosen.refresh():
            self.settings = self.chosen.settings
            self.models = SessionModels(self.settings, self._provider)
            self.options = SessionOptions(self.models)

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
        self._follow_choice()
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
        self.mcp_prompts.start(session, self._announce)  # its MCP servers start now
        return session

    @answers
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
            self.after_answer(session.id, await offered_message(self, session))
        return NewSessionResponse(
            session_id=session.id,
            modes=session.modes(),
            config_options=await self.options.listed(session),
        )

    @answers
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
        await self.client.session_update(session_id, await offered(self, session))
        return LoadSessionResponse(
            modes=session.modes(), config_options=await self.options.listed(session)
        )

    @answers
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
        await self.client.session_update(session_id, await offered(self, session))
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
            raise UnknownSession(session_id, str(store.folder)) from exc
        session = await self._open(session_id, cwd, additional, servers, stored=True)
        await restore_choices(session, self.settings)
        await take_up_worktree(session)
        if self.runs.is_running(session_id):
            return session, await store.load(session_id)
        ref = TurnRef(session_id, info.turns)
        settings = session.settings(self.settings)
        history, _ = await reopen(session.place, ref, session.mode, settings, Discard())
        return session, history

    @answers
    async def set_session_mode(
        self, mode_id: str, session_id: str, **kwargs: Any
    ) -> SetSessionModeResponse | None:
        """Switch the session's tool set; the next prompt uses it (one change
        with the ``mode`` option: :mod:`~rhema_lsp.acp.options`)."""
        await self.options.change(self._session(session_id), MODE, mode_id, self.client)
        return SetSessionModeResponse()

    @answers
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
            raise UnknownSession(session_id, "this connection")
        return session

    # -- prompts -----------------------------------------------------------------

    @answers
    async def prompt(
        self, prompt: list[PromptBlock], session_id: str, **kwargs: Any
    ) -> PromptResponse:
        """Run one turn (see the module docstring)."""
        session = self._session(session_id)
        notice = self.stores.untold_notice(session.cwd)
        if notice is not None:  # the first prompt in that folder says it first
            await self._say(session_id, f"⚠ {notice}\n\n")
        asked = user_prompt(prompt, session.cwd)  # ImageRefused: the boundary's -32602
        text = asked.text
        if not text.strip() and asked.images:
            text = "(the user attached an image)"
        if not text.strip():
            raise BadParams("the prompt is empty: type something to ask")
        command = self.commands.match(text)
        if command is not None:  # a slash command runs instead of a turn
            await self._say(session_id, await command[0].run(session, command[1]))
            return PromptResponse(stop_reason="end_turn")
        settings = session.settings(self.settings)
        mcp_prompt = await self.mcp_prompts.expand(text)  # /mcp__server__prompt: its text
        plan = Plan(mcp_prompt or text, text, session.mode, settings.max_steps, images=asked.images)
        stored = session.id if session.stored else None
        plan, model = await self.door.expand(plan, session.place, stored)
        run = await self.door.start(
            session.store, stored, plan, new_id=session.id, model=model or settings.model or ""
        )
        try:
            outcome = await run_prompt(
                self.turns,
                session,
                run,
                plan,
                lambda: self.models.provider(model or session.model),
                settings,
                self.client,
                offered_images=images_offered(self.settings.model_dump(by_alias=True)),
            )
        finally:
            self.door.end(run)
            if self.withdraw_requests is not None:
                with anyio.CancelScope(shield=True):
                    await self.withdraw_requests(session_id)
        return answer(outcome)

    async def _announce(self) -> None:
        """Every open session's commands again (the MCP prompts changed)."""
        for session in list(self.sessions.values()):
            await self.client.session_update(session.id, await offered(self, session))

    async def _say(self, session_id: str, text: str) -> None:
        """An agent message chunk of ``text`` outside a turn."""
        chunk = TextContentBlock(type="text", text=text)
        await self.client.session_update(
            session_id, AgentMessageChunk(session_update="agent_message_chunk", content=chunk)
        )

    async def _provider(self, model: str | None) -> ResolvedProvider:
        """The door kit's provider for ``model`` (``None``: the connection's)."""
        return await self.door.backends.of(self.settings, model)

    @answers
    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """``session/cancel``: stop the session's prompt, if one runs."""
        self.runs.cancel(session_id)

    # -- shutdown ----------------------------------------------------------------

    async def shutdown(self) -> None:
        """The door kit's shutdown (:meth:`~rhema_lsp.runs.door.Door.shutdown`):
        every prompt cancelled and given a moment to checkpoint, the MCP
        servers and the sessions' language servers stopped, the stores
        closed (once: later calls return at once)."""
        languages = [s.languages for s in self.sessions.values() if s.languages is not None]
        await self.mcp_prompts.aclose()
        await self.door.shutdown(languages=languages)
