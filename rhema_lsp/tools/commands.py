"""``run_command``: a shell command in the session folder, approved, bounded.

- Runs ``/bin/sh -c COMMAND`` with stdin closed, stdout and stderr merged, in
  its own process group (``start_new_session``), with the working directory
  pinned to the session folder by descriptor.
- Nothing outlives the server, even a SIGKILLed one: where ``/proc`` exists
  the command runs beside a watchdog in its group that kills the group once
  the server is gone (see :data:`_SUPERVISOR`).
- Approval: the user confirms each command through the editor, unless it is
  allow-listed. An allow-list entry matches a command that is **exactly**
  the entry (surrounding space ignored), or — when the command contains no
  shell operator or expansion (``; & | < > ` $ ( )`` or a line break) —
  whose first words (``shlex``-split) are the entry's words: ``pytest``
  allows ``pytest -q tests/x.py``, ``npm test`` allows ``npm test -- -u``,
  but neither allows ``pytest; rm -rf ~``, ``pytestx`` or ``npm install``.
- Output streams as complete lines through ``progress``; the result is the
  combined output (head and tail kept when huge; the engine caps it again)
  then a status line, with the exit code in ``code``.
- A timeout (default and bounds: :class:`~rhema_lsp.tools.specs.RunCommand`),
  the run's cancel signal, or cancellation of the awaiting task kill the
  whole group: ``SIGTERM``, then ``SIGKILL`` after
  :data:`KILL_GRACE_S`. When the shell exits, whatever it left running in the
  group is killed the same way, so no process outlives the call.
- The shell is started through the spawn gate
  (:mod:`~rhema_lsp.tools.spawn`): its environment drops provider keys and
  credentials, and its ``PATH`` keeps only absolute entries outside the
  workspace roots, so an allow-listed ``pytest`` is never a ``pytest``
  planted in the repository; a :class:`~rhema_lsp.tools.sandbox.Sandbox`
  given wraps it there too (the approval around it:
  :mod:`~rhema_lsp.tools.command_policy`).
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

import anyio
import anyio.to_thread
from anyio.abc import Process

from rhema_lsp.engine.tools import CancelSignal, Progress
from rhema_lsp.tools.confined_fs import ConfinedFS
from rhema_lsp.tools.errors import ToolError
from rhema_lsp.tools.ripgrep import iter_lines
from rhema_lsp.tools.sandbox import Sandbox
from rhema_lsp.tools.spawn import launch

__all__ = [
    "KILL_GRACE_S",
    "CommandOutcome",
    "Shell",
    "is_allowlisted",
    "live_group_members",
    "run_shell",
    "run_until_stopped",
]

KILL_GRACE_S = 2.0
_SHELL_OPERATORS = frozenset(";&|<>`$()\n\r")
_KEEP_BYTES = 64 << 10


def is_allowlisted(command: str, allowlist: Sequence[str]) -> bool:
    """Whether ``command`` may run without asking (see the module docstring)."""
    stripped = command.strip()
    if not stripped:
        return False
    plain = not any(char in _SHELL_OPERATORS for char in stripped)
    try:
        words = shlex.split(stripped) if plain else []
    except ValueError:
        words = []
    for entry in allowlist:
        wanted = entry.strip()
        if not wanted:
            continue
        if stripped == wanted:
            return True
        if not words or any(char in _SHELL_OPERATORS for char in wanted):
            continue
        try:
            entry_words = shlex.split(wanted)
        except ValueError:
            continue
        if entry_words and words[: len(entry_words)] == entry_words:
            return True
    return False


def live_group_members(pgid: int) -> list[int]:
    """Processes of group ``pgid`` that are not zombies (read from ``/proc``)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return []
    except PermissionError:
        pass
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2 and fields[0] != b"Z" and int(fields[2]) == pgid:
            members.append(int(entry))
    return members


async def _terminate_group(process: Process) -> None:
    """SIGTERM the group, SIGKILL what is left after the grace period."""
    pgid = process.pid
    if not await anyio.to_thread.run_sync(live_group_members, pgid):
        return
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = anyio.current_time() + KILL_GRACE_S
    while anyio.current_time() < deadline:
        await anyio.sleep(0.05)
        if not await anyio.to_thread.run_sync(live_group_members, pgid):
            return
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        return


@dataclass(slots=True)
class CommandOutcome:
    """How a command ended: output, exit code and why it stopped."""

    output: str
    code: int | None
    status: str
    """``exited``, ``timeout`` or ``cancelled``."""


class Shell(Protocol):
    """What runs an approved command: :func:`run_shell` here, or a door's
    own (the ACP client's terminal). It keeps the same rules: the output and
    exit code as a :class:`CommandOutcome`, killed on ``cancel`` and after
    ``timeout_s``, nothing left running, inside ``sandbox`` when given."""

    async def __call__(
        self,
        command: str,
        folder: Path,
        fs: ConfinedFS,
        env: Mapping[str, str],
        timeout_s: float,
        cancel: CancelSignal,
        progress: Progress,
        sandbox: Sandbox | None = None,
    ) -> CommandOutcome: ...


