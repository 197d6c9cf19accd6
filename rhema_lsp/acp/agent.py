"""The ACP agent: sessions, prompts and cancellation over the shared run loop.

:class:`RhemaAcpAgent` implements the SDK's ``Agent`` interface. It owns the
ACP sessions of this connection (each one a stored session of the folder
it was started in: the same SQLite sessions the LSP server keeps, so a
session started here continues in VS Code and back), their editors, the
running prompts and the resolved provider.

One prompt's life, as the LSP server's run owner lives it: register the run
(one prompt per session at a time), store the session on its first prompt
(under the id ``session/new`` handed out), take its lease, stream its
updates, complete a round a crash left open, commit the user's message,
drive the engine's turn loop (:func:`~rhema_lsp.runs.driver.drive`:
checkpoints, cancellation, outcome), count the turn, and answer with the
stop reason once every update is sent. ``session/cancel`` cancels the run:
the provider stream closes, no further tool starts, a running command is
killed, a pending permission request is abandoned, the session is
checkpointed, and the prompt answers ``cancelled``.

MCP: the servers the client passes with ``session/new`` or ``session/load``
(:mod:`~rhema_lsp.acp.mcp_servers`) join the user's own in the agent's
:class:`~rhema_lsp.mcp.hub.McpHub`; a prompt whose mode is in ``mcpModes``
gets their tools, each call asked through ``session/request_permission``;
every server stops when the agent shuts down.
"""

from __future__ import annotations

import logging
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from acp import PROTOCOL_VERSION, RequestError
from acp.schema import (
    AgentCapabilities,
    AgentMessageChunk,
    AuthenticateResponse,
    ClientCapabilities,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionAdditionalDirectoriesCapabilities,
    SessionCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
    TextContentBlock,
    Usage,
)

from rhema_lsp import __version__
from rhema_lsp.acp.editor import AcpClient, AcpEditor
from rhema_lsp.acp.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    AcpAgentError,
    SessionBusy,
    UnknownSession,
    to_request_error,
)
from rhema_lsp.acp.mcp_servers import ClientServer, client_servers
from rhema_lsp.acp.prompt import PromptBlock, user_text
from rhema_lsp.acp.replay import replay
from rhema_lsp.acp.tools import AcpTools
from rhema_lsp.acp.updates import UpdateStream
from rhema_lsp.engine import (
    Agent,
    ChatParams,
    ContextBudget,
    Event,
    Message,
    ProviderError,
    ThinkingEffort,
    ToolContext,
)
from rhema_lsp.mcp import McpServerConfig
from rhema_lsp.mcp.hub import McpHub
from rhema_lsp.mcp.resolver import mcp_instructions
from rhema_lsp.providers import ProviderSettings, ResolvedProvider, resolve_provider
from rhema_lsp.runs.driver import Outcome, drive
from rhema_lsp.runs.prompts import system_prompt
from rhema_lsp.runs.registry import Run, RunRegistry, SessionRunningError
from rhema_lsp.runs.settings import Mode, Settings
from rhema_lsp.sessions import (
    SessionBusyError,
    SessionStore,
    SessionStoreError,
    UnknownSessionError,
)
from rhema_lsp.tools import EditJournal, WorkspaceTools
from rhema_lsp.tools.gate import unsafe_root_reason

__all__ = ["MODES", "AcpSession", "RhemaAcpAgent"]

logger = logging.getLogger(__name__)

SHUTDOWN_WAIT = 5.0
"""Seconds shutdown gives cancelled prompts to checkpoint their sessions."""

MODES = [
    SessionMode(id="ask", name="Ask", description="Read and search the workspace; no changes"),
    SessionMode(
        id="edit", name="Edit", description="Also change files, through the editor's buffers"
    ),
    SessionMode(
        id="agent",
        name="Agent",
        description="Also run commands, each approved by you unless allow-listed",
    ),
]
"""The session modes, one per tool set."""

_STOP_REASONS = {
    "end_turn": "end_turn",
    "tool_use": "end_turn",
    "max_tokens": "max_tokens",
    "max_steps": "max_turn_requests",
    "cancelled": "cancelled",
}
"""Our stop reasons as ACP's; ``error`` is a JSON-RPC error instead."""


class _Discard:
    """An event sink for work nobody watches (resuming a session on load)."""

    def emit(self, event: Event) -> None:
        """Drop ``event``."""


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
    mcp_servers: dict[str, McpServerConfig] = field(default_factory=dict)
    """The MCP servers the client passed for this session."""
    journal: EditJournal = field(default_factory=EditJournal)


