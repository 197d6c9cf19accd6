"""``python -m bench``: run every benchmark and print one table.

Each benchmark module's ``main()`` measures its figures next to a baseline
taken in the same run and returns rows ``(figure, value, baseline, ratio,
target)``. This runner collects them (the modules' own printing is kept out
of the way) and prints one Markdown table with the date and machine, ready
for the README. ``--only NAME`` runs a subset.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import importlib
import io
import os
import platform
import sys
import time
from typing import Any

MODULES = (
    "providers_stream",
    "provider_limits",
    "server_stream",
    "acp_stream",
    "server_startup",
    "acp_startup",
    "grep_tree",
    "edit_large",
    "sessions_commit",
    "context_cost",
    "checkpoints_store",
    "edit_diagnostics",
    "inline_completion",
    "sandbox",
)


def _cell(value: Any) -> str:
    # None, "", NaN and a 0 baseline all mean "no such figure" in the modules' rows
    if value is None or value == "" or value != value or value == 0:
        return ""
    if isinstance(value, float):
        return f"{value:,.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return str(value)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    return (
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores, {cpu}, "
        f"Python {platform.python_version()}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--only", action="append", choices=MODULES, help="run just these")
    args = parser.parse_args(argv)
    names = args.only or list(MODULES)
    print(f"rhema-lsp benchmarks, {datetime.date.today().isoformat()}, {machine()}\n")
    print("| benchmark | figure | value | baseline (same run) | ratio | target |")
    print("|---|---|---|---|---|---|")
    failed = 0
    for name in names:
        started = time.monotonic()
        module = importlib.import_module(f"bench.{name}")
        quiet = io.StringIO()
        try:
            with contextlib.redirect_stdout(quiet):
                rows = module.main()
        except Exception as exc:  # noqa: BLE001 -- one broken benchmark must not hide the others
            print(f"| {name} | failed: {type(exc).__name__}: {exc} | | | | |")
            failed += 1
            continue
        for figure, value, baseline, ratio, target in rows:
            cells = [name, figure, _cell(value), _cell(baseline), _cell(ratio), _cell(target)]
            print("| " + " | ".join(cells) + " |")
        sys.stdout.flush()
        print(f"<!-- {name}: {time.monotonic() - started:.0f} s -->", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
