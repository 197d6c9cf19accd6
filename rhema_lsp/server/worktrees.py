"""The LSP door's worktree sessions: a turn prepared in its session's
worktree, and what ``rhema.sessions`` and ``rhema.turn`` say of one.

What a worktree is and how it is made, applied and removed is
:mod:`rhema_lsp.runs.worktrees` (shared by every door);
:mod:`rhema_lsp.runs.worktree_place` roots a turn there. This module adds
what only this door decides: the new session's id handed out before the
worktree is made (so its branch is ``rhema/<session>``), the agent's own
language servers for the worktree (one set per turn, stopped after it:
the editor's servers never see the worktree's files), and the wire form.
A :class:`~rhema_lsp.runs.worktrees.WorktreeError` becomes the router's
``CommandFailed`` here (``BadArguments`` for a session that has no worktree).
"""

from __future__ import annotations

import dataclasses
import logging
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread

from rhema_lsp.contract import WorktreeInfo
from rhema_lsp.language import AgentLanguages
from rhema_lsp.mcp.userfile import user_language_options, user_language_servers
from rhema_lsp.runs.workplace import Plan, Workplace
from rhema_lsp.runs.worktree_place import NotInWorktree, finished, rooted, worktree_for
from rhema_lsp.runs.worktrees import (
    Worktree,
    WorktreeError,
    by_session,
    changed,
    discard,
    find_session,
)
from rhema_lsp.server.errors import BadArguments, CommandFailed

if TYPE_CHECKING:
    from rhema_lsp.server.state import ServerState

__all__ = [
    "decide",
    "forget_new",
    "info_of",
    "inside",
    "worktree_of",
    "worktrees_by_session",
]

logger = logging.getLogger(__name__)


async def decide(
    folder: Path, session: str | None, plan: Plan
) -> tuple[str | None, Worktree | None]:
    """The id a new session gets now (``None``: the door kit decides it) and
    the worktree the run goes in (``None``: the checkout)."""
    new_id = secrets.token_hex(8) if session is None and plan.worktree else None
    try:
        tree = await worktree_for(
            folder, session or new_id or "", new=session is None, wanted=plan.worktree
        )
    except NotInWorktree as exc:
        raise BadArguments(str(exc)) from exc
    except WorktreeError as exc:
        raise CommandFailed(f"no worktree: {exc}") from exc
    return new_id, tree


async def forget_new(new_id: str | None, tree: Worktree | None) -> None:
    """Remove the worktree :func:`decide` just made for a new session
    (``new_id``) whose run then never started: nothing would list it."""
    if new_id is None or tree is None:
        return
    with anyio.CancelScope(shield=True):
        try:
            await anyio.to_thread.run_sync(discard, Path(tree.checkout), tree.name)
        except WorktreeError as exc:
            logger.warning("worktree %s of a run never started not removed: %s", tree.name, exc)


@asynccontextmanager
async def inside(
    state: ServerState, place: Workplace, tree: Worktree | None, title: str
) -> AsyncIterator[Workplace]:
    """``place``, or the worktree's when the run goes in ``tree``: its own
    language servers, stopped after the turn, whose changes are then
    committed on the session's branch."""
    if tree is None:
        yield place
        return
    moved = rooted(place, tree, None)
    languages = AgentLanguages(
        moved.editor,
        lambda: [tree.root],
        configured=state.languages.configured,
        user_file=user_language_servers,
        options=state.languages.options,
        user_options=user_language_options,
    )
    try:
        yield dataclasses.replace(moved, language=languages)
    finally:
        with anyio.CancelScope(shield=True):
            await languages.aclose()
            await finished(tree, title)


async def info_of(tree: Worktree) -> WorktreeInfo:
    """``tree`` as the contract says it, with the files it changed."""
    try:
        files = await anyio.to_thread.run_sync(changed, tree)
    except WorktreeError:
        files = []
    return WorktreeInfo(
        name=tree.name, branch=tree.branch, path=tree.path, checkout=tree.checkout, changed=files
    )


async def worktree_of(session: str) -> WorktreeInfo | None:
    """Session ``session``'s worktree as the contract says it, if it has one."""
    tree = await anyio.to_thread.run_sync(find_session, session)
    return None if tree is None else await info_of(tree)


async def worktrees_by_session() -> dict[str, WorktreeInfo]:
    """Every worktree session's worktree, by the session's id."""
    trees = await anyio.to_thread.run_sync(by_session)
    return {session: await info_of(tree) for session, tree in trees.items()}
