"""Sessions that run in their own git worktree: the one place a worktree is
made, found, listed, finished and removed, for every door (``rhema.turn``'s
``worktree``, ACP's ``worktree`` option, ``rhema-lsp ask --worktree``).

- **Start** (:func:`start`): a new worktree on a new branch
  ``rhema/<name>`` (the name is the session's id when the door knows it),
  made from ``HEAD`` plus the checkout's uncommitted changes (tracked,
  staged or not, and untracked files not ignored), under the user state
  directory (``<state>/worktrees/<repository key>/<name>``), never inside
  the repository. The carried changes are committed on the branch first
  (the **base** the session's changes are measured from); the turns run
  there, their tools, checkpoints, language servers and sandbox rooted
  there; the checkout the user types in is not touched.
- **Finish** (:func:`finish`): what the turns changed is committed on the
  branch (nothing when nothing changed).
- **Changes** (:func:`changed`): the files the worktree changed since its
  base, committed or not.
- **Apply** and the per-file review: :mod:`~rhema_lsp.runs.worktree_merge`.
- **Discard** (:func:`discard`): the worktree and its branch are removed.

A name is checked (:data:`NAME`) before it is used in a path or a ref.
Every git call goes through the spawn gate, with no shell; a failure is a
:class:`WorktreeError` naming what failed. Blocking (git, file writes):
call from a worker thread.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = [
    "NAME",
    "Worktree",
    "WorktreeError",
    "by_session",
    "changed",
    "discard",
    "find",
    "find_session",
    "finish",
    "git",
    "listed",
    "load",
    "start",
    "top_of",
]

NAME = re.compile(r"^(?:[0-9]{8}-[0-9]{6}-[0-9a-f]{6}|[0-9a-f]{16})$")
"""A worktree's name: a headless one's time and random part, or a session id."""
_IDENTITY = ("-c", "user.name=rhema-lsp", "-c", "user.email=rhema-lsp@localhost")
_NOT_STORE = ":(exclude,glob)**/.rhema/**"


class WorktreeError(Exception):
    """A worktree cannot be made, found, applied or removed; the message says why."""


@dataclass(frozen=True, slots=True)
class Worktree:
    """One session's worktree: its ``name``, ``branch``, ``path``, the
    ``checkout`` it came from, the ``folder`` (relative to the top) the
    turns run in, the ``base`` commit its changes are measured from, and
    the ``session`` it belongs to (``None``: not known when it was made)."""

    name: str
    branch: str
    path: str
    checkout: str
    folder: str
    base: str
    session: str | None = None

    @property
    def root(self) -> Path:
        """The folder the session's turns run in, inside the worktree."""
        return Path(self.path) / self.folder if self.folder != "." else Path(self.path)


