"""The completer: debounced, cached, one request in flight per document.

Rules it keeps:

- **Protected files never leave the machine.** A document the confinement
  gate's rules protect (``.env*``, keys: :func:`protected`) gets no request
  at all.
- **Debounce.** A request waits :attr:`Completer.debounce` seconds before
  the model is asked; one replaced (a newer request for the same document)
  or cancelled (``$/cancelRequest``, which cancels the handler awaiting it)
  within that wait never reaches the model, and one replaced or cancelled
  while the model answers is aborted (its task cancelled, its connection
  closed).
- **At most one request in flight per document**: a new one cancels the
  one before it, which answers no suggestion.
- **Typed through.** While the user types the first characters of the
  suggestion shown last in a document (and nothing else changed), the rest
  of it is the answer, with no model request.
- **A small cache per position**: the same text around the same cursor is
  answered from the last answer for it (:data:`CACHE_SIZE` entries).
- **Context before the prefix.** Short snippets of the definitions the
  document's imports name (:attr:`Completer.imports`, asked only once the
  debounce has passed) and of the documents changed most recently go before
  the prefix, inside the prompt, each under a comment naming its file; the
  prefix still ends exactly at the cursor.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from urllib.parse import unquote, urlsplit

from rhema_lsp.completion.window import Cursor, cut, replaces_tail, split_at
from rhema_lsp.tools.rules import forbidden_reason, read_confirmation_reason

__all__ = ["CACHE_SIZE", "Completer", "Suggestion", "protected"]

logger = logging.getLogger("rhema_lsp.completion")

CACHE_SIZE = 64
"""Answers kept by position, over every document."""

RECENT = 3
"""How many other recently changed documents lend a snippet."""

SNIPPET_LINES = 12

Ask = Callable[[str, str, bool], Awaitable[str]]
"""The model: (prompt, suffix, multiline) to the middle."""

Imports = Callable[[str], Awaitable[Sequence[tuple[str, str]]]]
"""A document's import context: its uri to (file name, snippet) pairs."""

_LINE_COMMENT = {
    "py": "#", "sh": "#", "rb": "#", "yaml": "#", "yml": "#", "toml": "#", "r": "#",
    "lua": "--", "sql": "--", "hs": "--",
}  # fmt: skip


def _commented(uri: str, name: str, snippet: str) -> str:
    """``snippet`` of file ``name`` as comments of ``uri``'s language."""
    mark = _LINE_COMMENT.get(PurePosixPath(uri).suffix.lstrip(".").lower(), "//")
    body = "\n".join(f"{mark} {line}" for line in snippet.split("\n"))
    return f"{mark} {name}:\n{body}\n"


def protected(uri: str) -> bool:
    """Whether the document's text must never reach a model: a file the
    confinement gate protects or refuses (``.env*``, keys, ``.git``)."""
    parts = PurePosixPath(unquote(urlsplit(uri).path)).parts
    return read_confirmation_reason(parts) is not None or forbidden_reason(parts) is not None


@dataclass(frozen=True, slots=True)
class Suggestion:
    """One suggestion: ``text`` at the cursor, replacing the rest of the
    cursor's line when ``replace_tail``."""

    text: str
    replace_tail: bool = False


@dataclass
class _Shown:
    before: str
    after: str
    text: str


@dataclass
class _Document:
    work: asyncio.Future[str] | None = None
    shown: _Shown | None = None
    snippet: str = ""


@dataclass
class Stats:
    """What the completer did, for the status and the benchmark."""

    requests: int = 0
    asked: int = 0
    typed_through: int = 0
    cached: int = 0
    superseded: int = 0


