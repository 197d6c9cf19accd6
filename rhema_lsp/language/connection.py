"""One running language server of the agent's: its start, its view of the
documents, its requests and its diagnostics.

:class:`Connection` starts the server's command in the folder (a process
group of its own) through the spawn gate (:mod:`~rhema_lsp.tools.spawn`:
its program found on a ``PATH`` without the workspace's or relative
entries, its environment without provider keys), ``initialize``\\ s it for
that folder (declaring pull diagnostics and versioned
``publishDiagnostics``, with the options that keep it from running the
repository's code, :mod:`~rhema_lsp.language.options`), and answers the
server's own requests (``workspace/configuration`` with those options for
its section and nulls otherwise, registrations and progress with nothing).
Rules:

- Documents are synced before each question: :meth:`Connection.sync` sends
  ``didOpen`` for a document it has not seen and ``didChange`` (full text,
  version + 1) for one whose text changed, so the server always answers
  about the text the caller gives (the editor's, unsaved buffers included).
- Diagnostics: ``textDocument/diagnostic`` when the server offers it, else
  the ``publishDiagnostics`` that carries the synced version (or, for a
  server that sends none, the first after the sync), within ``wait``
  seconds; ``complete=False`` otherwise.
- Every wait is bounded; a server that exits, hangs past a bound or writes
  garbage raises :class:`~rhema_lsp.tools.LanguageFailed` naming it, is
  :attr:`Connection.alive` no more, and its process group is killed at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import anyio.to_thread

from rhema_lsp.jsonrpc.child import RpcError, ServerGone, StdioEndpoint
from rhema_lsp.language.options import SECTIONS, initialization_options
from rhema_lsp.tools.language import DiagnosticsAnswer, LanguageFailed
from rhema_lsp.tools.spawn import Launch, Unlaunchable, launch

__all__ = ["REQUEST_TIMEOUT", "START_TIMEOUT", "Connection"]

START_TIMEOUT: Final = 10.0
"""Seconds a server may take to start and answer ``initialize``."""

REQUEST_TIMEOUT: Final = 20.0
"""Seconds one request may take."""

_CAPABILITIES: Final[Mapping[str, Any]] = {
    "general": {"positionEncodings": ["utf-16"]},
    "workspace": {"configuration": True, "workspaceFolders": True},
    "textDocument": {
        "synchronization": {"dynamicRegistration": False, "didSave": False},
        "publishDiagnostics": {"versionSupport": True, "relatedInformation": False},
        "diagnostic": {"dynamicRegistration": False, "relatedDocumentSupport": False},
        "definition": {"linkSupport": True},
        "references": {},
        "documentSymbol": {"hierarchicalDocumentSymbolSupport": True},
        "rename": {"prepareSupport": False},
    },
    "window": {"workDoneProgress": False},
}


class Connection:
    """One language server for one folder (see the module docstring).

    Parameters
    ----------
    name
        The server's name as the tools show it (``basedpyright``).
    command
        Its command line.
    folder
        The workspace folder it serves.
    roots
        The workspace roots (default: the folder): no ``PATH`` entry inside
        them is searched for its program.
    options
        The user's ``initializationOptions``, merged over ours.
    """

    def __init__(
        self,
        name: str,
        command: Sequence[str],
        folder: Path,
        roots: Sequence[Path] = (),
        options: Mapping[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.command = tuple(command)
        self.folder = folder
        self.roots = tuple(roots) or (folder,)
        self.given = options
        self.options: dict[str, Any] | None = None
        """The ``initializationOptions`` sent (once started)."""
        self.section: str | None = None
        self.strikes_counted = False
        """Whether the pool counted this server's failure (its breaker's flag)."""
        self.endpoint: StdioEndpoint | None = None
        self.capabilities: Mapping[str, Any] = {}
        self.encoding = "utf-16"
        self._documents: dict[str, tuple[int, str]] = {}
        self._published: dict[str, tuple[int | None, list[Any]]] = {}
        self._changed = asyncio.Condition()
        self._failed: str | None = None
        self.warm = False
        """Whether its first analysis is known to be done (the pool's flag)."""

    @property
    def alive(self) -> bool:
        """Whether the server is running and usable."""
        return (
            self.endpoint is not None
            and self.endpoint.process.returncode is None
            and self.endpoint.broken is None
            and self._failed is None
        )

    @property
    def pid(self) -> int | None:
        """The server's process id (``None``: not started)."""
        return None if self.endpoint is None else self.endpoint.process.pid

    def _failure(self, what: str, exc: BaseException | None = None) -> LanguageFailed:
        said = f": {exc}" if exc is not None and str(exc) else ""
        self._failed = f"{what}{said}"
        if self.endpoint is not None:
            self.endpoint.kill()  # hung or garbled: nothing more is asked of it
        return LanguageFailed(f"the language server {self.name} {what}{said}")

    def _gone(self, exc: ServerGone) -> LanguageFailed:
        broken = self.endpoint.broken if self.endpoint is not None else None
        if broken is not None and broken.startswith("it wrote"):
            return self._failure("is unusable", exc)
        return self._failure("exited", exc)

    async def start(self) -> None:
        """Start and initialize the server.

        Raises
        ------
        LanguageFailed
            It could not be started, or did not initialize in time.
        """
        try:
            started = await anyio.to_thread.run_sync(self._launch)
            self.endpoint = await StdioEndpoint.spawn(started.argv, started.env, cwd=self.folder)
        except (OSError, Unlaunchable) as exc:
            raise self._failure("could not be started", exc) from None
        self.endpoint.on("workspace/configuration", self._configuration)
        self.endpoint.on("client/registerCapability", _nothing)
        self.endpoint.on("client/unregisterCapability", _nothing)
        self.endpoint.on("window/workDoneProgress/create", _nothing)
        self.endpoint.on("workspace/workspaceFolders", self._folders)
        self.endpoint.on("textDocument/publishDiagnostics", self._publish)
        for quiet in ("window/logMessage", "window/showMessage", "$/progress", "telemetry/event"):
            self.endpoint.on(quiet, _nothing)
        params = {
            "processId": os.getpid(),
            "clientInfo": {"name": "rhema-lsp"},
            "rootUri": self.folder.as_uri(),
            "rootPath": str(self.folder),
            "workspaceFolders": self._folders(None),
            "capabilities": _CAPABILITIES,
        }
        if self.options is not None:
            params["initializationOptions"] = self.options
        result = await self._ask("initialize", params, START_TIMEOUT, "did not initialize")
        capabilities = result.get("capabilities") if isinstance(result, Mapping) else None
        if not isinstance(capabilities, Mapping):
            raise self._failure("answered initialize without capabilities")
        self.capabilities = capabilities
        encoding = capabilities.get("positionEncoding", "utf-16")
        self.encoding = encoding if encoding in ("utf-8", "utf-16", "utf-32") else "utf-16"
        await self._tell("initialized", {})

    def _launch(self) -> Launch:
        """The gate's launch of the command, and the options it gets (blocking)."""
        started = launch(self.command, roots=self.roots, cwd=self.folder)
        self.options = initialization_options(started.argv, self.roots, self.given)
        self.section = SECTIONS.get(Path(started.argv[0]).name)
        return started

    def _folders(self, _params: Any) -> list[dict[str, str]]:
        return [{"uri": self.folder.as_uri(), "name": self.folder.name}]

    def _configuration(self, params: Any) -> list[Any]:
        items = params.get("items") if isinstance(params, Mapping) else None
        if not isinstance(items, list):
            return []
        return [
            self.options
            if isinstance(item, Mapping) and self.section and item.get("section") == self.section
            else None
            for item in items
        ]

    async def _publish(self, params: Any) -> None:
        if not isinstance(params, Mapping) or not isinstance(params.get("uri"), str):
            return
        diagnostics = params.get("diagnostics")
        version = params.get("version")
        self._published[params["uri"]] = (
            version if isinstance(version, int) else None,
            diagnostics if isinstance(diagnostics, list) else [],
        )
        async with self._changed:
            self._changed.notify_all()

    async def _ask(self, method: str, params: Any, limit: float, late: str) -> Any:
        if self.endpoint is None or not self.alive:
            raise LanguageFailed(f"the language server {self.name} is not running")
        try:
            return await asyncio.wait_for(self.endpoint.request(method, params), limit)
        except TimeoutError:
            raise self._failure(f"{late} within {limit:g} s") from None
        except ServerGone as exc:
            raise self._gone(exc) from None
        except RpcError as exc:
            raise LanguageFailed(
                f"the language server {self.name} refused {method}: {exc.message}"
            ) from None

    async def _tell(self, method: str, params: Any) -> None:
        if self.endpoint is None or not self.alive:
            raise LanguageFailed(f"the language server {self.name} is not running")
        try:
            await self.endpoint.notify(method, params)
        except ServerGone as exc:
            raise self._gone(exc) from None

    async def sync(self, uri: str, language: str, text: str) -> int:
        """Make the server's text of ``uri`` be ``text``; its version there."""
        known = self._documents.get(uri)
        if known is not None and known[1] == text:
            return known[0]
        if known is None:
            version = 1
            document = {"uri": uri, "languageId": language, "version": version, "text": text}
            await self._tell("textDocument/didOpen", {"textDocument": document})
        else:
            version = known[0] + 1
            await self._tell(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": version},
                    "contentChanges": [{"text": text}],
                },
            )
        self._published.pop(uri, None)
        self._documents[uri] = (version, text)
        return version

    async def request(self, method: str, params: Mapping[str, Any]) -> Any:
        """Send ``method``; its raw result."""
        return await self._ask(method, params, REQUEST_TIMEOUT, "did not answer")

    async def diagnostics(self, uri: str, wait: float) -> DiagnosticsAnswer:
        """The problems of the synced text of ``uri``, within ``wait`` seconds."""
        version = self._documents.get(uri, (None, ""))[0]
        if self.capabilities.get("diagnosticProvider"):
            params = {"textDocument": {"uri": uri}}
            try:
                assert self.endpoint is not None
                report = await asyncio.wait_for(
                    self.endpoint.request("textDocument/diagnostic", params), wait
                )
            except TimeoutError:
                return DiagnosticsAnswer([], self.name, complete=False)
            except ServerGone as exc:
                raise self._gone(exc) from None
            except RpcError as exc:
                raise LanguageFailed(
                    f"the language server {self.name} refused textDocument/diagnostic: "
                    f"{exc.message}"
                ) from None
            items = report.get("items") if isinstance(report, Mapping) else None
            if isinstance(items, list):
                return DiagnosticsAnswer(items, self.name)
        return await self._published_for(uri, version, wait)

    async def _published_for(self, uri: str, version: int | None, wait: float) -> DiagnosticsAnswer:
        def ready() -> bool:
            found = self._published.get(uri)
            return found is not None and (found[0] is None or found[0] == version)

        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(wait), self._changed:
                await self._changed.wait_for(ready)
        if ready():
            return DiagnosticsAnswer(self._published[uri][1], self.name)
        if not self.alive:
            raise LanguageFailed(f"the language server {self.name} exited")
        return DiagnosticsAnswer([], self.name, complete=False)

    async def close(self) -> None:
        """Shut the server down politely, else kill its process group."""
        if self.endpoint is not None:
            await self.endpoint.close()

    async def kill(self) -> None:
        """Kill the server's process group now (a server that failed)."""
        if self.endpoint is not None:
            self.endpoint.kill()
            await self.endpoint.process.wait()
            await self.endpoint.close()


def _nothing(_params: Any) -> None:
    """The answer to the server's registrations and progress: nothing."""
