"""Test tiers: every test is marked by the folder it lives in.

``unit`` (``tests/unit``: in-process, the fast lane), ``e2e`` (``tests/e2e``
and ``tests/acp``: the real server or agent as a child process),
``editors`` (``tests/editors``: real Neovim, Emacs and VS Code) and
``real_peers`` (``tests/real_peers``: real model servers). Select a tier
with ``-m``, e.g. ``pytest -m unit``; ``scripts/test.sh --fast`` runs the
``unit`` tier's in-process tests (not those marked ``process``, which start
child processes) after the static checks. Real VS Code tests share one
pytest-xdist worker (``xdist_group("vscode")``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# The fuzz suites run in the default test run: bounded, reproducible (the
# same examples every run, no example database written), never timed.
# HYPOTHESIS_PROFILE=explore draws new examples, ten times as many
# (tests.fakes.hostile.examples scales the suites' own counts).
settings.register_profile(
    "rhema",
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "explore", parent=settings.get_profile("rhema"), derandomize=False, max_examples=1000
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "rhema"))

_TIERS = {
    "unit": "unit",
    "e2e": "e2e",
    "acp": "e2e",
    "editors": "editors",
    "real_peers": "real_peers",
}
_HERE = Path(__file__).parent


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the xdist_group marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test with the tier of the top-level folder holding it."""
    for item in items:
        parts = Path(item.path).relative_to(_HERE).parts
        tier = _TIERS.get(parts[0]) if len(parts) > 1 else None
        if tier is None:
            raise pytest.UsageError(f"{item.nodeid}: not in a tier folder ({', '.join(_TIERS)})")
        item.add_marker(getattr(pytest.mark, tier))
        if parts[0] == "editors" and parts[1] == "vscode":
            # One worker runs every real VS Code test (pytest-xdist's
            # loadgroup): two code-servers and browsers at once on two cores
            # turn the tests' latency checks into a race for the CPU.
            item.add_marker(pytest.mark.xdist_group("vscode"))