@dataclass
class Completer:
    """Suggestions for documents, asked of ``ask`` (see the module docstring)."""

    ask: Ask
    debounce: float = 0.075
    imports: Imports | None = None
    stats: Stats = field(default_factory=Stats)
    _documents: dict[str, _Document] = field(default_factory=dict)
    _cache: OrderedDict[tuple[str, str, str], str] = field(default_factory=OrderedDict)
    _recent: list[str] = field(default_factory=list)

    def changed(self, uri: str, text: str, line: int) -> None:
        """``uri`` changed around ``line``: it lends a snippet of its text there."""
        if protected(uri):
            return
        lines = text.split("\n")
        start = max(0, line - SNIPPET_LINES // 2)
        document = self._documents.setdefault(uri, _Document())
        document.snippet = "\n".join(lines[start : start + SNIPPET_LINES])
        if uri in self._recent:
            self._recent.remove(uri)
        self._recent.insert(0, uri)
        del self._recent[RECENT + 1 :]

    def closed(self, uri: str) -> None:
        """Forget ``uri`` (its work, if any, is cancelled)."""
        document = self._documents.pop(uri, None)
        if document is not None and document.work is not None:
            document.work.cancel()
        if uri in self._recent:
            self._recent.remove(uri)

    def context(self, uri: str) -> str:
        """The snippets of the other recently changed documents, commented."""
        pieces = []
        for other in self._recent:
            document = self._documents.get(other)
            if other == uri or document is None or not document.snippet.strip():
                continue
            name = PurePosixPath(unquote(urlsplit(other).path)).name
            pieces.append(_commented(uri, name, document.snippet))
        return "".join(pieces[:RECENT])

    async def complete(self, uri: str, text: str, line: int, character: int) -> Suggestion | None:
        """The suggestion at (line, character) of ``uri`` whose text is ``text``."""
        self.stats.requests += 1
        if protected(uri):
            return None
        cursor = split_at(text, line, character)
        document = self._documents.setdefault(uri, _Document())
        typed = self._typed_through(document, text, cursor)
        if typed is not None:
            self.stats.typed_through += 1
            return typed
        key = (uri, cursor.prefix, cursor.suffix)
        middle = self._cache.get(key)
        if middle is not None:
            self._cache.move_to_end(key)
            self.stats.cached += 1
        else:
            middle = await self._asked(uri, document, cursor)
            if middle is None:
                return None
            self._cache[key] = middle
            while len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        suggestion = cut(middle, cursor)
        if not suggestion:
            document.shown = None
            return None
        document.shown = _Shown(text[: cursor.offset], text[cursor.offset :], suggestion)
        return Suggestion(suggestion, replaces_tail(suggestion, cursor))

    def _typed_through(self, document: _Document, text: str, cursor: Cursor) -> Suggestion | None:
        shown = document.shown
        if shown is None or not text.endswith(shown.after) or not text.startswith(shown.before):
            return None
        typed = text[len(shown.before) : len(text) - len(shown.after)]
        if len(shown.before) + len(typed) != cursor.offset or not typed:
            return None
        if not shown.text.startswith(typed) or typed == shown.text:
            return None
        rest = shown.text[len(typed) :]
        return Suggestion(rest, replaces_tail(rest, cursor))

    async def _asked(self, uri: str, document: _Document, cursor: Cursor) -> str | None:
        if document.work is not None and not document.work.done():
            document.work.cancel()  # replaced: never sent, or aborted
            self.stats.superseded += 1
        work = asyncio.ensure_future(self._debounced(uri, self.context(uri), cursor))
        document.work = work
        try:
            return await work
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # this request was cancelled
            return None  # a newer request replaced it
        except Exception as exc:  # noqa: BLE001 -- a failed completion is no suggestion
            logger.info("no completion: %s", exc)
            return None
        finally:
            if document.work is work:
                document.work = None

    async def _debounced(self, uri: str, context: str, cursor: Cursor) -> str:
        await asyncio.sleep(self.debounce)
        if self.imports is not None:
            found = await self.imports(uri)
            context = "".join(_commented(uri, name, text) for name, text in found) + context
        self.stats.asked += 1
        return await self.ask(context + cursor.prefix, cursor.suffix, cursor.multiline)
