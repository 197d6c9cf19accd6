"""A test editor: pytest-lsp's client, with the recorded capabilities of a
real editor, buffers of its own, and the client side of the rhema contract.

It applies ``workspace/applyEdit`` to its own buffers in the negotiated
position encoding (checking versions like VS Code does), sends the
resulting ``didChange``, collects ``rhema/event`` notifications, answers
``window/showMessageRequest`` with a preset choice and, for each
``window/showDocument``, keeps what the file held when the request arrived.
"""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from rhema_lsp.tools.positions import apply_text_edits, uri_to_path

EDITORS = ["neovim@v0.11", "visual_studio_code"]


def plain(value: Any) -> Any:
    """pygls hands unknown notifications over as named tuples: make them JSON-like."""
    if hasattr(value, "_asdict"):
        return {key: plain(item) for key, item in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return value


@dataclass
class Buffer:
    uri: str
    text: str
    version: int
    language: str = "python"


@dataclass
class EditorState:
    buffers: dict[str, Buffer] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    edits: list[types.ApplyWorkspaceEditParams] = field(default_factory=list)
    questions: list[types.ShowMessageRequestParams] = field(default_factory=list)
    answer: str | None = None
    reject_edits: bool = False
    skip_stale: bool = False  # Neovim: a stale versioned edit is skipped, yet "applied"
    type_before_apply: tuple[Path, str] | None = None
    shown_texts: list[str | None] = field(default_factory=list)
    """For each ``window/showDocument``, the file's text as it arrived."""
    event_arrived: asyncio.Event = field(default_factory=asyncio.Event)


class EditorClient(LanguageClient):
    """pytest-lsp's LanguageClient acting as an editor."""

    state: EditorState
    encoding: str

    def buffer(self, path: Path) -> Buffer:
        return self.state.buffers[path.as_uri()]

    def open(self, path: Path, text: str | None = None) -> Buffer:
        """Open ``path`` in a buffer; ``text`` (unsaved) differs from disk if given."""
        uri = path.as_uri()
        buffer = Buffer(uri=uri, text=path.read_text() if text is None else text, version=1)
        self.state.buffers[uri] = buffer
        self.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id=buffer.language, version=1, text=buffer.text
                )
            )
        )
        return buffer

    def type_text(self, path: Path, text: str) -> None:
        """The user replaces the buffer's text (a full-text change)."""
        buffer = self.buffer(path)
        buffer.text = text
        buffer.version += 1
        self._did_change(buffer)

    def save(self, uri: str) -> None:
        """Save the buffer of ``uri`` to disk (as an editor does for the
        ``save`` list of a rewind)."""
        uri_to_path(uri).write_text(self.state.buffers[uri].text)

    def _did_change(self, buffer: Buffer) -> None:
        self.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=buffer.uri, version=buffer.version
                ),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=buffer.text)],
            )
        )

    def events_of(self, kind: str) -> list[dict[str, Any]]:
        return [e["event"] for e in self.state.events if e["event"]["type"] == kind]

    async def wait_for_event(self, kind: str) -> dict[str, Any]:
        """The first event of ``kind``, waiting up to 30 s for it."""
        async with asyncio.timeout(30):
            while True:
                found = self.events_of(kind)
                if found:
                    return found[0]
                self.state.event_arrived.clear()
                await self.state.event_arrived.wait()

    async def command(self, name: str, args: dict[str, Any] | None = None) -> Any:
        return await self.workspace_execute_command_async(
            types.ExecuteCommandParams(command=name, arguments=[args or {}])
        )

    # -- server -> client --------------------------------------------------------

    def apply(self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        self.state.edits.append(params)
        if self.state.type_before_apply is not None:
            path, typed = self.state.type_before_apply
            self.state.type_before_apply = None
            self.type_text(path, typed)
        if self.state.reject_edits:
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason="user said no")
        edit = params.edit
        for change in edit.document_changes or []:
            if isinstance(change, types.TextDocumentEdit):
                failure = self._apply_text(
                    change.text_document.uri, list(change.edits), change.text_document.version
                )
            elif isinstance(change, types.CreateFile):
                path = uri_to_path(change.uri)
                options = change.options
                failure = None
                if path.exists() and options is not None and options.ignore_if_exists:
                    continue  # LSP: nothing to do
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text("")
            elif isinstance(change, types.RenameFile):
                uri_to_path(change.old_uri).rename(uri_to_path(change.new_uri))
                failure = None
            else:
                path = uri_to_path(change.uri)
                if path.is_dir():
                    import shutil

                    shutil.rmtree(path)
                else:
                    path.unlink(missing_ok=True)
                self.state.buffers.pop(change.uri, None)
                failure = None
            if failure:
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason=failure)
        for uri, edits in (edit.changes or {}).items():
            failure = self._apply_text(uri, list(edits), None)
            if failure:
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason=failure)
        return types.ApplyWorkspaceEditResult(applied=True)

    def _apply_text(self, uri: str, edits: list[Any], version: int | None) -> str | None:
        buffer = self.state.buffers.get(uri)
        if buffer is None:
            path = uri_to_path(uri)
            text = path.read_text() if path.exists() else ""
            buffer = self.open(path, text)
        if version is not None and version != buffer.version:
            if self.state.skip_stale:
                return None
            return f"version {version} of {uri} is stale (now {buffer.version})"
        buffer.text = apply_text_edits(buffer.text, edits, self.encoding)
        buffer.version += 1
        self._did_change(buffer)
        return None


