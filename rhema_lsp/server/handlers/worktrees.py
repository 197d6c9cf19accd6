"""Commands on a worktree session: ``rhema.worktreeDiff`` (its changes, one
per file, for the clients' review), ``rhema.worktreeApply`` (merged three
ways into the checkout; a conflict is reported and nothing written) and
``rhema.worktreeDiscard`` (worktree and branch removed). A session running
a turn here is refused (its files are still changing); the work itself is
:mod:`rhema_lsp.runs.worktree_merge` and :mod:`rhema_lsp.runs.worktrees`,
as for every door."""

from __future__ import annotations

from pathlib import Path

import anyio.to_thread

from rhema_lsp.contract import (
    WORKTREE_APPLY,
    WORKTREE_DIFF,
    WORKTREE_DISCARD,
    SessionArgs,
    WorktreeApplyResult,
    WorktreeDiffResult,
    WorktreeDiscardResult,
    WorktreeFile,
)
from rhema_lsp.runs.worktree_merge import apply, file_changes
from rhema_lsp.runs.worktrees import Worktree, WorktreeError, discard, find_session
from rhema_lsp.server.errors import CommandFailed
from rhema_lsp.server.router import Request, Service, serves

__all__: list[str] = []


async def _tree(service: Service, session: str, *, idle: bool) -> Worktree:
    await service.state.state_of(session)  # UnknownSessionError: no such session
    tree = await anyio.to_thread.run_sync(find_session, session)
    if tree is None:
        raise CommandFailed(f"session {session} has no worktree")
    if idle and service.state.runs.is_running(session):
        raise CommandFailed(f"session {session} is running a turn: wait for it, or cancel it")
    return tree


@serves(WORKTREE_DIFF)
async def worktree_diff(
    service: Service, args: SessionArgs, request: Request
) -> WorktreeDiffResult:
    tree = await _tree(service, args.session, idle=False)
    try:
        found = await anyio.to_thread.run_sync(file_changes, tree)
    except WorktreeError as exc:
        raise CommandFailed(str(exc)) from exc
    return WorktreeDiffResult(
        session=args.session,
        branch=tree.branch,
        checkout=tree.checkout,
        files=[WorktreeFile(path=f.path, before=f.before, after=f.after) for f in found],
    )


@serves(WORKTREE_APPLY)
async def worktree_apply(
    service: Service, args: SessionArgs, request: Request
) -> WorktreeApplyResult:
    tree = await _tree(service, args.session, idle=True)
    try:
        done = await anyio.to_thread.run_sync(apply, Path(tree.checkout), tree.name)
    except WorktreeError as exc:
        raise CommandFailed(str(exc)) from exc
    return WorktreeApplyResult(
        session=args.session, branch=tree.branch, applied=done.applied, conflicts=done.conflicts
    )


@serves(WORKTREE_DISCARD)
async def worktree_discard(
    service: Service, args: SessionArgs, request: Request
) -> WorktreeDiscardResult:
    tree = await _tree(service, args.session, idle=True)
    try:
        await anyio.to_thread.run_sync(discard, Path(tree.checkout), tree.name)
    except WorktreeError as exc:
        raise CommandFailed(str(exc)) from exc
    return WorktreeDiscardResult(session=args.session, branch=tree.branch, discarded=True)
