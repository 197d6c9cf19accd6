"""What the agent's language servers are told so that asking them a question
runs no code from the repository.

Some servers execute the workspace they analyse: rust-analyzer runs the
crates' build scripts (``build.rs``), their proc-macros, and ``cargo check``
on save (which builds and runs ``build.rs`` too); typescript-language-server
prefers the workspace's own ``node_modules/typescript`` (its ``tsserver.js``
is repository code, and loads the ``tsconfig.json`` plugins it finds). Each
such server is started with ``initializationOptions`` turning that off, and
the same values answer its ``workspace/configuration`` requests for its
section. Rules:

- rust-analyzer: ``cargo.buildScripts.enable``, ``procMacro.enable`` and
  ``checkOnSave`` false.
- typescript-language-server: ``tsserver.path`` is a TypeScript found beside
  the server's own installation (never inside a workspace root), so the
  workspace's is never run; ``plugins`` is empty; automatic type acquisition
  (``npm install`` of ``@types``) is off. When no TypeScript is found beside
  the server, none is named and the server picks its own (the workspace's,
  if it has one): install ``typescript`` next to the server.
- The user turns execution back on in the ``languageServers`` entry: its
  ``initializationOptions`` are merged over these, key by key
  (``{"cargo": {"buildScripts": {"enable": true}}, "procMacro": {"enable": true}}``).
- Other servers get no options (they run no repository code when asked).

Blocking (looks for TypeScript on disk): call from a worker thread.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePath
from typing import Any, Final

__all__ = ["SECTIONS", "initialization_options", "merged", "typescript_beside"]

SECTIONS: Final[Mapping[str, str]] = {"rust-analyzer": "rust-analyzer"}
"""The ``workspace/configuration`` section each server asks for its options."""

_RUST: Final[Mapping[str, Any]] = {
    "cargo": {"buildScripts": {"enable": False}},
    "procMacro": {"enable": False},
    "checkOnSave": False,
}


def merged(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``over`` merged in, key by key (objects recursively)."""
    result = dict(base)
    for key, value in over.items():
        below = result.get(key)
        if isinstance(below, Mapping) and isinstance(value, Mapping):
            result[key] = merged(below, value)
        else:
            result[key] = value
    return result


def _inside(path: Path, roots: Iterable[Path]) -> bool:
    return any(path.is_relative_to(Path(os.path.realpath(root))) for root in roots)


def typescript_beside(program: str, roots: Iterable[Path]) -> str | None:
    """The ``typescript/lib`` directory nearest the real path of ``program``
    (its own ``node_modules``, or the one it is installed in), outside every
    root; ``None``: none found."""
    listed = list(roots)
    real = Path(os.path.realpath(program))
    for ancestor in real.parents:
        candidates = [ancestor / "node_modules" / "typescript" / "lib"]
        if ancestor.name == "node_modules":
            candidates.append(ancestor / "typescript" / "lib")
        for lib in candidates:
            if (lib / "tsserver.js").is_file() and not _inside(lib, listed):
                return str(lib)
    return None


def initialization_options(
    command: tuple[str, ...], roots: Iterable[Path], given: Mapping[str, Any] | None = None
) -> dict[str, Any] | None:
    """The ``initializationOptions`` of the server ``command`` starts (its
    program already absolute); ``given``: the user's, merged over ours."""
    name = PurePath(command[0]).name
    ours: dict[str, Any] | None = None
    if name == "rust-analyzer":
        ours = dict(_RUST)
    elif name == "typescript-language-server":
        ours = {"plugins": [], "disableAutomaticTypingAcquisition": True}
        lib = typescript_beside(command[0], roots)
        if lib is not None:
            ours["tsserver"] = {"path": lib}
    if given:
        return merged(ours or {}, given)
    return ours
