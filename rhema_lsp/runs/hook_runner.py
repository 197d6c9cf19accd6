"""Running one hook: a command, the event on its stdin, what it decided.

The rules every hook run keeps:

- **Through the spawn gate.** ``sh -c <command>`` is started by
  :func:`~rhema_lsp.tools.spawn.launch`: ``sh`` from the cleaned ``PATH``
  (no workspace entry), the environment scrubbed of provider keys and
  credentials. The user's hooks are the user's programs: they run outside
  the command sandbox, in the session folder, in a process group of their
  own, with ``CLAUDE_PROJECT_DIR`` (for copied scripts) and
  ``RHEMA_PROJECT_DIR`` set to it.
- **Bounded.** The event JSON is written to stdin and stdin closed; stdout
  and stderr are each kept up to :data:`OUTPUT_CAP` bytes and the rest read
  and dropped (a flood never fills memory or blocks the hook); at the
  timeout the whole group is killed, and so is whatever it left holding the
  pipes when it exits. Cancelling the turn kills it too.
- **Never a crash.** A hook that cannot start, times out, dies by a signal
  or exits with a status other than 0 and 2 is a :class:`HookRun` with a
  ``problem``, which the caller reports; only exit 2 blocks.

:meth:`HookRun.verdict` reads the decision the way Claude Code does: exit
2 blocks with stderr as the reason; otherwise a JSON stdout may say
``{"decision": "block", "reason"}``, ``{"continue": false, "stopReason"}``
or, for ``PreToolUse``, ``permissionDecision`` ``allow``/``deny``/``ask``
(top level or in ``hookSpecificOutput``, with ``permissionDecisionReason``);
``additionalContext`` (or, for prompt events, a plain-text stdout) is
context for the model.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import anyio
import anyio.abc
import anyio.to_thread

from rhema_lsp.runs.hook_config import Hook
from rhema_lsp.tools.errors import ToolError
from rhema_lsp.tools.spawn import launch

__all__ = ["OUTPUT_CAP", "HookRun", "Verdict", "run_hook", "run_hooks", "strongest"]

logger = logging.getLogger(__name__)

OUTPUT_CAP = 16_384
"""The bytes of a hook's stdout, and of its stderr, that are kept."""

_AFTER_EXIT = 1.0
"""Seconds the pipes may stay open after the hook exited (a child holding them)."""

