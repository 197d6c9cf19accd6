"""The language server: pygls wiring around :class:`AgentService`.

This is the only module that knows pygls' internals, and it corrects three of
them. pygls 2.1 runs ``workspace/executeCommand`` through a generator whose
inner task ``$/cancelRequest`` never reaches (and whose finished tasks stay
in ``_request_futures``), and it never cancels anything on
``window/workDoneProgress/cancel``. :class:`RhemaProtocol` therefore serves
``workspace/executeCommand`` itself as a plain coroutine, and routes both
cancellations to the run they name, which stops and answers ``cancelled``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from rhema_lsp import __version__
from rhema_lsp.server.args import (
    CancelArgs,
    EditArgs,
    InvalidArguments,
    SessionArgs,
    SessionsArgs,
    StatusArgs,
    StepArgs,
    TurnArgs,
    UndoTurnArgs,
    parse_args,
)
from rhema_lsp.server.folders import FolderError
from rhema_lsp.server.logs import EditorLogHandler
from rhema_lsp.server.runs import SessionRunningError
from rhema_lsp.server.service import AgentService, EditTargetError
from rhema_lsp.server.settings import parse_settings
from rhema_lsp.sessions import SessionStoreError

__all__ = ["COMMANDS", "RhemaProtocol", "RhemaServer", "create_server"]

logger = logging.getLogger("rhema_lsp")

MsgId = int | str | None
Token = int | str | None
Handler = Callable[[list[Any] | None, MsgId, Token], Awaitable[Any]]


class RequestFailed(JsonRpcException):
    """LSP ``RequestFailed``: the request was valid but could not be served."""

    CODE = -32803


class RhemaProtocol(LanguageServerProtocol):
    """pygls' protocol with real cancellation of commands."""

    _server: RhemaServer

    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    async def lsp_workspace__execute_command(  # type: ignore[override]
        self, params: types.ExecuteCommandParams
    ) -> Any:
        handler: Handler | None = self.fm.commands.get(params.command)
        if handler is None:
            raise JsonRpcInvalidParams(f"unknown command {params.command!r}")
        try:
            arguments = list(params.arguments) if params.arguments is not None else None
            return await handler(arguments, self.msg_id, params.work_done_token)
        except (InvalidArguments, FolderError, EditTargetError) as exc:
            raise JsonRpcInvalidParams(str(exc)) from exc
        except (SessionRunningError, SessionStoreError) as exc:
            raise RequestFailed(str(exc)) from exc

    def _handle_cancel_notification(self, msg_id: int | str) -> None:
        run = self._server.service.runs.by_msg(msg_id)
        if run is not None:
            run.cancel()
            return
        super()._handle_cancel_notification(msg_id)

    @lsp_method(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def lsp_work_done_progress_cancel(self, params: types.WorkDoneProgressCancelParams) -> None:
        run = self._server.service.runs.by_token(params.token)
        if run is not None:
            run.cancel()


class RhemaServer(LanguageServer):
    """The rhema language server."""

    protocol: RhemaProtocol

    def __init__(self) -> None:
        super().__init__("rhema-lsp", __version__, protocol_cls=RhemaProtocol)
        self.service = AgentService(self)
        self._init_options: Any = None


COMMANDS: tuple[str, ...] = (
    "rhema.turn",
    "rhema.step",
    "rhema.cancel",
    "rhema.sessions",
    "rhema.openSession",
    "rhema.deleteSession",
    "rhema.edit",
    "rhema.undoTurn",
    "rhema.status",
)


def _register_commands(server: RhemaServer) -> None:
    service = server.service

    async def turn(arguments: list[Any] | None, msg_id: MsgId, token: Token) -> Any:
        return await service.turn(parse_args("rhema.turn", TurnArgs, arguments), msg_id, token)

    async def step(arguments: list[Any] | None, msg_id: MsgId, token: Token) -> Any:
        return await service.step(parse_args("rhema.step", StepArgs, arguments), msg_id, token)

    async def cancel(arguments: list[Any] | None, msg_id: MsgId, token: Token) -> Any:
        return service.cancel(parse_args("rhema.cancel", CancelArgs, arguments))

    async def sessions(arguments: list[Any] | None, msg_id: MsgId, token: Token) -> Any:
        return await service.sessions(parse_args("rhema.sessions", SessionsArgs, arguments))

    async def open_session(arguments: list[Any] | None, msg_id: MsgId, token: Token) -> Any:
        args = parse_args("rhema.openSession", SessionArgs, arguments)
        return await service.open_session(args)

    async def delete_session(arguments: list[Any] | None, msg_id: MsgId, token: Token) -> Any:
        args = parse_args("rhema.deleteSession", SessionArgs, arguments)
        return await service.delete_session(args)

    async def edit(arguments: list[Any] | None, msg_id: MsgId, token: Token) -> Any:
        return await service.edit(parse_args("rhema.edit", EditArgs, arguments), msg_id, token)

    async def undo_turn(arguments: list[Any] | None, msg_id: MsgId, token: Token) -> Any:
        return await service.undo_turn(parse_args("rhema.undoTurn", UndoTurnArgs, arguments))

    async def status(arguments: list[Any] | None, msg_id: MsgId, token: Token) -> Any:
        parse_args("rhema.status", StatusArgs, arguments)
        return await service.status()

    handlers = (turn, step, cancel, sessions, open_session, delete_session, edit, undo_turn, status)
    for name, handler in zip(COMMANDS, handlers, strict=True):
        server.command(name)(handler)


def _show(server: RhemaServer, message: str, kind: types.MessageType) -> None:
    server.window_show_message(types.ShowMessageParams(type=kind, message=message))


async def _load_settings(server: RhemaServer) -> None:
    section: Any = None
    workspace = server.client_capabilities.workspace
    if workspace is not None and workspace.configuration:
        answer = await server.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section="rhema")])
        )
        section = answer[0] if answer else None
    settings, problems = parse_settings(server._init_options, section)
    server.service.update_settings(settings)
    EditorLogHandler.set_level(settings.log_level)
    for problem in problems:
        _show(server, str(problem), types.MessageType.Warning)


