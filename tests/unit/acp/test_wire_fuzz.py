"""The fuzz suite of the ACP agent's wire, in-process (bounded, in the
default run): generated lines and envelopes, and generated prompts. Each
case asserts its outcome (the error JSON-RPC gives it, the SDK schema's
verdict on its params, or the prompt's stop reason), and after each the
agent still serves, with no traceback logged for the client's mistake."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from acp.schema import (
    CloseSessionRequest,
    InitializeRequest,
    ListSessionsRequest,
    NewSessionRequest,
    PromptRequest,
)
from hypothesis import event, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from tests.fakes.hostile import LONE, envelopes, examples, expected_error, has_lone_surrogate
from tests.fakes.in_process import isolate
from tests.fakes.model_server import FakeModelServer, text_reply
from tests.unit.acp.conftest import agent_settings
from tests.unit.acp.line_harness import InProcessAgent

SERVED: dict[str, type[BaseModel]] = {
    "initialize": InitializeRequest,
    "session/list": ListSessionsRequest,
    "session/new": NewSessionRequest,
    "session/prompt": PromptRequest,
    "session/close": CloseSessionRequest,  # drawn ids name no session of the fixture's
}
METHODS = [*SERVED, "session/cancel", "session/fork", "custom/x", "$/x", "_ext/thing"]


@pytest.fixture(scope="module")
def fuzzed(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[InProcessAgent, Path, str]]:
    """One agent for every example of a test, with one open session."""
    root = tmp_path_factory.mktemp("acp-fuzz")
    workspace = root / "project"
    workspace.mkdir()
    (workspace / "hello.py").write_text("x = 1\n")
    with (
        pytest.MonkeyPatch.context() as monkeypatch,
        FakeModelServer(wire="openai", responder=lambda body: text_reply("Done.")) as model,
    ):
        isolate(monkeypatch, root)
        agent = InProcessAgent(agent_settings(model))
        agent.initialize()
        session = agent.new_session(workspace)
        yield agent, workspace, session
        agent.stop()


def still_serving(agent: InProcessAgent, mark: int) -> None:
    assert "result" in agent.request("session/list", {})
    assert agent.tracebacks(mark) == []


def expected_for_request(method: str, params: Any) -> int | None:
    """The error of a well-formed request (``None``: it is served)."""
    model = SERVED.get(method)
    if model is None:
        return -32601  # unknown, a notification's method, unstable, or an extension nobody serves
    try:
        model.model_validate(params)
    except ValidationError:
        return -32602
    return None


@settings(max_examples=examples(120))
@given(data=st.data())
def test_generated_envelopes_get_the_error_json_rpc_and_the_schema_give(
    fuzzed: tuple[InProcessAgent, Path, str], data: st.DataObject
) -> None:
    agent, _, _ = fuzzed
    msg_id = 8_000_000 + len(agent.messages)
    message = data.draw(envelopes(METHODS, msg_id))
    mark, seen = agent.mark(), len(agent.messages)

    agent.send(message)

    error = expected_error(message, null_id=True)
    if error is None and isinstance(message, dict) and "id" in message:
        code = expected_for_request(message["method"], message.get("params"))
        error = None if code is None else (code, message["id"])
        event(f"{message['method']!r} -> {code or 'result'}")  # repr: no lone surrogate
        if code is None:  # its answer, after what was sent before (a null id is not unique)
            answer = agent.wait_for(
                lambda: next(
                    (
                        m
                        for m in agent.messages[seen:]
                        if "method" not in m and m.get("id") == message["id"]
                    ),
                    None,
                )
            )
            assert "result" in answer or answer["error"]["code"] in (-32602, -32002), answer
    if error is not None:
        code, answer_id = error
        answer = agent.wait_for(
            lambda: next((m for m in agent.messages[seen:] if "method" not in m), None)
        )
        assert (answer["id"], answer["error"]["code"]) == (answer_id, code), answer
    still_serving(agent, mark)
    if error is None and not (isinstance(message, dict) and "id" in message):
        assert [m for m in agent.messages[seen:] if "error" in m] == []  # never answered


TEXTS = st.sampled_from(["hello", "", "   ", "🙂" * 3, "a" + LONE, "x\u0000y", "line\nline"])
BLOCKS = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": TEXTS}),
    st.fixed_dictionaries(
        {
            "type": st.just("resource_link"),
            "name": st.sampled_from(["hello.py", "", "../../etc/passwd"]),
            "uri": st.sampled_from(["file:///etc/passwd", "hello.py", "not a uri", "file:///x"]),
        }
    ),
    st.fixed_dictionaries(
        {"type": st.just("image"), "data": st.just(""), "mimeType": st.just("image/png")}
    ),
    st.fixed_dictionaries({"type": st.sampled_from(["video", 5, None]), "text": TEXTS}),
)


@settings(max_examples=examples(40))
@given(blocks=st.lists(BLOCKS, max_size=3), known=st.booleans())
def test_generated_prompts_end_a_turn_or_are_refused_with_the_right_code(
    fuzzed: tuple[InProcessAgent, Path, str], blocks: list[dict[str, Any]], known: bool
) -> None:
    agent, _, session = fuzzed
    params = {"sessionId": session if known else "nosuchsession", "prompt": blocks}
    mark = agent.mark()

    answer = agent.request("session/prompt", params)

    try:
        PromptRequest.model_validate(params)
        valid = not has_lone_surrogate(params)
    except ValidationError:
        valid = False
    outcome = answer["error"]["code"] if "error" in answer else answer["result"]["stopReason"]
    event(f"{'valid' if valid else 'invalid'}, {'known' if known else 'unknown'} -> {outcome}")
    if not valid:
        assert outcome == -32602, answer
    elif not known:
        assert outcome == -32002 and "nosuchsession" in answer["error"]["message"], answer
    elif "error" in answer:  # an empty prompt, or an image block with no image in it
        message = answer["error"]["message"]
        assert outcome == -32602, answer
        empty_image = any(block.get("type") == "image" for block in blocks)
        assert ("not a PNG" in message) if empty_image else ("the prompt is empty" in message)
    else:
        assert outcome == "end_turn", answer
    still_serving(agent, mark)
