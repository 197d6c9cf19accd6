"""Benchmark: the time the command sandbox adds to a short command.

``run_command`` runs ``true`` through the whole tool (spawn gate, watchdog,
output pump) twice per round, once sandboxed (bubblewrap, as ``agent`` mode
runs it) and once unconfined (allow-listed with the sandbox ``off``), in
the same run, alternating so load from elsewhere on the machine hits both
alike. Figures: p50 and p90 of each, and what the sandbox adds at p50.
Target: at most 30 ms added at p50.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from pathlib import Path

import anyio

from rhema_lsp.engine import ToolCall, ToolContext
from rhema_lsp.tools import MemoryEditor, WorkspaceTools
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

        async def measure() -> tuple[list[float], list[float]]:
            await _once(boxed, base)
            await _once(plain, base)  # warm-up both
            boxed_ms, plain_ms = [], []
            for _ in range(RUNS):
                boxed_ms.append(await _once(boxed, base))
                plain_ms.append(await _once(plain, base))
            return boxed_ms, plain_ms

        boxed_ms, plain_ms = anyio.run(measure)
        assert editor.asked == []  # neither side asked
    finally:
        shutil.rmtree(base, ignore_errors=True)
    rows: list[Row] = []
    for label, share in (("p50", 0.5), ("p90", 0.9)):
        sandboxed, unconfined = _quantile(boxed_ms, share), _quantile(plain_ms, share)
        rows.append(
            (
                f"run_command `true` sandboxed {label}, ms (vs unconfined)",
                sandboxed,
                unconfined,
                sandboxed / unconfined,
                0.0,
            )
        )
    added = _quantile(boxed_ms, 0.5) - _quantile(plain_ms, 0.5)
    rows.append(("  added by the sandbox p50, ms [value]", added, 0.0, 0.0, TARGET_ADDED_MS))
    for row in rows:
        print(row)
    return rows


if __name__ == "__main__":
    main()
