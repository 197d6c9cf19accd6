"""Each override of pygls' internals in :mod:`rhema_lsp.server.pygls_adapter`,
pinned by the behaviour it provides, so a pygls release that breaks one
fails the test named after it.

The protocol is driven without the agent service: :class:`Host` is an
:class:`~rhema_lsp.server.pygls_adapter.LspServer` whose service is a fake
(:class:`FakeService`) holding a real run registry. Every message enters as
a frame's body does (``receive``); every reply is read off the writer.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from rhema_lsp.contract.names import COMMAND_NAMES
from rhema_lsp.runs.registry import Run, RunRegistry
from rhema_lsp.server.clients import ClientFeatures
from rhema_lsp.server.errors import BadArguments, CommandFailed
from rhema_lsp.server.pygls_adapter import LspServer, RhemaProtocol
from rhema_lsp.server.requests import Request

COMMAND = sorted(COMMAND_NAMES)[0]
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800
REQUEST_FAILED = -32803


class Wire:
    """The client's end: every message the server writes, parsed."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def write(self, data: bytes) -> None:
        self.sent.append(json.loads(data.split(b"\r\n\r\n", 1)[1]))

    def close(self) -> None:
        """pygls closes its writer on ``exit``."""

    def of(self, method: str) -> list[dict[str, Any]]:
        return [message for message in self.sent if message.get("method") == method]


class FakeState:
    def __init__(self) -> None:
        self.runs = RunRegistry()


class FakeService:
    """Serves every command with ``outcome`` (a result, or an exception to raise)."""

    def __init__(self) -> None:
        self.state = FakeState()
        self.commands: list[tuple[str, list[Any] | None, Request]] = []
        self.outcome: Any = {"served": True}

    async def execute(self, name: str, arguments: list[Any] | None, request: Request) -> Any:
        self.commands.append((name, arguments, request))
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome


class Host(LspServer):
    """The adapter's server with a fake agent service."""

    def __init__(self) -> None:
        super().__init__("adapter-test", "0", protocol_cls=RhemaProtocol)
        self.client_features = ClientFeatures()
        self.fake = FakeService()
        self.closed = 0
        self.wire = Wire()
        self.protocol.set_writer(self.wire)
        self.release = asyncio.Event()

        @self.feature("test/wait")
        async def wait(ls: Host, params: Any) -> str:
            await ls.release.wait()
            return "released"

        @self.feature("test/boom")
        async def boom(ls: Host, params: Any) -> None:
            raise RuntimeError("boom")

        @self.feature("test/refuse")
        async def refuse(ls: Host, params: Any) -> None:
            raise JsonRpcException(code=-32099, message="no", data={"traceback": ["x"]})

        @self.feature("test/failing")
        async def failing(ls: Host, params: Any) -> None:
            raise RuntimeError("a notification handler's bug")

        @self.feature(types.TEXT_DOCUMENT_DID_OPEN)
        async def opened(ls: Host, params: types.DidOpenTextDocumentParams) -> None:
            """A user handler behind one of pygls' built-in features."""
            if params.text_document.text == "wait":
                await ls.release.wait()

    @property
    def service(self) -> FakeService:
        return self.fake

    @property
    def started_service(self) -> FakeService:
        return self.fake

    async def close_service(self) -> None:
        self.closed += 1

    def send(self, payload: dict[str, Any]) -> None:
        self.protocol.receive(json.dumps({"jsonrpc": "2.0", **payload}).encode())

    async def answer(self, msg_id: int | str) -> dict[str, Any]:
        """The server's answer to request ``msg_id``."""
        await until(lambda: any(self._answers(msg_id)))
        return self._answers(msg_id)[0]

    def _answers(self, msg_id: int | str) -> list[dict[str, Any]]:
        return [m for m in self.wire.sent if m.get("id") == msg_id and "method" not in m]


async def until(condition: Callable[[], bool]) -> None:
    """Return once ``condition`` holds (polled, for at most 5 s)."""
    for _ in range(1000):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("the condition never held")


