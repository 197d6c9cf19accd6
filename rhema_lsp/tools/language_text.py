"""Raw LSP answers as the short text the model reads.

Every language tool's result is written here, once, whoever answered (the
editor's language servers or the agent's own): one line per item,
``pkg/use.py:3: print(greet("Ann"))`` (relative to the session folder, the
line's text after the colon), capped at :data:`MAX_ITEMS` with a note saying
how many were left out and how to narrow. Rules:

- Lines are 1-based; a range's start is what is shown.
- A location outside the workspace folders (a library, the standard
  library's stubs) is shown as ``<outside the workspace>``: neither its path
  nor its text (:meth:`~rhema_lsp.tools.language_tools.LanguageTools._shown`).
- Hints (severity 4: unused names, deprecated tags) are not problems and
  are left out of diagnostics.
- Malformed answers (a server answering garbage) are skipped item by item,
  never raised: :func:`locations` and friends take ``Any``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "MAX_ITEMS",
    "Place",
    "Problem",
    "capped",
    "document_symbols",
    "locations",
    "problems",
    "workspace_symbols",
]

MAX_ITEMS: Final = 50
"""Items per result before the rest are counted in a note."""

_KINDS: Final = [
    "file",
    "module",
    "namespace",
    "package",
    "class",
    "method",
    "property",
    "field",
    "constructor",
    "enum",
    "interface",
    "function",
    "variable",
    "constant",
    "string",
    "number",
    "boolean",
    "array",
    "object",
    "key",
    "null",
    "enum-member",
    "struct",
    "event",
    "operator",
    "type-parameter",
]
_SEVERITIES: Final = {1: "error", 2: "warning", 3: "information", 4: "hint"}


@dataclass(frozen=True, slots=True)
class Place:
    """A position in a document: its URI and 0-based line."""

    uri: str
    line: int


@dataclass(frozen=True, slots=True)
class Problem:
    """One diagnostic as the tools compare and show it."""

    severity: str
    message: str
    line: int
    source: str
    code: str

    @property
    def key(self) -> tuple[str, str, str, str]:
        """What identifies the problem across edits (lines move)."""
        return (self.severity, self.message, self.source, self.code)


def _start_line(node: Any) -> int | None:
    if not isinstance(node, Mapping):
        return None
    start = node.get("start")
    if not isinstance(start, Mapping):
        return None
    line = start.get("line")
    return line if isinstance(line, int) and not isinstance(line, bool) and line >= 0 else None


def _place(item: Any) -> Place | None:
    """A ``Location`` or ``LocationLink`` as a :class:`Place`."""
    if not isinstance(item, Mapping):
        return None
    uri = item.get("uri", item.get("targetUri"))
    if not isinstance(uri, str):
        return None
    line = _start_line(item.get("range", item.get("targetSelectionRange", item.get("targetRange"))))
    if line is None:
        return None
    return Place(uri, line)


def _items(result: Any) -> list[Any]:
    if isinstance(result, list):
        return result
    return [] if result is None else [result]


def locations(result: Any) -> list[Place]:
    """The places of a ``definition``/``references`` answer (``Location``,
    ``Location[]`` or ``LocationLink[]``), in order, duplicates removed."""
    seen: dict[Place, None] = {}
    for item in _items(result):
        place = _place(item)
        if place is not None:
            seen.setdefault(place)
    return list(seen)


def _kind(value: Any) -> str:
    if isinstance(value, int) and 1 <= value <= len(_KINDS):
        return _KINDS[value - 1]
    return "symbol"


def workspace_symbols(result: Any) -> list[tuple[str, Place]]:
    """``SymbolInformation[]`` / ``WorkspaceSymbol[]`` as ``(label, place)``."""
    found: list[tuple[str, Place]] = []
    for item in _items(result):
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            continue
        location = item.get("location")
        place = _place(location)
        if place is None and isinstance(location, Mapping) and isinstance(location.get("uri"), str):
            place = Place(location["uri"], 0)
        if place is None:
            continue
        container = item.get("containerName")
        inside = f" (in {container})" if isinstance(container, str) and container else ""
        found.append((f"{_kind(item.get('kind'))} {item['name']}{inside}", place))
    return found


def document_symbols(result: Any, query: str) -> list[tuple[int, str]]:
    """An outline (``DocumentSymbol[]`` nested, or ``SymbolInformation[]``)
    as ``(0-based line, indented label)``, keeping the names containing
    ``query`` (case-insensitive; all when empty)."""
    wanted = query.casefold()
    outline: list[tuple[int, str]] = []

    def walk(nodes: Any, depth: int) -> None:
        for node in _items(nodes):
            if not isinstance(node, Mapping) or not isinstance(node.get("name"), str):
                continue
            line = _start_line(node.get("selectionRange", node.get("range")))
            if line is None:
                place = _place(node.get("location"))
                line = place.line if place is not None else None
            if line is None:
                continue
            if wanted in node["name"].casefold():
                outline.append((line, f"{'  ' * depth}{_kind(node.get('kind'))} {node['name']}"))
            walk(node.get("children"), depth + 1)

    walk(result, 0)
    return outline


def problems(diagnostics: Iterable[Any], source: str) -> list[Problem]:
    """The diagnostics that are problems (hints left out), malformed ones skipped;
    ``source`` names the server when a diagnostic does not."""
    found: list[Problem] = []
    for item in diagnostics:
        if not isinstance(item, Mapping) or not isinstance(item.get("message"), str):
            continue
        line = _start_line(item.get("range"))
        if line is None:
            continue
        severity = item.get("severity", 1)
        if severity == 4:
            continue
        said = item.get("source")
        code = item.get("code")
        found.append(
            Problem(
                severity=_SEVERITIES.get(severity, "error")
                if isinstance(severity, int)
                else "error",
                message=" ".join(item["message"].split()),
                line=line,
                source=said if isinstance(said, str) and said else source,
                code=str(code) if isinstance(code, (str, int)) else "",
            )
        )
    return found


def capped(lines: Sequence[str], what: str, narrow: str) -> str:
    """``lines`` joined, at most :data:`MAX_ITEMS`, with a note for the rest."""
    shown = "\n".join(lines[:MAX_ITEMS])
    if len(lines) > MAX_ITEMS:
        shown += f"\n[{len(lines) - MAX_ITEMS} more {what} not shown; {narrow}]"
    return shown


LineText = Callable[[str, int], str | None]
"""The text of a document's 0-based line (``None``: not readable)."""
