"""Headless turns in their own git worktree: ``rhema-lsp ask --worktree``,
``rhema-lsp worktrees``, ``rhema-lsp worktree apply|discard NAME``.

- **Start** (:func:`start`): a new worktree on a new branch
  ``rhema/<name>``, made from ``HEAD`` plus the checkout's uncommitted
  changes (tracked, staged or not, and untracked files not ignored), under
  the user state directory (``<state>/worktrees/<repository key>/<name>``),
  never inside the repository. The carried changes are committed on the
  branch first (the **base** the turn's changes are measured from); the
  turn runs there, its tools, checkpoints and sandbox rooted there; the
  checkout the user types in is not touched.
- **Finish** (:func:`finish`): what the turn changed is committed on the
  branch.
- **Apply** (:func:`apply`): each file the branch changed since its base is
  merged three ways into the checkout (base, the checkout's file as it is
  now, the branch's): a file the user did not touch since takes the
  branch's; both changed: ``git merge-file``. If any file conflicts,
  **nothing** is written and the conflicts are reported.
- **Discard** (:func:`discard`): the worktree and its branch are removed.

A name is checked (:data:`_NAME`) before it is used in a path or a ref.
The parsers load nothing else (the command line starts fast); every git
call goes through the spawn gate, with no shell; failures are
:class:`~rhema_lsp.headless.errors.UsageError` naming what failed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import secrets
import shutil
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from rhema_lsp.headless.errors import UsageError

__all__ = ["Worktree", "add_worktree_commands", "apply", "discard", "finish", "listed", "start"]

_NAME = re.compile(r"^[0-9]{8}-[0-9]{6}-[0-9a-f]{6}$")
_IDENTITY = ("-c", "user.name=rhema-lsp", "-c", "user.email=rhema-lsp@localhost")


@dataclass(frozen=True, slots=True)
class Worktree:
    """One turn's worktree: its ``name``, ``branch``, ``path``, the
    ``checkout`` it came from, the ``folder`` (relative to the top) the
    turn runs in, and the ``base`` commit its changes are measured from."""

    name: str
    branch: str
    path: str
    checkout: str
    folder: str
    base: str


def _run(
    cwd: Path | None, *args: str, data: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    """``git ARGS`` through the spawn gate (the user's ``git``, keys scrubbed)."""
    from rhema_lsp.tools.spawn import Unlaunchable, launch

    try:
        started = launch(["git", *args], roots=[], cwd=cwd)
    except Unlaunchable as exc:
        raise UsageError(f"worktrees need git: {exc}") from exc
    return subprocess.run(
        started.argv,
        cwd=cwd,
        env=started.env,
        input=data,
        capture_output=True,
        check=False,
        timeout=120,
    )


def _git(cwd: Path, *args: str, data: bytes | None = None) -> bytes:
    done = _run(cwd, *args, data=data)
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip()
        raise UsageError(f"git {args[0]} failed in {cwd}: {said}")
    return done.stdout


def _top(folder: Path) -> Path:
    return Path(_git(folder, "rev-parse", "--show-toplevel").decode().strip())


def _home(top: Path) -> Path:
    from platformdirs import user_state_dir

    key = hashlib.sha256(str(top.resolve()).encode()).hexdigest()[:16]
    return Path(user_state_dir("rhema-lsp")) / "worktrees" / key


def start(folder: Path) -> tuple[Worktree, Path]:
    """A new worktree for a turn in ``folder``; and the folder to run it in."""
    top = _top(folder)
    name = time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)
    home = _home(top)
    home.mkdir(parents=True, exist_ok=True)
    path = home / name
    branch = f"rhema/{name}"
    _git(top, "worktree", "add", "--quiet", "-b", branch, str(path), "HEAD")
    changes = _git(top, "diff", "HEAD", "--binary")
    if changes:
        _git(path, "apply", "--binary", "--whitespace=nowarn", data=changes)
    untracked = _git(top, "ls-files", "--others", "--exclude-standard", "-z").split(b"\0")
    for raw in filter(None, untracked):
        relative = os.fsdecode(raw)
        source = top / relative
        if source.is_file() and not source.is_symlink():
            (path / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, path / relative)
    _git(path, "add", "-A")
    _git(path, *_IDENTITY, "commit", "--quiet", "--allow-empty", "-m", "rhema: the checkout")
    base = _git(path, "rev-parse", "HEAD").decode().strip()
    relative = folder.resolve().relative_to(top.resolve()).as_posix()
    tree = Worktree(name, branch, str(path), str(top), relative, base)
    (home / f"{name}.json").write_text(json.dumps(asdict(tree)))
    return tree, path / relative


