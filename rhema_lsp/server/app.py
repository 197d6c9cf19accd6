"""The language server: pygls wiring around :class:`AgentService`.

This is the only module that knows pygls' internals, and it corrects four of
them. pygls 2.1 runs ``workspace/executeCommand`` through a generator whose
inner task ``$/cancelRequest`` never reaches, it never cancels anything on
``window/workDoneProgress/cancel``, and it keeps the finished futures of the
user handlers behind its built-in features in ``_request_futures`` forever.
:class:`RhemaProtocol` therefore serves ``workspace/executeCommand`` itself
as a plain coroutine, routes both cancellations to the run they name (which
stops and answers ``cancelled``), and forgets finished handler futures (and
so cancels them at ``shutdown`` over a copy of that table).

Its stdio loop reads stdin on a worker thread that nothing can interrupt,
ends without a word on ``SIGTERM``, and on stdin's end closes the event loop
with the runs still in it. :meth:`RhemaServer.start_io` reads stdin as an
asyncio pipe instead and ends the same way on stdin's end and on
``SIGTERM``: every run cancelled and checkpointed, the stores closed (the
agent service's shutdown, as the ``shutdown`` request does), then the loop.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from collections.abc import Generator
from typing import TYPE_CHECKING, Any, BinaryIO

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.io_ import StdinAsyncReader, StdoutWriter, run_async
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from rhema_lsp import __version__
from rhema_lsp.contract import COMMANDS, command_named
from rhema_lsp.runs.lifetime import serve_until_stopped
from rhema_lsp.runs.settings import Settings, parse_settings
from rhema_lsp.server.actions import offered_actions
from rhema_lsp.server.clients import ClientFeatures
from rhema_lsp.server.errors import BadArguments, CommandFailed
from rhema_lsp.server.logs import EditorLogHandler

if TYPE_CHECKING:
    from rhema_lsp.server.service import AgentService

__all__ = ["RhemaProtocol", "RhemaServer", "create_server"]

logger = logging.getLogger("rhema_lsp")


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
        if command_named(params.command) is None:
            raise JsonRpcInvalidParams(f"unknown command {params.command!r}")
        from rhema_lsp.server.service import Request

        arguments = list(params.arguments) if params.arguments is not None else None
        request = Request(msg_id=self.msg_id, token=params.work_done_token)
        try:
            return await self._server.service.execute(params.command, arguments, request)
        except BadArguments as exc:
            raise JsonRpcInvalidParams(str(exc)) from exc
        except CommandFailed as exc:
            raise RequestFailed(str(exc)) from exc

    def _execute_handler(
        self,
        msg_id: Any,
        handler: Any,
        callback: Any,
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        # pygls files every handler's future under an id, but forgets the
        # ids it makes up for the user handlers of its built-in features
        # (didOpen, didChange, ...): one leaked entry per keystroke. Forget
        # each one when it is done.
        def forget_then(future: Any) -> None:
            if self._request_futures.get(msg_id) is future:
                del self._request_futures[msg_id]
            callback(future)

        super()._execute_handler(msg_id, handler, forget_then, args, kwargs)

    def open_requests(self) -> int:
        """How many requests (either way) await their answer."""
        return len(self._request_futures)

    def withdraw_request(self, msg_id: str) -> None:
        """Forget our own request ``msg_id`` and tell the client it is
        cancelled: a late answer is then ignored as unknown."""
        self._request_futures.pop(msg_id, None)
        self.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Generator[Any, Any, None]:
        # pygls cancels the pending handler futures while iterating
        # _request_futures, and a cancelled future's callback (forget_then
        # above) runs at once and deletes its entry: "dictionary changed size
        # during iteration". The same, over a copy.
        if (user_handler := self.fm.features.get(types.SHUTDOWN)) is not None:
            yield user_handler, args, None
        current_id = self.msg_id
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current_id and not future.done():
                future.cancel()
        self._shutdown = True

    def _handle_cancel_notification(self, msg_id: int | str) -> None:
        service = self._server.started_service
        run = service.state.runs.by_msg(msg_id) if service is not None else None
        if run is not None:
            run.cancel()
            return
        super()._handle_cancel_notification(msg_id)

    @lsp_method(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def lsp_work_done_progress_cancel(self, params: types.WorkDoneProgressCancelParams) -> None:
        service = self._server.started_service
        run = service.state.runs.by_token(params.token) if service is not None else None
        if run is not None:
            run.cancel()


class RhemaServer(LanguageServer):
    """The rhema language server.

    The agent service, and with it the engine, providers, tools and session
    stores, loads on the first command, not at start-up: an editor starting
    the server waits for pygls and the settings only.
    """

    protocol: RhemaProtocol

    def __init__(self) -> None:
        super().__init__("rhema-lsp", __version__, protocol_cls=RhemaProtocol)
        self.settings = Settings()
        self.init_options: Any = None
        self.client_features = ClientFeatures()
        self._service: AgentService | None = None
        self._settings_loading = False

    @property
    def service(self) -> AgentService:
        """The agent service, created on first use."""
        if self._service is None:
            from rhema_lsp.server.service import AgentService

            self._service = AgentService(self)
            self._service.state.client = self.client_features
            self._service.update_settings(self.settings)
        return self._service

    @property
    def started_service(self) -> AgentService | None:
        """The agent service if a command already created it."""
        return self._service

    def apply_settings(self, settings: Settings) -> None:
        """Adopt validated settings."""
        self.settings = settings
        EditorLogHandler.set_level(settings.log_level)
        if self._service is not None:
            self._service.update_settings(settings)

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Serve LSP on stdio until stdin ends, ``exit`` or ``SIGTERM`` (see
        the module docstring)."""
        try:
            asyncio.run(self._serve_io(stdin or sys.stdin.buffer, stdout or sys.stdout.buffer))
        except BrokenPipeError:
            logger.error("the connection to the client is lost; stopping")
        except (KeyboardInterrupt, SystemExit):  # SystemExit: the `exit` notification
            pass

    async def _serve_io(self, stdin: BinaryIO, stdout: BinaryIO) -> None:
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout))
        reading = run_async(
            stop_event=self._stop_event,
            reader=await _stdin_reader(stdin, self),
            protocol=self.protocol,
            logger=logger,
            error_handler=self.report_server_error,
        )

        async def close() -> None:
            if self._service is not None:
                await self._service.shutdown()
            self.shutdown()  # type: ignore[no-untyped-call]  # pygls: its stop event, its threads

        await serve_until_stopped(reading, close, name="rhema lsp connection")


