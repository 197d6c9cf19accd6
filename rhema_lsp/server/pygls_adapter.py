"""pygls behind one module: every override of its internals (no other
module touches them; what pygls 2.1 gets wrong on the wire is told in
:mod:`rhema_lsp.server.app`), and the server class the rest of the server
sees. A test of ``tests/unit/server/test_pygls_adapter.py`` pins each
override, so a pygls release that breaks one fails a test naming it.

**Receiving.** :meth:`RhemaProtocol.receive` takes each frame's body (cut by
:class:`~rhema_lsp.server.framing.FrameDecoder`), checks it
(:func:`~rhema_lsp.jsonrpc.read_message`), admits it
(:class:`~rhema_lsp.server.phases.Phases`), structures its params (-32602
with cattrs' detail naming the field) and validates the client's responses
before the request waiting for them sees them: pygls sees only what passed.

**Answering.** A handler's refusal is answered with one line in the log (the
client's text in it :func:`~rhema_lsp.jsonrpc.loggable`), our own failures
with their traceback there (never in ``error.data``); no failure pops at the
user; nothing is sent once the connection is gone; ``exit`` sets the code.

**Commands and cancellation.** pygls runs ``workspace/executeCommand``
through a generator ``$/cancelRequest`` never reaches, ignores
``window/workDoneProgress/cancel`` and keeps the finished futures of its
built-in features' handlers in ``_request_futures`` forever. Here
``workspace/executeCommand`` is a plain coroutine, both cancellations reach
the run they name, and finished handler futures are forgotten (and those
left cancelled at ``shutdown`` over a copy of the table).

**The server the parts see.** :class:`LspServer` (this protocol, the
client's features, the agent service): the parts take it, never
:class:`~rhema_lsp.server.app.RhemaServer`, so no import points back up.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Generator
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import unquote

import attrs
import cattrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcRequestCancelled
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCRequestMessage
from pygls.protocol.language_server import lsp_method

from rhema_lsp.contract.names import COMMAND_NAMES
from rhema_lsp.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    Notification,
    Refused,
    Request,
    Response,
    error_reply,
    loggable,
    read_message,
)
from rhema_lsp.server.clients import ClientFeatures
from rhema_lsp.server.errors import BadArguments, CommandFailed
from rhema_lsp.server.phases import Phases
from rhema_lsp.server.requests import Request as CommandRequest

if TYPE_CHECKING:
    from rhema_lsp.runs.registry import RunRegistry

__all__ = ["CommandService", "LspServer", "RequestFailed", "RhemaProtocol"]

logger = logging.getLogger("rhema_lsp")

SETTLE_WAIT = 5.0  # seconds the requests in flight get before a fatal exit


class ServiceState(Protocol):
    """What the protocol reads of the service's state: its runs."""

    @property
    def runs(self) -> RunRegistry: ...


class CommandService(Protocol):
    """What the protocol asks of the agent service: commands, and its runs."""

    @property
    def state(self) -> ServiceState: ...

    async def execute(
        self, name: str, arguments: list[Any] | None, request: CommandRequest
    ) -> Any: ...


class RequestFailed(JsonRpcException):
    """LSP ``RequestFailed``: the request was valid but could not be served."""

    CODE = -32803


def _detail(exc: Exception) -> str:
    """What a structuring failure says, with LSP's camelCase field names."""
    if isinstance(exc, cattrs.BaseValidationError):
        problems = []
        for line in cattrs.transform_error(exc, path="$"):
            message, _, where = line.rpartition(" @ ")
            path = where.removeprefix("$").lstrip(".")
            head, *rest = path.split("_") if path else [""]
            path = head + "".join(part[:1].upper() + part[1:] for part in rest)
            problems.append(f"`{path}` {message}" if path else message)
        return "; ".join(problems)
    return f"{type(exc).__name__}: {exc}"


def _valid_id(msg_id: Any) -> bool:
    return isinstance(msg_id, str) or (isinstance(msg_id, int) and not isinstance(msg_id, bool))


