"""The completion's import context: short snippets of the definitions the
cursor's imports name, read from the workspace through the confinement gate.

Rules it keeps:

- **Through the gate, never a protected file.** Each candidate path
  (:func:`~rhema_lsp.completion.imports.candidates`) is resolved by the
  gate's :class:`~rhema_lsp.tools.workspace.Workspace` (confined to the
  workspace folders, symlinks included; never ``.git`` or ``.rhema``) and
  read with :meth:`~rhema_lsp.tools.gate.Gate.head`, which refuses a
  protected file (``.env*``, keys), even behind a symlink, and prefers the
  editor's unsaved buffer. A refused or unreadable module lends nothing.
- **Off the event loop.** Finding the imports and resolving paths run in a
  worker thread; the gate reads in one.
- **Bounded.** At most :data:`MAX_MODULES` modules are read per document
  version, at most :data:`HEAD_BYTES` of each; the snippets together stay
  under :data:`CONTEXT_CHARS` (about 400 tokens), at most
  :data:`MAX_SNIPPETS` of them.
- **Cached per document version**, and the last answer of a document is
  reused while its imports are the same for :data:`REUSE_SECONDS`.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import anyio.to_thread

from rhema_lsp.completion.imports import (
    Imported,
    candidates,
    definition,
    imports_of,
    language_of,
    module_head,
)
from rhema_lsp.tools.editor import Editor
from rhema_lsp.tools.errors import ToolError
from rhema_lsp.tools.gate import Gate
from rhema_lsp.tools.positions import uri_to_path
from rhema_lsp.tools.workspace import Target, Workspace

__all__ = ["CONTEXT_CHARS", "ImportContext", "Snippet"]

logger = logging.getLogger("rhema_lsp.completion")

MAX_MODULES = 6
MAX_SNIPPETS = 4
HEAD_BYTES = 128 * 1024
CONTEXT_CHARS = 1600
REUSE_SECONDS = 10.0


@dataclass(frozen=True, slots=True)
class Snippet:
    """A definition (or a module's first lines) and the file it is from."""

    name: str
    text: str


@dataclass
class _Kept:
    version: int | None
    imports: tuple[Imported, ...]
    when: float
    snippets: tuple[Snippet, ...]


class ImportContext:
    """Snippets of what a document's imports name (see the module docstring).

    Parameters
    ----------
    roots
        The workspace folders now (called each time: they change).
    editor
        The open documents, read before the disk.
    """

    def __init__(self, roots: Callable[[], Sequence[Path]], editor: Editor) -> None:
        self._roots = roots
        self._editor = editor
        self._kept: dict[str, _Kept] = {}

    def forget(self, uri: str) -> None:
        """Drop what is kept of ``uri`` (it closed)."""
        self._kept.pop(uri, None)

    async def snippets(self, uri: str, text: str, version: int | None) -> tuple[Snippet, ...]:
        """The snippets for ``uri`` at ``version`` whose text is ``text``."""
        kept = self._kept.get(uri)
        if kept is not None and kept.version == version and version is not None:
            return kept.snippets
        if not uri.startswith("file:"):
            return ()
        roots = list(self._roots())
        if not roots:
            return ()
        try:
            path = uri_to_path(uri)
        except ValueError:
            return ()
        if language_of(path.name) is None:
            return ()
        imports = tuple(await anyio.to_thread.run_sync(imports_of, path.name, text))
        now = time.monotonic()
        if kept is not None and kept.imports == imports and now - kept.when < REUSE_SECONDS:
            kept.version = version
            return kept.snippets
        found = await self._read(path, imports, roots) if imports else ()
        self._kept[uri] = _Kept(version, imports, now, found)
        return found

    async def _read(
        self, path: Path, imports: tuple[Imported, ...], roots: list[Path]
    ) -> tuple[Snippet, ...]:
        gate = Gate(Workspace(roots, roots[0]), self._editor)
        located = await anyio.to_thread.run_sync(_locate, gate.ws, path, imports[:MAX_MODULES])
        found: list[Snippet] = []
        used = 0
        for imported, target in located:
            try:
                head = await gate.head(target, HEAD_BYTES)
            except ToolError as exc:
                logger.debug("no import context from %s: %s", target.requested, exc)
                continue
            shown = gate.ws.display(target.path)
            pieces = [definition(target.path.name, head.text, name) for name in imported.names]
            texts = [piece for piece in pieces if piece] or [module_head(head.text)]
            texts = [text for text in texts if text.strip()]
            for text in texts:
                if len(found) == MAX_SNIPPETS or used + len(text) > CONTEXT_CHARS:
                    return tuple(found)
                used += len(text)
                found.append(Snippet(shown, text))
        return tuple(found)


def _locate(
    ws: Workspace, path: Path, imports: tuple[Imported, ...]
) -> list[tuple[Imported, Target]]:
    """Each import's first candidate that is a confined regular file (blocking)."""
    roots = [PurePosixPath(root) for root in ws.roots]
    here = PurePosixPath(os.path.realpath(path))
    found = []
    for imported in imports:
        for candidate in candidates(here, imported, roots):
            try:
                target = ws.resolve(str(candidate))
            except (ToolError, ValueError, OSError):
                continue
            if target.kind == "file" and target.path != Path(here):
                found.append((imported, target))
                break
    return found