def _folder(raw: str, what: str) -> Path:
    path = Path(raw)
    if not path.is_absolute():
        raise RequestError(INVALID_PARAMS, f"{what} must be an absolute path, not {raw!r}")
    real = Path(os.path.realpath(path))
    if not real.is_dir():
        raise RequestError(INVALID_PARAMS, f"{what} {raw} is not a folder")
    unsafe = unsafe_root_reason(real)
    if unsafe is not None:
        raise RequestError(INVALID_PARAMS, f"{what} refused: {unsafe}")
    return real


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
    """

    def __init__(self, settings: Settings, mcp: McpHub | None = None) -> None:
        self.settings = settings
        self.mcp = McpHub() if mcp is None else mcp
        self.runs = RunRegistry()
        self.sessions: dict[str, AcpSession] = {}
        self._client: AcpClient | None = None
        self._capabilities = ClientCapabilities()
        self._stores: dict[Path, SessionStore] = {}
        self._notices: dict[Path, str] = {}
        """Store notices not yet told: the next prompt in that folder starts with one."""
        self._provider: ResolvedProvider | None = None

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
        """Negotiate the protocol version; declare what this agent does."""
        self._capabilities = client_capabilities or ClientCapabilities()
        if client_info is not None:
            logger.info("client %s %s", client_info.name, client_info.version)
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=False),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(),
                    additional_directories=SessionAdditionalDirectoriesCapabilities(),
                ),
            ),
            agent_info=Implementation(name="rhema-lsp", title="Rhema", version=__version__),
            auth_methods=[],
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse | None:
        """Nothing to authenticate: keys come from the agent's environment."""
        return AuthenticateResponse()

    # -- sessions ----------------------------------------------------------------

    async def _store(self, folder: Path) -> SessionStore:
        store = self._stores.get(folder)
        if store is None:
            try:
                store = await SessionStore.open(folder, location=self.settings.session_store)
            except SessionStoreError as exc:
                raise RequestError(INTERNAL_ERROR, str(exc)) from exc
            if store.notice:
                logger.warning("%s", store.notice)
                self._notices[folder] = store.notice
            self._stores[folder] = store
        return store

    async def _open(
        self,
        session_id: str,
        cwd: str,
        additional: list[str] | None,
        servers: list[ClientServer] | None,
        *,
        stored: bool,
    ) -> AcpSession:
        folder = _folder(cwd, "cwd")
        roots = [folder] + [_folder(extra, "additional directory") for extra in additional or []]
        fs = self._capabilities.fs
        session = AcpSession(
            id=session_id,
            cwd=folder,
            roots=list(dict.fromkeys(roots)),
            mode=self.settings.mode,
            store=await self._store(folder),
            editor=AcpEditor(
                self.client,
                session_id,
                roots,
                read_through=bool(fs and fs.read_text_file),
                write_through=bool(fs and fs.write_text_file),
            ),
            stored=stored,
            mcp_servers=client_servers(servers),
        )
        self.sessions[session_id] = session
        return session

    def _modes(self, session: AcpSession) -> SessionModeState:
        return SessionModeState(current_mode_id=session.mode, available_modes=MODES)

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
        return NewSessionResponse(session_id=session.id, modes=self._modes(session))

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[ClientServer] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse | None:
        """Open a stored session of ``cwd``'s folder (with the client's MCP
        servers) and replay its history."""
        store = await self._store(_folder(cwd, "cwd"))
        try:
            await store.info(session_id)
        except UnknownSessionError as exc:
            raise to_request_error(UnknownSession(session_id, str(store.folder))) from exc
        except SessionStoreError as exc:
            raise RequestError(INTERNAL_ERROR, str(exc)) from exc
        session = await self._open(
            session_id, cwd, additional_directories, mcp_servers, stored=True
        )
        try:
            if self.runs.is_running(session_id):
                history = await store.load(session_id)
            else:
                tools = self._workspace_tools(session)
                ctx = ToolContext(cwd=session.cwd, run_id=f"{session_id}:load")
                history, _ = await store.open_and_resume(session_id, tools, _Discard(), ctx)
        except SessionStoreError as exc:
            raise RequestError(INTERNAL_ERROR, str(exc)) from exc
        for update in replay(history):
            await self.client.session_update(session_id, update)
        return LoadSessionResponse(modes=self._modes(session))

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        """The stored sessions of ``cwd``'s folder (else of every folder opened)."""
        stores = [await self._store(_folder(cwd, "cwd"))] if cwd else list(self._stores.values())
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
        return ListSessionsResponse(sessions=listed)

    async def set_session_mode(
        self, mode_id: str, session_id: str, **kwargs: Any
    ) -> SetSessionModeResponse | None:
        """Switch the session's tool set; the next prompt uses it."""
        session = self._session(session_id)
        if mode_id not in ("ask", "edit", "agent"):
            raise RequestError(INVALID_PARAMS, f"unknown mode {mode_id!r}: ask, edit or agent")
        session.mode = mode_id  # type: ignore[assignment]  # checked just above
        return SetSessionModeResponse()

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
        notice = self._notices.pop(session.cwd, None)
        if notice is not None:
            await self.client.session_update(
                session_id,
                AgentMessageChunk(
                    session_update="agent_message_chunk",
                    content=TextContentBlock(type="text", text=f"⚠ {notice}\n\n"),
                ),
            )
        text = user_text(prompt, session.cwd)
        if not text.strip():
            raise RequestError(INVALID_PARAMS, "the prompt is empty: type something to ask")
        run = Run(session=session_id, turn=0)
        try:
            self.runs.add(run)
        except SessionRunningError as exc:
            raise to_request_error(SessionBusy(str(exc))) from exc
        try:
            outcome = await self._run(session, run, text)
        except AcpAgentError as exc:
            raise to_request_error(exc) from exc
        finally:
            self.runs.remove(run)
        if outcome.stop_reason == "error":
            raise RequestError(INTERNAL_ERROR, outcome.error or "the turn failed")
        usage = outcome.usage
        return PromptResponse(
            stop_reason=_STOP_REASONS[outcome.stop_reason],  # type: ignore[arg-type]
            usage=Usage(
                input_tokens=usage.input,
                output_tokens=usage.output,
                total_tokens=usage.input + usage.output,
            ),
        )

    async def _resolved_provider(self) -> ResolvedProvider:
        if self._provider is None:
            self._provider = await resolve_provider(ProviderSettings.of(self.settings))
        return self._provider

    async def _run(self, session: AcpSession, run: Run, text: str) -> Outcome:
        try:
            resolved = await self._resolved_provider()
        except ProviderError as exc:
            return Outcome(stop_reason="error", error=str(exc))
        store = session.store
        try:
            if not session.stored:
                await store.create(text, model=resolved.model, session_id=session.id)
                session.stored = True
            run.turn = (await store.info(session.id)).turns + 1
            async with store.lease(session.id):
                stream = UpdateStream(self.client, session.id)
                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(stream.pump)
                    try:
                        outcome = await self._drive(session, run, stream, text, resolved)
                    finally:
                        stream.close()
        except SessionBusyError as exc:
            raise SessionBusy(str(exc)) from exc
        except SessionStoreError as exc:
            return Outcome(stop_reason="error", error=str(exc))
        return outcome

    def _workspace_tools(self, session: AcpSession) -> WorkspaceTools:
        return WorkspaceTools(
            session.roots,
            session.cwd,
            session.mode,
            session.editor,
            command_allowlist=self.settings.command_allowlist,
            journal=session.journal,
            env=os.environ,
        )

    async def _drive(
        self,
        session: AcpSession,
        run: Run,
        stream: UpdateStream,
        text: str,
        resolved: ResolvedProvider,
    ) -> Outcome:
        store, s = session.store, self.settings
        workspace = self._workspace_tools(session)
        resolver = await self.mcp.resolver(
            workspace,
            session.mode,
            session.cwd,
            session.editor,
            resolved.protocol,
            s,
            given=session.mcp_servers,
            provider=resolved.provider,
            model=resolved.model,
            window=s.context_window or resolved.context_window,
        )
        tools = AcpTools(workspace, session.editor, stream, resolver)
        ctx = ToolContext(cwd=session.cwd, run_id=f"{run.session}:{run.turn}", cancel=run.signal)
        history, _ = await store.open_and_resume(session.id, tools, stream, ctx)
        history.history.append(Message.user(text))
        await store.commit(session.id, history)
        agent = Agent(
            resolved.provider,
            resolver=tools,
            system=system_prompt(session.mode, session.cwd) + mcp_instructions(resolver),
            params=ChatParams(
                model=resolved.model, max_tokens=s.max_tokens, thinking=ThinkingEffort(s.thinking)
            ),
            commit_hook=store.commit_hook(session.id),
            context=ContextBudget(
                window=s.context_window or resolved.context_window,
                threshold=s.compact_threshold,
            ),
        )
        outcome = await drive(
            agent,
            history,
            stream,
            ctx,
            run,
            store=store,
            session_id=session.id,
            max_steps=s.max_steps,
        )
        with anyio.CancelScope(shield=True):
            await store.record_turn(session.id, model=resolved.model)
        return outcome

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """``session/cancel``: stop the session's prompt, if one runs."""
        self.runs.cancel(session_id)

    # -- shutdown ----------------------------------------------------------------

    async def shutdown(self) -> None:
        """Cancel every prompt, give them a moment to checkpoint, close the
        stores, stop the MCP servers."""
        self.runs.cancel()
        with anyio.move_on_after(SHUTDOWN_WAIT):
            await self.runs.wait_idle()
        stores = list(self._stores.values())
        self._stores.clear()
        for store in stores:
            await store.close()
        await self.mcp.aclose()
