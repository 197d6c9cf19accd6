"""Test tiers: every test is marked by the folder it lives in.

``unit`` (``tests/unit``: in-process, the fast lane), ``e2e`` (``tests/e2e``
and ``tests/acp``: the real server or agent as a child process),
``editors`` (``tests/editors``: real Neovim, Emacs and VS Code) and
``real_peers`` (``tests/real_peers``: real model servers). Select a tier
with ``-m``, e.g. ``pytest -m unit``; ``scripts/test.sh --fast`` runs the
``unit`` tier after the static checks.
"""

from __future__ import annotations

from pathlib import Path

import pytest

_TIERS = {
    "unit": "unit",
    "e2e": "e2e",
    "acp": "e2e",
    "editors": "editors",
    "real_peers": "real_peers",
}
_HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test with the tier of the top-level folder holding it."""
    for item in items:
        parts = Path(item.path).relative_to(_HERE).parts
        tier = _TIERS.get(parts[0]) if len(parts) > 1 else None
        if tier is None:
            raise pytest.UsageError(f"{item.nodeid}: not in a tier folder ({', '.join(_TIERS)})")
        item.add_marker(getattr(pytest.mark, tier))
