"""ACP sessions in their own git worktree: the ``worktree`` session config
option (a boolean), and where such a session's prompts run.

The option is set before the session's first prompt (then the session is
made in a new worktree on branch ``rhema/<session>``); a stored session
keeps where it runs: turning it on for one in the checkout, or off for one
in a worktree, is refused (-32602, naming why). A loaded session that has a
worktree shows it on. A prompt of such a session runs where
:mod:`rhema_lsp.runs.worktree_place` roots it (the same as the LSP door),
with the agent's own language servers for the worktree, started for the
prompt and stopped after it; commands run in the agent's sandbox, never in
the client's terminals (they would run in the user's checkout's shell).
Applying and discarding are the same for every door
(:mod:`rhema_lsp.runs.worktree_merge`, ``rhema-lsp worktree apply|discard``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import anyio.to_thread

from rhema_lsp.acp.errors import BadParams, TurnFailed
from rhema_lsp.acp.offers import WORKTREE
from rhema_lsp.acp.sessions import AcpSession
from rhema_lsp.language import AgentLanguages
from rhema_lsp.mcp.userfile import user_language_options, user_language_servers
from rhema_lsp.runs.workplace import Workplace
from rhema_lsp.runs.worktree_place import NotInWorktree, finished, rooted, worktree_for
from rhema_lsp.runs.worktrees import WorktreeError, find_session

__all__ = ["change_worktree", "place_of", "take_up_worktree"]


def change_worktree(session: AcpSession, value: str | bool) -> None:
    """Set the session's ``worktree`` option (see the module docstring).

    Raises
    ------
    BadParams
        Not a boolean, or the session is stored already where it runs.
    """
    if not isinstance(value, bool):
        raise BadParams(f"option {WORKTREE} takes true or false, not {value!r}")
    if session.stored and value != session.worktree:
        where = "in a worktree" if session.worktree else "in the checkout"
        raise BadParams(f"session {session.id} runs {where}: start a new session to change it")
    session.worktree = value


async def take_up_worktree(session: AcpSession) -> None:
    """A loaded session that has a worktree shows the option on."""
    tree = await anyio.to_thread.run_sync(find_session, session.id)
    session.worktree = tree is not None


@asynccontextmanager
async def place_of(session: AcpSession, first: bool, title: str) -> AsyncIterator[Workplace]:
    """Where the session's prompt runs: its place, or its worktree's (made
    on its ``first`` prompt); then the worktree's changes are committed.

    Raises
    ------
    TurnFailed
        The worktree cannot be made.
    """
    try:
        tree = await worktree_for(session.cwd, session.id, new=first, wanted=session.worktree)
    except NotInWorktree as exc:
        raise BadParams(str(exc)) from exc
    except WorktreeError as exc:
        raise TurnFailed(f"no worktree: {exc}") from exc
    if tree is None:
        yield session.place
        return
    moved = rooted(session.place, tree, None)
    base = session.languages
    languages = AgentLanguages(
        moved.editor,
        lambda: [tree.root],
        base.configured if base is not None else None,
        user_file=user_language_servers,
        options=base.options if base is not None else None,
        user_options=user_language_options,
    )
    try:
        yield dataclasses.replace(moved, language=languages)
    finally:
        with anyio.CancelScope(shield=True):
            await languages.aclose()
            await finished(tree, title)
