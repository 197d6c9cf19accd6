"""What every client knows of each tool: the one home of those facts.

A tool's arguments are described once by its model (:mod:`.specs`); how a
call *looks* is described here, once: which argument names what it acts on
(its *main* argument, shown beside its name), which names where it goes (the
*target*, ``rename_path``'s ``to``), whether it changes files (the editor's
changed-files card refreshes after one), its ACP ``ToolKind`` and its title
verb. The server's progress, the headless client and the ACP agent read this
table; the VS Code and Neovim clients get it generated
(``python -m rhema_lsp.contract``). A tool not in the table (an MCP server's)
is shown by the first of :data:`FALLBACK_ARGUMENTS` it has.
Plain data: loading it loads nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "FALLBACK_ARGUMENTS",
    "TOOL_FACTS",
    "ToolFacts",
    "ToolKind",
    "facts_of",
    "main_value",
]

ToolKind = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other"]
"""The kinds of ACP's ``ToolKind`` a tool of ours can be."""


@dataclass(frozen=True, slots=True)
class ToolFacts:
    """How one tool's calls look in every client.

    Attributes
    ----------
    name
        The tool's name as the model calls it.
    title
        The verb of a call's title ("Read", "Rename symbol in").
    kind
        Its ACP ``ToolKind``.
    main
        The argument shown beside the name, if any.
    target
        Where the call goes (``rename_path``'s ``to``), shown as ``main → target``.
    changes_files
        Whether a successful call changes files (the changed-files card refreshes).
    """

    name: str
    title: str
    kind: ToolKind
    main: str | None = None
    target: str | None = None
    changes_files: bool = False


TOOL_FACTS: tuple[ToolFacts, ...] = (
    ToolFacts("read_file", "Read", "read", main="path"),
    ToolFacts("list_dir", "List", "search", main="path"),
    ToolFacts("find_files", "Find", "search", main="pattern"),
    ToolFacts("grep", "Search", "search", main="pattern"),
    ToolFacts("diagnostics", "Problems in", "read", main="path"),
    ToolFacts("symbols", "Symbols", "search", main="query"),
    ToolFacts("definition", "Definition in", "search", main="path"),
    ToolFacts("references", "References in", "search", main="path"),
    ToolFacts("edit_file", "Edit", "edit", main="path", changes_files=True),
    ToolFacts("write_file", "Write", "edit", main="path", changes_files=True),
    ToolFacts("rename_path", "Rename", "move", main="from", target="to", changes_files=True),
    ToolFacts("delete_path", "Delete", "delete", main="path", changes_files=True),
    ToolFacts("rename_symbol", "Rename symbol in", "edit", main="path", changes_files=True),
    ToolFacts("run_command", "Run", "execute", main="command"),
    ToolFacts("update_plan", "Update the plan", "think"),
    ToolFacts("skill", "Use skill", "read", main="name"),
    ToolFacts("task", "Task", "other", main="description"),
)
"""Every tool of ours (``update_plan``, ``skill``, ``task`` included), in order."""

FALLBACK_ARGUMENTS = ("path", "pattern", "command", "from")
"""For a tool not in the table: the first of these it has is its main argument."""

_BY_NAME = {facts.name: facts for facts in TOOL_FACTS}


def facts_of(name: str) -> ToolFacts | None:
    """The facts of tool ``name``, or ``None`` for a tool not ours."""
    return _BY_NAME.get(name)


def main_value(name: str, args: object) -> tuple[str, str] | None:
    """The main argument of a call as ``(argument, value)``, if it has one.

    A tool of ours shows its own main argument (none for ``update_plan``); a
    tool not ours the first of :data:`FALLBACK_ARGUMENTS` it has. Only a
    non-empty string counts.
    """
    if not isinstance(args, Mapping):
        return None
    facts = facts_of(name)
    own = (facts.main,) if facts and facts.main else ()
    keys = FALLBACK_ARGUMENTS if facts is None else own
    for key in keys:
        value = args.get(key)
        if isinstance(value, str) and value:
            return key, value
    return None
