"""The fuzz suite of the language server's wire, in-process (bounded, in the
default run): generated envelopes, the contract's commands with generated
arguments, and generated streams of frames. Each case asserts its outcome:
answered with a valid result, refused with the right code naming why, or
(a frame nobody can delimit) the process ends with 1; and after each, the
server still serves, nothing was popped at the user, and no traceback was
logged for the client's mistake."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import attrs
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pydantic import TypeAdapter

from rhema_lsp.contract import COMMANDS, command_named
from tests.fakes.hostile import (
    BAD_FRAMES,
    Pools,
    command_args,
    envelopes,
    examples,
    expected_error,
    expected_refusal,
    lsp_frames,
    offenders,
)
from tests.fakes.in_process import isolate
from tests.fakes.model_server import FakeModelServer
from tests.unit.server.conftest import settings_for
from tests.unit.server.wire_harness import InProcessServer, frame


def client_answer(request: dict[str, Any]) -> Any:
    """What the fuzzing editor answers the server: edits applied, else null."""
    return {"applied": True} if request["method"] == "workspace/applyEdit" else None


@pytest.fixture(scope="module")
def fuzzed(
    tmp_path_factory: pytest.TempPathFactory, model: FakeModelServer
) -> Iterator[tuple[InProcessServer, Pools]]:
    """One server for every example of a test: state builds up, as in an editor."""
    root = tmp_path_factory.mktemp("fuzz")
    workspace = root / "project"
    workspace.mkdir()
    (workspace / "hello.py").write_text('def greet(name):\n    return "hello " + name\n')
    with pytest.MonkeyPatch.context() as monkeypatch:
        isolate(monkeypatch, root)
        server = InProcessServer(answer=client_answer)
        server.initialize(settings_for(model), [workspace])
        first = server.command("rhema.turn", {"prompt": "first"})["result"]["session"]
        yield server, Pools(workspace, [first])
        server.stop()


def still_serving(server: InProcessServer, mark: int) -> None:
    """The server answers, popped nothing, and logged no traceback since ``mark``."""
    assert server.command("rhema.status")["result"]["version"]
    assert server.tracebacks(mark) == []
    assert server.popups() == []


def replies_after(server: InProcessServer, seen: int) -> list[dict[str, Any]]:
    return [m for m in server.messages[seen:] if "method" not in m]


METHODS = [
    "workspace/executeCommand",
    "textDocument/codeAction",
    "initialize",
    "initialized",
    "textDocument/didSave",
    "workspace/didChangeConfiguration",
    "textDocument/hover",
    "custom/thing",
    "$/custom",
]
SERVED = {"workspace/executeCommand", "textDocument/codeAction"}


def lsp_notification(method: str) -> bool:
    """Whether LSP defines ``method`` as a notification (its message has no id)."""
    kind = types.METHOD_TO_TYPES.get(method, (None,))[0]
    return kind is not None and "id" not in attrs.fields_dict(kind)


def expected_for_request(method: str) -> int:
    """The error a well-formed request with these fuzzed params gets."""
    if lsp_notification(method) or method == "initialize":
        return -32600  # a notification sent with an id; initialize a second time
    if method not in SERVED:
        return -32601
    return -32602  # params of at most two 4-character keys never structure


@settings(max_examples=examples(120))
@given(data=st.data())
def test_generated_envelopes_get_the_error_json_rpc_and_lsp_give(
    fuzzed: tuple[InProcessServer, Pools], data: st.DataObject
) -> None:
    server, _ = fuzzed
    msg_id = 7_000_000 + len(server.messages)
    message = data.draw(envelopes(METHODS, msg_id))
    mark, seen = server.mark(), len(server.messages)

    server.send(message)

    error = expected_error(message)
    if error is None and isinstance(message, dict) and "id" in message:
        error = (expected_for_request(message["method"]), message["id"])
    if error is not None:
        code, answer_id = error
        answer = server.wait_for(lambda: next(iter(replies_after(server, seen)), None))
        assert answer["id"] == answer_id
        assert answer["error"]["code"] == code, answer
        assert set(answer["error"]) == {"code", "message"}
    still_serving(server, mark)
    if error is None:  # a notification: never answered
        assert [m for m in replies_after(server, seen) if "error" in m] == []


NOT_NOW = {
    "`prompt` is required": -32602,  # rhema.step without a session to continue
    "is not a rhema-checkpoint: URI": -32602,  # not a checkpoint rhema.changes gave
    " has no turn ": -32803,  # a turn past the session's last
    "the range ends before it starts": -32602,  # what the schema cannot say
    " has no worktree": -32803,  # rhema.worktree*: a session that runs in the checkout
    "runs in the checkout, not in a worktree": -32602,  # rhema.turn's worktree on one
    "no worktree: ": -32803,  # rhema.turn's worktree where there is no git repository
    " is running a turn: wait for it": -32803,  # applying or discarding a running one
}
"""The refusals of arguments valid by the schema and naming what exists
(what the session's state forbids, or the schema cannot say), and their codes."""


@settings(max_examples=examples(80))
@given(data=st.data())
def test_generated_command_arguments_are_answered_or_refused_rightly(
    fuzzed: tuple[InProcessServer, Pools], data: st.DataObject
) -> None:
    server, pools = fuzzed
    name = data.draw(st.sampled_from([spec.name for spec in COMMANDS]))
    args = data.draw(command_args(name, pools))
    spec = command_named(name)
    assert spec is not None
    mark = server.mark()

    answer = server.request("workspace/executeCommand", {"command": name, "arguments": [args]})

    refusal = expected_refusal(name, args)
    outcome = answer["error"]["code"] if "error" in answer else "result"
    event(f"{name}: {'invalid' if refusal else 'valid'} -> {outcome}")
    if refusal is not None:
        assert answer.get("error", {}).get("code") == -32602, (args, answer)
        assert refusal in answer["error"]["message"]
    elif "result" in answer:
        TypeAdapter(spec.result).validate_python(answer["result"])
    else:
        code, message = answer["error"]["code"], answer["error"]["message"]
        assert "Traceback" not in message and 'File "' not in message
        named = offenders(args, pools)
        if any(what in message for what in named):  # it names what the server does not have
            not_now = message.startswith("no session") or "is not running" in message
            assert code == (-32803 if not_now else -32602), answer
        else:  # or what the state forbids
            reason = next((words for words in NOT_NOW if words in message), None)
            assert reason is not None, (args, answer)
            assert code == NOT_NOW[reason], answer
    result = answer.get("result")
    if isinstance(result, dict) and result.get("session") not in (None, *pools.sessions):
        pools.sessions.append(result["session"])  # later examples may name it
    if name == "rhema.deleteSession" and isinstance(result, dict) and result["deleted"]:
        pools.sessions.remove(args["session"])
    still_serving(server, mark)


@settings(max_examples=examples(15))
@given(data=st.data())
def test_any_stream_of_frames_is_served_frame_by_frame_and_a_bad_frame_exits_1(
    tmp_path_factory: pytest.TempPathFactory, model: FakeModelServer, data: st.DataObject
) -> None:
    root = tmp_path_factory.mktemp("frames")
    count = data.draw(st.integers(1, 4))
    bodies = [
        {
            "jsonrpc": "2.0",
            "id": index,
            "method": "workspace/executeCommand",
            "params": {"command": "rhema.status", "arguments": [{}]},
        }
        for index in range(count)
    ]
    stream = b"".join(data.draw(lsp_frames(json.dumps(body).encode())) for body in bodies)
    bad = data.draw(st.none() | st.sampled_from(BAD_FRAMES))
    if bad is None:
        stream += frame({"jsonrpc": "2.0", "id": "down", "method": "shutdown"})
        stream += frame({"jsonrpc": "2.0", "method": "exit"})
    else:
        stream += bad
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(stream) - 1)), max_size=8)))
    with pytest.MonkeyPatch.context() as monkeypatch:
        isolate(monkeypatch, root)
        server = InProcessServer()
        try:
            server.initialize(settings_for(model), [root])
            mark = server.mark()
            for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True):
                server.send_bytes(stream[start:end])
            server.send_bytes(b"")

            assert server.wait_exit() == (1 if bad is not None else 0)
            for index in range(count):
                answer = server.response(index)
                if bad is None and "error" in answer:  # in flight when shutdown came
                    assert answer["error"]["code"] == -32800, answer
                else:
                    assert answer["result"]["version"], answer
            fatal = [m for m in server.messages if m.get("id") is None and "error" in m]
            assert len(fatal) == (1 if bad is not None else 0)
            assert server.tracebacks(mark) == []
        finally:
            if server.exit_code is None:
                server.stop()
