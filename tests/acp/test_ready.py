"""``rhema-lsp acp`` as a child process, ready at once: a request before
``initialize`` is refused while the agent serves on (the lifecycle gate);
a ``session/new`` written right behind ``initialize``, before its answer,
is answered, the models follow as ``config_option_update``, and the
session's first prompt runs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.acp.client import agent_args
from tests.acp.test_wire import AcpChild
from tests.fakes.in_process import child_env
from tests.fakes.model_server import FakeModelServer, text_reply

INITIALIZE = {"protocolVersion": 1, "clientCapabilities": {"terminal": False}}


@pytest.fixture
def models() -> Iterator[FakeModelServer]:
    with FakeModelServer(
        wire="openai", models=["fake-model", "fake-large"], responder=lambda _: text_reply("Hi.")
    ) as server:
        yield server


@pytest.fixture
def child(models: FakeModelServer, state: Path) -> Iterator[AcpChild]:
    agent = AcpChild(agent_args(models)[2:], state / "stderr.log", child_env(state))
    yield agent
    agent.stop()
    assert agent.exit_code == 0


def test_a_request_before_initialize_is_refused_and_the_agent_serves_on(
    child: AcpChild, workspace: Path
) -> None:
    refused = child.request("session/new", {"cwd": str(workspace), "mcpServers": []})
    assert refused["error"]["code"] == -32600
    assert "before initialize" in refused["error"]["message"]
    assert child.request("session/list", {})["error"]["code"] == -32600
    assert "result" in child.request("initialize", INITIALIZE)
    session = child.new_session(workspace)
    assert "result" in child.request("session/prompt", child.prompt_params(session, "hello"))
    assert "Traceback" not in child.stderr()


def test_session_new_right_behind_initialize_is_answered_and_the_models_follow(
    child: AcpChild, workspace: Path
) -> None:
    child.send_bytes(
        b"".join(
            json.dumps(message).encode() + b"\n"
            for message in (
                {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INITIALIZE},
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "session/new",
                    "params": {"cwd": str(workspace), "mcpServers": []},
                },
            )
        )
    )
    assert "result" in child.response(0)
    answer = child.response(1)["result"]
    assert [option["id"] for option in answer["configOptions"]] == ["mode", "thinking", "worktree"]
    session = answer["sessionId"]
    told = child.wait_for(lambda: child.updates("config_option_update"))
    (model,) = [o for o in told[0]["configOptions"] if o["id"] == "model"]
    assert model["currentValue"] == "fake-model"
    assert [choice["value"] for choice in model["options"]] == ["fake-model", "fake-large"]
    assert child.updates("available_commands_update")
    done = child.request("session/prompt", child.prompt_params(session, "hello"))
    assert done["result"]["stopReason"] == "end_turn"
    assert "Hi." in "".join(u["content"]["text"] for u in child.updates("agent_message_chunk"))
    assert "Traceback" not in child.stderr()
