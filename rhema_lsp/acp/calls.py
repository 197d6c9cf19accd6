"""How a tool call looks in an ACP client: its kind, its title, where it acts.

One table maps each of our tools to an ACP ``ToolKind``; the title is the
tool's verb and main argument ("Read hello.py", "Run `pytest -q`"), short
enough for a one-line row in the client's thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from acp.schema import ToolKind

__all__ = ["KINDS", "kind_of", "title_of"]

KINDS: Mapping[str, ToolKind] = {
    "read_file": "read",
    "list_dir": "search",
    "find_files": "search",
    "grep": "search",
    "diagnostics": "read",
    "symbols": "search",
    "definition": "search",
    "references": "search",
    "edit_file": "edit",
    "write_file": "edit",
    "rename_path": "move",
    "delete_path": "delete",
    "rename_symbol": "edit",
    "run_command": "execute",
    "update_plan": "think",
}

_VERBS = {
    "read_file": "Read",
    "list_dir": "List",
    "find_files": "Find",
    "grep": "Search",
    "diagnostics": "Problems in",
    "symbols": "Symbols",
    "definition": "Definition in",
    "references": "References in",
    "edit_file": "Edit",
    "write_file": "Write",
    "rename_path": "Rename",
    "delete_path": "Delete",
    "rename_symbol": "Rename symbol in",
    "run_command": "Run",
    "update_plan": "Update the plan",
}
_MAIN_ARGUMENT = ("path", "pattern", "command", "from")
_TITLE_LIMIT = 80


def kind_of(name: str) -> ToolKind:
    """The ACP kind of tool ``name`` (``other`` for one we do not know)."""
    return KINDS.get(name, "other")


def title_of(name: str, args: Any) -> str:
    """A one-line title: the tool's verb and its main argument."""
    verb = _VERBS.get(name, name)
    if not isinstance(args, Mapping):
        return verb
    if name == "rename_path" and isinstance(args.get("from"), str):
        return f"Rename {args['from']} to {args.get('to', '?')}"[:_TITLE_LIMIT]
    for key in _MAIN_ARGUMENT:
        value = args.get(key)
        if isinstance(value, str) and value:
            shown = f"`{value}`" if key in ("command", "pattern") else value
            return f"{verb} {shown}"[:_TITLE_LIMIT]
    return verb