def _run(
    cwd: Path | None, *args: str, data: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    """``git ARGS`` through the spawn gate (the user's ``git``, keys scrubbed)."""
    from rhema_lsp.tools.spawn import Unlaunchable, launch

    try:
        started = launch(["git", *args], roots=[], cwd=cwd)
    except Unlaunchable as exc:
        raise WorktreeError(f"worktrees need git: {exc}") from exc
    try:
        return subprocess.run(
            started.argv,
            cwd=cwd,
            env=started.env,
            input=data,
            capture_output=True,
            check=False,
            timeout=120,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise WorktreeError(f"git {args[0]} could not run: {exc}") from exc


def git(cwd: Path | None, *args: str, data: bytes | None = None) -> bytes:
    """``git ARGS`` in ``cwd``; its output, or :class:`WorktreeError`."""
    done = _run(cwd, *args, data=data)
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip()
        raise WorktreeError(f"git {args[0]} failed in {cwd}: {said}")
    return done.stdout


def top_of(folder: Path) -> Path:
    """The top of the repository ``folder`` is in."""
    return Path(git(folder, "rev-parse", "--show-toplevel").decode().strip())


def _all_homes() -> Path:
    from platformdirs import user_state_dir

    return Path(user_state_dir("rhema-lsp")) / "worktrees"


def _home(top: Path) -> Path:
    key = hashlib.sha256(str(top.resolve()).encode()).hexdigest()[:16]
    return _all_homes() / key


def start(folder: Path, session: str | None = None) -> Worktree:
    """A new worktree for the session ``session`` (named after it; else a
    name of its own) in ``folder``'s repository."""
    top = top_of(folder)
    name = session or time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)
    if not NAME.match(name):
        raise WorktreeError(f"{name!r} cannot name a worktree")
    home = _home(top)
    home.mkdir(parents=True, exist_ok=True)
    path = home / name
    branch = f"rhema/{name}"
    git(top, "worktree", "add", "--quiet", "-b", branch, str(path), "HEAD")
    changes = git(top, "diff", "HEAD", "--binary")
    if changes:
        git(path, "apply", "--binary", "--whitespace=nowarn", data=changes)
    untracked = git(top, "ls-files", "--others", "--exclude-standard", "-z").split(b"\0")
    for raw in filter(None, untracked):
        relative = os.fsdecode(raw)
        source = top / relative
        if source.is_file() and not source.is_symlink():
            (path / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, path / relative)
    git(path, "add", "-A", "--", ".", _NOT_STORE)
    git(path, *_IDENTITY, "commit", "--quiet", "--allow-empty", "-m", "rhema: the checkout")
    base = git(path, "rev-parse", "HEAD").decode().strip()
    relative = folder.resolve().relative_to(top.resolve()).as_posix()
    tree = Worktree(name, branch, str(path), str(top), relative, base, session)
    (home / f"{name}.json").write_text(json.dumps(asdict(tree)))
    return tree


def finish(tree: Worktree, title: str) -> None:
    """Commit what the turns changed on the worktree's branch (nothing when
    nothing changed)."""
    path = Path(tree.path)
    git(path, "add", "-A", "--", ".", _NOT_STORE)
    if _run(path, "diff", "--cached", "--quiet").returncode == 0:
        return
    git(path, *_IDENTITY, "commit", "--quiet", "-m", f"rhema: {title[:72]}")


def _read(record: Path) -> Worktree:
    fields = json.loads(record.read_text())
    return Worktree(**{key: fields.get(key) for key in Worktree.__dataclass_fields__})


def find(folder: Path, name: str) -> Worktree | None:
    """Worktree ``name`` of ``folder``'s repository; ``None`` when there is
    none (or ``folder`` is in no repository)."""
    if not NAME.match(name):
        return None
    try:
        record = _home(top_of(folder)) / f"{name}.json"
    except WorktreeError:
        return None
    return _read(record) if record.is_file() else None


def by_session() -> dict[str, Worktree]:
    """Every worktree that belongs to a session, by the session's id (no git
    call: the records in the state directory)."""
    found: dict[str, Worktree] = {}
    for record in sorted(_all_homes().glob("*/*.json")):
        tree = _read(record)
        if tree.session is not None:
            found[tree.session] = tree
    return found


def find_session(session: str) -> Worktree | None:
    """The worktree of session ``session``, in whatever repository (no git
    call: the records in the state directory)."""
    if not NAME.match(session):
        return None
    for record in sorted(_all_homes().glob(f"*/{session}.json")):
        tree = _read(record)
        if tree.session == session:
            return tree
    return None


def load(folder: Path, name: str) -> Worktree:
    """Worktree ``name`` of ``folder``'s repository, or :class:`WorktreeError`."""
    if not NAME.match(name):
        raise WorktreeError(f"{name!r} is not a worktree name")
    tree = find(folder, name)
    if tree is None:
        raise WorktreeError(f"no worktree {name} for this repository")
    return tree


def changed(tree: Worktree) -> list[str]:
    """The files (relative to the worktree's top) the worktree changed since
    its base, committed or not."""
    path = Path(tree.path)
    if not path.is_dir():
        return []
    names = git(path, "diff", "--name-only", "-z", tree.base, "--", ".", _NOT_STORE).split(b"\0")
    new = git(path, "ls-files", "--others", "--exclude-standard", "-z", "--", ".", _NOT_STORE)
    found = {os.fsdecode(raw) for raw in [*names, *new.split(b"\0")] if raw}
    return sorted(found)


def listed(folder: Path) -> list[tuple[Worktree, list[str]]]:
    """The worktrees of ``folder``'s repository, each with the files it changed."""
    home = _home(top_of(folder))
    found = []
    for record in sorted(home.glob("*.json")) if home.is_dir() else []:
        tree = _read(record)
        found.append((tree, changed(tree)))
    return found


def discard(folder: Path, name: str) -> Worktree:
    """Remove worktree ``name`` and its branch."""
    tree = load(folder, name)
    top = Path(tree.checkout)
    if Path(tree.path).exists():
        git(top, "worktree", "remove", "--force", tree.path)
    else:
        git(top, "worktree", "prune")
    if _run(top, "rev-parse", "--verify", "--quiet", f"refs/heads/{tree.branch}").returncode == 0:
        git(top, "branch", "-D", tree.branch)
    (_home(top) / f"{name}.json").unlink(missing_ok=True)
    return tree
