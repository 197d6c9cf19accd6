"""No import loop among ``rhema_lsp`` modules.

Every module's imports are read with :mod:`ast`: module-level ones, the
ones under ``if TYPE_CHECKING:`` and the ones inside functions all count
(a type-only import is still a dependency a reader has to follow). A
relative import is resolved against its package, and ``from pkg import
name`` points at ``pkg.name`` when that is a module, else at ``pkg``. A
package's ``__init__`` is not implied by importing one of its modules (the
lazy package roots list their re-exports for the type checker only, and
load nothing on their own). The test fails naming each loop it finds.
"""

from __future__ import annotations

import ast
from pathlib import Path

import rhema_lsp

ROOT = Path(rhema_lsp.__file__).parent
PACKAGE = "rhema_lsp"


def _modules() -> dict[str, tuple[Path, bool]]:
    """Every module's dotted name, with its file and whether it is a package."""
    found: dict[str, tuple[Path, bool]] = {}
    for path in ROOT.rglob("*.py"):
        parts = [PACKAGE, *path.relative_to(ROOT).with_suffix("").parts]
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        found[".".join(parts)] = (path, is_package)
    return found


def _imported(name: str, path: Path, is_package: bool, modules: set[str]) -> set[str]:
    """The ``rhema_lsp`` modules ``name`` imports, wherever in it."""
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                found.add(submodule if submodule in modules else base)
    return {module for module in found if module in modules and module != name}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    names = set(modules)
    return {
        name: _imported(name, path, is_package, names)
        for name, (path, is_package) in modules.items()
    }


def _knots(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's,
    iterative): the modules that import one another, round about."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))
    return components


def _loop_through(component: list[str], graph: dict[str, set[str]]) -> list[str]:
    """One loop from the component's first module back to it (breadth-first)."""
    members = set(component)
    start = component[0]
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for successor in sorted(graph[node] & members):
                if successor == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if successor not in came_from:
                    came_from[successor] = node
                    following.append(successor)
        frontier = following
    return component


def test_the_reader_sees_imports_everywhere_in_a_module() -> None:
    graph = _graph()
    # function-local (the agent service, loaded on the first command)
    assert "rhema_lsp.server.service" in graph["rhema_lsp.server.app"]
    # under TYPE_CHECKING only
    assert "rhema_lsp.server.state" in graph["rhema_lsp.server.router"]
    # `from pkg import module`
    assert "rhema_lsp.server.handlers" in graph["rhema_lsp.server.router"]


def _described(knot: list[str], graph: dict[str, set[str]]) -> str:
    loop = " -> ".join(_loop_through(knot, graph))
    return f"{loop} (one loop of {len(knot)} modules importing one another: {', '.join(knot)})"


def test_no_import_loop_among_rhema_lsp_modules() -> None:
    graph = _graph()
    knots = [_described(knot, graph) for knot in _knots(graph)]
    assert not knots, "import loops:\n" + "\n".join(knots)


def test_a_loop_is_found_and_named() -> None:
    graph = {"a": {"b"}, "b": {"c", "e"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _knots(graph) == [["a", "b", "c"]]
    assert _described(["a", "b", "c"], graph).startswith("a -> b -> c -> a (one loop of 3")
