"""A worktree's changes brought to the checkout, and shown for review.

- **Review** (:func:`file_changes`): one :class:`FileChange` per file the
  worktree changed since its base (the base's text and the worktree's, or
  ``None`` for a file that did not exist on that side), what the clients'
  review card or tab shows as one diff per file.
- **Apply** (:func:`apply`): what the turns changed is committed on the
  branch first (:func:`~rhema_lsp.runs.worktrees.finish`), then each file
  the branch changed since its base is merged three ways into the checkout
  (base, the checkout's file as it is now, the branch's): a file the user
  did not touch since takes the branch's; both changed: ``git merge-file``.
  If any file conflicts, **nothing** is written and the conflicts are
  reported; the user's edits are never overwritten. Each file is written
  atomically (a temporary file renamed over it).

Blocking (git, file writes): call from a worker thread.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from rhema_lsp.runs.worktrees import Worktree, WorktreeError, _run, changed, finish, git, load

__all__ = ["Applied", "FileChange", "apply", "file_changes"]

_MAX_REVIEW_BYTES = 2_000_000
"""A file larger than this on either side is listed without its text."""


@dataclass(frozen=True, slots=True)
class FileChange:
    """One changed file of a worktree: ``path`` relative to the checkout's
    top; ``before`` the base's text, ``after`` the worktree's (``None``: no
    such file on that side, or not text)."""

    path: str
    before: str | None
    after: str | None


@dataclass(frozen=True, slots=True)
class Applied:
    """What :func:`apply` did: the files written, or the ones that conflict
    (then nothing was written)."""

    tree: Worktree
    applied: list[str]
    conflicts: list[str]


def _blob(top: Path, commit: str, name: str) -> bytes | None:
    done = _run(top, "show", f"{commit}:{name}")
    return done.stdout if done.returncode == 0 else None


def _text(data: bytes | None) -> str | None:
    if data is None or len(data) > _MAX_REVIEW_BYTES:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def file_changes(tree: Worktree) -> list[FileChange]:
    """The worktree's changes since its base, one per file."""
    path = Path(tree.path)
    found = []
    for name in changed(tree):
        target = path / name
        after = target.read_bytes() if target.is_file() and not target.is_symlink() else None
        found.append(FileChange(name, _text(_blob(path, tree.base, name)), _text(after)))
    return found


def _merged(ours: bytes, base: bytes, theirs: bytes) -> bytes | None:
    with tempfile.TemporaryDirectory(prefix="rhema-merge-") as scratch:
        files = []
        for label, data in (("ours", ours), ("base", base), ("theirs", theirs)):
            file = Path(scratch) / label
            file.write_bytes(data)
            files.append(str(file))
        done = _run(None, "merge-file", "-p", *files)
    return done.stdout if done.returncode == 0 else None


def apply(folder: Path, name: str, title: str = "the session's changes") -> Applied:
    """Merge worktree ``name``'s changes into its checkout (see the module
    docstring)."""
    tree = load(folder, name)
    if Path(tree.path).is_dir():
        finish(tree, title)
    top = Path(tree.checkout)
    names = git(top, "diff", "--name-only", "-z", tree.base, tree.branch).split(b"\0")
    results: dict[str, bytes | None] = {}
    conflicts: list[str] = []
    for raw in filter(None, names):
        file = os.fsdecode(raw)
        base, theirs = _blob(top, tree.base, file), _blob(top, tree.branch, file)
        target = top / file
        ours = target.read_bytes() if target.is_file() and not target.is_symlink() else None
        if ours == theirs:
            continue
        if ours == base:
            results[file] = theirs
        elif ours is not None and base is not None and theirs is not None:
            merged = _merged(ours, base, theirs)
            if merged is None:
                conflicts.append(file)
            else:
                results[file] = merged
        else:
            conflicts.append(file)
    if conflicts:
        return Applied(tree, [], conflicts)
    real_top = os.path.realpath(top)
    for file, data in results.items():
        target = top / file
        if not os.path.realpath(target).startswith(real_top + os.sep):
            raise WorktreeError(f"{file} leads out of the checkout {top}: not applied")
        if data is None:
            target.unlink(missing_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{target.name}.rhema-apply")
        temporary.write_bytes(data)
        os.replace(temporary, target)
    return Applied(tree, sorted(results), [])
