"""A repository's ``.vscode/settings.json`` cannot reconfigure the agent: in
the VS Code extension's manifest every setting that starts a program or
widens what runs unasked has a scope a workspace cannot set (``machine`` or
``application``, never ``machine-overridable``), and the extension lists the
same settings as read from the user's settings only."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

EXTENSION = Path(__file__).resolve().parents[2] / "editors" / "vscode"

USER_ONLY_SCOPES = ("machine", "application")

STARTS_OR_WIDENS = re.compile(
    r"^rhema\.(server\..+|commandAllowlist|languageServers|mcp.*|hooks.*|.*[aA]llow.*)$"
)
"""The names of settings that start a program (the server, language servers,
MCP servers, hooks) or widen what runs unasked (an allowlist)."""


def properties() -> dict[str, Any]:
    manifest = json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))
    configuration = manifest["contributes"]["configuration"]
    sections = configuration if isinstance(configuration, list) else [configuration]
    found: dict[str, Any] = {}
    for section in sections:
        found.update(section["properties"])
    return found


def test_every_program_starting_or_allow_widening_setting_is_user_only() -> None:
    guarded = {name: spec for name, spec in properties().items() if STARTS_OR_WIDENS.match(name)}
    assert {"rhema.server.command", "rhema.server.python", "rhema.commandAllowlist"} <= set(guarded)
    for name, spec in guarded.items():
        assert spec.get("scope") in USER_ONLY_SCOPES, f"{name} may be set by a workspace"


def test_the_extension_reads_the_same_settings_from_user_settings_only() -> None:
    source = (EXTENSION / "src" / "settings.ts").read_text(encoding="utf-8")
    listed = re.search(r"export const USER_ONLY: readonly string\[\] = \[([^\]]*)\]", source)
    assert listed is not None
    user_only = {f"rhema.{name}" for name in re.findall(r"'([^']+)'", listed.group(1))}
    scoped = {name for name, spec in properties().items() if spec.get("scope") in USER_ONLY_SCOPES}
    assert user_only == scoped
