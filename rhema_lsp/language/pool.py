"""The agent's own language servers, as the tools' ``LanguageService``.

:class:`AgentLanguages` serves every door whose client does not answer
language requests itself. A document's language picks the server
(:mod:`~rhema_lsp.language.servers`; a document of no known language is
served by nobody, at once: :mod:`~rhema_lsp.language.serving`); one
:class:`Connection` runs per (workspace folder, language family), started
on the first question about such a document, one start at a time. Rules:

- Before each question the documents of that server's language are synced
  from the editor (its open buffers, unsaved text included) and the asked
  document from the editor or, when it is not open, its file: the server
  answers about the agent's view.
- Position encodings: the servers are asked for UTF-16 (what most speak)
  and the tools speak the editor's; positions in questions and answers are
  converted between the two where they differ (:mod:`~rhema_lsp.language.recode`).
- A fresh server's first question waits for its first diagnostics of the
  document (at most :data:`WARM_WAIT` seconds): before that first analysis
  some servers answer as if the workspace had one file.
- A circuit breaker per folder and language: a server that fails (exits,
  fails to start, hangs past a bound, writes garbage) is killed at once and
  counts a strike. After the first strike it is started again on the next
  question; after the second it is refused for :data:`RETRY_AFTER` seconds
  (every question hears why, at once), then given one more start. A hung
  or garbled server so costs one bounded wait, then one for its restart,
  then nothing for :data:`RETRY_AFTER` seconds.
- The program is found by the spawn gate (:func:`~rhema_lsp.tools.spawn.find_program`:
  never inside a workspace root, never through a relative ``PATH`` entry),
  off the event loop.
- :meth:`AgentLanguages.aclose` stops every server (polite ``shutdown``,
  then the process group killed): no child outlives the door.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol, TypeVar

import anyio.to_thread

from rhema_lsp.language.connection import Connection
from rhema_lsp.language.recode import recode_params, recode_result
from rhema_lsp.language.servers import KNOWN, ServerChoice, choose, family_of, language_of
from rhema_lsp.language.serving import FOLDER_WIDE, asked_language
from rhema_lsp.tools.editor import OpenDocument
from rhema_lsp.tools.language import DiagnosticsAnswer, LanguageAnswer, LanguageFailed
from rhema_lsp.tools.positions import uri_to_path
from rhema_lsp.tools.spawn import find_program

__all__ = ["RETRY_AFTER", "STRIKES", "WARM_WAIT", "AgentLanguages", "Documents", "ServerStatus"]

STRIKES: Final = 2
"""Failures, per folder and language, that refuse the server for a while."""

RETRY_AFTER: Final = 300.0
"""Seconds a server that failed :data:`STRIKES` times is refused."""

WARM_WAIT: Final = 20.0
"""Seconds a fresh server's first analysis may take before its first answer."""

_MAX_TEXT: Final = 4_000_000

T = TypeVar("T")


class Documents(Protocol):
    """What the pool reads of the editor: its open documents and encoding."""

    @property
    def position_encoding(self) -> str: ...

    def open_document(self, uri: str) -> OpenDocument | None: ...

    def open_documents(self) -> list[OpenDocument]: ...


@dataclass(frozen=True, slots=True)
class ServerStatus:
    """One server as ``rhema.status`` lists it: ``available`` (found, not
    started), ``running`` or ``stopped`` (it ran and exited)."""

    language: str
    name: str
    command: tuple[str, ...]
    state: str
    folder: str | None = None
    pid: int | None = None


