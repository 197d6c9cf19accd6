"""Which language server serves a document, with no configuration.

A document's language comes from its file name's suffix
(:data:`LANGUAGES`); each language has known servers in preference order
(:data:`KNOWN`), the first found on ``PATH`` is used, unless the
``languageServers`` setting names one (``{"python": {"command": [...]}}``),
which always wins. A language with none is served by nobody: the tools say
so, with how to get one.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Final

__all__ = ["KNOWN", "LANGUAGES", "ServerChoice", "choose", "language_of"]

LANGUAGES: Final[Mapping[str, str]] = {
    ".py": "python",
    ".pyi": "python",
    ".ts": "typescript",
    ".tsx": "typescriptreact",
    ".mts": "typescript",
    ".cts": "typescript",
    ".js": "javascript",
    ".jsx": "javascriptreact",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".go": "go",
    ".rs": "rust",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
}
"""LSP language ids by file suffix."""

_FAMILY: Final[Mapping[str, str]] = {
    "typescriptreact": "typescript",
    "javascript": "typescript",
    "javascriptreact": "typescript",
    "cpp": "c",
}
"""Languages one server serves together (one process for TS and JS)."""

KNOWN: Final[Mapping[str, Sequence[tuple[str, ...]]]] = {
    "python": (
        ("basedpyright-langserver", "--stdio"),
        ("pyright-langserver", "--stdio"),
        ("pylsp",),
        ("jedi-language-server",),
    ),
    "typescript": (("typescript-language-server", "--stdio"),),
    "go": (("gopls",),),
    "rust": (("rust-analyzer",),),
    "c": (("clangd",),),
}
"""Known servers per language family, in preference order."""


@dataclass(frozen=True, slots=True)
class ServerChoice:
    """The server for a language family: its command and the name shown."""

    family: str
    command: tuple[str, ...]
    name: str


def language_of(path: PurePath) -> str | None:
    """The LSP language id of ``path`` (``None``: not one we know)."""
    return LANGUAGES.get(path.suffix.lower())


def family_of(language: str) -> str:
    """The family (one server process) ``language`` belongs to."""
    return _FAMILY.get(language, language)


def choose(
    language: str,
    configured: Mapping[str, Sequence[str]],
    which: Callable[[str], str | None] = shutil.which,
) -> ServerChoice | None:
    """The server for ``language``: the configured one (by language id or
    family), else the first known one on ``PATH``; ``None``: nobody."""
    family = family_of(language)
    for key in (language, family):
        command = configured.get(key)
        if command:
            return ServerChoice(family, tuple(command), PurePath(command[0]).name)
    for candidate in KNOWN.get(family, ()):
        found = which(candidate[0])
        if found is not None:
            return ServerChoice(
                family, (found, *candidate[1:]), candidate[0].removesuffix("-langserver")
            )
    return None
