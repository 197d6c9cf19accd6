"""What diagnostics after an edit cost: an ``edit_file`` with the agent's own
basedpyright answering (warm), against the same edit with no language
server, side by side in one run; and the RSS the language server adds.

Each edit flips a call in ``pkg/use.py`` between ``greet("Ann")`` and
``greet(42)``, so every edit introduces or removes an error and waits for
the server's answer for the edited version (the worst case: an edit that
changes nothing about the problems returns as soon as the server answered
too). Figures: p50 and p90 wall time of 20 edits each; the server's RSS
(its process tree) after the run; and an edit of ``README.md`` (a file no
language server serves) with basedpyright running, against the same edit
with no language service: it must wait for nothing. Run: ``python -m bench.edit_diagnostics``
(needs ``basedpyright-langserver`` on ``PATH``: ``pip install basedpyright``).
"""

from __future__ import annotations

import asyncio
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from rhema_lsp.engine import ToolCall, ToolContext
from rhema_lsp.language import AgentLanguages
from rhema_lsp.tools import DiskEditor, WorkspaceTools

EDITS = 20
_CORE = 'def greet(name: str) -> str:\n    return "Hello, " + name\n'
_USE = 'from pkg.core import greet\n\nprint(greet("Ann"))\n'


def _workspace(folder: str) -> Path:
    """The two-file package in ``folder``, whose real path is returned."""
    root = Path(folder).resolve()
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "core.py").write_text(_CORE)
    (root / "pkg" / "use.py").write_text(_USE)
    (root / "README.md").write_text('# pkg\n\nCall `greet("Ann")`.\n')
    return root


def _rss_kib(pid: int) -> int:
    """The resident set of ``pid`` and its children, in KiB."""
    total = 0
    pending = [pid]
    while pending:
        current = pending.pop()
        try:
            status = Path(f"/proc/{current}/status").read_text()
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
        pending.extend(int(child) for child in children)
    return total


async def _edits(tools: WorkspaceTools, path: str = "pkg/use.py") -> list[float]:
    times: list[float] = []
    texts = ('greet("Ann")', "greet(42)")
    for n in range(EDITS):
        old, new = texts[n % 2], texts[(n + 1) % 2]
        call = ToolCall(
            id=f"e{n}",
            name="edit_file",
            args={"path": path, "old_text": old, "new_text": new},
        )
        started = time.perf_counter()
        result = await tools.resolve(call, ToolContext())
        times.append((time.perf_counter() - started) * 1000)
        assert not result.is_error, result.content
    return times


Row = tuple[str, Any, Any, Any, Any]


def _p90(times: list[float]) -> float:
    return sorted(times)[int(len(times) * 0.9) - 1]


async def measure() -> list[Row]:
    if shutil.which("basedpyright-langserver") is None:
        raise SystemExit("basedpyright-langserver is not on PATH: pip install basedpyright")
    with tempfile.TemporaryDirectory() as plain_dir, tempfile.TemporaryDirectory() as lsp_dir:
        plain_root, lsp_root = _workspace(plain_dir), _workspace(lsp_dir)
        plain = WorkspaceTools([plain_root], plain_root, "edit", DiskEditor([plain_root]))
        editor = DiskEditor([lsp_root])
        languages = AgentLanguages(editor, lambda: [lsp_root])
        checked = WorkspaceTools(
            [lsp_root], lsp_root, "edit", editor, language=languages, diagnostics_wait=5.0
        )
        try:
            warm = await checked.resolve(
                ToolCall(id="w", name="diagnostics", args={"path": "pkg/use.py"}), ToolContext()
            )
            assert not warm.is_error, warm.content
            await _edits(checked)  # warm: the server has analysed both states
            alone = await _edits(plain)
            with_diagnostics = await _edits(checked)
            readme_alone = await _edits(plain, "README.md")
            readme = await _edits(checked, "README.md")
            pids = [status.pid for status in languages.status() if status.pid]
            rss = sum(_rss_kib(pid) for pid in pids)
        finally:
            await languages.aclose()
    p50, base50 = statistics.median(with_diagnostics), statistics.median(alone)
    p90, base90 = _p90(with_diagnostics), _p90(alone)
    other, other_base = statistics.median(readme), statistics.median(readme_alone)
    return [
        ("edit_file + diagnostics p50, ms (vs the edit alone)", p50, base50, p50 / base50, ""),
        ("edit_file + diagnostics p90, ms (vs the edit alone)", p90, base90, p90 / base90, ""),
        ("diagnostics add to an edit p50, ms", p50 - base50, "", "", "< 1,500 (the wait)"),
        ("basedpyright RSS after the run, MiB", rss / 1024, "", "", ""),
        (
            "edit_file README.md, basedpyright running, p50 ms (vs no server)",
            other,
            other_base,
            other / other_base,
            "< 1,000 more",
        ),
    ]


def main() -> list[Row]:
    """Measure and print the figures; the rows for ``python -m bench``."""
    rows = asyncio.run(measure())
    for figure, value, baseline, _ratio, _target in rows:
        shown = f"{value:,.1f}" + (f" (alone {baseline:,.1f})" if baseline != "" else "")
        print(f"{figure:<52} {shown}")
    return rows


if __name__ == "__main__":
    main()