OUR_CLIENTS = {"events": True, "editSelection": True}
"""The ``clientCapabilities`` our VS Code and Neovim clients declare."""


async def start_editor(
    editor: str,
    folders: list[Path],
    settings: dict[str, Any],
    env: dict[str, str] | None = None,
    *,
    capabilities: types.ClientCapabilities | None = None,
    initialization_options: dict[str, Any] | None = None,
    features: dict[str, Any] | None = None,
) -> EditorClient:
    """Start the real server as a child process and initialise it as ``editor``.

    ``capabilities`` replaces pytest-lsp's recording of ``editor`` (for editors
    it has none of). ``initializationOptions`` are ``settings`` with what our
    VS Code and Neovim clients declare (:data:`OUR_CLIENTS`), unless
    ``initialization_options`` replaces them (``settings`` stay the ``rhema``
    configuration section). ``features`` replace the client's handlers of
    the server's requests and notifications it names.
    """
    client = EditorClient(configuration={"rhema": settings}, converter_factory=default_converter)
    client.state = EditorState()

    def on_show(ls: EditorClient, params: types.ShowDocumentParams) -> types.ShowDocumentResult:
        path = uri_to_path(params.uri)
        ls.state.shown_texts.append(path.read_text() if path.is_file() else None)
        ls.shown_documents.append(params)
        return types.ShowDocumentResult(success=True)

    register_lsp_features(
        client,
        {**DEFAULT_CLIENT_FEATURES, types.WINDOW_SHOW_DOCUMENT: on_show, **(features or {})},
    )

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def on_apply(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        return client.apply(params)

    @client.feature("rhema/event")
    def on_event(params: Any) -> None:
        client.state.events.append(plain(params))
        client.state.event_arrived.set()

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def on_question(params: types.ShowMessageRequestParams) -> types.MessageActionItem | None:
        client.state.questions.append(params)
        if client.state.answer is None:
            return None
        return types.MessageActionItem(title=client.state.answer)

    server_env = {**os.environ, **(env or {})}
    await client.start_io(sys.executable, "-m", "rhema_lsp", env=server_env)
    if capabilities is None:
        capabilities = client_capabilities(editor)
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            workspace_folders=[
                types.WorkspaceFolder(uri=folder.as_uri(), name=folder.name) for folder in folders
            ],
            root_uri=folders[0].as_uri() if folders else None,
            initialization_options={**settings, "clientCapabilities": OUR_CLIENTS}
            if initialization_options is None
            else initialization_options,
        )
    )
    encoding = result.capabilities.position_encoding
    client.encoding = str(getattr(encoding, "value", encoding) or "utf-16")
    client.state.skip_stale = editor.startswith("neovim")
    return client