@pytest.fixture
async def host() -> Host:
    server = Host()
    server.send(
        {"id": "init", "method": "initialize", "params": {"processId": None, "capabilities": {}}}
    )
    await server.answer("init")
    server.send({"method": "initialized", "params": {}})
    return server


def execute(host: Host, msg_id: str, command: str = COMMAND, **extra: Any) -> None:
    params = {"command": command, "arguments": [{"session": "s"}], **extra}
    host.send({"id": msg_id, "method": "workspace/executeCommand", "params": params})


# -- RhemaProtocol.lsp_workspace__execute_command ------------------------------------


async def test_execute_command_is_served_by_the_service_with_its_id_and_token(
    host: Host,
) -> None:
    execute(host, "c1", workDoneToken="tok")
    answer = await host.answer("c1")
    assert answer["result"] == {"served": True}
    assert host.fake.commands == [(COMMAND, [{"session": "s"}], Request("c1", "tok"))]


async def test_execute_command_refuses_an_unknown_command_and_maps_our_errors(
    host: Host,
) -> None:
    execute(host, "c1", command="no.such.command")
    assert (await host.answer("c1"))["error"]["code"] == INVALID_PARAMS
    assert host.fake.commands == []
    host.fake.outcome = BadArguments("bad")
    execute(host, "c2")
    assert (await host.answer("c2"))["error"] == {"code": INVALID_PARAMS, "message": "bad"}
    host.fake.outcome = CommandFailed("busy")
    execute(host, "c3")
    assert (await host.answer("c3"))["error"] == {"code": REQUEST_FAILED, "message": "busy"}


# -- RhemaProtocol._handle_cancel_notification ------------------------------------------


async def test_cancel_request_cancels_the_run_it_names_else_the_request(host: Host) -> None:
    run = Run("s", 1, msg_id="c1")
    host.fake.state.runs.add(run)
    host.send({"method": "$/cancelRequest", "params": {"id": "c1"}})
    assert run.cancelled
    host.send({"id": "w1", "method": "test/wait", "params": {}})
    await until(lambda: host.protocol.open_requests() == 1)
    host.send({"method": "$/cancelRequest", "params": {"id": "w1"}})
    assert (await host.answer("w1"))["error"]["code"] == REQUEST_CANCELLED


async def test_cancel_request_of_an_invalid_id_is_dropped_with_a_line_in_the_log(
    host: Host, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="rhema_lsp"):
        host.send({"method": "$/cancelRequest", "params": {"id": 1.5}})
    assert "not an integer or a string" in caplog.text
    assert host.wire.of("window/showMessage") == []


# -- RhemaProtocol.lsp_work_done_progress_cancel -----------------------------------------


async def test_work_done_progress_cancel_cancels_the_run_reporting_on_the_token(
    host: Host,
) -> None:
    run = Run("s", 1)
    host.fake.state.runs.add(run)
    host.fake.state.runs.set_token(run, "tok")
    host.send({"method": "window/workDoneProgress/cancel", "params": {"token": "other"}})
    assert not run.cancelled
    host.send({"method": "window/workDoneProgress/cancel", "params": {"token": "tok"}})
    assert run.cancelled


# -- RhemaProtocol._send_handler_result ------------------------------------------------


async def test_a_failing_handler_answers_internal_error_without_a_traceback(
    host: Host, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="rhema_lsp"):
        host.send({"id": "b1", "method": "test/boom", "params": {}})
        error = (await host.answer("b1"))["error"]
    assert error["code"] == INTERNAL_ERROR
    assert "RuntimeError: boom" in error["message"] and "data" not in error
    assert "Traceback" in caplog.text  # the traceback is in the log, not the answer


async def test_a_handler_refusal_is_answered_as_it_is_without_its_traceback_data(
    host: Host,
) -> None:
    host.send({"id": "r1", "method": "test/refuse", "params": {}})
    assert (await host.answer("r1"))["error"] == {"code": -32099, "message": "no"}


# -- RhemaProtocol._check_handler_result and LspServer.report_server_error -----------


