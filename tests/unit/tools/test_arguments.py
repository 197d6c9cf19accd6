"""The tools' argument models: the plain schemas the providers are sent, and
the checks and defaults a call's arguments get."""

from __future__ import annotations

from typing import Any

import pytest

from rhema_lsp.tools import TOOLS_BY_MODE, ToolError
from rhema_lsp.tools.specs import Grep, ListDir, ReadFile, RenamePath, RunCommand, specs_for

PATH = "Relative to the session folder, or absolute inside the workspace."
PLAIN_PROPERTY_KEYWORDS = {"type", "description", "minimum", "maximum", "items", "enum"}


def schemas() -> dict[str, Any]:
    return {spec.name: spec.parameters for spec in specs_for("agent")}


def test_every_tool_has_a_spec() -> None:
    assert list(schemas()) == list(TOOLS_BY_MODE["agent"])


def test_generated_schemas_have_the_plain_shape() -> None:
    for name, schema in schemas().items():
        assert set(schema) == {"type", "properties", "required", "additionalProperties"}, name
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False
        assert set(schema["required"]) <= set(schema["properties"]), name
        for argument, prop in schema["properties"].items():
            assert set(prop) <= PLAIN_PROPERTY_KEYWORDS, (name, argument, prop)
            assert prop["type"] in ("string", "integer", "number", "boolean"), (name, argument)


def test_generated_schemas_match_the_hand_written_ones() -> None:
    generated = schemas()
    assert generated["read_file"] == {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": PATH},
            "offset": {
                "type": "integer",
                "minimum": 1,
                "description": "First line (1-based). Default 1.",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": "Number of lines. Default 2000.",
            },
        },
        "required": ["path"],
        "additionalProperties": False,
    }
    assert generated["grep"] == {
        "type": "object",
        "properties": {
            "pattern": {"type": "string"},
            "path": {"type": "string", "description": f'{PATH} Default ".".'},
            "glob": {
                "type": "string",
                "description": "Only files matching this glob, e.g. '*.ts'.",
            },
            "ignore_case": {"type": "boolean", "description": "Default false."},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }
    assert generated["rename_path"] == {
        "type": "object",
        "properties": {
            "from": {"type": "string", "description": PATH},
            "to": {"type": "string", "description": PATH},
        },
        "required": ["from", "to"],
        "additionalProperties": False,
    }
    assert generated["run_command"]["properties"]["timeout_s"] == {
        "type": "number",
        "minimum": 1,
        "maximum": 600,
        "description": "Seconds before it is killed. Default 120.",
    }


def test_defaults_come_from_the_model() -> None:
    assert ReadFile.parse({"path": "a"}) == ReadFile(path="a", offset=1, limit=2000)
    listed = ListDir.parse({})
    assert (listed.path, listed.depth) == (".", 2)
    searched = Grep.parse({"pattern": "x"})
    assert (searched.path, searched.glob, searched.ignore_case) == (".", None, False)
    assert RunCommand.parse({"command": "ls"}).timeout_s == 120.0


def test_null_means_not_given_and_unknown_names_are_ignored() -> None:
    assert ListDir.parse({"path": None, "depth": None, "colour": "red"}).depth == 2
    with pytest.raises(ToolError, match="missing required argument 'pattern'"):
        Grep.parse({"pattern": None})


def test_an_empty_search_root_is_the_session_folder() -> None:
    assert ListDir.parse({"path": ""}).path == "."


def test_from_is_an_alias() -> None:
    renamed = RenamePath.parse({"from": "a.txt", "to": "b.txt"})
    assert (renamed.source, renamed.to) == ("a.txt", "b.txt")
    with pytest.raises(ToolError, match="missing required argument 'from'"):
        RenamePath.parse({"source": "a.txt", "to": "b.txt"})


def test_whole_floats_are_integers_but_nothing_else_is_coerced() -> None:
    assert ReadFile.parse({"path": "a", "offset": 3.0}).offset == 3
    assert RunCommand.parse({"command": "ls", "timeout_s": 5}).timeout_s == 5.0
    refused: list[tuple[str, dict[str, Any]]] = [
        ("'offset' must be an integer", {"path": "a", "offset": 2.5}),
        ("'offset' must be an integer", {"path": "a", "offset": True}),
        ("'limit' must be an integer", {"path": "a", "limit": "10"}),
        ("'path' must be a string", {"path": 3}),
    ]
    for message, raw in refused:
        with pytest.raises(ToolError, match=message):
            ReadFile.parse(raw)
    with pytest.raises(ToolError, match="'ignore_case' must be true or false"):
        Grep.parse({"pattern": "x", "ignore_case": "yes"})
    with pytest.raises(ToolError, match="'timeout_s' must be a number"):
        RunCommand.parse({"command": "ls", "timeout_s": "60"})


def test_bounds_are_checked_and_named() -> None:
    with pytest.raises(ToolError, match="argument 'depth' must be at most 6"):
        ListDir.parse({"depth": 7})
    with pytest.raises(ToolError, match="argument 'offset' must be at least 1"):
        ReadFile.parse({"path": "a", "offset": 0})
    with pytest.raises(ToolError, match="argument 'timeout_s' must be at most 600"):
        RunCommand.parse({"command": "ls", "timeout_s": 601})


def test_every_problem_is_named_with_the_tool() -> None:
    with pytest.raises(ToolError) as raised:
        RenamePath.parse({"to": 1})
    assert str(raised.value) == (
        "rename_path: missing required argument 'from'; argument 'to' must be a string"
    )
    with pytest.raises(ToolError, match=r"^read_file: arguments must be a JSON object$"):
        ReadFile.parse([1])


def test_a_command_must_be_runnable() -> None:
    with pytest.raises(ToolError, match="argument 'command' is empty"):
        RunCommand.parse({"command": "  "})
    with pytest.raises(ToolError, match="argument 'command' contains a NUL byte"):
        RunCommand.parse({"command": "ls\x00"})
