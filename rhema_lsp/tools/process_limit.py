"""How many processes a sandboxed command may have: at most
:data:`MAX_PROCESSES`, so a fork bomb stops there.

Two mechanisms, because neither works everywhere:

- **RLIMIT_NPROC, set inside the sandbox** (:func:`limited`: by the
  command's own shell before its script, else by :data:`RLIMIT_PREFIX`). In the sandbox's own user
  namespace it counts only the sandbox's processes. The kernel never
  applies it to root (uid 0 of the host), so for a server running as root
  it limits nothing.
- **A pids cgroup** (:func:`pids_cgroup`), for a server running as root:
  one cgroup per server process, ``rhema-lsp-<pid>`` below the server's
  own in the cgroup v1 ``pids`` hierarchy (or cgroup v2's, when the server
  is in the root cgroup), its ``pids.max`` set to :data:`MAX_PROCESSES`;
  every sandboxed command of the server enters it before ``bwrap`` starts
  (:func:`cgroup_prefix`), so they share the limit. It is removed when the
  server exits (if empty). Entering a cgroup is slow (cgroup v1 waits for
  an RCU grace period: 5 to 20 ms), so only a root server pays it. Where
  it cannot be made, there is no limit for root, and :func:`limit_note`
  says so.

Blocking (``mkdir``, file writes): call from a worker thread.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
from collections.abc import Sequence
from pathlib import Path

__all__ = [
    "MAX_PROCESSES",
    "RLIMIT_PREFIX",
    "cgroup_prefix",
    "limit_note",
    "limited",
    "pids_cgroup",
]

MAX_PROCESSES = 1024
"""The most processes (threads included) sandboxed commands may have at once."""

_SET_LIMIT = f"ulimit -u {MAX_PROCESSES} 2>/dev/null || ulimit -p {MAX_PROCESSES} 2>/dev/null"
"""Sets the process limit (``-u`` is bash's spelling, ``-p`` dash's and busybox's)."""

RLIMIT_PREFIX = ("/bin/sh", "-c", f'{_SET_LIMIT}; exec "$@"', "rhema-limit")
"""Sets the process limit, then runs the command."""


def limited(argv: Sequence[str]) -> list[str]:
    """``argv`` run under the process limit. A shell command line
    (``/bin/sh -c SCRIPT``, what every command the model asks for is) sets
    the limit itself, first: no shell more to start (a sandboxed command's
    time is mostly its processes' starts); anything else goes through
    :data:`RLIMIT_PREFIX`."""
    if len(argv) == 3 and argv[0] == "/bin/sh" and argv[1] == "-c":
        return ["/bin/sh", "-c", f"{_SET_LIMIT}\n{argv[2]}"]
    return [*RLIMIT_PREFIX, *argv]


_CGROUP_ROOT = Path("/sys/fs/cgroup")


def _own_cgroup(version_key: str) -> str | None:
    """This process's cgroup path in the hierarchy named by ``version_key``
    (``pids`` for v1, ``""`` for the v2 unified one)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) == 3 and (parts[1] == version_key or version_key in parts[1].split(",")):
            return parts[2]
    return None


def _hierarchy() -> Path | None:
    """Where a child pids cgroup of this process's may be made, or ``None``."""
    v1 = _CGROUP_ROOT / "pids"
    own = _own_cgroup("pids")
    if own is not None and v1.is_dir():
        return v1 / own.lstrip("/")
    unified = _own_cgroup("")
    controllers = _CGROUP_ROOT / "cgroup.controllers"
    if unified == "/" and controllers.is_file() and "pids" in controllers.read_text().split():
        return _CGROUP_ROOT
    return None


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.rmdir()


@functools.lru_cache(maxsize=1)
def pids_cgroup() -> Path | None:
    """This server's pids cgroup, made once; ``None`` when the server is not
    root (the rlimit works then) or no cgroup can be made."""
    if os.geteuid() != 0:
        return None
    parent = _hierarchy()
    if parent is None:
        return None
    path = parent / f"rhema-lsp-{os.getpid()}"
    try:
        path.mkdir(exist_ok=True)
        (path / "pids.max").write_text(f"{MAX_PROCESSES}\n")
    except OSError:
        _remove(path)
        return None
    atexit.register(_remove, path)
    return path


def cgroup_prefix(cgroup: Path) -> list[str]:
    """The command line that enters ``cgroup``, then runs the rest."""
    script = 'echo $$ > "$0/cgroup.procs" 2>/dev/null; exec "$@"'
    return ["/bin/sh", "-c", script, str(cgroup)]


def limit_note() -> str:
    """How the process limit is enforced, for the status line."""
    if os.geteuid() != 0:
        return f"at most {MAX_PROCESSES} processes"
    if pids_cgroup() is not None:
        return f"at most {MAX_PROCESSES} processes (a pids cgroup)"
    return "no process limit (running as root, and no pids cgroup could be made)"
