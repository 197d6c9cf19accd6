"""The language server's wire, in-process: every invalid message gets the
right JSON-RPC error (or is dropped, for a notification), nothing is popped
at the user, a client's mistake leaves one line in the log and no
traceback, and the server keeps serving; an unreadable frame ends the
process with 1; the lifecycle and exit codes are LSP's."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.model_server import FakeModelServer
from tests.unit.server.conftest import settings_for
from tests.unit.server.wire_harness import InProcessServer, frame


def status_works(lsp: InProcessServer) -> None:
    answer = lsp.command("rhema.status")
    assert answer["result"]["version"], answer


def error_of(answer: dict[str, Any]) -> tuple[int, str]:
    assert "error" in answer, answer
    assert set(answer["error"]) == {"code", "message"}, answer  # no data, no traceback
    return answer["error"]["code"], answer["error"]["message"]


def test_a_lowercase_header_and_lf_line_ends_are_read(lsp: InProcessServer) -> None:
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": "lf",
            "method": "workspace/executeCommand",
            "params": {"command": "rhema.status", "arguments": [{}]},
        }
    ).encode()

    lsp.send_bytes(b"content-length: %d\n\n" % len(body) + body)

    assert lsp.response("lf")["result"]["version"]


INVALID = [
    (b"\xff\xfe", -32700, "not UTF-8"),
    (b'{"jsonrpc": "2.0", "id": 5, "method": ', -32700, "not JSON"),
    (b"[" * 100_000 + b"]" * 100_000, -32600, "nests deeper"),
    (b'[{"jsonrpc": "2.0", "id": 5, "method": "shutdown"}]', -32600, "batch"),
    (b"42", -32600, "not a number"),
    (b"null", -32600, "not null"),
    (b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "shutdown"}', -32600, "`id` is an object"),
    (b'{"jsonrpc": "2.0", "id": [1], "method": "shutdown"}', -32600, "`id` is an array"),
    (b'{"id": 5, "method": "workspace/executeCommand"}', -32600, '"2.0"'),
    (b'{"jsonrpc": "2.0", "id": 5, "method": 17}', -32600, "`method` is a number"),
]


@pytest.mark.parametrize(("body", "code", "words"), INVALID, ids=[w for _, _, w in INVALID])
def test_an_invalid_message_gets_the_right_error_and_the_server_keeps_serving(
    lsp: InProcessServer, body: bytes, code: int, words: str
) -> None:
    mark, seen = lsp.mark(), len(lsp.messages)

    lsp.send(body)
    answer = lsp.wait_for(lambda: next((m for m in lsp.messages[seen:] if "error" in m), None))

    assert error_of(answer)[0] == code
    assert words in error_of(answer)[1]
    answerable = body.startswith((b'{"id": 5', b'{"jsonrpc": "2.0", "id": 5, "method": 17'))
    assert answer["id"] == (5 if answerable else None)
    status_works(lsp)
    assert lsp.tracebacks(mark) == []
    assert lsp.popups() == []
    assert len(lsp.logged(mark, "_refuse")) == 1  # one line, at info


@pytest.mark.parametrize(
    ("method", "params", "words"),
    [
        (
            "workspace/executeCommand",
            {"arguments": [{}]},
            "`params.command` required field missing",
        ),
        ("workspace/executeCommand", "rhema.status", "`params`"),
        ("textDocument/codeAction", {"textDocument": {"uri": 5}}, "`params.range` required"),
        (
            "workspace/executeCommand",
            {"command": "rhema.sessions", "arguments": [{"folder": "a\udc00"}]},
            "lone surrogate",
        ),
        (
            "workspace/executeCommand",
            {"command": "rhema.openSession", "arguments": [{"session": "\ud800"}]},
            "`params.arguments[0].session`",
        ),
        ("workspace/executeCommand", {"command": "rhema.turn", "arguments": [{}]}, "`prompt`"),
        ("workspace/executeCommand", {"command": "rhema.nope"}, "unknown command"),
    ],
)
def test_params_that_do_not_validate_are_invalid_params_naming_the_field(
    lsp: InProcessServer, method: str, params: Any, words: str
) -> None:
    mark = lsp.mark()

    answer = lsp.request(method, params)

    code, message = error_of(answer)
    assert code == (-32600 if isinstance(params, str) else -32602)
    assert words in message
    assert lsp.tracebacks(mark) == []
    assert lsp.popups() == []
    status_works(lsp)


def test_a_session_that_does_not_exist_is_request_failed_in_one_line(
    lsp: InProcessServer,
) -> None:
    mark = lsp.mark()

    code, message = error_of(lsp.command("rhema.openSession", {"session": "nosuchsession"}))

    assert code == -32803
    assert "nosuchsession" in message
    assert lsp.tracebacks(mark) == []
    assert len(lsp.logged(mark, "_send_handler_result")) == 1


def test_an_unknown_method_is_method_not_found_and_unknown_notifications_are_dropped(
    lsp: InProcessServer, workspace: Path
) -> None:
    mark = lsp.mark()

    lsp.notify("$/somethingNew", {"x": 1})
    lsp.notify("custom/thing", {"x": 1})
    lsp.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": (workspace / "never-opened.py").as_uri(), "version": 2},
            "contentChanges": [{"text": "x"}],
        },
    )
    lsp.notify("$/cancelRequest", {"id": [1]})
    answer = lsp.request("textDocument/hover", {"textDocument": {"uri": "file:///a"}})

    assert error_of(answer) == (-32601, "Method not found: textDocument/hover")
    status_works(lsp)
    assert lsp.tracebacks(mark) == []
    assert lsp.popups() == []
    assert not [m for m in lsp.messages if m.get("id") is None and "error" in m]


def test_a_request_method_without_an_id_or_a_notification_with_one_is_refused(
    lsp: InProcessServer,
) -> None:
    answer = lsp.request("initialized", {})

    assert error_of(answer)[0] == -32600
    assert "is a notification" in error_of(answer)[1]
    lsp.notify("workspace/executeCommand", {"command": "rhema.status"})  # dropped
    status_works(lsp)


def test_before_initialize_a_request_is_not_initialized_and_the_later_capabilities_hold(
    bare: InProcessServer, model: FakeModelServer, workspace: Path
) -> None:
    early = bare.command("rhema.status")
    bare.notify("textDocument/didOpen", {"textDocument": {"uri": "file:///x"}})

    assert error_of(early) == (
        -32002,
        "the server is not initialized: send initialize before workspace/executeCommand",
    )
    bare.initialize(settings_for(model), [workspace])
    result = bare.command("rhema.turn", {"prompt": "hello?"})["result"]
    assert result["stopReason"] == "end_turn"
    events = [m for m in bare.messages if m.get("method") == "rhema/event"]
    assert events, "the events the client declared at initialize are sent"
    assert events[-1]["params"]["event"]["type"] == "turn_end"


def test_a_second_initialize_is_refused_and_the_workspace_stays(
    lsp: InProcessServer, workspace: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()

    again = lsp.request(
        "initialize",
        {
            "processId": None,
            "rootUri": None,
            "capabilities": {},
            "workspaceFolders": [{"uri": other.as_uri(), "name": "other"}],
        },
    )

    assert error_of(again)[0] == -32600
    assert "already initialized" in error_of(again)[1]
    assert lsp.command("rhema.status")["result"]["folders"] == [str(workspace)]


def test_after_shutdown_requests_are_invalid_and_exit_exits_0(lsp: InProcessServer) -> None:
    assert lsp.request("shutdown")["result"] is None

    late = lsp.command("rhema.status")
    lsp.notify("workspace/didChangeConfiguration", {"settings": {}})
    lsp.notify("exit")

    assert error_of(late)[0] == -32600
    assert "after shutdown" in error_of(late)[1]
    assert lsp.wait_exit() == 0


def test_exit_without_shutdown_exits_1(lsp: InProcessServer) -> None:
    lsp.notify("exit")

    assert lsp.wait_exit() == 1


@pytest.mark.parametrize(("shut_down", "code"), [(True, 0), (False, 1)])
def test_the_end_of_the_stream_exits_0_after_shutdown_else_1(
    lsp: InProcessServer, shut_down: bool, code: int
) -> None:
    if shut_down:
        lsp.request("shutdown")
    lsp.send_bytes(b"")

    assert lsp.wait_exit() == code


@pytest.mark.parametrize(
    "bad",
    [
        b"Content-Length: -3\r\n\r\n{}",
        b"content-length: many\r\n\r\n",
        b'{"jsonrpc": "2.0", "id": 1, "method": "shutdown"}',
        b"Content-Type: application/vscode-jsonrpc\r\n\r\n{}",
        b"Content-Length: 10\r\n\r\n{}",  # then the stream ends
    ],
)
def test_an_unreadable_frame_says_why_and_exits_1_after_serving_the_frames_before(
    lsp: InProcessServer, bad: bytes
) -> None:
    status = {
        "jsonrpc": "2.0",
        "id": "before",
        "method": "workspace/executeCommand",
        "params": {"command": "rhema.status", "arguments": [{}]},
    }
    mark = lsp.mark()

    lsp.send_bytes(frame(status) + bad)
    lsp.send_bytes(b"")

    assert lsp.wait_exit() == 1
    assert lsp.response("before")["result"]["version"]
    fatal = [m for m in lsp.messages if m.get("id") is None and "error" in m]
    assert len(fatal) == 1 and fatal[0]["error"]["code"] == -32700
    assert "the server exits" in fatal[0]["error"]["message"]
    assert lsp.tracebacks(mark) == []
    assert len(lsp.logged(mark, "serve_connection", logging.ERROR)) == 1


def test_an_invalid_answer_from_the_client_fails_the_request_waiting_for_it(
    quiet_env: None, model: FakeModelServer, workspace: Path
) -> None:
    lsp = InProcessServer(answer=lambda request: 5)  # a number, not the list of sections
    try:
        mark = lsp.mark()
        lsp.initialize(
            settings_for(model), [workspace], capabilities={"workspace": {"configuration": True}}
        )
        lsp.wait_for(lambda: lsp.server_requests)

        assert lsp.server_requests[0]["method"] == "workspace/configuration"
        status_works(lsp)
        assert lsp.tracebacks(mark) == []
        assert len(lsp.logged(mark, "_load_settings", logging.WARNING)) == 1
    finally:
        lsp.stop()


def test_a_response_to_nothing_and_a_malformed_response_are_dropped(lsp: InProcessServer) -> None:
    mark = lsp.mark()

    lsp.send({"jsonrpc": "2.0", "id": "nobody-asked", "result": 1})
    lsp.send({"jsonrpc": "2.0", "id": {"x": 1}, "result": 1})
    lsp.send({"jsonrpc": "2.0", "id": 3, "error": "bad"})

    status_works(lsp)
    assert lsp.tracebacks(mark) == []


def test_a_lone_surrogate_a_client_sent_is_logged_as_its_escape(lsp: InProcessServer) -> None:
    mark = lsp.mark()

    lsp.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": "file:///never-opened-\ud800.py", "version": 2},
            "contentChanges": [{"text": "x"}],
        },
    )

    status_works(lsp)
    lines = [text for text in lsp.everything_logged(mark) if "never-opened" in text]
    assert lines, "the refusal is logged"
    for text in lines:
        text.encode("utf-8")  # raises on a lone surrogate
