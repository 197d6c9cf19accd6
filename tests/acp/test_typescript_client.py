"""``rhema-lsp acp`` driven by a client on the official ACP TypeScript SDK
(``@agentclientprotocol/sdk``, its ``ClientApp``; tests/acp/ts_client, a
Node driver installed by scripts/install.sh), in one agent process per
scenario, against the fake model server, which records each request:

- the tour: config options listed, the model switched (the next request
  goes to it) and the mode switched by option; two text blocks kept apart;
  ``/status`` answered without a model request; an approved command run in
  the client's terminal (create, wait, output, release) and another killed
  on ``session/cancel`` (kill, release); ``usage_update`` and
  ``available_commands_update`` seen; a prompt aborted through the SDK's
  signal (``$/cancel_request``); a non-object line and a malformed line
  answered with errors while the agent serves on; close, resume, delete;
  a folder's sessions paged with ``nextCursor``;
- ``promptCapabilities.image`` following ``--vision`` and ``--no-vision``;
- CodeCompanion's set-up as the README gives it (``--mode edit``, fs both
  ways, no terminal, options only, never ``session/set_mode``): a command
  is not offered in edit mode, then the ``mode`` option switches to
  ``agent`` and an approved command runs.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from rhema_lsp.acp.sessions import LIST_PAGE
from rhema_lsp.sessions import SessionStore
from tests.acp.client import REPO, agent_args
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

DRIVER = Path(__file__).parent / "ts_client" / "driver.mjs"


@pytest.fixture
def models() -> Any:
    with FakeModelServer(wire="openai", models=["fake-model", "fake-large"]) as server:
        yield server


async def drive(
    scenario: str, fake: FakeModelServer, state: Path, cwd: Path, *flags: str, **extra: Any
) -> dict[str, Any]:
    config = {
        "command": [sys.executable, *agent_args(fake, *flags)],
        "cwd": str(cwd),
        "env": {
            "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
            "XDG_STATE_HOME": str(state),
            "XDG_CONFIG_HOME": str(state / "config"),
            "OPENAI_API_KEY": "",
        },
        **extra,
    }
    process = await asyncio.create_subprocess_exec(
        "node",
        str(DRIVER),
        scenario,
        json.dumps(config),
        cwd=DRIVER.parent,
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await asyncio.wait_for(process.communicate(), 120)
    seen: dict[str, Any] = json.loads(out)
    assert seen["failure"] is None, seen["failure"]
    return seen


class _AnyUsage:
    def __eq__(self, other: object) -> bool:
        return isinstance(other, dict) and {"inputTokens", "outputTokens"} <= set(other)


ANY_USAGE = _AnyUsage()


def _current(options: list[dict[str, Any]]) -> dict[str, str]:
    return {option["id"]: option["currentValue"] for option in options}


def _tools(request: dict[str, Any]) -> set[str]:
    return {tool["function"]["name"] for tool in request.get("tools", [])}


def _kinds(seen: dict[str, Any]) -> list[str]:
    return [update["sessionUpdate"] for update in seen["updates"]]


async def test_the_typescript_sdks_client_tours_the_agent(
    models: FakeModelServer, state: Path, workspace: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    store = await SessionStore.open(other)
    try:
        for n in range(LIST_PAGE + 2):
            await store.create(f"session {n}", session_id=f"s{n:03d}")
    finally:
        await store.close()
    models.script(
        text_reply("Explained."),
        tool_reply(("run_command", {"command": "echo rhema-$((6*7))", "escalate": True})),
        text_reply("Ran."),
        tool_reply(("run_command", {"command": "sleep 60", "escalate": True})),
        text_reply("word " * 3000, chunk=5, delay=0.005),
    )
    seen = await drive(
        "tour",
        models,
        state,
        workspace,
        "--mode",
        "edit",
        "--context-window",
        "32000",
        "--vision",
        answers=["allow_once", "allow_once"],
        other=str(other),
    )
    r = seen["results"]
    caps = r["initialize"]["agentCapabilities"]["sessionCapabilities"]
    assert {"list", "delete", "resume", "close"} <= set(caps)
    assert r["initialize"]["agentCapabilities"]["promptCapabilities"]["image"] is True  # --vision
    # answered before the provider is resolved: the model option follows
    assert _current(r["newOptions"]) == {"mode": "edit", "thinking": "default"}
    told = [u for u in seen["updates"] if u["sessionUpdate"] == "config_option_update"]
    assert any("model" in _current(u["configOptions"]) for u in told)
    assert _current(r["chosen"]["configOptions"])["model"] == "fake-large"
    assert _current(r["switched"]["configOptions"])["mode"] == "agent"
    kinds = _kinds(seen)
    assert "available_commands_update" in kinds and "usage_update" in kinds
    assert "config_option_update" in kinds and "current_mode_update" in kinds
    glued, run1, run2, waited, talked = models.requests
    assert glued["model"] == "fake-large"  # the option switched it
    assert "run_command" in _tools(run1)  # agent mode, switched by option
    assert "hello.py\nExplain this file." in glued["messages"][-1]["content"]
    assert r["status"]["stopReason"] == "end_turn"
    commands = next(u for u in seen["updates"] if u["sessionUpdate"] == "available_commands_update")
    assert {"status", "compact", "rewind", "undo"} <= {
        c["name"] for c in commands["availableCommands"]
    }
    # the approved command ran in the client's terminal, the second was killed
    assert r["ran"]["stopReason"] == "end_turn"
    tool_result = next(m for m in run2["messages"] if m["role"] == "tool")["content"]
    assert "rhema-42" in tool_result
    assert seen["terminal"][0] == [
        "create",
        "/bin/sh",
        ["-c", "echo rhema-$((6*7))"],
        str(workspace),
    ]
    steps = [(what, rest[0]) for what, *rest in seen["terminal"][1:]]
    assert steps[:3] == [("wait", "t0"), ("output", "t0"), ("release", "t0")]
    assert ("kill", "t1") in steps and steps[-1] == ("release", "t1")
    assert r["cancelled"]["stopReason"] == "cancelled"
    assert len(seen["asked"]) == 2
    # $/cancel_request (the SDK's cancellation signal) stopped the prompt
    assert r["abortedPrompt"] == {"ok": {"stopReason": "cancelled", "usage": ANY_USAGE}}
    # the bad lines were answered, and the agent served on
    errors = [line["error"]["code"] for line in seen["raw"] if line.get("id", 0) is None]
    assert -32600 in errors and -32700 in errors
    assert isinstance(r["afterBadLines"]["sessions"], list)
    # lifecycle
    assert r["resumed"]["configOptions"]
    assert r["deleted"] == {} or r["deleted"] is None
    assert r["listAfterDelete"]["sessions"] == []
    assert len(r["pagedFirst"]["sessions"]) == LIST_PAGE
    assert len(r["pagedSecond"]["sessions"]) == 2 and "nextCursor" not in r["pagedSecond"]
    assert talked["model"] == "fake-large" and waited["model"] == "fake-large"


async def test_codecompanions_set_up_switches_to_agent_by_option_and_runs_a_command(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    fake.script(
        text_reply("I cannot run commands in edit mode."),
        tool_reply(("run_command", {"command": "echo from-codecompanion", "escalate": True})),
        text_reply("It printed from-codecompanion."),
    )
    seen = await drive(
        "codecompanion",
        fake,
        state,
        workspace,
        "--mode",
        "edit",
        "--no-vision",
        answers=["allow_once"],
    )
    r = seen["results"]
    assert r["initialize"]["agentCapabilities"]["promptCapabilities"]["image"] is False
    assert _current(r["newOptions"])["mode"] == "edit"
    assert _current(r["switched"]["configOptions"])["mode"] == "agent"
    assert r["ran"]["stopReason"] == "end_turn"
    edit, agent, after = fake.requests
    assert "run_command" not in _tools(edit) and "run_command" in _tools(agent)
    assert len(seen["asked"]) == 1 and seen["terminal"] == []  # approved, run by the agent
    assert (
        "from-codecompanion" in next(m for m in after["messages"] if m["role"] == "tool")["content"]
    )
    assert "current_mode_update" in _kinds(seen)
