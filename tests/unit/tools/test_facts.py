"""Every site that shows a tool call reads the tools' facts: the server's
progress, the headless client and the ACP agent show a tool's own main
argument, and a tool not ours (an MCP server's) by the fallback arguments."""

from __future__ import annotations

import json

import pytest

from rhema_lsp.acp.calls import kind_of, title_of
from rhema_lsp.headless.render import _args_hint
from rhema_lsp.server.stream import describe_call
from rhema_lsp.tools.facts import main_value


@pytest.mark.parametrize(
    ("name", "args", "main"),
    [
        ("grep", {"path": "src", "pattern": "TODO"}, ("pattern", "TODO")),
        ("symbols", {"path": "a.py", "query": "Foo"}, ("query", "Foo")),
        ("rename_path", {"from": "a.py", "to": "b.py"}, ("from", "a.py")),
        ("rename_symbol", {"path": "a.py", "line": 3, "symbol": "x"}, ("path", "a.py")),
        ("diagnostics", {}, None),
        ("update_plan", {"path": "ignored", "entries": []}, None),
        ("mcp__gh__search", {"query": "q", "pattern": "p", "path": "x"}, ("path", "x")),
        ("mcp__fs__move", {"from": "a", "to": "b"}, ("from", "a")),
        ("mcp__x__y", {"path": ""}, None),
        ("read_file", ["a.py"], None),
    ],
)
def test_the_main_argument(name: str, args: object, main: tuple[str, str] | None) -> None:
    assert main_value(name, args) == main


def test_the_servers_progress_and_the_headless_client_show_the_main_argument() -> None:
    grep = json.dumps({"path": "src", "pattern": "TODO"})
    assert describe_call("grep", grep) == "grep TODO"
    assert _args_hint("grep", grep) == "TODO"
    assert describe_call("mcp__gh__search", json.dumps({"pattern": "bug"})) == "mcp__gh__search bug"
    assert describe_call("update_plan", "{not json") == "update_plan"
    assert _args_hint("run_command", json.dumps({"command": "x" * 100})) == "x" * 77 + "..."


def test_the_acp_kind_and_title_come_from_the_facts() -> None:
    assert kind_of("rename_symbol") == "edit"
    assert kind_of("rename_path") == "move"
    assert kind_of("mcp__gh__search") == "other"
    assert title_of("rename_path", {"from": "a.py", "to": "b.py"}) == "Rename a.py to b.py"
    assert title_of("grep", {"path": "src", "pattern": "TODO"}) == "Search `TODO`"
    assert title_of("run_command", {"command": "pytest -q"}) == "Run `pytest -q`"
    assert title_of("rename_symbol", {"path": "a.py"}) == "Rename symbol in a.py"
    assert title_of("update_plan", {"entries": []}) == "Update the plan"
    assert title_of("mcp__gh__search", {"path": "x"}) == "mcp__gh__search x"
    assert title_of("read_file", None) == "Read"