def _register_features(server: RhemaServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: RhemaServer, params: types.InitializeParams) -> None:
        ls._init_options = params.initialization_options
        settings, problems = parse_settings(params.initialization_options)
        ls.service.update_settings(settings)
        for problem in problems:
            _show(ls, str(problem), types.MessageType.Warning)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: RhemaServer, params: types.InitializedParams) -> None:
        await _load_settings(ls)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def configuration_changed(
        ls: RhemaServer, params: types.DidChangeConfigurationParams
    ) -> None:
        await _load_settings(ls)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: RhemaServer, params: types.DidOpenTextDocumentParams) -> None:
        await ls.service.editor.documents_changed()

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: RhemaServer, params: types.DidChangeTextDocumentParams) -> None:
        await ls.service.editor.documents_changed()

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(ls: RhemaServer, params: types.DidCloseTextDocumentParams) -> None:
        await ls.service.editor.documents_changed()

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.RefactorRewrite]),
    )
    def code_actions(
        ls: RhemaServer, params: types.CodeActionParams
    ) -> list[types.CodeAction] | None:
        selection = params.range
        if selection.start == selection.end:
            return None
        target = {
            "uri": params.text_document.uri,
            "range": ls.protocol._converter.unstructure(selection),
        }
        return [
            types.CodeAction(
                title="Rhema: edit selection",
                kind=types.CodeActionKind.RefactorRewrite,
                command=types.Command(
                    title="Rhema: edit selection", command="rhema.editSelection", arguments=[target]
                ),
            ),
            types.CodeAction(
                title="Rhema: explain selection",
                kind=types.CodeActionKind.Empty,
                command=types.Command(
                    title="Rhema: explain selection",
                    command="rhema.turn",
                    arguments=[
                        {
                            "prompt": "Explain the selected code.",
                            "context": [target],
                            "mode": "ask",
                        }
                    ],
                ),
            ),
        ]

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: RhemaServer, params: None) -> None:
        await ls.service.shutdown()


def create_server() -> RhemaServer:
    """A ready rhema language server (not yet started)."""
    logging.getLogger("pygls").setLevel(logging.WARNING)
    server = RhemaServer()
    _register_commands(server)
    _register_features(server)
    EditorLogHandler.install(server)
    return server