class _PipeReader:
    """stdin as an asyncio pipe, read the way pygls' loop reads."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self._stream = stream

    async def readline(self) -> bytes:
        return await self._stream.readline()

    async def readexactly(self, n: int) -> bytes:
        try:
            return await self._stream.readexactly(n)
        except asyncio.IncompleteReadError as exc:
            return exc.partial  # the end of input: pygls' loop stops on it


async def _stdin_reader(stdin: BinaryIO, server: RhemaServer) -> Any:
    """``stdin`` read without a thread when it is a pipe or a terminal, else
    (a regular file, which ends anyway) on pygls' thread pool."""
    stream = asyncio.StreamReader()
    try:
        await asyncio.get_running_loop().connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(stream), stdin
        )
    except (ValueError, OSError):
        return StdinAsyncReader(stdin, server.thread_pool)
    return _PipeReader(stream)


def _dispatched_by_protocol(*arguments: Any) -> None:
    """Stands in pygls' command table for the contract's commands, which
    :class:`RhemaProtocol` serves itself; never called."""
    raise RuntimeError("rhema commands are served by RhemaProtocol")


def _register_commands(server: RhemaServer) -> None:
    # pygls advertises executeCommandProvider.commands from its command table
    for spec in COMMANDS:
        server.command(spec.name)(_dispatched_by_protocol)


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


def _register_features(server: RhemaServer) -> None:
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
    async def initialized(ls: RhemaServer, params: types.InitializedParams) -> None:
        await _load_settings(ls)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def configuration_changed(
        ls: RhemaServer, params: types.DidChangeConfigurationParams
    ) -> None:
        await _load_settings(ls)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: RhemaServer, params: types.DidOpenTextDocumentParams) -> None:
        await _documents_changed(ls)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: RhemaServer, params: types.DidChangeTextDocumentParams) -> None:
        await _documents_changed(ls)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(ls: RhemaServer, params: types.DidCloseTextDocumentParams) -> None:
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
            unstructure=ls.protocol._converter.unstructure,
            encoding=_encoding(ls),
        )
        return actions or None

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: RhemaServer, params: None) -> None:
        if ls.started_service is not None:
            await ls.started_service.shutdown()


def create_server() -> RhemaServer:
    """A ready rhema language server (not yet started)."""
    logging.getLogger("pygls").setLevel(logging.WARNING)
    server = RhemaServer()
    _register_commands(server)
    _register_features(server)
    EditorLogHandler.install(server)
    return server
