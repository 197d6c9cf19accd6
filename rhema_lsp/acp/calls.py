"""How a tool call looks in an ACP client: its kind, its title, where it acts.

The kind and the title's verb of each of our tools are facts of the tool
(:mod:`rhema_lsp.tools.facts`); the title is the verb and the main argument
("Read hello.py", "Run `pytest -q`"), short enough for a one-line row in the
client's thread. A tool not ours (an MCP server's) is ``other``, titled by
its name.
"""

from __future__ import annotations

from typing import Any

from acp.schema import ToolKind

from rhema_lsp.tools.facts import facts_of, main_value

__all__ = ["kind_of", "title_of"]

_TITLE_LIMIT = 80
_QUOTED = ("command", "pattern")


def kind_of(name: str) -> ToolKind:
    """The ACP kind of tool ``name`` (``other`` for one we do not know)."""
    facts = facts_of(name)
    return facts.kind if facts else "other"


def title_of(name: str, args: Any) -> str:
    """A one-line title: the tool's verb and its main argument."""
    facts = facts_of(name)
    verb = facts.title if facts else name
    main = main_value(name, args)
    if main is None:
        return verb
    key, value = main
    target = args.get(facts.target) if facts and facts.target else None
    if isinstance(target, str):
        return f"{verb} {value} to {target}"[:_TITLE_LIMIT]
    shown = f"`{value}`" if key in _QUOTED else value
    return f"{verb} {shown}"[:_TITLE_LIMIT]