class _Output:
    """Keeps the head and tail of the output; streams complete lines."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, line: bytes) -> None:
        data = line + b"\n"
        self.progress(data.decode("utf-8", "replace"))
        if len(self.head) < _KEEP_BYTES:
            self.head += data
            return
        self.tail += data
        if len(self.tail) > _KEEP_BYTES:
            cut = len(self.tail) - _KEEP_BYTES
            self.dropped += cut
            del self.tail[:cut]

    def text(self) -> str:
        middle = f"[... {self.dropped} bytes of output omitted ...]\n" if self.dropped else ""
        return self.head.decode("utf-8", "replace") + middle + self.tail.decode("utf-8", "replace")


_SUPERVISOR = """\
server=$1
shift
( while read -r _ _ _ parent _ < /proc/$$/stat && [ "$parent" = "$server" ]; do sleep 1; done
  kill -KILL 0 ) >/dev/null 2>&1 </dev/null &
watchdog=$!
"$@"
status=$?
kill "$watchdog" 2>/dev/null
exit "$status"
"""
"""Runs the command line (after ``$1``) beside a watchdog that kills the
whole group once this shell's parent is no longer the server (``$1``): the
server died, even by SIGKILL, and the shell was handed to another parent. A
sandboxed command needs none: its ``bwrap`` is the server's own child, and
dies with it (``--die-with-parent``), its PID namespace with it (and the
shell and watchdog not started are most of what the sandbox would add to a
short command's time)."""


def _supervised(argv: Sequence[str], sandboxed: bool) -> list[str]:
    if sandboxed or not Path("/proc/self/stat").exists():
        return list(argv)
    return ["/bin/sh", "-c", _SUPERVISOR, "rhema-run", str(os.getpid()), *argv]


Ending = Literal["exited", "cancelled", "timeout"]


async def run_until_stopped(
    work: Callable[[], Awaitable[object]], cancel: CancelSignal, timeout_s: float
) -> Ending:
    """Await ``work`` until it returns (``exited``), ``cancel`` is set
    (``cancelled``) or ``timeout_s`` passes (``timeout``), whichever comes
    first; ``work`` is cancelled in the other two cases. The one race every
    command runner (here, and in an editor's terminal) shares."""
    stopped: list[Ending] = []
    async with anyio.create_task_group() as group:

        async def stop_on_cancel() -> None:
            await cancel.wait()
            stopped.append("cancelled")
            group.cancel_scope.cancel()

        async def stop_on_timeout() -> None:
            await anyio.sleep(timeout_s)
            stopped.append("timeout")
            group.cancel_scope.cancel()

        group.start_soon(stop_on_cancel)
        group.start_soon(stop_on_timeout)
        await work()
        group.cancel_scope.cancel()
        return "exited"
    return stopped[0] if stopped else "cancelled"


async def run_shell(
    command: str,
    folder: Path,
    fs: ConfinedFS,
    env: Mapping[str, str],
    timeout_s: float,
    cancel: CancelSignal,
    progress: Progress,
    sandbox: Sandbox | None = None,
) -> CommandOutcome:
    """Run ``command`` in ``folder`` as described in the module docstring,
    inside ``sandbox`` when given."""
    started = await anyio.to_thread.run_sync(
        lambda: launch(
            ["/bin/sh", "-c", command], roots=fs.roots, cwd=folder, inherit=env, sandbox=sandbox
        )
    )
    environment = {**started.env, "PWD": str(folder)}
    fd = await anyio.to_thread.run_sync(fs.open_directory, folder)
    try:
        process = await anyio.open_process(
            _supervised(started.argv, sandbox is not None and sandbox.dies_with_parent),
            cwd=f"/proc/self/fd/{fd}",
            pass_fds=(fd,),
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        raise ToolError(f"could not start the command: {exc}") from exc
    finally:
        os.close(fd)
    output = _Output(progress)

    async def until_drained() -> None:
        async with anyio.create_task_group() as group:
            drained = anyio.Event()

            async def pump() -> None:
                assert process.stdout is not None
                async for line in iter_lines(process.stdout, max_line=_KEEP_BYTES):
                    output.add(line)
                drained.set()

            group.start_soon(pump)
            await process.wait()
            with anyio.move_on_after(0.5):
                await drained.wait()
            if not drained.is_set():
                # Something the shell started still holds the output open.
                await _terminate_group(process)
                await drained.wait()

    try:
        status = await run_until_stopped(until_drained, cancel, timeout_s)
    finally:
        with anyio.CancelScope(shield=True):
            await _terminate_group(process)
            if process.returncode is None:
                await process.wait()
            await process.aclose()
    code = process.returncode
    if code is not None and code < 0:
        code = 128 - code
    return CommandOutcome(output.text(), code, status)
