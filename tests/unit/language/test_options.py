"""The options that keep the agent's language servers from running the
repository's code: rust-analyzer without build scripts, proc-macros or
``cargo check``; typescript-language-server on the TypeScript beside it,
never the workspace's, with no plugins and no type acquisition; the user's
``languageServers`` ``initializationOptions`` merged over them (the way to
turn execution back on)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from rhema_lsp.language.connection import Connection
from rhema_lsp.language.options import initialization_options
from rhema_lsp.language.pool import AgentLanguages
from rhema_lsp.mcp.userfile import user_language_options
from rhema_lsp.runs.settings import Settings
from rhema_lsp.tools import MemoryEditor

pytestmark = pytest.mark.process  # starts child processes

FAKE = Path(__file__).resolve().parents[2] / "fakes" / "language_server.py"
SAFE_RUST = {
    "cargo": {"buildScripts": {"enable": False}},
    "procMacro": {"enable": False},
    "checkOnSave": False,
}


def rust_analyzer(tmp_path: Path, record: Path) -> Path:
    """A fake ``rust-analyzer`` outside the workspace (a wrapper named so)."""
    program = tmp_path / "bin" / "rust-analyzer"
    program.parent.mkdir()
    program.write_text(f"#!/bin/sh\nexec {sys.executable} {FAKE} ok {record}\n")
    program.chmod(0o755)
    return program


async def initialize_params(
    tmp_path: Path, options: dict[str, Any] | None, settings: Settings | None = None
) -> dict[str, Any]:
    root = tmp_path / "crate"
    root.mkdir()
    (root / "main.rs").write_text("fn main() {}\n")
    record = tmp_path / "record.jsonl"
    program = rust_analyzer(tmp_path, record)
    languages = AgentLanguages(
        MemoryEditor([root]),
        lambda: [root],
        {"rust": [str(program)]},
        options=settings.language_options() if settings else options,
    )
    uri = (root / "main.rs").as_uri()
    try:
        answer = await languages.request(
            "textDocument/definition",
            {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 3}},
            uri=uri,
        )
    finally:
        await languages.aclose()
    assert answer is not None
    started: dict[str, Any] = json.loads(record.read_text())
    params: dict[str, Any] = started["initialize"]
    return params


async def test_rust_analyzer_runs_no_build_script_or_proc_macro(tmp_path: Path) -> None:
    params = await initialize_params(tmp_path, None)
    assert params["initializationOptions"] == SAFE_RUST


async def test_the_users_options_turn_execution_back_on(tmp_path: Path) -> None:
    settings = Settings.model_validate(
        {
            "languageServers": {
                "rust": {
                    "command": ["rust-analyzer"],
                    "initializationOptions": {
                        "cargo": {"buildScripts": {"enable": True}},
                        "procMacro": {"enable": True},
                    },
                }
            }
        }
    )
    params = await initialize_params(tmp_path, None, settings)
    assert params["initializationOptions"] == {
        "cargo": {"buildScripts": {"enable": True}},
        "procMacro": {"enable": True},
        "checkOnSave": False,
    }


def test_rust_analyzers_configuration_requests_get_the_same_options(tmp_path: Path) -> None:
    program = rust_analyzer(tmp_path, tmp_path / "record.jsonl")
    server = Connection("rust-analyzer", [str(program)], tmp_path)
    server._launch()
    items = {"items": [{"section": "rust-analyzer"}, {"section": "files"}, {}]}
    assert server._configuration(items) == [SAFE_RUST, None, None]


def _typescript_install(prefix: Path) -> Path:
    """``npm install -g``'s layout under ``prefix``: the server's bin link and
    a TypeScript beside it."""
    package = prefix / "lib" / "node_modules" / "typescript-language-server" / "lib"
    package.mkdir(parents=True)
    (package / "cli.mjs").write_text("#!/usr/bin/env node\n")
    (package / "cli.mjs").chmod(0o755)
    lib = prefix / "lib" / "node_modules" / "typescript" / "lib"
    lib.mkdir(parents=True)
    (lib / "tsserver.js").write_text("")
    link = prefix / "bin" / "typescript-language-server"
    link.parent.mkdir(parents=True)
    link.symlink_to(package / "cli.mjs")
    return link


def test_typescript_runs_the_typescript_beside_it_not_the_workspaces(tmp_path: Path) -> None:
    root = tmp_path / "web"
    (root / "node_modules" / "typescript" / "lib").mkdir(parents=True)
    (root / "node_modules" / "typescript" / "lib" / "tsserver.js").write_text("evil()")
    link = _typescript_install(tmp_path / "usr")
    options = initialization_options((str(link), "--stdio"), [root])
    assert options == {
        "plugins": [],
        "disableAutomaticTypingAcquisition": True,
        "tsserver": {"path": str(tmp_path / "usr" / "lib" / "node_modules" / "typescript" / "lib")},
    }


def test_a_typescript_server_inside_the_workspace_is_not_given_the_workspaces_typescript(
    tmp_path: Path,
) -> None:
    root = tmp_path / "web"
    link = _typescript_install(root)
    options = initialization_options((str(link), "--stdio"), [root])
    assert options == {"plugins": [], "disableAutomaticTypingAcquisition": True}


def test_other_servers_get_no_options(tmp_path: Path) -> None:
    assert initialization_options(("/usr/bin/gopls",), [tmp_path]) is None
    assert initialization_options(("/usr/bin/gopls",), [tmp_path], {"a": 1}) == {"a": 1}


def test_the_user_file_gives_options_too(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    entry = {"command": ["rust-analyzer"], "initializationOptions": {"procMacro": {"enable": True}}}
    config.write_text(
        json.dumps({"languageServers": {"rust": entry, "go": {"command": ["gopls"]}}})
    )
    assert user_language_options(config) == {"rust": {"procMacro": {"enable": True}}}
