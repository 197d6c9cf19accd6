"""``python -m rhema_lsp.contract [--check]``: write (or check) every file made
from the contract, relative to the current directory (the repository)."""

from __future__ import annotations

import sys
from pathlib import Path

from rhema_lsp.contract.generate import artefacts


def main(argv: list[str]) -> int:
    root = Path.cwd()
    stale = [a.path for a in artefacts() if not a.is_current(root)]
    if "--check" in argv:
        for path in stale:
            print(f"{path} is not current: run `python -m rhema_lsp.contract`", file=sys.stderr)
        return 1 if stale else 0
    for artefact in artefacts():
        artefact.write(root)
    for path in stale:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
