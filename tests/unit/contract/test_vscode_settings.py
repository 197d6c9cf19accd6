"""The VS Code extension's settings (``contributes.configuration`` of
``package.json``) say what the server's settings model says: each
``rhema.*`` setting but the extension's own is a server setting, of the
same type, with the same choices, bounds and default (``null`` or ``""``
means the server decides, and then the description names the server's
default). Other keys (``scope``, descriptions) are the extension's, and so
is listing a nullable boolean's values (``null``, ``true``, ``false``) as an
``enum``, which the Settings editor shows as a drop-down."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from rhema_lsp.providers.presets import PRESETS
from rhema_lsp.runs.settings import Settings

PACKAGE = Path(__file__).resolve().parents[3] / "editors" / "vscode" / "package.json"
EXTENSION_ONLY = "rhema.server."
"""Settings the extension reads itself (how it starts the server); the
server never sees them."""
CHOICES = {"provider": [*PRESETS, "custom"]}
"""A string setting whose choices the server knows elsewhere: ``provider``
names a preset (``providers/presets.py``) or ``custom``."""


def _properties() -> dict[str, Any]:
    package = json.loads(PACKAGE.read_text(encoding="utf-8"))
    properties: dict[str, Any] = package["contributes"]["configuration"]["properties"]
    return properties


def _server(schema: dict[str, Any]) -> tuple[set[str], dict[str, Any]]:
    """The JSON types a setting takes, and its non-null schema's keywords."""
    options = schema.get("anyOf", [schema])
    types = {str(option.get("type")) for option in options}
    body: dict[str, Any] = next((o for o in options if o.get("type") != "null"), {})
    return types, {**schema, **body}


def problems(properties: dict[str, Any]) -> list[str]:
    """Where ``properties`` disagree with the server's settings."""
    schema = Settings.model_json_schema(by_alias=True)["properties"]
    defaults = Settings().model_dump(mode="json", by_alias=True)
    found: list[str] = []
    for key, prop in properties.items():
        if key.startswith(EXTENSION_ONLY):
            continue
        name = key.removeprefix("rhema.")
        if name not in schema:
            found.append(f"{key}: not a server setting")
            continue
        types, server = _server(schema[name])
        kinds = prop["type"] if isinstance(prop["type"], list) else [prop["type"]]
        if set(kinds) - {"null"} != types - {"null"}:
            found.append(f"{key}: type {kinds}, the server's {sorted(types)}")
        choices = CHOICES.get(name, server.get("enum", []))
        listed = prop.get("enum", [])
        booleans = all(v is None or isinstance(v, bool) for v in listed)
        if types - {"null"} == {"boolean"} and booleans:
            listed = []  # a boolean's values listed for the Settings editor's drop-down
        if set(listed) - {""} != set(choices):
            found.append(f"{key}: choices {prop.get('enum')}, the server's {choices}")
        for bound in ("minimum", "maximum"):
            if prop.get(bound) != server.get(bound):
                found.append(f"{key}: {bound} {prop.get(bound)}, the server's {server.get(bound)}")
        if "items" in server and prop.get("items", {}).get("type") != server["items"].get("type"):
            found.append(f"{key}: items {prop.get('items')}, the server's {server['items']}")
        default, ours = defaults[name], prop.get("default")
        if ours in (None, "") and default is not None:
            if f"({default})" not in prop.get("description", prop.get("markdownDescription", "")):
                found.append(f"{key}: unset, and the description does not name the default")
        elif ours not in (None, "") and ours != default:
            found.append(f"{key}: default {ours!r}, the server's {default!r}")
    return found


def test_the_extensions_settings_are_the_servers() -> None:
    assert problems(_properties()) == []


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda p: p.update({"rhema.maxStep": p["rhema.maxSteps"]}), "rhema.maxStep: not a"),
        (lambda p: p["rhema.maxSteps"].update(maximum=400), "rhema.maxSteps: maximum 400"),
        (lambda p: p["rhema.mode"]["enum"].append("auto"), "rhema.mode: choices"),
        (lambda p: p["rhema.provider"]["enum"].remove("groq"), "rhema.provider: choices"),
        (lambda p: p["rhema.review"].update(default=True), "rhema.review: default True"),
        (lambda p: p["rhema.review"].update(type="string"), "rhema.review: type"),
        (lambda p: p["rhema.vision"]["enum"].append("maybe"), "rhema.vision: choices"),
        (lambda p: p["rhema.maxTokens"].update(description="Tokens."), "rhema.maxTokens: unset"),
    ],
)
def test_a_setting_that_drifts_is_named(change: Any, problem: str) -> None:
    properties = copy.deepcopy(_properties())
    change(properties)
    assert any(found.startswith(problem) for found in problems(properties)), problems(properties)


def test_a_scope_is_the_extensions_own() -> None:
    properties = copy.deepcopy(_properties())
    for key in ("rhema.server.command", "rhema.server.python", "rhema.commandAllowlist"):
        properties[key]["scope"] = "machine"
    assert problems(properties) == []
