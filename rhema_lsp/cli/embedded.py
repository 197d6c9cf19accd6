"""What ``rhema-lsp ask`` gives the embedded model in place of tools.

The embedded model (SmolLM2-135M) is offered no tools: measured on
``examples/sample``, it answers from text it is given and not by calling
tools, even grammar-constrained ones (docs/embedded.md). So when ``ask``
runs it without ``--file``, the client hands it the folder: a listing of up
to :data:`LISTING_LIMIT` files, and the text of the small text files while
they fit :data:`CONTEXT_BUDGET` characters (its context is 2,048 tokens).
Hidden folders and files (``.git``, ``.rhema``, ``.env``) are never listed
or attached.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CONTEXT_BUDGET",
    "LISTING_LIMIT",
    "FolderContext",
    "folder_context",
]

LISTING_LIMIT = 50
"""Files named in the listing at most."""

CONTEXT_BUDGET = 4_000
"""Characters of file text attached at most."""

TOOLS_NOTE = "no tools: it reads only what it is given (--file, else the folder's small files)"
"""What to tell the user about the embedded model's tools, in one clause."""


@dataclass(frozen=True, slots=True)
class FolderContext:
    """The folder, as the embedded model is shown it."""

    listing: str
    files: tuple[Path, ...]


def _files(folder: Path) -> list[Path]:
    found: list[Path] = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        found += [Path(root) / name for name in sorted(names) if not name.startswith(".")]
        if len(found) > LISTING_LIMIT:
            break
    return found


def _is_text(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def folder_context(folder: Path) -> FolderContext:
    """A listing of ``folder`` and the small text files to attach.

    Parameters
    ----------
    folder
        The workspace folder.
    """
    files = _files(folder)
    shown = [str(path.relative_to(folder)) for path in files[:LISTING_LIMIT]]
    more = " and more" if len(files) > LISTING_LIMIT else ""
    listing = f"The workspace folder holds: {', '.join(shown)}{more}." if shown else ""
    attached: list[Path] = []
    budget = CONTEXT_BUDGET
    for path in sorted(files[:LISTING_LIMIT], key=lambda p: p.stat().st_size):
        text = _is_text(path)
        if text is None or not text.strip():
            continue
        if len(text) > budget:
            break
        budget -= len(text)
        attached.append(path)
    return FolderContext(listing, tuple(sorted(attached)))