async def test_a_failing_notification_handler_is_logged_never_shown(
    host: Host, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="rhema_lsp"):
        host.send({"method": "test/failing", "params": {}})
        await until(lambda: "a notification handler failed" in caplog.text)
    assert host.wire.of("window/showMessage") == []


async def test_report_server_error_logs_and_shows_nothing(
    host: Host, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="rhema_lsp"):
        host.report_server_error(RuntimeError("pygls' own trouble"), JsonRpcException)
    assert "pygls' own trouble" in caplog.text
    assert host.wire.of("window/showMessage") == []


# -- RhemaProtocol._execute_handler -----------------------------------------------------


async def test_finished_handler_futures_of_built_in_features_are_forgotten(host: Host) -> None:
    document = {"uri": "file:///w/a.py", "languageId": "python", "version": 1, "text": "x"}
    for _ in range(3):
        host.send({"method": "textDocument/didOpen", "params": {"textDocument": document}})
    await until(lambda: host.protocol.open_requests() == 0)


# -- RhemaProtocol._handle_request (and settle) ---------------------------------------


async def test_settle_closes_the_service_and_waits_for_the_requests_in_flight(
    host: Host,
) -> None:
    host.send({"id": "w1", "method": "test/wait", "params": {}})
    await until(lambda: host.protocol.open_requests() == 1)
    settling = asyncio.ensure_future(host.protocol.settle())
    await until(lambda: host.closed == 1)  # the service closed, the request still waited on
    assert not settling.done()
    host.release.set()
    await settling
    assert (await host.answer("w1"))["result"] == "released"


# -- RhemaProtocol.lsp_shutdown --------------------------------------------------------


async def test_shutdown_cancels_the_requests_in_flight_and_answers(host: Host) -> None:
    for msg_id in ("w1", "w2"):
        host.send({"id": msg_id, "method": "test/wait", "params": {}})
    # a built-in feature's handler in flight: pygls' future for it calls its
    # callback (which forgets it) at once when cancelled
    document = {"uri": "file:///w/a.py", "languageId": "python", "version": 1, "text": "wait"}
    host.send({"method": "textDocument/didOpen", "params": {"textDocument": document}})
    await until(lambda: host.protocol.open_requests() > 2)
    host.send({"id": "down", "method": "shutdown"})
    assert (await host.answer("down"))["result"] is None
    assert (await host.answer("w1"))["error"]["code"] == REQUEST_CANCELLED
    assert (await host.answer("w2"))["error"]["code"] == REQUEST_CANCELLED
    assert host.protocol.open_requests() == 0


# -- RhemaProtocol.lsp_exit ---------------------------------------------------------------


async def test_exit_sets_1_without_shutdown_and_0_after_it(host: Host) -> None:
    host.send({"method": "exit"})
    assert host.protocol.exit_code == 1
    other = Host()
    other.send(
        {"id": "init", "method": "initialize", "params": {"processId": None, "capabilities": {}}}
    )
    await other.answer("init")
    other.send({"id": "down", "method": "shutdown"})
    await other.answer("down")
    other.send({"method": "exit"})
    assert other.protocol.exit_code == 0


# -- RhemaProtocol._send_data -----------------------------------------------------------


async def test_nothing_is_sent_once_the_connection_is_gone_and_nothing_logged(
    host: Host, caplog: pytest.LogCaptureFixture
) -> None:
    before = len(host.wire.sent)
    host.protocol.disconnect()
    with caplog.at_level(logging.INFO):
        host.protocol.notify("window/logMessage", {"type": 3, "message": "late"})
        execute(host, "c1")
        await until(lambda: host.fake.commands != [])
        await until(lambda: host.protocol.open_requests() == 0)  # answered, had it been sent
    assert len(host.wire.sent) == before
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


# -- RhemaProtocol.unstructure (pygls' private converter) ------------------------------


async def test_unstructure_gives_the_camel_case_json_pygls_sends() -> None:
    action = types.CodeAction(title="t", kind=types.CodeActionKind.QuickFix, is_preferred=True)
    assert Host().protocol.unstructure(action) == {
        "title": "t",
        "kind": "quickfix",
        "isPreferred": True,
    }