def finish(tree: Worktree, title: str) -> None:
    """Commit what the turn changed on the worktree's branch."""
    path = Path(tree.path)
    _git(path, "add", "-A", "--", ".", ":(exclude,glob)**/.rhema/**")
    _git(path, *_IDENTITY, "commit", "--quiet", "--allow-empty", "-m", f"rhema: {title[:72]}")


def _load(folder: Path, name: str) -> Worktree:
    if not _NAME.match(name):
        raise UsageError(f"{name!r} is not a worktree name (see `rhema-lsp worktrees`)")
    record = _home(_top(folder)) / f"{name}.json"
    if not record.is_file():
        raise UsageError(f"no worktree {name} for this repository (see `rhema-lsp worktrees`)")
    return Worktree(**json.loads(record.read_text()))


def listed(folder: Path) -> list[tuple[Worktree, list[str]]]:
    """This repository's worktrees, each with the files its branch changed."""
    home = _home(_top(folder))
    found = []
    for record in sorted(home.glob("*.json")) if home.is_dir() else []:
        tree = Worktree(**json.loads(record.read_text()))
        names = _git(Path(tree.checkout), "diff", "--name-only", tree.base, tree.branch)
        found.append((tree, names.decode().splitlines()))
    return found


def _blob(top: Path, commit: str, name: str) -> bytes | None:
    done = _run(top, "show", f"{commit}:{name}")
    return done.stdout if done.returncode == 0 else None


def _merged(ours: bytes, base: bytes, theirs: bytes) -> bytes | None:
    with tempfile.TemporaryDirectory(prefix="rhema-merge-") as scratch:
        files = []
        for label, data in (("ours", ours), ("base", base), ("theirs", theirs)):
            file = Path(scratch) / label
            file.write_bytes(data)
            files.append(str(file))
        done = _run(None, "merge-file", "-p", *files)
    return done.stdout if done.returncode == 0 else None


def apply(folder: Path, name: str) -> tuple[list[str], list[str]]:
    """Merge worktree ``name``'s changes into the checkout: the files
    applied, and the conflicting ones (then nothing was written)."""
    tree = _load(folder, name)
    top = Path(tree.checkout)
    changed = _git(top, "diff", "--name-only", "-z", tree.base, tree.branch).split(b"\0")
    results: dict[str, bytes | None] = {}
    conflicts: list[str] = []
    for raw in filter(None, changed):
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
        return [], conflicts
    for file, data in results.items():
        target = top / file
        if data is None:
            target.unlink(missing_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{target.name}.rhema-apply")
        temporary.write_bytes(data)
        os.replace(temporary, target)
    return sorted(results), []


def discard(folder: Path, name: str) -> Worktree:
    """Remove worktree ``name`` and its branch."""
    tree = _load(folder, name)
    top = Path(tree.checkout)
    _git(top, "worktree", "remove", "--force", tree.path)
    _git(top, "branch", "-D", tree.branch)
    (_home(top) / f"{name}.json").unlink(missing_ok=True)
    return tree


# -- the command line ----------------------------------------------------------


def _folder_of(args: argparse.Namespace) -> Path:
    return Path(args.folder or os.getcwd()).resolve()


def _list(args: argparse.Namespace) -> int:
    found = listed(_folder_of(args))
    if not found:
        print("no worktrees (start one with `rhema-lsp ask --worktree ...`)")
    for tree, files in found:
        changed = f"{len(files)} file(s) changed" if files else "no changes"
        print(f"{tree.name}  {tree.branch}  {changed}  {tree.path}")
    return 0


def _finish_one(args: argparse.Namespace) -> int:
    folder = _folder_of(args)
    if args.action == "discard":
        tree = discard(folder, args.name)
        print(f"discarded {tree.name}: worktree and branch {tree.branch} removed")
        return 0
    applied, conflicts = apply(folder, args.name)
    if conflicts:
        print(f"not applied: {len(conflicts)} file(s) conflict with your changes; nothing written:")
        for file in conflicts:
            print(f"  {file}")
        return 1
    print(f"applied {len(applied)} file(s): {', '.join(applied) or 'nothing to apply'}")
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
