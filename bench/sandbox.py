"""Benchmark: the time the command sandbox adds to a short command.

``run_command`` runs ``true`` through the whole tool (spawn gate, output
pump; unconfined, the watchdog shell too) three times per round: sandboxed
as this process runs it (bubblewrap; as root, entering the pids cgroup
too), sandboxed as a server not running as root does (the process limit by
rlimit, no cgroup), and unconfined (allow-listed with the sandbox ``off``),
in the same run, alternating so load from elsewhere on the machine hits all
alike. Figures: p50 and p90, and what the sandbox adds at p50. Target: at
most 30 ms added at p50. A sandboxed command starts no watchdog shell (its
``bwrap`` dies with the server) and sets its process limit in its own
shell, so it can take less than an unconfined one; the last rows are
bubblewrap alone, in the same run: ``/bin/sh -c true`` started by
``subprocess`` in the sandbox (no cgroup) and without.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import anyio

from rhema_lsp.engine import ToolCall, ToolContext
from rhema_lsp.tools import MemoryEditor, WorkspaceTools, sandbox
from rhema_lsp.tools.command_policy import CommandPolicy
from rhema_lsp.tools.sandbox import availability

RUNS = 41
TARGET_ADDED_MS = 30.0

Row = tuple[str, float, float, float, float]


async def _once(tools: WorkspaceTools, root: Path) -> float:
    call = ToolCall(id="b", name="run_command", args={"command": "true"})
    start = time.perf_counter()
    result = await tools.resolve(call, ToolContext(cwd=root))
    elapsed = time.perf_counter() - start
    assert not result.is_error, result.content
    return elapsed * 1000


def _quantile(values: list[float], share: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(share * 100) - 1]


def main() -> list[Row]:
    """Time both sides, print and return the rows."""
    found = availability()
    if not found.available:
        raise RuntimeError(f"no sandbox on this machine: {found.reason}")
    base = Path(tempfile.mkdtemp(prefix="rhema-bench-sandbox-"))
    try:
        editor = MemoryEditor([base])
        boxed = WorkspaceTools([base], base, "agent", editor, commands=CommandPolicy("auto"))
        plain = WorkspaceTools(
            [base], base, "agent", editor, command_allowlist=["true"], commands=CommandPolicy("off")
        )

        names = vars(sandbox)  # where wrap() looks the cgroup up
        limit = names["pids_cgroup"]

        async def user_once() -> float:
            names["pids_cgroup"] = lambda: None
            try:
                return await _once(boxed, base)
            finally:
                names["pids_cgroup"] = limit

        async def measure() -> tuple[list[float], list[float], list[float]]:
            await _once(boxed, base)
            await user_once()
            await _once(plain, base)  # warm-up all
            boxed_ms, user_ms, plain_ms = [], [], []
            for _ in range(RUNS):
                boxed_ms.append(await _once(boxed, base))
                user_ms.append(await user_once())
                plain_ms.append(await _once(plain, base))
            return boxed_ms, user_ms, plain_ms

        boxed_ms, user_ms, plain_ms = anyio.run(measure)
        assert editor.asked == []  # neither side asked
        bare_boxed, bare_plain = _bare(base, found.program or "")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    rows: list[Row] = []
    who = "as root (pids cgroup)" if os.geteuid() == 0 else "this user"
    for name, times in ((who, boxed_ms), ("not root (rlimit)", user_ms)):
        for label, share in (("p50", 0.5), ("p90", 0.9)):
            sandboxed, unconfined = _quantile(times, share), _quantile(plain_ms, share)
            rows.append(
                (
                    f"run_command `true` sandboxed, {name}, {label}, ms (vs unconfined)",
                    sandboxed,
                    unconfined,
                    sandboxed / unconfined,
                    0.0,
                )
            )
        added = _quantile(times, 0.5) - _quantile(plain_ms, 0.5)
        rows.append((f"  added p50, {name}, ms [value]", added, 0.0, 0.0, TARGET_ADDED_MS))
    boxed50, plain50 = _quantile(bare_boxed, 0.5), _quantile(bare_plain, 0.5)
    rows.append(
        (
            "bubblewrap alone: `/bin/sh -c true` in it, p50, ms (vs without)",
            boxed50,
            plain50,
            boxed50 / plain50,
            0.0,
        )
    )
    for row in rows:
        print(row)
    return rows


def _bare(root: Path, program: str) -> tuple[list[float], list[float]]:
    """``/bin/sh -c true`` started by ``subprocess``, in the sandbox (its
    whole command line, no cgroup) and without, interleaved."""
    names = vars(sandbox)
    limit = names["pids_cgroup"]
    names["pids_cgroup"] = lambda: None
    try:
        shell = ["/bin/sh", "-c", "true"]
        boxed = sandbox.Sandbox(program).wrap(shell, roots=[root], cwd=root, env=os.environ)
    finally:
        names["pids_cgroup"] = limit
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(RUNS):
        for argv, into in ((boxed, times[0]), (shell, times[1])):
            start = time.perf_counter()
            subprocess.run(argv, check=True)
            into.append((time.perf_counter() - start) * 1000)
    return times


if __name__ == "__main__":
    main()
