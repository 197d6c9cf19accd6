"""Benchmark: the ``grep`` tool against ``rg`` run directly, on a generated
20,000-file tree under /tmp (never in the repository).

Both run the same ripgrep command line (``--json`` and the tool's flags) on
the same tree in the same run, after a warm-up so the page cache is equally
hot; runs alternate between the two and each figure is the median. Target: tool / rg <= 1.5.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import anyio

from rhema_lsp.engine import ToolCall, ToolContext
from rhema_lsp.tools import MemoryEditor, WorkspaceTools, ripgrep_binary
from rhema_lsp.tools.ripgrep import COMMON_FLAGS

FILES = 20_000
PER_DIR = 100
RUNS = 7
TARGET = 1.5

Row = tuple[str, float, float, float, float]


def generate(root: Path) -> None:
    """Write ``FILES`` small source files; every 400th holds ``rare_needle``."""
    (root / ".gitignore").write_text("*.log\n")
    body = "".join(f"    value_{n} = compute(item, {n})  # common_word\n" for n in range(30))
    for index in range(FILES):
        folder = root / f"pkg{index // PER_DIR:03d}" / f"sub{index % 4}"
        folder.mkdir(parents=True, exist_ok=True)
        extra = "    rare_needle = True\n" if index % 400 == 0 else ""
        (folder / f"mod{index}.py").write_text(f"def f{index}(item):\n{body}{extra}")


def rg_direct(root: Path, pattern: str) -> float:
    args = [ripgrep_binary(), "--json", *COMMON_FLAGS, "--case-sensitive", "--regexp", pattern]
    start = time.perf_counter()
    subprocess.run([*args, "--", "."], cwd=root, capture_output=True, check=False)
    return time.perf_counter() - start


def tool_time(tools: WorkspaceTools, root: Path, pattern: str) -> float:
    async def once() -> float:
        call = ToolCall(id="b", name="grep", args={"pattern": pattern})
        start = time.perf_counter()
        result = await tools.resolve(call, ToolContext(cwd=root))
        elapsed = time.perf_counter() - start
        assert not result.is_error, result.content
        return elapsed

    return anyio.run(once)


def main() -> list[Row]:
    """Generate the tree, time both sides, print and return the rows."""
    base = Path(tempfile.mkdtemp(prefix="rhema-bench-grep-"))
    try:
        generate(base)
        tools = WorkspaceTools([base], base, "ask", MemoryEditor([base]))
        rows: list[Row] = []
        for label, pattern in [
            ("rare pattern (50 matches)", "rare_needle"),
            ("common pattern (capped)", "common_word"),
            ("no match", "absent_[0-9]+zz"),
        ]:
            rg_direct(base, pattern)
            tool_time(tools, base, pattern)  # warm-up both
            # Interleaved, so load from elsewhere on the machine hits both alike.
            direct_times, tool_times = [], []
            for _ in range(RUNS):
                direct_times.append(rg_direct(base, pattern))
                tool_times.append(tool_time(tools, base, pattern))
            direct = statistics.median(direct_times)
            tool = statistics.median(tool_times)
            rows.append((f"grep {label}, s", tool, direct, tool / direct, TARGET))
    finally:
        shutil.rmtree(base)
    print(f"{'figure':<40} {'tool':>9} {'rg':>9} {'ratio':>7} {'target':>7}")
    for figure, value, baseline, ratio, target in rows:
        print(f"{figure:<40} {value:>9.4f} {baseline:>9.4f} {ratio:>7.2f} {target:>7.2f}")
    return rows


if __name__ == "__main__":
    main()