class AgentLanguages:
    """The agent's language servers (see the module docstring).

    Parameters
    ----------
    editor
        The documents (and position encoding) the tools see.
    roots
        The workspace folders now (they change); a server serves the
        deepest one holding the document.
    configured
        Commands by language id or family (the ``languageServers`` setting).
    user_file
        The user config file's ``languageServers`` (blocking: read in a
        worker thread each time a server is chosen); ``configured`` wins
        for a language both name.
    which
        Looks a command up on ``PATH`` (tests pass their own).
    options
        ``initializationOptions`` by language id or family (the
        ``languageServers`` setting's), merged over the agent's.
    user_options
        The user config file's (blocking, read with ``user_file``);
        ``options`` wins.
    """

    def __init__(
        self,
        editor: Documents,
        roots: Callable[[], Sequence[Path]],
        configured: Mapping[str, Sequence[str]] | None = None,
        which: Callable[[str], str | None] | None = None,
        user_file: Callable[[], Mapping[str, Sequence[str]]] | None = None,
        options: Mapping[str, Mapping[str, Any]] | None = None,
        user_options: Callable[[], Mapping[str, Mapping[str, Any]]] | None = None,
    ) -> None:
        self.editor = editor
        self.roots = roots
        self.configured: Mapping[str, Sequence[str]] = dict(configured or {})
        self._which = which
        self._user_file = user_file
        self.options: Mapping[str, Mapping[str, Any]] = dict(options or {})
        self._user_options = user_options
        self._servers: dict[tuple[Path, str], Connection] = {}
        self._strikes: dict[tuple[Path, str], int] = {}
        self._refused: dict[tuple[Path, str], tuple[float, str]] = {}
        self._lock = asyncio.Lock()
        self._closed = False

    def _commands(self) -> Mapping[str, Sequence[str]]:
        """The configured commands over the user config file's (blocking)."""
        if self._user_file is None:
            return self.configured
        return {**self._user_file(), **self.configured}

    def _options(self, language: str) -> Mapping[str, Any] | None:
        """The user's ``initializationOptions`` for ``language`` (blocking)."""
        given = {**(self._user_options() if self._user_options else {}), **self.options}
        return given.get(language, given.get(family_of(language)))

    def _choose(self, language: str, commands: Mapping[str, Sequence[str]]) -> ServerChoice | None:
        """The server for ``language`` (blocking: looks on ``PATH``)."""
        if self._which is not None:
            return choose(language, commands, self._which)
        roots = list(self.roots())
        return choose(language, commands, lambda name: find_program(name, roots))

    def _root_of(self, path: Path) -> Path:
        roots = [Path(root) for root in self.roots()]
        for root in sorted(roots, key=lambda r: len(r.parts), reverse=True):
            if path.is_relative_to(root):
                return root
        return path.parent

    async def _server(self, uri: str, folder_wide: bool) -> tuple[Connection, str] | None:
        path = uri_to_path(uri)
        language = asked_language(
            path,
            folder_wide=folder_wide,
            running=[key[1] for key, server in self._servers.items() if server.alive],
            open_paths=[uri_to_path(document.uri) for document in self.editor.open_documents()],
        )
        if language is None:
            return None
        commands = await anyio.to_thread.run_sync(self._commands)
        choice = await anyio.to_thread.run_sync(self._choose, language, commands)
        if choice is None:
            return None
        key = (self._root_of(path), family_of(language))
        async with self._lock:
            if self._closed:
                raise LanguageFailed("the language servers are shutting down")
            server = self._servers.get(key)
            if server is not None and server.alive:
                return server, language
            if server is not None:  # it exited, or failed a question
                self._strike(key, server, f"the language server {server.name} exited")
                await server.kill()
            refused = self._refused.get(key)
            if refused is not None and time.monotonic() < refused[0]:
                left = refused[0] - time.monotonic()
                raise LanguageFailed(f"{refused[1]} (not tried again for {left:.0f} s)")
            roots = list(self.roots())
            options = await anyio.to_thread.run_sync(self._options, language)
            server = Connection(choice.name, choice.command, key[0], roots, options)
            self._servers[key] = server
            try:
                await server.start()
            except LanguageFailed as exc:
                self._strike(key, server, str(exc))
                await server.kill()
                raise
            return server, language

    def _strike(self, key: tuple[Path, str], server: Connection, why: str) -> None:
        """Count ``server``'s failure once; the second refuses its key for a while."""
        if server.strikes_counted:
            return
        server.strikes_counted = True
        strikes = self._strikes.get(key, 0) + 1
        self._strikes[key] = strikes
        if strikes >= STRIKES:
            self._refused[key] = (time.monotonic() + RETRY_AFTER, why)
            self._strikes[key] = STRIKES - 1  # after the wait: one more start

    async def _asking(
        self, uri: str, ask: Callable[[Connection, str], Awaitable[T]], folder_wide: bool = False
    ) -> T | None:
        """``ask`` the server of ``uri``'s language (:mod:`~rhema_lsp.language.serving`);
        a failure that leaves it unusable is a strike (see the module docstring)."""
        found = await self._server(uri, folder_wide)
        if found is None:
            return None
        server, language = found
        try:
            return await ask(server, language)
        except LanguageFailed as exc:
            if not server.alive:
                self._strike((server.folder, family_of(language)), server, str(exc))
            raise

    async def _sync(self, server: Connection, uri: str, language: str) -> None:
        for document in self.editor.open_documents():
            other = language_of(uri_to_path(document.uri))
            if other is not None and family_of(other) == family_of(language):
                await server.sync(document.uri, other, document.text)
        if language_of(uri_to_path(uri)) is None:
            return
        text = await self._text(uri)
        if text is not None:
            await server.sync(uri, language, text)

    async def _text(self, uri: str) -> str | None:
        document = self.editor.open_document(uri)
        return document.text if document is not None else await _read(uri_to_path(uri))

    async def request(
        self, method: str, params: Mapping[str, Any], *, uri: str
    ) -> LanguageAnswer | None:
        """Ask the server of ``uri``'s language (see the module docstring)."""

        async def ask(server: Connection, language: str) -> LanguageAnswer:
            return await self._request(server, language, method, params, uri)

        return await self._asking(uri, ask, method in FOLDER_WIDE)

    async def _request(
        self, server: Connection, language: str, method: str, params: Mapping[str, Any], uri: str
    ) -> LanguageAnswer:
        await self._sync(server, uri, language)
        if not server.warm:
            # A fresh server answers cross-file questions before it has
            # found the workspace's files (pyright: references in the asked
            # file only); its first diagnostics wait out that first analysis.
            await server.diagnostics(uri, WARM_WAIT)
            server.warm = True
        ours, theirs = self.editor.position_encoding, server.encoding
        sent = await recode_params(params, ours, theirs, self._text)
        result = await server.request(method, sent)
        return LanguageAnswer(await recode_result(result, theirs, ours, self._text), server.name)

    async def diagnostics(
        self, uri: str, version: int | None, *, wait: float
    ) -> DiagnosticsAnswer | None:
        """The problems of ``uri``'s current text (the editor's, else the file's)."""

        async def ask(server: Connection, language: str) -> DiagnosticsAnswer:
            return await self._diagnostics(server, language, uri, wait)

        return await self._asking(uri, ask)

    async def _diagnostics(
        self, server: Connection, language: str, uri: str, wait: float
    ) -> DiagnosticsAnswer:
        await self._sync(server, uri, language)
        answer = await server.diagnostics(uri, wait if server.warm else max(wait, WARM_WAIT))
        server.warm = server.warm or answer.complete
        ours, theirs = self.editor.position_encoding, server.encoding
        if ours == theirs:
            return answer
        text = await self._text(uri)
        items = await recode_result(list(answer.diagnostics), theirs, ours, self._text, uri, text)
        return DiagnosticsAnswer(items, answer.source, answer.complete)

    def status(self) -> list[ServerStatus]:
        """Every language's server: those started, then those found but not
        started (``rhema.status``). Looks on ``PATH`` and reads the user
        config file: call off the loop."""
        listed = [
            ServerStatus(
                family,
                server.name,
                server.command,
                "running" if server.alive else "stopped",
                str(folder),
                server.pid if server.alive else None,
            )
            for (folder, family), server in self._servers.items()
        ]
        started = {entry.language for entry in listed}
        commands = self._commands()
        for family in sorted({*KNOWN, *commands} - started):
            choice = self._choose(family, commands)
            if choice is not None:
                listed.append(ServerStatus(family, choice.name, choice.command, "available"))
        return listed

    async def aclose(self) -> None:
        """Stop every server; later questions are refused."""
        async with self._lock:
            self._closed = True
            servers = list(self._servers.values())
        await asyncio.gather(*(server.close() for server in servers), return_exceptions=True)


async def _read(path: Path) -> str | None:
    def read() -> str | None:
        try:
            with path.open("rb") as handle:
                data = handle.read(_MAX_TEXT + 1)
        except OSError:
            return None
        if len(data) > _MAX_TEXT:
            return None
        return data.decode("utf-8", "replace")

    return await anyio.to_thread.run_sync(read)
