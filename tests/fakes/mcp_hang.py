"""An "MCP server" that never answers ``initialize``: ``python -m
tests.fakes.mcp_hang``. It imports nothing heavy, so it is running (and has
appended its pid to ``$FAKE_MCP_MARKS/starts``) well before any start bound;
it ends when its stdin closes."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def main() -> None:
    marks = Path(os.environ.get("FAKE_MCP_MARKS", "."))
    with (marks / "starts").open("a") as handle:
        handle.write(f"{os.getpid()}\n")
    sys.stdin.read()


if __name__ == "__main__":
    main()
