"""Where a workspace folder's session database lives, and why it is safe there.

``workspace`` (the default) keeps it beside the code, in
``<folder>/.rhema/sessions.sqlite3``; the ``.rhema`` folder holds a
``.gitignore`` of ``*`` so the store never enters the user's repository.
``user`` keeps it in the user's state directory (platformdirs), one file per
folder, named after the folder and a hash of its real path so two folders
with the same name never share a store.

A workspace is not trusted to lay out its own ``.rhema``: a cloned
repository can carry one. The store is kept there only when ``.rhema`` is a
real directory of the folder (not a symbolic link), and the database, its
``-wal`` and ``-shm`` companions and the ``.gitignore`` are absent or
regular files, never links. Anything else (a link to somewhere outside,
a device, a file named ``.rhema``) moves the store to the user state
directory, and :attr:`StorePlace.notice` tells the user why, so SQLite and
the transcripts never write through a link. A directory in the database's
place is an error the user must resolve: it is not the store and not ours
to move.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from platformdirs import user_state_dir

from rhema_lsp.sessions.errors import SessionStoreError

__all__ = ["DATABASE_NAME", "StoreLocation", "StorePlace", "database_path"]

StoreLocation = Literal["workspace", "user"]
"""The ``sessionStore`` setting: beside the folder, or in the user's state dir."""

DATABASE_NAME = "sessions.sqlite3"
STORE_DIR = ".rhema"
_APP_NAME = "rhema-lsp"
_COMPANIONS = (DATABASE_NAME, f"{DATABASE_NAME}-wal", f"{DATABASE_NAME}-shm", ".gitignore")


@dataclass(frozen=True, slots=True)
class StorePlace:
    """The database file chosen for a folder.

    Attributes
    ----------
    path
        The database file (it may not exist yet).
    notice
        Why the store is not where the setting asked (``None``: it is), for
        the user.
    """

    path: Path
    notice: str | None = None


class _Unsafe(Exception):
    """The workspace's ``.rhema`` cannot hold the store safely; says why."""


def _user_path(real: Path, state_dir: Path | None) -> Path:
    base = state_dir if state_dir is not None else Path(user_state_dir(_APP_NAME))
    directory = base / "sessions"
    directory.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(str(real).encode("utf-8")).hexdigest()[:16]
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", real.name)[:40] or "root"
    return directory / f"{slug}-{digest}.sqlite3"


def _workspace_path(real: Path) -> Path:
    """``<real>/.rhema/sessions.sqlite3``, made and checked without following
    any link (the checks run on descriptors, so nothing swapped in between
    is followed either).

    Raises
    ------
    _Unsafe
        ``.rhema`` or one of the store's files is a link or not what it must be.
    OSError
        The folder cannot be written.
    """
    folder_fd = os.open(real, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        with contextlib.suppress(FileExistsError):
            os.mkdir(STORE_DIR, 0o777, dir_fd=folder_fd)
        try:
            fd = os.open(
                STORE_DIR, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                dir_fd=folder_fd,
            )  # fmt: skip
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise _Unsafe(f"{real / STORE_DIR} is a symbolic link or not a folder") from exc
            raise
    finally:
        os.close(folder_fd)
    try:
        for name in _COMPANIONS:
            try:
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                continue
            if stat.S_ISDIR(info.st_mode) and name == DATABASE_NAME:
                raise SessionStoreError(
                    f"{real / STORE_DIR / name} is a folder, not a session store: move it "
                    'away, or set "sessionStore": "user" to keep sessions in your state '
                    "directory"
                )
            if not stat.S_ISREG(info.st_mode):
                kind = "a symbolic link" if stat.S_ISLNK(info.st_mode) else "not a regular file"
                raise _Unsafe(f"{real / STORE_DIR / name} is {kind}")
            if info.st_nlink > 1:
                raise _Unsafe(f"{real / STORE_DIR / name} has other hard links")
        try:
            ignore = os.open(
                ".gitignore",
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                0o666,
                dir_fd=fd,
            )
        except FileExistsError:
            pass
        else:
            with os.fdopen(ignore, "w", encoding="utf-8") as out:
                out.write("*\n")
    finally:
        os.close(fd)
    return real / STORE_DIR / DATABASE_NAME


def database_path(
    folder: Path, location: StoreLocation, state_dir: Path | None = None
) -> StorePlace:
    """Resolve (and prepare) the database file for ``folder`` (blocking).

    Parameters
    ----------
    folder
        The workspace folder the sessions belong to; it must exist.
    location
        ``"workspace"`` or ``"user"``.
    state_dir
        Replaces the platform's user state directory (for tests).

    Raises
    ------
    SessionStoreError
        The folder does not exist, the store's directory cannot be made, or
        a folder stands where the database should be.
    """
    if not folder.is_dir():
        raise SessionStoreError(f"cannot keep sessions for {folder}: it is not a folder")
    real = Path(os.path.realpath(folder))
    try:
        if location == "workspace":
            try:
                return StorePlace(_workspace_path(real))
            except _Unsafe as exc:
                moved = _user_path(real, state_dir)
                return StorePlace(
                    moved,
                    f"Sessions of {real} are kept in {moved}, not in the folder: {exc}, "
                    "which could make the agent write outside the workspace.",
                )
        return StorePlace(_user_path(real, state_dir))
    except OSError as exc:
        hint = (
            'set "sessionStore": "user" to keep sessions in your state directory instead'
            if location == "workspace"
            else "check that the state directory is writable"
        )
        raise SessionStoreError(
            f"cannot create the session store for {folder}: {exc}; {hint}"
        ) from exc
