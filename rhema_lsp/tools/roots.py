"""Which folders may be a workspace root: the one policy every door asks.

A root is what the agent is confined to; a root that holds the user's
secrets or the system's own files confines nothing. Every door asks
:func:`unsafe_root_reason` before it serves a folder: the language server
for each workspace folder, whenever it reads them (so folders added later by
``workspace/didChangeWorkspaceFolders`` too), the ACP agent for ``cwd`` and
each of ``additionalDirectories``, and the command line for ``--folder``.

Refused, with the reason:

- ``/``: every file;
- the home directory (``$HOME``, and the account's own home when ``HOME``
  names another) and **every ancestor of it** (``/home`` holds
  ``alice/.aws/credentials``);
- the system's own trees: ``/etc``, ``/proc``, ``/sys`` and ``/dev`` and
  everything under them (configuration, keys, kernel interfaces: never a
  project), and ``/usr``, ``/var`` and the temporary directories (``/tmp``,
  ``/var/tmp``, ``$TMPDIR``) themselves, whose children may be projects
  (``/usr/src/linux``, ``/var/www/site``, a checkout in ``/tmp``).

Paths are compared by their real paths, symlinks resolved on both sides
(macOS's ``/etc`` is ``/private/etc``). The module touches no layer: the
command line asks it before anything else loads.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import tempfile
from pathlib import Path

__all__ = ["SYSTEM_FOLDERS", "SYSTEM_TREES", "unsafe_root_reason"]

SYSTEM_TREES = ("/etc", "/proc", "/sys", "/dev")
"""Trees that are the system's own, everything under them included."""

SYSTEM_FOLDERS = ("/usr", "/var", "/tmp", "/var/tmp")
"""System folders refused themselves; a folder under them may be a project."""


def _real(path: str | Path) -> Path:
    return Path(os.path.realpath(path))


def _homes() -> list[Path]:
    """The user's home directories: ``$HOME`` and the account's own."""
    homes = []
    if os.environ.get("HOME"):
        homes.append(_real(os.environ["HOME"]))
    with contextlib.suppress(KeyError, OSError):  # an account without a passwd entry
        homes.append(_real(pwd.getpwuid(os.getuid()).pw_dir))
    return list(dict.fromkeys(home for home in homes if home != Path(home.anchor)))


def _system_reason(real: Path, shown: Path) -> str | None:
    for tree in SYSTEM_TREES:
        top = _real(tree)
        if real == top or top in real.parents:
            return f"{shown} is in {tree}, the system's own files: no project lives there"
    folders = {_real(folder): folder for folder in SYSTEM_FOLDERS}
    folders.setdefault(_real(tempfile.gettempdir()), tempfile.gettempdir())
    named = folders.get(real)
    if named is not None:
        return (
            f"{shown} is {named}, a system folder shared by every program: "
            "open a project folder inside it instead"
        )
    return None


def unsafe_root_reason(path: Path) -> str | None:
    """Why ``path`` may not be a workspace root, or ``None`` when it may
    (see the module docstring)."""
    real = _real(path)
    if real == Path(real.anchor):
        return f"{path} is the file system's root: the agent would reach every file"
    homes = _homes()
    if real in homes:
        return (
            f"{path} is your home directory: the agent would reach your keys and every "
            "other project; open a project folder instead"
        )
    system = _system_reason(real, path)
    if system is not None:
        return system
    for home in homes:
        if real in home.parents:
            return (
                f"{path} holds your home directory ({home}): the agent would reach your "
                "keys and every other project; open a project folder instead"
            )
    return None
