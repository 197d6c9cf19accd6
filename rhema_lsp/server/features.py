"""The LSP features the server registers, on pygls' public API.

``initialize`` negotiates what the client renders (:class:`ClientFeatures`)
and takes the settings of ``initializationOptions``; ``initialized`` and
every ``workspace/didChangeConfiguration`` fetch the ``rhema`` section; the
document notifications tell the editor model that buffers changed;
``textDocument/codeAction`` offers the contract's actions; ``shutdown``
shuts the agent service down. The contract's commands are registered by
name, for pygls to advertise them, and served by
:class:`~rhema_lsp.server.pygls_adapter.RhemaProtocol` itself.
:func:`create_server` builds the server with these features.

A notification's work that is cancelled (the client left while it waited on
the client: the settings asked for at ``initialized``, which the end of the
process cancels) ends quietly (:func:`_ends_quietly`): pygls reads a
built-in feature's handler's result in a callback, where a cancellation
would be logged as a traceback.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from rhema_lsp.contract.names import COMMAND_NAMES
from rhema_lsp.runs.settings import parse_settings
from rhema_lsp.server.actions import offered_actions
from rhema_lsp.server.app import RhemaServer
from rhema_lsp.server.clients import ClientFeatures
from rhema_lsp.server.inline import register_inline
from rhema_lsp.server.logs import EditorLogHandler

__all__ = ["create_server", "register_features"]

logger = logging.getLogger("rhema_lsp")

P = ParamSpec("P")


def _ends_quietly(
    handler: Callable[P, Coroutine[Any, Any, None]],
) -> Callable[P, Coroutine[Any, Any, None]]:
    """``handler``, ending as done when it is cancelled: nobody waits for a
    notification's work, and pygls would log the cancellation as a traceback."""

    @functools.wraps(handler)
    async def quietly(*args: P.args, **kwargs: P.kwargs) -> None:
        try:
            await handler(*args, **kwargs)
        except asyncio.CancelledError:
            logger.debug("%s: cancelled (the client left, or the server is ending)", handler)

    return quietly


def _dispatched_by_protocol(*arguments: Any) -> None:
    """Stands in pygls' command table for the contract's commands, which
    :class:`RhemaProtocol` serves itself; never called."""
    raise RuntimeError("rhema commands are served by RhemaProtocol")


def _register_commands(server: RhemaServer) -> None:
    # pygls advertises executeCommandProvider.commands from its command table
    for name in COMMAND_NAMES:
        server.command(name)(_dispatched_by_protocol)


def _encoding(server: RhemaServer) -> str:
    encoding = server.workspace.position_encoding
    if isinstance(encoding, types.PositionEncodingKind):
        return str(encoding.value)
    return str(encoding or "utf-16")


def _show(server: RhemaServer, message: str, kind: types.MessageType) -> None:
    server.window_show_message(types.ShowMessageParams(type=kind, message=message))


async def _load_settings(server: RhemaServer) -> None:
    """Fetch the ``rhema`` section once per change.

    A change notified while a fetch is on its way needs no fetch of its own:
    the client sent it before answering, so the answer already holds it
    (eglot notifies a change right after ``initialized``)."""
    if server._settings_loading:
        return
    section: Any = None
    workspace = server.client_capabilities.workspace
    if workspace is not None and workspace.configuration:
        server._settings_loading = True
        try:
            answer = await server.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section="rhema")])
            )
        except JsonRpcException as exc:
            logger.warning("workspace/configuration failed (%s): the settings stay", exc.message)
            return
        finally:
            server._settings_loading = False
        section = answer[0] if answer else None
    settings, problems = parse_settings(server.init_options, section)
    server.apply_settings(settings)
    for problem in problems:
        _show(server, str(problem), types.MessageType.Warning)


async def _documents_changed(server: RhemaServer) -> None:
    if server.started_service is not None:
        await server.started_service.state.editor.documents_changed()


def _register_lsp_features(server: RhemaServer) -> None:
    inline = register_inline(server)

    @server.feature(types.INITIALIZE)
    def initialize(ls: RhemaServer, params: types.InitializeParams) -> None:
        ls.init_options = params.initialization_options
        ls.client_features = ClientFeatures.negotiate(
            params.capabilities, params.initialization_options
        )
        settings, problems = parse_settings(params.initialization_options)
        ls.apply_settings(settings)
        for problem in problems:
            _show(ls, str(problem), types.MessageType.Warning)

    @server.feature(types.INITIALIZED)
    @_ends_quietly
    async def initialized(ls: RhemaServer, params: types.InitializedParams) -> None:
        await _load_settings(ls)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    @_ends_quietly
    async def configuration_changed(
        ls: RhemaServer, params: types.DidChangeConfigurationParams
    ) -> None:
        await _load_settings(ls)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    @_ends_quietly
    async def did_open(ls: RhemaServer, params: types.DidOpenTextDocumentParams) -> None:
        inline.opened(params.text_document.uri, params.text_document.text)
        await _documents_changed(ls)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    @_ends_quietly
    async def did_change(ls: RhemaServer, params: types.DidChangeTextDocumentParams) -> None:
        inline.changed(params)
        await _documents_changed(ls)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    @_ends_quietly
    async def did_close(ls: RhemaServer, params: types.DidCloseTextDocumentParams) -> None:
        inline.closed(params.text_document.uri)
        await _documents_changed(ls)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[
                types.CodeActionKind.QuickFix,
                types.CodeActionKind.RefactorRewrite,
                types.CodeActionKind.Empty,
            ]
        ),
    )
    def code_actions(
        ls: RhemaServer, params: types.CodeActionParams
    ) -> list[types.CodeAction] | None:
        service = ls.started_service
        running = service is not None and bool(service.state.runs.sessions())
        text = None
        document = ls.workspace.text_documents.get(params.text_document.uri)
        if document is not None:
            text = document.source
        actions = offered_actions(
            params,
            ls.client_features,
            text,
            running=running,
            unstructure=ls.protocol.unstructure,
            encoding=_encoding(ls),
        )
        return actions or None

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: RhemaServer, params: None) -> None:
        await inline.close()
        await ls.close_service()


def register_features(server: RhemaServer) -> None:
    """Register the contract's commands and the LSP features on ``server``."""
    _register_commands(server)
    _register_lsp_features(server)


def create_server() -> RhemaServer:
    """A ready rhema language server (not yet started)."""
    logging.getLogger("pygls").setLevel(logging.WARNING)
    server = RhemaServer()
    register_features(server)
    EditorLogHandler.install(server)
    return server
