"""``python -m rhema_lsp.contract [--check]``: write (or check) every generated
file, relative to the current directory (the repository).

The contract's own files (:func:`rhema_lsp.contract.generate.artefacts`) and
the editor clients' tables made from the tools', commands' and settings'
facts (:func:`rhema_lsp.clients.tables.artefacts`). The tables come from
layers above the contract, so this program, and nothing the package exports,
imports them, when it runs.
"""

from __future__ import annotations

import sys
from pathlib import Path

from rhema_lsp.contract.generate import Artefact, artefacts


def every_artefact() -> list[Artefact]:
    """Every generated file: the contract's, then the clients' tables."""
    from rhema_lsp.clients.tables import artefacts as client_tables

    return [*artefacts(), *client_tables()]


def main(argv: list[str]) -> int:
    root = Path.cwd()
    made = every_artefact()
    stale = list(dict.fromkeys(a.path for a in made if not a.is_current(root)))
    if "--check" in argv:
        for path in stale:
            print(f"{path} is not current: run `python -m rhema_lsp.contract`", file=sys.stderr)
        return 1 if stale else 0
    for artefact in made:
        artefact.write(root)
    for path in stale:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
