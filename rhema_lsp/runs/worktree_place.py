"""Where a worktree session's turns run, the same for every door.

A door asks :func:`worktree_for` before it runs a turn: the session's
worktree (found in the state directory's records, no git call), or a new
one for a new session that asked for one (``rhema.turn``'s ``worktree``,
ACP's ``worktree`` option). :func:`rooted` turns the door's usual
:class:`~rhema_lsp.runs.workplace.Workplace` into the worktree's: the same
store (the session is listed with the checkout's sessions, its checkpoints
kept there), the folder and the only root the worktree's (so the tools,
the sandbox and the language servers are rooted there), files changed on
disk there (a :class:`~rhema_lsp.tools.DiskEditor`: the client's editor
never sees the worktree's files) while questions still reach the user
through the door's editor. After the turn, :func:`finished` commits what
it changed on the session's branch.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

import anyio.to_thread

from rhema_lsp.runs.workplace import Workplace
from rhema_lsp.runs.worktrees import Worktree, WorktreeError, find_session, finish, start
from rhema_lsp.tools import DiskEditor, LanguageService

__all__ = ["NotInWorktree", "finished", "rooted", "worktree_for"]

logger = logging.getLogger(__name__)


class NotInWorktree(WorktreeError):
    """A turn asked for a worktree on a session that runs in the checkout."""


async def worktree_for(folder: Path, session: str, *, new: bool, wanted: bool) -> Worktree | None:
    """The worktree session ``session`` runs in: its own if it has one; a
    new one made from ``folder``'s checkout when the session is ``new`` and
    a worktree is ``wanted``; else ``None``.

    Raises
    ------
    WorktreeError
        The worktree cannot be made (no git, not a repository, ...), or an
        existing session without one asked for one.
    """
    tree = await anyio.to_thread.run_sync(find_session, session)
    if tree is not None or not wanted:
        return tree
    if not new:
        raise NotInWorktree(
            f"session {session} runs in the checkout, not in a worktree: start a new session"
        )
    return await anyio.to_thread.run_sync(start, folder, session)


def rooted(place: Workplace, tree: Worktree, language: LanguageService | None) -> Workplace:
    """``place`` moved into ``tree`` (see the module docstring)."""
    root = tree.root
    editor = DiskEditor([root], confirm=place.editor.confirm)
    return dataclasses.replace(place, folder=root, roots=[root], editor=editor, language=language)


async def finished(tree: Worktree, title: str) -> None:
    """Commit what the turn changed on the session's branch (a failure is
    logged: the changes stay in the worktree, and apply commits them)."""
    try:
        await anyio.to_thread.run_sync(finish, tree, title)
    except WorktreeError as exc:
        logger.warning("worktree %s: the turn's changes are not committed: %s", tree.name, exc)
