"""Whether a ``run_command`` runs, asks first, or is refused; and in what.

The one decision for every door (the command itself then runs in the agent
or in an ACP client's terminal, both through the spawn gate):

- **Sandboxed** (the ``sandbox`` setting ``auto`` or ``require`` and a
  sandbox available, :mod:`~rhema_lsp.tools.sandbox`): the command runs
  inside it **without asking**. The model may ask to run one outside with
  ``escalate: true`` and a ``reason``; the user is asked, with the reason
  (an allow-listed command is not asked about: the allow-list is the
  user's word for running it unconfined).
- **Not sandboxed** (``off``, or ``auto`` with none available): approvals
  as before the sandbox: every command not allow-listed is asked about;
  the question says plainly that the command is not sandboxed, and why.
- ``require`` with no sandbox available refuses every command, escalated
  or not, and says why; nothing runs.

A sandboxed command that failed with the marks of a denial (a read-only
file system, a refused permission, a refused or unreachable connection, a
name that does not resolve) gets :func:`denial_note` after its output, so
the model can escalate instead of retrying blindly.

Blocking (the sandbox's availability probe): call :meth:`CommandPolicy.decide`
from a worker thread.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

from rhema_lsp.tools.commands import is_allowlisted
from rhema_lsp.tools.sandbox import Sandbox, SandboxMode, availability

__all__ = ["DENIAL_MARKS", "CommandPolicy", "Decision", "denial_note"]

logger = logging.getLogger(__name__)
_told: set[str] = set()

DENIAL_MARKS = (
    "read-only file system",
    "permission denied",
    "operation not permitted",
    "connection refused",
    "network is unreachable",
    "temporary failure in name resolution",
    "could not resolve host",
    "name or service not known",
)
"""Output (compared in lower case) that suggests the sandbox stopped a command."""


@dataclass(frozen=True, slots=True)
class Decision:
    """What to do with one command: ``refused`` (why, nothing runs), else
    ``question`` to ask first (``None``: run now), inside ``sandbox``
    (``None``: unconfined)."""

    sandbox: Sandbox | None = None
    question: str | None = None
    refused: str | None = None


@dataclass(frozen=True, slots=True)
class CommandPolicy:
    """The settings the decision reads: ``sandbox``, ``sandboxNetwork``,
    ``sandboxWritable`` and ``commandAllowlist``."""

    mode: SandboxMode = "auto"
    network: bool = False
    writable: tuple[str, ...] = ()
    allowlist: tuple[str, ...] = field(default=())

    def sandbox(self) -> Sandbox | None:
        """The sandbox commands run in, ``None`` when off or unavailable."""
        if self.mode == "off":
            return None
        found = availability()
        if found.program is None:
            return None
        folders = tuple(Path(os.path.expanduser(path)) for path in self.writable)
        absolute = tuple(p for p in folders if p.is_absolute())
        if found.kind == "seatbelt":  # macOS
            from rhema_lsp.tools.seatbelt import Seatbelt

            return Seatbelt(found.program, self.network, absolute)
        return Sandbox(found.program, self.network, absolute)

    def status(self) -> str:
        """Whether commands are sandboxed and by what, one line starting ``sandbox``."""
        if self.mode == "off":
            return "sandbox: off (setting) — commands not allow-listed are asked about"
        found = availability()
        sandbox = self.sandbox()
        if sandbox is None:
            if self.mode == "require":
                return f"sandbox: required but unavailable — {found.reason}; commands are refused"
            return f"sandbox: none — {found.reason}; commands not allow-listed are asked about"
        return f"sandbox: {sandbox.describe()}; commands run without asking"

    def decide(self, command: str, folder: Path, escalate: bool, reason: str) -> Decision:
        """What to do with ``command`` (see the module docstring)."""
        allowed = is_allowlisted(command, self.allowlist)
        if self.mode == "off":
            return Decision() if allowed else Decision(question=_plain(command, folder, "off"))
        if escalate and self.mode == "auto":  # never sandboxed: no need to probe
            return Decision() if allowed else Decision(question=_outside(command, folder, reason))
        sandbox = self.sandbox()
        if sandbox is None:
            why = availability().reason
            if why not in _told:  # said plainly, once per server
                _told.add(why)
                logger.warning("commands are not sandboxed: %s", why)
            if self.mode == "require":
                return Decision(
                    refused=(
                        f"commands must run in a sandbox (sandbox: require) and none is "
                        f"available: {why}; nothing was run"
                    )
                )
            return Decision() if allowed else Decision(question=_plain(command, folder, why))
        if escalate:
            return Decision() if allowed else Decision(question=_outside(command, folder, reason))
        return Decision(sandbox=sandbox)


def _plain(command: str, folder: Path, why: str) -> str:
    unconfined = "the sandbox is off" if why == "off" else f"there is no sandbox here: {why}"
    return (
        f"Rhema wants to run a command in {folder} ({unconfined}; it runs unconfined):\n{command}"
    )


def _outside(command: str, folder: Path, reason: str) -> str:
    because = f", because: {reason.strip()}" if reason.strip() else ""
    return f"Rhema wants to run a command in {folder} outside the sandbox{because}:\n{command}"


def denial_note(output: str, sandbox: Sandbox) -> str:
    """The note after a failed sandboxed command's output, or ``""`` when
    the output shows no mark of a denial."""
    lowered = output.lower()
    marks = [mark for mark in DENIAL_MARKS if mark in lowered]
    if not marks:
        return ""
    blocked = (
        "writing outside the workspace folders and /tmp"
        if sandbox.network
        else "writing outside the workspace folders and /tmp, and the network,"
    )
    return (
        f"[the command ran in a sandbox, which may have denied this ({marks[0]}): "
        f"{blocked} are blocked there. If it needs that, call run_command again with "
        f"escalate: true and a reason; the user will be asked to run it outside the "
        f"sandbox]\n"
    )
