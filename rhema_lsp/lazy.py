"""Package roots that load their modules on first use (PEP 562).

A package root that re-exports its modules' names would load them all with
the package, and so with any one of its modules: ``import
rhema_lsp.providers.presets`` would load httpx and the engine. A lazy root
writes its re-exports under ``if TYPE_CHECKING:`` (what mypy, ruff and a
reader see) and ends with :func:`lazy_root`, which reads those same imports
from the root's source the first time a name is missing and loads only the
module that holds it::

    if TYPE_CHECKING:
        from rhema_lsp.providers.choices import ProviderChoice

    lazy_root(__name__)

(No module ``__getattr__``: mypy would then accept any name of the root.)

``from pkg.module import *`` under ``TYPE_CHECKING`` is followed too: those
modules are loaded in order until one has the name. The import list is thus
written once, and ``tests/unit/test_start_imports.py`` checks that every name
of each lazy root's ``__all__`` resolves. Like :mod:`rhema_lsp.vocabulary`,
this module is a floor under every layer: it imports nothing of the project.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

__all__ = ["lazy_root"]


def _checking_imports(source: str) -> tuple[dict[str, tuple[str, str]], list[str]]:
    """The ``from X import a [as b]`` of the source's ``if TYPE_CHECKING:``
    blocks: each name's module and its name there, and the modules
    star-imported, in order."""
    import ast  # only once a name is first missing

    names: dict[str, tuple[str, str]] = {}
    stars: list[str] = []
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"):
            continue
        for statement in node.body:
            if not isinstance(statement, ast.ImportFrom) or statement.module is None:
                continue
            for alias in statement.names:
                if alias.name == "*":
                    stars.append(statement.module)
                else:
                    names[alias.asname or alias.name] = (statement.module, alias.name)
    return names, stars


class _LazyRoot(types.ModuleType):
    """A package root whose re-exported names load on first use."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name != "__all__":
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        names, stars = self._exports()
        if name == "__all__":  # a root whose __all__ is its star modules' (the contract)
            value: Any = [n for n in names if not n.startswith("_")]
            for module_name in stars:
                value += importlib.import_module(module_name).__all__
        elif name in names:
            module_name, original = names[name]
            value = getattr(importlib.import_module(module_name), original)
        else:
            for module_name in stars:
                module = importlib.import_module(module_name)
                if name in getattr(module, "__all__", ()):
                    value = getattr(module, name)
                    break
            else:
                raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        self.__dict__[name] = value
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        # Loading a module sets it on its package: a module named like a name
        # the root exports (engine.resume, the function of engine/resume.py)
        # leaves the name, as an eager root's own import would.
        if (
            isinstance(value, types.ModuleType)
            and value.__name__ == f"{self.__name__}.{name}"
            and name in self.__dict__.get("__all__", ())
            and name in self._exports()[0]
        ):
            value = getattr(self, name) if name in self.__dict__ else self.__getattr__(name)
        super().__setattr__(name, value)

    def _exports(self) -> tuple[dict[str, tuple[str, str]], list[str]]:
        table = self.__dict__.get("_lazy_table")
        if table is None:
            with open(self.__dict__["__file__"], encoding="utf-8") as source:
                table = self.__dict__["_lazy_table"] = _checking_imports(source.read())
        return table


def lazy_root(package: str) -> None:
    """Make the package root ``package`` (call it at the end of its
    ``__init__.py`` with ``__name__``) load each name of its ``TYPE_CHECKING``
    imports on first use, and keep it then."""
    sys.modules[package].__class__ = _LazyRoot
