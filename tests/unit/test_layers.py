"""Imports point down only: each layer of ``rhema_lsp`` loads, in a fresh
interpreter, none of the layers beside or above it, and only the server
loads pygls (and only the ACP agent the ACP SDK). ``rhema_lsp.vocabulary``
and ``rhema_lsp.lazy`` (the lazy package roots' loader) are the floor under
them all: any layer may load them, and they load none."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.process  # starts child processes

FLOOR = "vocabulary"
LAZY = "lazy"
FLOORS = {FLOOR, LAZY}

LAYERS = [
    FLOOR,
    LAZY,
    "engine",
    "jsonrpc",
    "contract",
    "providers",
    "tools",
    "mcp",
    "language",
    "sessions",
    "completion",
    "runs",
    "acp",
    "server",
    "headless",
    "clients",
    "cli",
]
ALLOWED = {
    FLOOR: set(),
    LAZY: set(),
    "engine": set(),
    "jsonrpc": set(),
    "contract": {"engine"},
    "providers": {"engine"},
    "tools": {"engine"},
    "mcp": {"engine", "tools"},
    "language": {"engine", "jsonrpc", "tools"},
    "sessions": {"engine"},
    "completion": {"engine", "providers", "tools"},
    "runs": {"engine", "contract", "tools", "mcp", "sessions"},
    "acp": {
        "engine",
        "jsonrpc",
        "contract",
        "providers",
        "tools",
        "mcp",
        "language",
        "sessions",
        "runs",
    },
    "server": {
        "engine",
        "jsonrpc",
        "contract",
        "providers",
        "completion",
        "tools",
        "mcp",
        "language",
        "sessions",
        "runs",
    },
    "headless": {"engine", "jsonrpc", "contract", "tools"},
    "clients": {"engine", "contract", "providers", "tools", "mcp", "runs"},
    "cli": {
        "engine",
        "jsonrpc",
        "contract",
        "providers",
        "completion",
        "tools",
        "mcp",
        "language",
        "sessions",
        "runs",
        "acp",
        "server",
        "headless",
    },
}


def loaded_after_import(module: str) -> set[str]:
    probe = (
        "import importlib, json, pkgutil, sys\n"
        f"root = importlib.import_module({module!r})\n"
        "for info in pkgutil.walk_packages(getattr(root, '__path__', []), root.__name__ + '.'):\n"
        "    importlib.import_module(info.name)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    output = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True
    ).stdout
    return set(json.loads(output))


@pytest.mark.parametrize("layer", LAYERS)
def test_a_layer_loads_only_the_layers_below_it(layer: str) -> None:
    loaded = loaded_after_import(f"rhema_lsp.{layer}")
    layers_loaded = {
        name.split(".")[1] for name in loaded if name.startswith("rhema_lsp.") and "." in name
    }
    floors = FLOORS - {layer} if layer not in FLOORS else set()
    assert layers_loaded - {layer} <= ALLOWED[layer] | floors
    if layer not in ("server", "cli"):
        assert not any(name == "pygls" or name.startswith("pygls.") for name in loaded)
    if layer not in ("acp", "cli"):
        assert "acp" not in loaded