class RhemaProtocol(LanguageServerProtocol):
    """pygls' protocol behind the message check (the module docstring)."""

    _server: LspServer

    def __init__(self, server: Any, converter: Any) -> None:
        super().__init__(server, converter)
        self.phases = Phases()
        self.exit_code: int | None = None
        """Set by ``exit``: the process's exit code."""
        self._answering: dict[int | str, asyncio.Event] = {}
        """The client's requests being served, each set once answered."""

    # -- receiving: every frame's body crosses receive() --------------------------

    def receive(self, body: bytes) -> None:
        """Check, admit, structure and dispatch one frame's body."""
        message = read_message(body)
        if isinstance(message, Response):
            self._receive_response(message)
            return
        admitted = self._admit(message) if not isinstance(message, Refused) else message
        if isinstance(admitted, Refused):
            self._refuse(admitted)
        elif admitted is not None:
            assert isinstance(message, Request | Notification)
            self.phases.serving(message.method)
            self.handle_message(admitted)

    def _kind(self, method: str) -> bool | None:
        """Whether LSP defines ``method`` as a request, a notification, or neither."""
        message_type = self.get_message_type(method)
        if message_type is None or not attrs.has(message_type):
            return None
        return "id" in attrs.fields_dict(message_type)

    def _serves(self, method: str) -> bool:
        return (
            method == types.CANCEL_REQUEST
            or method in self.fm.builtin_features
            or method in self.fm.features
        )

    def _admit(self, message: Request | Notification) -> Any:
        """The structured message to dispatch, the refusal answering it, or
        ``None`` to drop it without a word."""
        method = message.method
        request = isinstance(message, Request)
        msg_id = message.id if isinstance(message, Request) else None
        served = self._serves(method)
        if not request and not served and method.startswith("$/"):
            return None  # LSP: a server may ignore $/ notifications it does not know
        if request and msg_id in self._request_futures:
            return Refused(
                INVALID_REQUEST, f"Invalid request: id {msg_id!r} is taken by a request in flight"
            )
        refusal = self.phases.admit(
            method, msg_id, request=request, served=served, kind=self._kind(method)
        )
        if refusal is not None:
            return refusal
        message_type = self.get_message_type(method) or (
            JsonRPCRequestMessage if request else JsonRPCNotification
        )
        try:
            structured = self._converter.structure(message.raw, message_type)
        except Exception as exc:  # noqa: BLE001 -- any structuring failure is the params' fault
            return Refused(
                INVALID_PARAMS, f"Invalid params: {method}: {_detail(exc)}", msg_id, answer=request
            )
        if method in (types.TEXT_DOCUMENT_DID_CHANGE, types.TEXT_DOCUMENT_DID_CLOSE):
            uri = structured.params.text_document.uri
            if unquote(uri) not in self.workspace.text_documents:
                return Refused(INVALID_PARAMS, f"{method} of {uri}, not open", answer=False)
        return structured

    def _refuse(self, refusal: Refused) -> None:
        if refusal.answer:
            logger.info("answered %s: %s", refusal.code, loggable(refusal.message))
            self._send_data(refusal.reply())
        else:
            logger.info("dropped a message: %s", loggable(refusal.message))

    def _receive_response(self, response: Response) -> None:
        """A client's answer to our request, checked before the request sees it."""
        msg_id = response.id
        if msg_id not in self._request_futures:
            logger.info("dropped a response to no request in flight (id %r)", msg_id)
            return
        result_type = self._result_types.pop(msg_id, None)
        error = response.error
        if error is None and result_type is not None:
            try:
                result = self._converter.structure(response.raw, result_type).result
            except Exception as exc:  # noqa: BLE001 -- any structuring failure is the answer's fault
                error = {
                    "code": INVALID_PARAMS,
                    "message": f"the answer is invalid: {_detail(exc)}",
                }
            else:
                self._handle_response(msg_id, result)
                return
        if error is None:
            self._handle_response(msg_id, response.result)
            return
        said = loggable(str(error["message"]))
        logger.info("the client answered request %r with an error: %s", msg_id, said)
        self._handle_response(
            msg_id,
            None,
            types.ResponseError(
                code=error["code"], message=error["message"], data=error.get("data")
            ),
        )

    # -- answering -------------------------------------------------------------------

    def _handle_request(self, msg_id: int | str, method_name: str, params: Any) -> None:
        self._answering[msg_id] = asyncio.Event()
        super()._handle_request(msg_id, method_name, params)

    def _send_handler_result(self, future: Any, *, msg_id: int | str) -> None:
        """A handler's outcome as the request's answer: its refusals with one
        line in the log, our own failures with their traceback there (not in
        ``error.data``)."""
        self._request_futures.pop(msg_id, None)
        answered = self._answering.pop(msg_id, None)
        if answered is not None:
            answered.set()
        if future.cancelled():
            exc: BaseException | None = JsonRpcRequestCancelled(f"request {msg_id!r} was cancelled")
        else:
            exc = future.exception()
        if exc is None:
            self._send_response(msg_id, result=future.result())
            return
        if isinstance(exc, JsonRpcException):
            logger.info(
                "answered request %r with %s: %s", msg_id, exc.code, loggable(str(exc.message))
            )
            data = (
                exc.data if not (isinstance(exc.data, dict) and "traceback" in exc.data) else None
            )
            error = types.ResponseError(code=exc.code, message=exc.message, data=data)
        else:
            logger.error("request %r failed", msg_id, exc_info=exc)
            error = types.ResponseError(
                code=INTERNAL_ERROR,
                message=f"internal error: {type(exc).__name__}: {exc} (the server's log has more)",
            )
        self._send_response(msg_id, error=error)

    def _check_handler_result(self, future: Any) -> None:
        # A notification handler that fails is our own bug: its traceback
        # goes to the log (pygls pops "Error in server" at the user).
        if not future.cancelled() and (exc := future.exception()) is not None:
            logger.error("a notification handler failed", exc_info=exc)

    def _send_data(self, data: Any) -> None:
        if self.writer is not None:  # once the connection is gone, nothing is sent
            super()._send_data(data)

    # -- the connection's end (an Endpoint of serve_connection) --------------------

    def ended(self) -> int:
        """The exit code of a connection that ends without ``exit``."""
        return self.phases.exit_code()

    async def settle(self) -> None:
        """Answer the requests in flight: the runs are cancelled (and answer
        ``cancelled``), the others get :data:`SETTLE_WAIT` seconds."""
        await self._server.close_service()
        waiting = [event.wait() for event in self._answering.values()]
        if waiting:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*waiting), SETTLE_WAIT)

    def send_fatal(self, message: str) -> None:
        """Say, as an error without an id, why the connection ends."""
        self._send_data(error_reply(None, PARSE_ERROR, message))

    def disconnect(self) -> None:
        """Send nothing more (the log goes to stderr from now on)."""
        self.writer = None

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> None:  # type: ignore[override]
        """End the connection: the process exits 0 after ``shutdown``, else 1."""
        self.exit_code = self.phases.exit_code()

    # -- commands and cancellation ----------------------------------------------------

    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    async def lsp_workspace__execute_command(  # type: ignore[override]
        self, params: types.ExecuteCommandParams
    ) -> Any:
        if params.command not in COMMAND_NAMES:
            raise JsonRpcInvalidParams(f"unknown command {params.command!r}")
        arguments = list(params.arguments) if params.arguments is not None else None
        request = CommandRequest(msg_id=self.msg_id, token=params.work_done_token)
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

    def unstructure(self, value: Any) -> Any:
        """``value`` as JSON, by pygls' converter (as pygls sends it)."""
        return self._converter.unstructure(value)

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

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        if not _valid_id(msg_id):
            logger.info("dropped $/cancelRequest of id %r: not an integer or a string", msg_id)
            return
        service = self._server.started_service
        run = service.state.runs.by_msg(msg_id) if service is not None else None
        if run is not None:
            run.cancel()
            return
        future = self._request_futures.pop(msg_id, None)
        if future is not None:  # none: it was answered already
            future.cancel()

    @lsp_method(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def lsp_work_done_progress_cancel(self, params: types.WorkDoneProgressCancelParams) -> None:
        service = self._server.started_service
        run = service.state.runs.by_token(params.token) if service is not None else None
        if run is not None:
            run.cancel()


class LspServer(LanguageServer):
    """pygls' language server as the server's parts see it: served by
    :class:`RhemaProtocol`, with the client's declared features and the
    agent service (:class:`~rhema_lsp.server.app.RhemaServer` provides it)."""

    protocol: RhemaProtocol
    client_features: ClientFeatures

    @property
    def service(self) -> CommandService:
        """The agent service, created on first use."""
        raise NotImplementedError

    @property
    def started_service(self) -> CommandService | None:
        """The agent service if a command already created it."""
        raise NotImplementedError

    async def close_service(self) -> None:
        """Shut the agent service down (once, however often it is asked)."""
        raise NotImplementedError

    def report_server_error(self, error: Exception, source: Any) -> None:
        """pygls pops "Error in server: ..." at the user; the log has it instead."""
        logger.error("%s", error)