Decision = Literal["block", "deny", "ask", "allow"]


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a hook decided (``None``: nothing), why, and context it gives."""

    decision: Decision | None = None
    reason: str = ""
    context: str = ""


@dataclass(frozen=True, slots=True)
class HookRun:
    """How one hook ran: its exit code (``None``: it did not exit by itself
    or did not start), its output (capped), and what went wrong."""

    hook: Hook
    code: int | None
    stdout: str = ""
    stderr: str = ""
    problem: str | None = None

    def verdict(self, plain_context: bool = False) -> Verdict:
        """The decision (see the module docstring); ``plain_context``: a
        stdout that is not JSON is context (prompt events)."""
        if self.code == 2:
            return Verdict("block", self.stderr.strip() or "blocked by a hook")
        if self.code != 0:
            return Verdict()
        text = self.stdout.strip()
        try:
            data: Any = json.loads(text) if text.startswith("{") else None
        except ValueError:
            data = None
        if not isinstance(data, dict):
            return Verdict(context=text if plain_context else "")
        specific = data.get("hookSpecificOutput")
        specific = specific if isinstance(specific, dict) else {}
        context = str(specific.get("additionalContext") or data.get("additionalContext") or "")
        permission = specific.get("permissionDecision", data.get("permissionDecision"))
        reason = specific.get("permissionDecisionReason", data.get("permissionDecisionReason"))
        if permission in ("allow", "deny", "ask"):
            return Verdict(permission, str(reason or data.get("reason") or ""), context)
        if data.get("continue") is False:
            return Verdict("block", str(data.get("stopReason") or "stopped by a hook"), context)
        decision = data.get("decision")
        if decision in ("block", "deny"):
            return Verdict("block", str(data.get("reason") or "blocked by a hook"), context)
        if decision in ("approve", "allow"):
            return Verdict("allow", str(data.get("reason") or ""), context)
        return Verdict(context=context)

    def report(self) -> str | None:
        """One line about a hook that failed (``None``: it did not)."""
        if self.problem is None and self.code in (0, 2):
            return None
        why = self.problem or f"exited with status {self.code}"
        detail = f": {self.stderr.strip()[:300]}" if self.stderr.strip() else ""
        return f"hook `{self.hook.command[:120]}` ({self.hook.source}) {why}{detail}"


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


async def _drain(stream: anyio.abc.ByteReceiveStream | None, kept: bytearray) -> None:
    if stream is None:
        return
    try:
        async for chunk in stream:
            room = OUTPUT_CAP - len(kept)
            if room > 0:
                kept.extend(chunk[:room])
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass


async def _feed(process: anyio.abc.Process, data: bytes) -> None:
    stdin = process.stdin
    if stdin is None:
        return
    try:
        await stdin.send(data)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        pass  # the hook did not read its stdin: that is its right
    finally:
        await stdin.aclose()


def _text(data: bytearray) -> str:
    return bytes(data).decode("utf-8", "replace")


async def run_hook(
    hook: Hook, event: Mapping[str, Any], cwd: Path, roots: Sequence[Path]
) -> HookRun:
    """Run ``hook`` with ``event`` on its stdin (see the module docstring)."""
    try:
        started = await anyio.to_thread.run_sync(
            lambda: launch(["sh", "-c", hook.command], roots=roots, cwd=cwd)
        )
        env = {**started.env, "CLAUDE_PROJECT_DIR": str(cwd), "RHEMA_PROJECT_DIR": str(cwd)}
        process = await anyio.open_process(
            started.argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except (ToolError, OSError) as exc:
        return HookRun(hook, None, problem=f"could not start ({exc})")
    out, err = bytearray(), bytearray()
    timed_out = False
    try:
        async with anyio.create_task_group() as group:
            drained = anyio.Event()

            async def drain_both() -> None:
                async with anyio.create_task_group() as inner:
                    inner.start_soon(_drain, process.stdout, out)
                    inner.start_soon(_drain, process.stderr, err)
                drained.set()

            group.start_soon(_feed, process, json.dumps(event).encode())
            group.start_soon(drain_both)
            with anyio.move_on_after(hook.timeout) as waited:
                await process.wait()
            timed_out = waited.cancelled_caught
            _kill_group(process.pid)  # what it left behind (or itself, at the timeout)
            with anyio.move_on_after(_AFTER_EXIT):
                await drained.wait()
            group.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            _kill_group(process.pid)
            await process.wait()
            await process.aclose()
    code = process.returncode
    if timed_out:
        return HookRun(hook, None, _text(out), _text(err), f"timed out after {hook.timeout:g} s")
    if code is not None and code < 0:
        name = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
        return HookRun(hook, None, _text(out), _text(err), f"was killed by {name}")
    return HookRun(hook, code, _text(out), _text(err))


async def run_hooks(
    hooks: Sequence[Hook], event: Mapping[str, Any], cwd: Path, roots: Sequence[Path]
) -> list[HookRun]:
    """Run ``hooks`` side by side on ``event``; each failure logged."""
    runs: list[HookRun | None] = [None] * len(hooks)

    async def one(index: int, hook: Hook) -> None:
        runs[index] = await run_hook(hook, event, cwd, roots)

    async with anyio.create_task_group() as group:
        for index, hook in enumerate(hooks):
            group.start_soon(one, index, hook)
    done = [run for run in runs if run is not None]
    for run in done:
        failed = run.report()
        if failed is not None:
            logger.warning("%s: %s", event.get("hook_event_name"), failed)
    return done


def strongest(runs: Sequence[HookRun], plain_context: bool = False) -> Verdict:
    """The decision of several hooks: block or deny over ask over allow,
    their reasons and contexts joined."""
    verdicts = [run.verdict(plain_context) for run in runs]
    context = "\n".join(v.context for v in verdicts if v.context)
    for decision in ("block", "deny", "ask", "allow"):
        reasons = [v.reason for v in verdicts if v.decision == decision]
        if reasons:
            return Verdict(decision, "\n".join(r for r in reasons if r), context)
    return Verdict(context=context)
