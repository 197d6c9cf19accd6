"""The engine is pure: it imports no other layer of the project and no I/O
library, checked by importing it in a fresh interpreter. (anyio, which the
engine uses for cancellation, brings asyncio and with it ``socket``; the
engine itself opens nothing.)"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import rhema_lsp.engine

pytestmark = pytest.mark.process  # starts child processes

FORBIDDEN = (
    "pygls",
    "lsprotocol",
    "httpx",
    "httpcore",
    "sqlite3",
    "_sqlite3",
    "rhema_lsp.providers",
    "rhema_lsp.tools",
    "rhema_lsp.sessions",
    "rhema_lsp.server",
    "rhema_lsp.cli",
)


def test_the_engine_imports_no_io_library_and_no_other_layer() -> None:
    probe = (
        "import json, sys\n"
        "before = set(sys.modules)\n"
        "from rhema_lsp.engine import *\n"  # the root is lazy: load what it exports
        "print(json.dumps(sorted(set(sys.modules) - before)))\n"
    )
    output = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True
    ).stdout
    loaded = json.loads(output)
    offenders = [
        name for name in loaded if any(name == f or name.startswith(f + ".") for f in FORBIDDEN)
    ]
    assert offenders == []
    assert "rhema_lsp.engine.agent" in loaded  # the probe really imported the engine


def test_the_public_surface_is_exactly_what_is_meant() -> None:
    exported = set(rhema_lsp.engine.__all__)
    assert {"Agent", "run_turn", "resume", "ToolResolver", "ModelProvider", "EventSink"} <= exported
    for name in exported:
        assert hasattr(rhema_lsp.engine, name), name
    public = {n for n in vars(rhema_lsp.engine) if not n.startswith("_")}
    submodules = {
        "agent",
        "budget",
        "calls",
        "compaction",
        "errors",
        "events",
        "ids",
        "images",
        "messages",
        "output",
        "provider",
        "request",
        "resume",
        "tools",
        "truncate",
    }
    helpers = {"annotations", "TYPE_CHECKING", "lazy_root"}  # the lazy root's own (rhema_lsp.lazy)
    assert public - exported - submodules - helpers == set()
