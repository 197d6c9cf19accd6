"""Inline completion and next-edit suggestions over LSP.

``textDocument/inlineCompletion`` (LSP 3.18) is declared at ``initialize``
whatever the client declared, and answered from the live document (the
editor's unsaved text) by the completer (:mod:`rhema_lsp.completion`);
``textDocument/copilotInlineEdit`` (the shape copilot-language-server
speaks: ``{textDocument: {uri, version}, position}`` to ``{edits: [{text,
textDocument, range}]}``) asks the model for the next edit in the Zeta
format, from the edit history kept from the document notifications, and
answers it only for exactly the version asked about (a stale version, or a
document changed while the model answered, gets no edit).

The completion package (httpx, the providers) loads with the first
request, off the event loop: ``initialize`` loads nothing more. The model is
chosen from the ``completion*`` settings over the chat's (a completion
provider or base URL of its own takes none of the chat's), again when they
change; its HTTP client is closed at ``shutdown``. ``inlineCompletion:
false`` turns both off. A protected file (``.env``, keys) is never sent.
The prompt's import context (the definitions the document's imports name)
is read through the confinement gate over the workspace folders the roots
policy serves (:mod:`rhema_lsp.completion.import_context`).
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from rhema_lsp.completion.nes import EditHistory
from rhema_lsp.server.app import RhemaServer

if TYPE_CHECKING:
    from rhema_lsp.completion.completer import Completer
    from rhema_lsp.completion.import_context import ImportContext
    from rhema_lsp.completion.model import CompletionModel
    from rhema_lsp.runs.settings import Settings

__all__ = ["INLINE_EDIT", "Inline", "register_inline"]

logger = logging.getLogger("rhema_lsp.completion")

INLINE_EDIT = "textDocument/copilotInlineEdit"

NES_SYSTEM = (
    "You predict the user's next edit. Rewrite the excerpt between "
    "<|editable_region_start|> and <|editable_region_end|> as it should read after the "
    "next edit the user's recent edits call for; answer with the region and its markers only."
)


def _model_key(settings: Settings) -> tuple[Any, ...]:
    own = settings.completion_provider is not None or settings.completion_base_url is not None
    if own:
        return (
            settings.completion_provider,
            settings.completion_model,
            settings.completion_base_url,
            None,
        )
    return (
        settings.provider,
        settings.completion_model or settings.model,
        settings.base_url,
        settings.protocol,
    )


def _path(uri: str) -> str:
    parts = PurePosixPath(unquote(urlsplit(uri).path)).parts
    return "/".join(parts[-3:]) if parts else uri


class Inline:
    """The server's inline features: the completer, the model, the history."""

    def __init__(self, server: RhemaServer) -> None:
        self.server = server
        self.history = EditHistory()
        self._model: CompletionModel | None = None
        self._completer: Completer | None = None
        self._key: tuple[Any, ...] | None = None
        self._edits: dict[str, asyncio.Future[Any]] = {}
        self._context: ImportContext | None = None

    @property
    def enabled(self) -> bool:
        return self.server.settings.inline_completion

    async def completer(self) -> Completer:
        """The completer on the model the settings name now."""
        await asyncio.to_thread(importlib.import_module, "rhema_lsp.completion.model")
        from rhema_lsp.completion.completer import Completer
        from rhema_lsp.completion.model import CompletionConfig, CompletionModel
        from rhema_lsp.providers.choices import ProviderSettings

        settings = self.server.settings
        key = _model_key(settings)
        if self._model is None or self._completer is None or key != self._key:
            if self._model is not None:
                await self._model.aclose()
            provider, model, base_url, protocol = key
            self._key = key
            self._model = CompletionModel(
                CompletionConfig(
                    ProviderSettings(
                        provider=provider, model=model, base_url=base_url, protocol=protocol
                    )
                )
            )
            self._completer = Completer(
                self._model.middle, settings.completion_debounce / 1000, self._imports
            )
            for uri, document in self.server.workspace.text_documents.items():
                self._completer.changed(uri, document.source, 0)
        self._completer.debounce = settings.completion_debounce / 1000
        return self._completer

    async def _imports(self, uri: str) -> Sequence[tuple[str, str]]:
        """The definitions the document's imports name, through the gate."""
        document = self.server.workspace.text_documents.get(uri)
        if document is None:
            return ()
        if self._context is None:
            from rhema_lsp.completion.import_context import ImportContext
            from rhema_lsp.server.lsp_editor import LspEditor

            self._context = ImportContext(self._roots, LspEditor(self.server))
        try:
            found = await self._context.snippets(uri, document.source, document.version)
        except Exception as exc:  # noqa: BLE001 -- no context is still a suggestion
            logger.info("no import context: %s", exc)
            return ()
        return [(snippet.name, snippet.text) for snippet in found]

    def _roots(self) -> list[Path]:
        """The workspace folders that confine something (the roots policy's)."""
        from rhema_lsp.tools.gate import unsafe_root_reason
        from rhema_lsp.tools.positions import uri_to_path

        workspace = self.server.workspace
        found = [uri_to_path(folder.uri) for folder in workspace.folders.values()]
        if not found and workspace.root_path:
            found = [Path(workspace.root_path)]
        roots = [Path(os.path.realpath(root)) for root in found]
        return [root for root in roots if unsafe_root_reason(root) is None]

    def describe(self) -> str | None:
        """Which model completes (``None``: none asked yet)."""
        if not self.enabled:
            return "off (rhema.inlineCompletion is false)"
        return self._model.describe() if self._model is not None else None

    # -- the document notifications ---------------------------------------------------

    def opened(self, uri: str, text: str) -> None:
        self.history.opened(uri, text)

    def changed(self, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        document = self.server.workspace.text_documents.get(uri)
        if document is None:
            return
        from rhema_lsp.completion.completer import protected

        if protected(uri):
            return
        text = document.source
        self.history.changed(uri, _path(uri), text)
        if self._completer is not None:
            line = 0
            for change in params.content_changes:
                if isinstance(change, types.TextDocumentContentChangePartial):
                    line = change.range.start.line
            self._completer.changed(uri, text, line)

    def closed(self, uri: str) -> None:
        self.history.closed(uri)
        if self._context is not None:
            self._context.forget(uri)
        if self._completer is not None:
            self._completer.closed(uri)
        work = self._edits.pop(uri, None)
        if work is not None:
            work.cancel()

    async def close(self) -> None:
        for work in self._edits.values():
            work.cancel()
        self._edits.clear()
        if self._model is not None:
            await self._model.aclose()

    # -- the requests -------------------------------------------------------------------

    async def complete(self, params: types.InlineCompletionParams) -> types.InlineCompletionList:
        empty = types.InlineCompletionList(items=[])
        uri = params.text_document.uri
        document = self.server.workspace.text_documents.get(uri)
        if not self.enabled or document is None:
            return empty
        text = document.source
        position = params.position
        completer = await self.completer()
        suggestion = await completer.complete(uri, text, position.line, position.character)
        if suggestion is None:
            return empty
        end = position
        if suggestion.replace_tail:
            from rhema_lsp.completion.window import offset_of, position_of

            line_end = text.find("\n", offset_of(text, position.line, position.character))
            line, character = position_of(text, len(text) if line_end < 0 else line_end)
            end = types.Position(line=line, character=character)
        return types.InlineCompletionList(
            items=[
                types.InlineCompletionItem(
                    insert_text=suggestion.text, range=types.Range(start=position, end=end)
                )
            ]
        )

    async def next_edit(self, raw: Any) -> dict[str, Any]:
        uri, version, line, character = _inline_edit_params(raw)
        none: dict[str, Any] = {"edits": []}
        document = self.server.workspace.text_documents.get(uri)
        if not self.enabled or document is None or document.version != version:
            return none
        from rhema_lsp.completion.completer import protected

        if protected(uri):
            return none
        previous = self._edits.pop(uri, None)
        if previous is not None:
            previous.cancel()
        work = asyncio.ensure_future(self._next_edit(uri, document.source, line, character))
        self._edits[uri] = work
        try:
            edits = await work
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise
            return none
        finally:
            if self._edits.get(uri) is work:
                del self._edits[uri]
        if document.version != version:
            return none  # the document changed while the model answered
        return {
            "edits": [
                {"text": new, "textDocument": {"uri": uri, "version": version}, "range": where}
                for new, where in edits
            ]
        }

    async def _next_edit(
        self, uri: str, text: str, line: int, character: int
    ) -> list[tuple[str, dict[str, Any]]]:
        from rhema_lsp.completion.model import ModelUnavailable
        from rhema_lsp.completion.nes import minimal_edits, rewritten_region, zeta_prompt
        from rhema_lsp.completion.window import offset_of, position_of

        await self.completer()
        model = self._model
        assert model is not None
        prompt = zeta_prompt(
            _path(uri), self.history.events(uri), text, offset_of(text, line, character)
        )
        try:
            choice = await model.choice()
            answer = None
            if "zeta" in choice.model.lower():
                answer = await model.raw(prompt.text, max_tokens=512)
            if answer is None:
                answer = await model.chat(NES_SYSTEM, prompt.text, max_tokens=1024)
        except ModelUnavailable as exc:
            logger.info("no next edit: %s", exc)
            return []
        region = rewritten_region(answer)
        if region is None:
            return []
        found = []
        for edit in minimal_edits(text, prompt, region):
            start, end = position_of(text, edit.start), position_of(text, edit.end)
            where = {
                "start": {"line": start[0], "character": start[1]},
                "end": {"line": end[0], "character": end[1]},
            }
            found.append((edit.new, where))
        return found


def _inline_edit_params(raw: Any) -> tuple[str, int, int, int]:
    """``{textDocument: {uri, version}, position: {line, character}}``, checked."""
    params = raw if isinstance(raw, dict) else _plain(raw)
    try:
        document, position = params["textDocument"], params["position"]
        uri, version = document["uri"], document["version"]
        line, character = position["line"], position["character"]
    except (KeyError, TypeError):
        raise JsonRpcInvalidParams(
            f"{INLINE_EDIT} takes {{textDocument: {{uri, version}}, position}}"
        ) from None
    numbers = (version, line, character)
    if not isinstance(uri, str) or not all(
        isinstance(n, int) and not isinstance(n, bool) and 0 <= n < 2**31 for n in numbers
    ):
        raise JsonRpcInvalidParams(f"{INLINE_EDIT}: a string uri and whole-number positions")
    return uri, version, line, character


def _plain(value: Any) -> Any:
    """pygls' structured object of an unknown method's params, as plain JSON."""
    if hasattr(value, "_asdict"):
        return {key: _plain(item) for key, item in value._asdict().items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def register_inline(server: RhemaServer) -> Inline:
    """Register the inline features on ``server``; the document notifications
    are the caller's to forward (:meth:`Inline.changed`, ...)."""
    inline = Inline(server)

    @server.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions())
    async def inline_completion(
        ls: RhemaServer, params: types.InlineCompletionParams
    ) -> types.InlineCompletionList:
        return await inline.complete(params)

    @server.feature(INLINE_EDIT)
    async def inline_edit(ls: RhemaServer, params: Any) -> dict[str, Any]:
        return await inline.next_edit(params)

    return inline
