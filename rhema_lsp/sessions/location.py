"""Where a workspace folder's session database lives.

``workspace`` (the default) keeps it beside the code, in
``<folder>/.rhema/sessions.sqlite3``; the ``.rhema`` folder holds a
``.gitignore`` of ``*`` so the store never enters the user's repository.
``user`` keeps it in the user's state directory (platformdirs), one file per
folder, named after the folder and a hash of its real path so two folders
with the same name never share a store.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Literal

from platformdirs import user_state_dir

from rhema_lsp.sessions.errors import SessionStoreError

__all__ = ["DATABASE_NAME", "StoreLocation", "database_path"]

StoreLocation = Literal["workspace", "user"]
"""The ``sessionStore`` setting: beside the folder, or in the user's state dir."""

DATABASE_NAME = "sessions.sqlite3"
_APP_NAME = "rhema-lsp"


def database_path(folder: Path, location: StoreLocation, state_dir: Path | None = None) -> Path:
    """Resolve (and prepare) the database file for ``folder``.

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
        The folder does not exist, or the store's directory cannot be made.
    """
    if not folder.is_dir():
        raise SessionStoreError(f"cannot keep sessions for {folder}: it is not a folder")
    real = Path(os.path.realpath(folder))
    try:
        if location == "workspace":
            directory = real / ".rhema"
            directory.mkdir(exist_ok=True)
            ignore = directory / ".gitignore"
            if not ignore.exists():
                ignore.write_text("*\n", encoding="utf-8")
            return directory / DATABASE_NAME
        base = state_dir if state_dir is not None else Path(user_state_dir(_APP_NAME))
        directory = base / "sessions"
        directory.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256(str(real).encode("utf-8")).hexdigest()[:16]
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", real.name)[:40] or "root"
        return directory / f"{slug}-{digest}.sqlite3"
    except OSError as exc:
        hint = (
            'set "sessionStore": "user" to keep sessions in your state directory instead'
            if location == "workspace"
            else "check that the state directory is writable"
        )
        raise SessionStoreError(
            f"cannot create the session store for {folder}: {exc}; {hint}"
        ) from exc
