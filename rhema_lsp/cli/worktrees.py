"""The command line of headless worktrees: ``rhema-lsp worktrees`` and
``rhema-lsp worktree apply|discard NAME`` (``ask --worktree`` is the turn's
own ``worktree`` argument). What a worktree is, and how it is made, applied
and removed, is :mod:`rhema_lsp.runs.worktrees` (the one place every door
shares); a failure there is a :class:`~rhema_lsp.headless.errors.UsageError`
here. The parsers load nothing else (the command line starts fast).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from rhema_lsp.headless.errors import UsageError

__all__ = ["add_worktree_commands"]


def _folder_of(args: argparse.Namespace) -> Path:
    return Path(args.folder or os.getcwd()).resolve()


def _list(args: argparse.Namespace) -> int:
    from rhema_lsp.runs.worktrees import WorktreeError, listed

    try:
        found = listed(_folder_of(args))
    except WorktreeError as exc:
        raise UsageError(str(exc)) from exc
    if not found:
        print("no worktrees (start one with `rhema-lsp ask --worktree ...`)")
    for tree, files in found:
        changed = f"{len(files)} file(s) changed" if files else "no changes"
        print(f"{tree.name}  {tree.branch}  {changed}  {tree.path}")
    return 0


def _finish_one(args: argparse.Namespace) -> int:
    from rhema_lsp.runs.worktree_merge import apply
    from rhema_lsp.runs.worktrees import WorktreeError, discard

    folder = _folder_of(args)
    try:
        if args.action == "discard":
            tree = discard(folder, args.name)
            print(f"discarded {tree.name}: worktree and branch {tree.branch} removed")
            return 0
        done = apply(folder, args.name)
    except WorktreeError as exc:
        raise UsageError(f"{exc} (see `rhema-lsp worktrees`)") from exc
    if done.conflicts:
        print(
            f"not applied: {len(done.conflicts)} file(s) conflict with your changes; "
            "nothing written:"
        )
        for file in done.conflicts:
            print(f"  {file}")
        return 1
    print(f"applied {len(done.applied)} file(s): {', '.join(done.applied) or 'nothing to apply'}")
    return 0


def add_worktree_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``rhema-lsp worktrees`` and ``rhema-lsp worktree apply|discard NAME``."""
    folder_help = "the repository (default: the current directory)"
    listing = commands.add_parser("worktrees", help="list the worktrees of `ask --worktree`")
    listing.add_argument("--folder", help=folder_help)
    listing.set_defaults(run=_list)
    one = commands.add_parser("worktree", help="apply or discard a worktree's changes")
    one.add_argument("action", choices=("apply", "discard"))
    one.add_argument("name", help="the worktree's name (`rhema-lsp worktrees`)")
    one.add_argument("--folder", help=folder_help)
    one.set_defaults(run=_finish_one)
