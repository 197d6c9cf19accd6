"""The ACP agent's wire, in-process: a line that is not a request object, or
not JSON, gets a JSON-RPC error and the agent serves on; ``$/cancel_request``
cancels the request it names; malformed responses and notifications leave
one line in the log and no traceback."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from rhema_lsp.acp.transport import MAX_LINE, LineSplitter, LineTransport
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply
from tests.unit.acp.conftest import agent_settings
from tests.unit.acp.line_harness import InProcessAgent, line


def still_serving(acp: InProcessAgent, mark: int) -> None:
    answer = acp.request("session/list", {})
    assert answer["result"] == {"sessions": []} or "sessions" in answer["result"], answer
    assert acp.tracebacks(mark) == []


LINES = [
    (b"42", -32600, "not a number"),
    (b"[]", -32600, "empty batch"),
    (b'[{"jsonrpc": "2.0", "id": 1, "method": "session/list", "params": {}}]', -32600, "batch"),
    (b"null", -32600, "not null"),
    (b'"hello"', -32600, "not a string"),
    (b"true", -32600, "not a boolean"),
    (b'{"jsonrpc": "2.0", "id": 1, "method": ', -32700, "not JSON"),
    (b"\xc3\x28", -32700, "not UTF-8"),
    (b"[" * 100_000 + b"]" * 100_000, -32600, "nests deeper"),
    (b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "session/list"}', -32600, "`id` is an object"),
    (b'{"jsonrpc": "2.0", "id": 1, "method": 5}', -32600, "`method`"),
]


@pytest.mark.parametrize(("body", "code", "words"), LINES, ids=[w for _, _, w in LINES])
def test_a_line_that_is_not_a_request_gets_an_error_and_the_agent_serves_on(
    acp: InProcessAgent, body: bytes, code: int, words: str
) -> None:
    mark, seen = acp.mark(), len(acp.messages)

    acp.send(body)
    answer = acp.wait_for(lambda: next((m for m in acp.messages[seen:] if "error" in m), None))

    assert answer["error"]["code"] == code
    assert words in answer["error"]["message"]
    assert answer["id"] == (1 if code == -32600 and b'"method": 5' in body else None)
    still_serving(acp, mark)
    assert len(acp.logged(mark, "_refuse")) == 1


def test_a_null_id_is_an_id_in_acp(acp: InProcessAgent) -> None:
    answer = acp.request("session/list", {}, msg_id=None)

    assert answer["id"] is None and "result" in answer


def test_params_that_do_not_validate_name_each_field(acp: InProcessAgent, workspace: Path) -> None:
    mark = acp.mark()

    missing = acp.request("session/new", {"cwd": str(workspace)})
    surrogate = acp.request(
        "session/prompt", {"sessionId": "s", "prompt": [{"type": "text", "text": "hi \ud800"}]}
    )

    assert missing["error"]["code"] == -32602
    assert missing["error"]["message"] == "Invalid params: `mcpServers` field required"
    assert missing["error"]["data"] == {
        "errors": [{"loc": ["mcpServers"], "msg": "Field required", "type": "missing"}]
    }
    assert surrogate["error"]["code"] == -32602
    assert "`params.prompt[0].text`" in surrogate["error"]["message"]
    still_serving(acp, mark)


def test_notifications_it_does_not_serve_or_cannot_read_are_dropped_in_one_line(
    acp: InProcessAgent,
) -> None:
    mark = acp.mark()

    acp.notify("session/cancel", {})
    acp.notify("session/cancel", [1])
    acp.notify("some/notification", {"x": 1})
    acp.notify("$/cancel_request", {"requestId": {"x": 1}})
    acp.notify("$/cancel_request", {"requestId": 424242})

    still_serving(acp, mark)
    assert len(acp.logged(mark, "_notification")) == 3
    assert len(acp.logged(mark, "_cancel")) == 2


def test_cancel_request_stops_the_prompt_it_names(quiet_env: None, workspace: Path) -> None:
    with FakeModelServer(wire="openai", responder=lambda body: text_reply("Done.")) as model:
        model.script(text_reply("word " * 400, chunk=1, delay=0.02))  # 40 s unless cancelled
        acp = InProcessAgent(agent_settings(model))
        try:
            acp.initialize()
            session = acp.new_session(workspace)
            mark = acp.mark()
            acp.send(
                {
                    "jsonrpc": "2.0",
                    "id": "p1",
                    "method": "session/prompt",
                    "params": acp.prompt_params(session, "talk"),
                }
            )
            acp.wait_for(lambda: acp.updates("agent_message_chunk"))
            acp.notify("$/cancel_request", {"requestId": "p1"})

            assert acp.response("p1")["result"]["stopReason"] == "cancelled"
            assert acp.tracebacks(mark) == []
            again = acp.request("session/prompt", acp.prompt_params(session, "again"))
            assert "result" in again  # the session is free for the next prompt
        finally:
            acp.stop()


def test_a_malformed_response_to_the_agents_request_fails_that_request_only(
    quiet_env: None, workspace: Path
) -> None:
    with FakeModelServer(wire="openai", responder=lambda body: text_reply("Done.")) as model:
        model.script(tool_reply(("read_file", {"path": "hello.py"})))

        def answer(request: dict[str, Any]) -> Any:
            return {"jsonrpc": "2.0", "id": request["id"], "error": "not an object"}

        acp = InProcessAgent(agent_settings(model), answer=answer)
        try:
            acp.initialize(fs=True)
            session = acp.new_session(workspace)
            mark = acp.mark()

            done = acp.request("session/prompt", acp.prompt_params(session, "read it"))

            assert done["result"]["stopReason"] == "end_turn"
            assert [r["method"] for r in acp.peer_requests] == ["fs/read_text_file"]
            reason = acp.logged(mark, "fetch")  # the editor's text failed: the disk's is read
            assert len(reason) == 1 and "malformed" in reason[0]
            tool_result = model.requests[1]["messages"][-1]
            assert tool_result["role"] == "tool"
            assert "def greet(name):" in tool_result["content"]
            assert acp.tracebacks(mark) == []
        finally:
            acp.stop()


# -- the transport by itself ----------------------------------------------------------


def test_a_line_over_the_limit_is_one_refusal_and_the_next_line_is_read() -> None:
    splitter = LineSplitter(limit=10)

    first = splitter.feed(b"x" * 25)
    rest = splitter.feed(b"yyy\nok\n" + b"z" * 11 + b"\nlast")

    assert first == [None]
    assert rest == [b"ok", None]
    assert splitter.close() == b"last"
    assert MAX_LINE >= 64 * 1024 * 1024


async def test_cancel_request_answers_another_request_at_once_and_drops_its_late_answer() -> None:
    lines: asyncio.Queue[bytes] = asyncio.Queue()
    sent: list[dict[str, Any]] = []

    async def write(data: bytes) -> None:
        sent.append(json.loads(data))

    transport = LineTransport(lines.get, write, cancel_prompt=lambda session: False)
    lines.put_nowait(line({"jsonrpc": "2.0", "id": 3, "method": "session/load", "params": {}}))
    lines.put_nowait(
        line({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 3}})
    )
    lines.put_nowait(b"")

    received = await transport.receive()
    assert received is not None and received["id"] == 3
    assert await transport.receive() is None
    await transport.send({"jsonrpc": "2.0", "id": 3, "result": {"late": True}})

    assert sent == [
        {"jsonrpc": "2.0", "id": 3, "error": {"code": -32800, "message": "Request cancelled"}}
    ]


async def test_cancel_request_of_a_prompt_cancels_its_run_once_it_started() -> None:
    lines: asyncio.Queue[bytes] = asyncio.Queue()
    tried: list[str] = []

    def cancel_prompt(session: str) -> bool:
        tried.append(session)
        return len(tried) == 3  # the prompt's task registers its run at its third try

    transport = LineTransport(lines.get, lambda data: asyncio.sleep(0), cancel_prompt)
    prompt = {"sessionId": "abc", "prompt": []}
    lines.put_nowait(
        line({"jsonrpc": "2.0", "id": 9, "method": "session/prompt", "params": prompt})
    )
    lines.put_nowait(
        line({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 9}})
    )
    lines.put_nowait(line({"jsonrpc": "2.0", "id": 10, "method": "session/list", "params": {}}))

    assert (await transport.receive() or {})["id"] == 9
    assert (await transport.receive() or {})["id"] == 10

    assert tried == ["abc"] * 3


async def test_at_the_end_of_the_input_the_prompts_in_flight_are_cancelled_and_answered() -> None:
    lines: asyncio.Queue[bytes] = asyncio.Queue()
    sent: list[dict[str, Any]] = []
    cancelled: list[str] = []
    asked = asyncio.Event()

    async def write(data: bytes) -> None:
        sent.append(json.loads(data))

    def cancel_prompt(session: str) -> bool:
        cancelled.append(session)
        asked.set()
        return True

    transport = LineTransport(lines.get, write, cancel_prompt)
    prompt = {"sessionId": "abc", "prompt": []}
    lines.put_nowait(
        line({"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": prompt})
    )
    lines.put_nowait(b"")
    assert (await transport.receive() or {})["id"] == 1

    async def the_prompt_answers() -> None:
        await asyncio.wait_for(asked.wait(), 10)
        await transport.send({"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "cancelled"}})

    ended, _ = await asyncio.gather(transport.receive(), the_prompt_answers())

    assert ended is None  # only once the prompt was answered
    assert cancelled == ["abc"]
    assert sent == [{"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "cancelled"}}]


def test_a_lone_surrogate_a_client_sent_is_logged_as_its_escape(acp: InProcessAgent) -> None:
    # A method (valid JSON once escaped, not Unicode) quoted in the log: every
    # handler, a test runner's report included, must be able to encode it.
    mark = acp.mark()

    acp.notify("weird/\ud800", {"x": 1})
    acp.notify("session/cancel", {"sessionId": 5, "\udfff": 1})

    still_serving(acp, mark)
    lines = acp.logged(mark, "_notification")
    assert len(lines) == 2
    assert "weird/\\ud800" in lines[0]
    for text in lines:
        text.encode("utf-8")  # raises on a lone surrogate
