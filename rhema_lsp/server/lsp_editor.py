"""The tools' :class:`~rhema_lsp.tools.Editor`, served over LSP.

Documents come from the client's document sync (unsaved text and version);
edits go out as ``workspace/applyEdit``; confirmations as
``window/showMessageRequest``. URIs are matched by decoded path, and edits
are re-addressed to the URI the client itself used for an open document, so
an edit never lands in a second buffer for the same file.

Some clients (Neovim) answer ``applied: true`` for an edit they skipped on a
stale buffer. So after an applied edit, every touched open document is
awaited until the document sync shows the expected text; a document that
changed to something else (the user typed) is reported as a failure the
model is told about.

Other clients (eglot) send ``didChange`` only when idle, long after they
answered. A document whose sync shows no change at all by then holds the
edit *provisionally*: tools read the expected text, the next edit is
computed against it and sent with ``version: null`` (the client's version
after an edit is not knowable), and the first sync that arrives settles it:
the expected text confirms it; anything else is the client's real text,
which wins (a later edit computed on it, or refused by it, tells the model).

Pages for the user (an MCP server's sign-in) open with ``window/showDocument``
(``external``) when the client supports it. A line of text (an MCP form's
free-text field) is asked with ``rhema/askText`` of a client that declared
``askText``, under the same timeout as a confirmation.

Confirmations never hang a run: an unanswered question counts as declined
after ``approval_timeout`` seconds (and is withdrawn with ``$/cancelRequest``),
as does an error reply; a client error on ``workspace/applyEdit`` is an
ordinary rejected edit.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from rhema_lsp.contract.client import ASK_TEXT
from rhema_lsp.tools import EditOutcome, OpenDocument
from rhema_lsp.tools.editor import not_landed, unmet_expectations
from rhema_lsp.tools.positions import uri_to_path

if TYPE_CHECKING:
    from rhema_lsp.server.pygls_adapter import LspServer

__all__ = ["SYNC_WAIT", "LspEditor"]

logger = logging.getLogger(__name__)

SYNC_WAIT = 2.0
"""Seconds to wait for the document sync to show an applied edit."""


@dataclass(frozen=True, slots=True)
class _Provisional:
    """An applied edit the document sync has not shown yet: the text the
    client holds, and the synced state it was applied on."""

    text: str
    synced_text: str
    synced_version: int


@functools.lru_cache(maxsize=4096)
def _key(uri: str) -> Path | None:
    """The real path a URI names; remembered, since document lookups run it
    for every open document."""
    try:
        path = uri_to_path(uri)
    except ValueError:
        return None
    try:
        return path.resolve()
    except OSError:
        return path


class LspEditor:
    """The editor on the other end of the LSP connection."""

    def __init__(self, server: LspServer, approval_timeout: float = 120.0) -> None:
        self._server = server
        self._changed = asyncio.Condition()
        self._provisional: dict[Path, _Provisional] = {}
        self.approval_timeout = approval_timeout

    # -- capabilities -------------------------------------------------------

    @property
    def position_encoding(self) -> str:
        encoding = self._server.workspace.position_encoding
        if isinstance(encoding, types.PositionEncodingKind):
            return str(encoding.value)
        return str(encoding or "utf-16")

    @property
    def _edit_caps(self) -> types.WorkspaceEditClientCapabilities | None:
        workspace = self._server.client_capabilities.workspace
        return workspace.workspace_edit if workspace else None

    @property
    def supports_document_changes(self) -> bool:
        # Resource operations exist only inside ``documentChanges``: a client
        # that advertises them (Neovim does, without ``documentChanges``)
        # accepts versioned document edits too.
        caps = self._edit_caps
        return bool(caps and (caps.document_changes or caps.resource_operations))

    @property
    def supports_resource_operations(self) -> bool:
        caps = self._edit_caps
        ops = (caps.resource_operations or []) if caps else []
        wanted = {
            types.ResourceOperationKind.Create,
            types.ResourceOperationKind.Rename,
            types.ResourceOperationKind.Delete,
        }
        return self.supports_document_changes and wanted <= set(ops)

    @property
    def supports_change_annotations(self) -> bool:
        caps = self._edit_caps
        return bool(caps and caps.change_annotation_support is not None)

    # -- documents ----------------------------------------------------------

    def _find(self, uri: str) -> str | None:
        """The client's own URI for the open document at ``uri``'s path."""
        documents = self._server.workspace.text_documents
        if uri in documents:
            return uri
        wanted = _key(uri)
        if wanted is None:
            return None
        for client_uri in documents:
            if _key(client_uri) == wanted:
                return str(client_uri)
        return None

    def _synced(self, uri: str) -> OpenDocument | None:
        """The document as the document sync last showed it."""
        client_uri = self._find(uri)
        if client_uri is None:
            return None
        document = self._server.workspace.text_documents[client_uri]
        return OpenDocument(uri=uri, text=document.source, version=document.version)

    def open_document(self, uri: str) -> OpenDocument | None:
        synced = self._synced(uri)
        if synced is None:
            return None
        key = _key(uri)
        held = self._provisional.get(key) if key is not None else None
        if held is None:
            return synced
        if synced.text == held.synced_text and synced.version == held.synced_version:
            return OpenDocument(uri=uri, text=held.text, version=None)
        self._settle()
        return synced

    def open_documents(self) -> list[OpenDocument]:
        documents = []
        for uri in self._server.workspace.text_documents:
            if uri.startswith("file:"):
                document = self.open_document(uri)
                if document is not None:
                    documents.append(document)
        return documents

    async def documents_changed(self) -> None:
        """Called by the server after every didOpen, didChange and didClose."""
        self._settle()
        async with self._changed:
            self._changed.notify_all()

    def _settle(self) -> None:
        """Forget the provisional texts the document sync has moved past."""
        for key, held in list(self._provisional.items()):
            synced = self._synced(key.as_uri())
            if synced is not None and (
                synced.text == held.synced_text and synced.version == held.synced_version
            ):
                continue
            del self._provisional[key]
            if synced is not None and synced.text != held.text:
                logger.info(
                    "%s: the editor's text differs from the applied edit's (the user typed); "
                    "its own text wins",
                    key,
                )

    # -- edits --------------------------------------------------------------

    def _readdress(self, edit: types.WorkspaceEdit) -> types.WorkspaceEdit:
        if edit.document_changes:
            for change in edit.document_changes:
                if isinstance(change, types.TextDocumentEdit):
                    client_uri = self._find(change.text_document.uri)
                    if client_uri is not None:
                        change.text_document.uri = client_uri
        if edit.changes:
            edit.changes = {self._find(uri) or uri: edits for uri, edits in edit.changes.items()}
        return edit

    async def apply_edit(
        self, edit: types.WorkspaceEdit, label: str, expected: Mapping[str, str | None]
    ) -> EditOutcome:
        edit = self._readdress(edit)
        before = {uri: self._synced(uri) for uri in expected}
        try:
            result = await self._server.workspace_apply_edit_async(
                types.ApplyWorkspaceEditParams(edit=edit, label=label)
            )
        except JsonRpcException as exc:
            return EditOutcome(applied=False, reason=f"the editor rejected the edit: {exc.message}")
        if not result.applied:
            reason = result.failure_reason or "no reason given"
            return EditOutcome(applied=False, reason=f"the editor rejected the edit: {reason}")
        return await self._verify(expected, before)

    async def _verify(
        self, expected: Mapping[str, str | None], before: Mapping[str, OpenDocument | None]
    ) -> EditOutcome:
        def synced_unmet() -> list[str]:
            return unmet_expectations(_SyncedView(self), expected)

        try:
            async with asyncio.timeout(SYNC_WAIT), self._changed:
                await self._changed.wait_for(lambda: not synced_unmet())
        except TimeoutError:
            moved = []
            for uri in synced_unmet():
                now, then = self._synced(uri), before.get(uri)
                text = expected[uri]
                key = _key(uri)
                if now is None or then is None or now != then or text is None or key is None:
                    moved.append(uri)
                    continue
                # No sync since the edit went out: the client applied it and
                # has not said so yet.
                assert now.version is not None
                self._provisional[key] = _Provisional(text, now.text, now.version)
            if moved:
                for uri in moved:
                    key = _key(uri)
                    if key is not None:
                        self._provisional.pop(key, None)
                return not_landed(", ".join(str(uri_to_path(uri)) for uri in moved))
            return EditOutcome(applied=True)
        for uri in expected:
            key = _key(uri)
            if key is not None:
                self._provisional.pop(key, None)
        return EditOutcome(applied=True)

    async def confirm(self, message: str, choices: Sequence[str]) -> str | None:
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Warning,
            message=message,
            actions=[
                types.MessageActionItem(title=title)
                for title in self._server.client_features.question_actions(choices)
            ],
        )
        answer = await self._ask(types.WINDOW_SHOW_MESSAGE_REQUEST, params, "confirmation")
        title = getattr(answer, "title", None)
        if title is None and isinstance(answer, dict):
            title = answer.get("title")
        return title if title in choices else None

    async def _ask(self, method: str, params: object, what: str) -> object:
        """Send the question ``method`` and its answer; ``None`` when
        unanswered in time (withdrawn) or answered with an error."""
        msg_id = str(uuid.uuid4())
        pending = asyncio.wrap_future(
            self._server.protocol.send_request(method, params, msg_id=msg_id)
        )
        try:
            async with asyncio.timeout(self.approval_timeout):
                return await asyncio.shield(pending)
        except TimeoutError:
            self._server.protocol.withdraw_request(msg_id)
            logger.info("no answer to a %s in %ss: taken as no", what, self.approval_timeout)
        except JsonRpcException as exc:
            logger.info("the editor answered a %s with an error (%s): taken as no", what, exc)
        return None

    @property
    def asks_text(self) -> bool:
        """Whether the client declared ``rhema/askText``."""
        return self._server.client_features.ask_text

    async def ask_text(self, message: str, value: str) -> str | None:
        """Ask the user for a line of text (``rhema/askText``); ``None`` when
        dismissed, unanswered in time or answered with an error."""
        answer = await self._ask(ASK_TEXT, {"message": message, "value": value}, "question")
        text = getattr(answer, "value", None)
        if text is None and isinstance(answer, dict):
            text = answer.get("value")
        return text if isinstance(text, str) else None

    async def show_document(self, uri: str) -> bool:
        """Open ``uri`` in the user's browser; ``False`` when the client
        cannot show documents, or did not."""
        window = self._server.client_capabilities.window
        support = window.show_document if window is not None else None
        if support is None or not support.support:
            return False
        try:
            shown = await self._server.window_show_document_async(
                types.ShowDocumentParams(uri=uri, external=True)
            )
        except JsonRpcException as exc:
            logger.info("the client did not open %s: %s", uri, exc)
            return False
        return bool(shown.success)

    def notify(self, message: str) -> None:
        """Show ``message`` (``window/showMessage``, info): a page the client
        could not open, named for the user to open."""
        self._server.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Info, message=message)
        )


class _SyncedView:
    """The editor as the document sync alone shows it (no provisional texts),
    for :func:`~rhema_lsp.tools.editor.unmet_expectations`."""

    def __init__(self, editor: LspEditor) -> None:
        self._editor = editor

    def open_document(self, uri: str) -> OpenDocument | None:
        return self._editor._synced(uri)
