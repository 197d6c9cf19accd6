"""The command sandbox on macOS: a ``sandbox-exec`` (Seatbelt) profile made
from the same policy as bubblewrap's on Linux (:mod:`~rhema_lsp.tools.sandbox`).

:func:`profile` writes the policy as Seatbelt's profile language (SBPL):

- **Filesystem:** everything readable, nothing writable (``deny default``,
  then ``allow file-read*``), but the workspace roots, the extra folders the
  user lists (``sandboxWritable``), the temporary folder ``TMPDIR`` names
  (macOS gives each user a private one; the shared ``/tmp`` stays
  read-only) and the few devices every shell writes (``/dev/null``,
  ``/dev/tty``, ``/dev/zero``).
- **Inside the roots**, what the confinement gate protects stays protected:
  ``.git`` (and ``.github``, ``.vscode``, ``.devcontainer``) read-only,
  ``.rhema`` and ``.env*`` neither readable nor writable.
- **Secrets** (:data:`~rhema_lsp.tools.sandbox.HOME_SECRETS`, the user's
  rhema-lsp config and state): neither readable nor writable; a root inside
  one (a worktree in the state directory) is allowed again, and only it.
- **Network:** none, unless allowed (then outbound and inbound both).
- **Processes:** the command may fork and exec; the process limit is set by
  its shell (:func:`~rhema_lsp.tools.process_limit.limited`).

The rules that deny come after the ones that allow: in SBPL the last rule
that matches an operation decides. Paths are written as SBPL string
literals (backslash and double quote escaped; a path with a control
character is refused: it cannot be quoted safely). On Linux this module is
never used (:func:`~rhema_lsp.tools.sandbox.availability` picks it on
``darwin`` only).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rhema_lsp.tools.process_limit import limited
from rhema_lsp.tools.sandbox import SANDBOX_EXEC, Sandbox, masked_paths

__all__ = ["SANDBOX_EXEC", "Seatbelt", "UnquotablePath", "profile", "sbpl_string"]

_READ_ONLY_IN_ROOT = (".git", ".github", ".vscode", ".devcontainer")
_HIDDEN_IN_ROOT = (".rhema",)
_DEVICES = ("/dev/null", "/dev/zero", "/dev/tty", "/dev/dtracehelper")


class UnquotablePath(ValueError):
    """A path holds a character an SBPL string cannot carry safely."""


def sbpl_string(path: str) -> str:
    """``path`` as an SBPL string literal."""
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in path):
        raise UnquotablePath(f"a path with a control character cannot be sandboxed: {path!r}")
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _subpath(path: Path) -> str:
    return f"(subpath {sbpl_string(str(path))})"


def _literal(path: str) -> str:
    return f"(literal {sbpl_string(path)})"


def profile(
    roots: Sequence[Path],
    *,
    writable: Sequence[Path] = (),
    tmp: Path | None = None,
    masked: Sequence[Path] = (),
    network: bool = False,
) -> str:
    """The SBPL profile of the policy (see the module docstring)."""
    lines = [
        "(version 1)",
        "(deny default)",
        "(allow process-fork)",
        "(allow process-exec)",
        "(allow signal (target same-sandbox))",
        "(allow sysctl-read)",
        "(allow mach-lookup)",
        "(allow ipc-posix-shm)",
        "(allow file-read*)",
    ]
    places = [*roots, *writable, *([tmp] if tmp is not None else [])]
    allowed = " ".join([*(_subpath(p) for p in places), *(_literal(d) for d in _DEVICES)])
    lines.append(f"(allow file-write* {allowed})")
    if network:
        lines.append("(allow network*)")
    else:
        lines.append("(deny network*)")
    protected: list[str] = []
    hidden: list[str] = []
    for root in roots:
        protected += [_subpath(root / name) for name in _READ_ONLY_IN_ROOT]
        hidden += [_subpath(root / name) for name in _HIDDEN_IN_ROOT]
        hidden.append(_regex("^" + _regex_escape(str(root)) + "/\\.env[^/]*$"))
    holding = [m for m in masked if any(r.is_relative_to(m) for r in roots)]
    if holding:  # a root inside a masked folder (a worktree in the state directory)
        lines.append(f"(deny file-read* file-write* {' '.join(_subpath(m) for m in holding)})")
        inside = [_subpath(r) for r in roots if any(r.is_relative_to(m) for m in holding)]
        lines.append(f"(allow file-read* file-write* {' '.join(inside)})")
    lines.append(f"(deny file-write* {' '.join(protected)})" if protected else "")
    secrets = [_subpath(m) for m in masked if m not in holding]
    if secrets or hidden:
        lines.append(f"(deny file-read* file-write* {' '.join([*secrets, *hidden])})")
    return "\n".join(line for line in lines if line) + "\n"


def _regex(pattern: str) -> str:
    if '"' in pattern:
        raise UnquotablePath(f"a path with a double quote cannot be sandboxed: {pattern!r}")
    return f'(regex #"{pattern}")'


def _regex_escape(text: str) -> str:
    return "".join(f"\\{char}" if char in ".^$*+?()[]{}|\\" else char for char in text)


@dataclass(frozen=True, slots=True)
class Seatbelt(Sandbox):
    """The macOS sandbox: :class:`~rhema_lsp.tools.sandbox.Sandbox`'s policy
    as a ``sandbox-exec`` profile (``program`` is ``sandbox-exec``)."""

    dies_with_parent: ClassVar[bool] = False

    def wrap(
        self,
        argv: Sequence[str],
        *,
        roots: Iterable[Path],
        cwd: Path | None,
        env: Mapping[str, str],
    ) -> list[str]:
        """``argv`` run under the profile (the caller starts it in ``cwd``)."""
        real_roots = [Path(os.path.realpath(root)) for root in roots]
        tmpdir = env.get("TMPDIR")
        text = profile(
            real_roots,
            writable=[Path(os.path.realpath(p)) for p in self.writable],
            tmp=Path(os.path.realpath(tmpdir)) if tmpdir and os.path.isabs(tmpdir) else None,
            masked=masked_paths(env),
            network=self.network,
        )
        return [self.program, "-p", text, *limited(argv)]

    def describe(self) -> str:
        """What this sandbox blocks, in one line."""
        net = "network allowed" if self.network else "no network"
        more = f", and {len(self.writable)} more folder(s)" if self.writable else ""
        return (
            f"sandbox-exec ({self.program}): writes only in the workspace folders{more} and "
            f"the temporary folder, home secrets hidden, {net}"
        )
