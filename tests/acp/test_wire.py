"""``rhema-lsp acp`` as a child process, fed raw lines: a line that is not a
request object, or not JSON, is answered with a JSON-RPC error while the
agent serves on; ``$/cancel_request`` stops the prompt it names; stdout may
be a file; and a bounded fuzz of lines leaves no traceback on stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.acp.client import REPO, agent_args
from tests.fakes.hostile import envelopes, examples
from tests.fakes.in_process import ChildPeer, Lines, child_env
from tests.fakes.model_server import FakeModelServer, text_reply
from tests.unit.acp.line_harness import AcpClient


class AcpChild(Lines, AcpClient, ChildPeer):
    """``python -m rhema_lsp acp``, driven as an ACP client."""


@pytest.fixture
def model() -> Iterator[FakeModelServer]:
    with FakeModelServer(wire="openai", responder=lambda body: text_reply("Done.")) as server:
        yield server


@pytest.fixture
def agent(model: FakeModelServer, state: Path) -> Iterator[AcpChild]:
    child = AcpChild(agent_args(model)[2:], state / "stderr.log", child_env(state))
    child.initialize()
    yield child
    child.stop()
    assert child.exit_code == 0


BAD_LINES = [
    (b"42", -32600),
    (b"[]", -32600),
    (b'[{"jsonrpc": "2.0", "id": 1, "method": "session/list", "params": {}}]', -32600),
    (b"null", -32600),
    (b'"a string"', -32600),
    (b"{not json", -32700),
    (b"\xff\xfe\xfd", -32700),
    (b"[" * 100_000 + b"]" * 100_000, -32600),
]


def first_answer(agent: AcpChild, body: bytes) -> dict[str, Any]:
    seen = len(agent.messages)
    agent.send(body)
    found: dict[str, Any] = agent.wait_for(lambda: next(iter(agent.messages[seen:]), None))
    return found


def test_lines_that_are_not_requests_are_answered_and_the_agent_serves_on(
    agent: AcpChild,
) -> None:
    for body, code in BAD_LINES:
        answer = first_answer(agent, body)
        assert (answer["id"], answer["error"]["code"]) == (None, code), body[:40]
        assert "result" in agent.request("session/list", {})

    assert "Traceback" not in agent.stderr()


def test_cancel_request_stops_the_prompt_it_names_without_a_traceback(
    agent: AcpChild, model: FakeModelServer, workspace: Path
) -> None:
    model.script(text_reply("word " * 400, chunk=1, delay=0.02))  # 40 s unless cancelled
    session = agent.new_session(workspace)
    agent.send(
        {
            "jsonrpc": "2.0",
            "id": "long",
            "method": "session/prompt",
            "params": agent.prompt_params(session, "talk"),
        }
    )
    agent.wait_for(lambda: agent.updates("agent_message_chunk"))

    agent.notify("$/cancel_request", {"requestId": "long"})

    assert agent.response("long")["result"]["stopReason"] == "cancelled"
    assert "Traceback" not in agent.stderr()


def test_stdout_may_be_a_file(model: FakeModelServer, state: Path, tmp_path: Path) -> None:
    requests = tmp_path / "in.jsonl"
    requests.write_bytes(
        b"".join(
            json.dumps(m).encode() + b"\n"
            for m in [
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {"protocolVersion": 1},
                },
                {"jsonrpc": "2.0", "id": 2, "method": "session/list", "params": {}},
            ]
        )
    )
    out = tmp_path / "out.jsonl"
    env = {**os.environ, "PYTHONPATH": str(REPO), **child_env(state)}
    with requests.open("rb") as stdin, out.open("wb") as stdout:
        done = subprocess.run(
            [sys.executable, *agent_args(model)],
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.PIPE,
            env=env,
            timeout=60,
            check=False,
        )

    assert done.returncode == 0, done.stderr
    answers = {m["id"]: m for m in map(json.loads, out.read_text().splitlines())}
    assert answers[1]["result"]["agentInfo"]["name"] == "rhema-lsp"
    assert answers[2]["result"] == {"sessions": []}
    assert b"Traceback" not in done.stderr


# -- a bounded fuzz against the real process ----------------------------------------------


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AcpChild]:
    state = tmp_path_factory.mktemp("acp-fuzz")
    with FakeModelServer(wire="openai", responder=lambda body: text_reply("Done.")) as model:
        child = AcpChild(agent_args(model)[2:], state / "stderr.log", child_env(state))
        child.initialize()
        yield child
        child.stop()
        assert child.exit_code == 0


METHODS = ["session/list", "session/new", "session/prompt", "session/cancel", "custom/x", "_ext"]


@settings(max_examples=examples(40))
@given(data=st.data())
def test_fuzzed_lines_are_answered_and_stderr_has_no_traceback(
    fuzzed: AcpChild, data: st.DataObject
) -> None:
    msg_id = 9_000_000 + len(fuzzed.messages)
    message = data.draw(envelopes(METHODS, msg_id))

    fuzzed.send(message)

    if isinstance(message, dict) and message.get("id") == msg_id:
        answer = fuzzed.response(msg_id)
        assert "result" in answer or answer["error"]["code"] in (-32600, -32601, -32602, -32002)
    assert "result" in fuzzed.request("session/list", {})
    assert "Traceback" not in fuzzed.stderr()
