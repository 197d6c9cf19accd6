"""The ACP agent's session lifecycle methods besides opening: close,
delete, list and fork.

:class:`SessionLifecycle` is a part of
:class:`~rhema_lsp.acp.agent.RhemaAcpAgent` (its base), kept apart so the
agent's module stays one idea: what it needs of the agent is declared here
and given by the agent. Each method is wrapped by the one error boundary
(:func:`~rhema_lsp.acp.errors.answers`).

``session/fork`` (unstable in the schema, ``sessionCapabilities.fork``) is
``rhema.forkSession``'s fork over ACP: a new session of ``cwd``'s store
holding the source's conversation so far, with those turns' checkpoints
(:meth:`~rhema_lsp.sessions.SessionStore.fork`), its mode, model and
thinking level (the source's on this connection, else the ones stored with
it), and the ``cwd``, additional directories and MCP servers the request
names; the source is untouched. A source never prompted (not stored yet)
forks into a new empty session with its choices. It is announced as a new
session is (``available_commands_update`` right after the answer).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from acp.schema import (
    CloseSessionResponse,
    DeleteSessionResponse,
    ForkSessionResponse,
    ListSessionsResponse,
)

from rhema_lsp.acp.custom_commands import offered_message
from rhema_lsp.acp.errors import answers
from rhema_lsp.acp.mcp_servers import ClientServer
from rhema_lsp.acp.options import keep_choices
from rhema_lsp.acp.sessions import AcpSession, Stores, list_page, real_folder

if TYPE_CHECKING:
    from rhema_lsp.acp.commands import SlashCommands
    from rhema_lsp.acp.mcp_prompts import McpPromptCommands
    from rhema_lsp.acp.options import SessionOptions
    from rhema_lsp.engine import Session
    from rhema_lsp.runs.door import Door
    from rhema_lsp.runs.registry import RunRegistry

__all__ = ["SessionLifecycle"]


class SessionLifecycle:
    """Close, delete, list and fork (see the module docstring)."""

    sessions: dict[str, AcpSession]
    stores: Stores
    door: Door[Any, Any]
    runs: RunRegistry
    options: SessionOptions
    commands: SlashCommands
    mcp_prompts: McpPromptCommands
    after_answer: Callable[[str, dict[str, Any]], None] | None

    def _session(self, session_id: str) -> AcpSession:
        raise NotImplementedError

    async def _open(
        self,
        session_id: str,
        cwd: str,
        additional: list[str] | None,
        servers: list[ClientServer] | None,
        *,
        stored: bool,
    ) -> AcpSession:
        raise NotImplementedError

    async def _reopen(
        self,
        cwd: str,
        session_id: str,
        additional: list[str] | None,
        servers: list[ClientServer] | None,
    ) -> tuple[AcpSession, Session]:
        raise NotImplementedError

    @answers
    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        """Forget the session on this connection (its prompt, if one runs,
        is cancelled and answers ``cancelled``); it stays in its store."""
        session = self._session(session_id)
        self.runs.cancel(session_id)
        del self.sessions[session_id]
        if session.languages is not None:
            await session.languages.aclose()
        return CloseSessionResponse()

    @answers
    async def delete_session(self, session_id: str, **kwargs: Any) -> DeleteSessionResponse:
        """Delete a stored session (of a folder this connection named) by the
        door kit's one path: its prompt here, if one runs, is stopped first,
        what the pipeline keeps of it is forgotten, and its language servers
        stop; a session another window runs is refused (-32602), one no
        store has is -32002."""
        session = self.sessions.get(session_id)
        store = session.store if session is not None else await self.stores.holding(session_id)
        await self.door.delete(store, session_id, forget=self._forget)
        return DeleteSessionResponse()

    async def _forget(self, session_id: str) -> None:
        """Drop a deleted session from this connection; its language servers stop."""
        session = self.sessions.pop(session_id, None)
        if session is not None and session.languages is not None:
            await session.languages.aclose()

    @answers
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

    @answers
    async def fork_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[ClientServer] | None = None,
        **kwargs: Any,
    ) -> ForkSessionResponse:
        """``session/fork`` (see the module docstring): an unknown source
        is -32002."""
        source = self.sessions.get(session_id)
        if source is not None and not source.stored:
            new_id = secrets.token_hex(8)
            session = await self._open(
                new_id, cwd, additional_directories, mcp_servers, stored=False
            )
        else:
            store = await self.stores.of(real_folder(cwd, "cwd"))
            info = await store.fork(session_id)
            await store.choices.save(info.id, await store.choices.load(session_id))
            session, _ = await self._reopen(cwd, info.id, additional_directories, mcp_servers)
        if source is not None:
            session.mode, session.model = source.mode, source.model
            session.thinking = source.thinking
            await keep_choices(session)
        if self.after_answer is not None:  # the client is told of the session first
            self.after_answer(session.id, await offered_message(self, session))
        return ForkSessionResponse(
            session_id=session.id,
            modes=session.modes(),
            config_options=await self.options.listed(session),
        )
