"""An "MCP server" that never answers ``initialize``: ``python -m
tests.fakes.mcp_hang``. It imports nothing heavy, so it is running (and has
appended its pid to ``$FAKE_MCP_MARKS/starts``) well before any start bound;
it ends when its stdin closes, unless ``FAKE_HANG_STUBBORN`` is set: then it
ignores that and ``SIGTERM`` (only ``SIGKILL`` ends it)."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def entry(marks: Path, start_timeout: float = 2) -> dict[str, object]:
    """An ``mcpServers`` entry that runs this server (it fails within ``start_timeout``)."""
    return {
        "command": sys.executable,
        "args": ["-m", "tests.fakes.mcp_hang"],
        "env": {"FAKE_MCP_MARKS": str(marks), "PYTHONPATH": str(ROOT)},
        "startTimeout": start_timeout,
    }


def main() -> None:
    marks = Path(os.environ.get("FAKE_MCP_MARKS", "."))
    with (marks / "starts").open("a") as handle:
        handle.write(f"{os.getpid()}\n")
    if os.environ.get("FAKE_HANG_STUBBORN"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        while True:
            time.sleep(60)
    sys.stdin.read()


if __name__ == "__main__":
    main()
