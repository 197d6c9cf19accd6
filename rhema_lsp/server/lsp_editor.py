"""The tools' :class:`~rhema_lsp.tools.Editor`, served over LSP.

Documents come from the client's document sync (unsaved text and version);
edits go out as ``workspace/applyEdit``; confirmations as
``window/showMessageRequest``. URIs are matched by decoded path, and edits
are re-addressed to the URI the client itself used for an open document, so
an edit never lands in a second buffer for the same file.

Some clients (Neovim) answer ``applied: true`` for an edit they skipped on a
stale buffer. So after an applied edit, every touched open document is
awaited until the document sync shows the expected text; a mismatch is
reported as a failure the model is told about.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from rhema_lsp.tools import EditOutcome, OpenDocument
from rhema_lsp.tools.editor import not_landed, unmet_expectations
from rhema_lsp.tools.positions import uri_to_path

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

__all__ = ["SYNC_WAIT", "LspEditor"]

SYNC_WAIT = 2.0
"""Seconds to wait for the document sync to show an applied edit."""


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

    def __init__(self, server: LanguageServer) -> None:
        self._server = server
        self._changed = asyncio.Condition()

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

    def open_document(self, uri: str) -> OpenDocument | None:
        client_uri = self._find(uri)
        if client_uri is None:
            return None
        document = self._server.workspace.text_documents[client_uri]
        return OpenDocument(uri=uri, text=document.source, version=document.version)

    def open_documents(self) -> list[OpenDocument]:
        return [
            OpenDocument(uri=uri, text=doc.source, version=doc.version)
            for uri, doc in self._server.workspace.text_documents.items()
            if uri.startswith("file:")
        ]

    async def documents_changed(self) -> None:
        """Called by the server after every didOpen, didChange and didClose."""
        async with self._changed:
            self._changed.notify_all()

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
        result = await self._server.workspace_apply_edit_async(
            types.ApplyWorkspaceEditParams(edit=edit, label=label)
        )
        if not result.applied:
            reason = result.failure_reason or "the editor rejected the edit"
            return EditOutcome(applied=False, reason=reason)
        return await self._verify(expected)

    async def _verify(self, expected: Mapping[str, str | None]) -> EditOutcome:
        try:
            async with asyncio.timeout(SYNC_WAIT), self._changed:
                await self._changed.wait_for(lambda: not unmet_expectations(self, expected))
        except TimeoutError:
            unmet = unmet_expectations(self, expected)
            return not_landed(", ".join(str(uri_to_path(uri)) for uri in unmet))
        return EditOutcome(applied=True)

    async def confirm(self, message: str, choices: Sequence[str]) -> str | None:
        answer = await self._server.window_show_message_request_async(
            types.ShowMessageRequestParams(
                type=types.MessageType.Warning,
                message=message,
                actions=[types.MessageActionItem(title=choice) for choice in choices],
            )
        )
        return answer.title if answer is not None and answer.title in choices else None
