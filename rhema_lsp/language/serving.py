"""Which language a question to the agent's own language servers is about.

The one rule :class:`~rhema_lsp.language.pool.AgentLanguages` asks before
it starts, syncs or waits on any server:

- A question about a document (an LSP method on a file, that file's
  diagnostics, the problems an edit caused) is about the language of the
  document's file name (:func:`~rhema_lsp.language.servers.language_of`).
  A file of no language a server is known for (``README.md``,
  ``notes.txt``) is served by nobody: the answer is ``None`` at once, never
  a wait on a server that was never given the document and will never
  publish anything for it (basedpyright asked about ``README.md`` waited out
  its first analysis, 20 s, twice per edit).
- Only a folder-wide question (``workspace/symbol``, asked with the
  folder's URI) falls back to the one language in play: the language of the
  one running server, else of the first open document of a known language.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePath
from typing import Final

from rhema_lsp.language.servers import language_of

__all__ = ["FOLDER_WIDE", "asked_language"]

FOLDER_WIDE: Final = frozenset({"workspace/symbol"})
"""The methods asked about a folder, not a document."""


def asked_language(
    path: PurePath,
    *,
    folder_wide: bool,
    running: Iterable[str],
    open_paths: Iterable[PurePath],
) -> str | None:
    """The language the question about ``path`` is for (``None``: nobody's).

    Parameters
    ----------
    path
        The document's (or, for a folder-wide question, the folder's) path.
    folder_wide
        Whether the question is about the folder (:data:`FOLDER_WIDE`).
    running
        The language families of the servers running now.
    open_paths
        The paths of the editor's open documents, in order.
    """
    language = language_of(path)
    if language is not None or not folder_wide:
        return language
    families = set(running)
    if len(families) == 1:
        return next(iter(families))
    for opened in open_paths:
        found = language_of(opened)
        if found is not None:
            return found
    return None
