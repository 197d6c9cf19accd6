"""The door's first answers, before the SDK loads (:mod:`rhema_lsp.acp.ready`):
the lifecycle gate refuses a request before ``initialize`` and serves on; a
``session/new`` right behind ``initialize`` is answered with the SDK path's
bytes for a session whose provider is not resolved yet; a ``session/new``
it cannot vouch for is left whole to the SDK; and the agent takes the
session over under the id given, its commands and its whole option list
(the ``model`` one with the listed models) following as updates."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from rhema_lsp.acp.agent import RhemaAcpAgent
from rhema_lsp.acp.connection import connect
from rhema_lsp.acp.handshake import replaying
from rhema_lsp.acp.ready import (
    DEFAULT_MODE,
    DEFAULT_THINKING,
    answer_early,
    new_session_result,
    session_vouched,
)
from rhema_lsp.runs.settings import Settings
from tests.fakes.model_server import FakeModelServer
from tests.unit.acp.test_handshake import pipe

INITIALIZE = {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True}}}


def _line(method: str, params: Any, msg_id: Any = 0) -> bytes:
    message = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
    return json.dumps(message).encode() + b"\n"


def _answers(written: list[bytes]) -> list[dict[str, Any]]:
    return [json.loads(line) for data in written for line in data.splitlines()]


def test_the_starting_mode_and_thinking_are_the_settings_defaults() -> None:
    defaults = Settings()
    assert (defaults.mode, defaults.thinking) == (DEFAULT_MODE, DEFAULT_THINKING)


async def test_a_request_before_initialize_is_refused_and_the_agent_serves_on() -> None:
    read, write, written = pipe(
        _line("session/new", {"cwd": "/tmp", "mcpServers": []}, 1)
        + b'{"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "x"}}\n'
        + b"{not json\n\n"
        + _line("session/prompt", {"sessionId": "x", "prompt": []}, "p"),
        _line("initialize", INITIALIZE, 2),
    )
    early = await answer_early(read, write, {})
    answers = _answers(written)
    assert [(a["id"], a.get("error", {}).get("code")) for a in answers] == [
        (1, -32600),
        (None, -32700),
        ("p", -32600),
        (2, None),
    ]
    assert "session/new before initialize" in answers[0]["error"]["message"]
    assert "send initialize first" in answers[2]["error"]["message"]
    assert answers[3]["result"]["protocolVersion"] == 1
    assert early.greeting is not None and early.opened is None and early.rest == b""


async def test_session_new_right_behind_initialize_is_answered_and_the_rest_handed_on(
    project: Path,
) -> None:
    after = _line("session/prompt", {"sessionId": "?", "prompt": []}, 9)
    both = _line("initialize", INITIALIZE) + _line(
        "session/new", {"cwd": str(project), "mcpServers": []}, 1
    )
    read, write, written = pipe(both + after[:7], after[7:])
    early = await answer_early(read, write, {"mode": "ask", "thinking": "high"})
    first, second = _answers(written)
    assert first["id"] == 0 and second["id"] == 1
    assert early.opened is not None and early.rest == after[:7]
    result = second["result"]
    assert result == early.opened.result
    assert result["sessionId"] == early.opened.session_id and len(early.opened.session_id) == 16
    assert result["modes"]["currentModeId"] == "ask"
    assert [o["id"] for o in result["configOptions"]] == ["mode", "thinking", "worktree"]
    assert result["configOptions"][1]["currentValue"] == "high"


@pytest.mark.parametrize(
    "params",
    [
        {"cwd": "relative", "mcpServers": []},
        {"cwd": "/", "mcpServers": []},
        {"cwd": "/no/such/folder", "mcpServers": []},
        {"cwd": "{project}", "mcpServers": [], "additionalDirectories": ["/"]},
        {"cwd": "{project}"},  # mcpServers is required
        {"cwd": "{project}", "mcpServers": [], "extra": 1},
        {"cwd": "{project}", "mcpServers": [], "_meta": {"x": 1}},
        {
            "cwd": "{project}",
            "mcpServers": [{"type": "sse", "name": "s", "url": "u", "headers": []}],
        },
        {"cwd": "{project}", "mcpServers": [{"name": "s", "command": "c", "args": [1], "env": []}]},
        {"cwd": "{project}", "mcpServers": [{"name": "s", "command": "c", "args": []}]},
    ],
)
async def test_a_session_new_it_cannot_vouch_for_is_left_whole_to_the_sdk(
    params: dict[str, Any], project: Path
) -> None:
    params = {k: str(project) if v == "{project}" else v for k, v in params.items()}
    line = _line("session/new", params, 1)
    read, write, written = pipe(_line("initialize", INITIALIZE), line)
    early = await answer_early(read, write, {})
    assert early.greeting is not None and early.opened is None
    assert early.rest == line and len(written) == 1


def test_the_servers_vouched_for_are_the_schemas_stdio_and_http_ones() -> None:
    stdio = {
        "name": "t",
        "command": "python",
        "args": ["-m", "x"],
        "env": [{"name": "A", "value": "1"}],
    }
    http = {
        "type": "http",
        "name": "h",
        "url": "http://x",
        "headers": [{"name": "K", "value": "v"}],
    }
    assert session_vouched({"cwd": "/p", "mcpServers": [stdio, http]})
    assert session_vouched({"cwd": "/p", "mcpServers": [], "additionalDirectories": ["/q"]})
    assert not session_vouched({"cwd": "/p", "mcpServers": [{**http, "headers": {}}]})


@pytest.mark.parametrize(
    ("flags", "settings"),
    [({}, {}), ({"mode": "ask", "thinking": "high"}, {"mode": "ask", "thinking": "high"})],
)
async def test_the_early_answer_is_the_sdk_paths_for_a_session_without_a_provider(
    flags: dict[str, str], settings: dict[str, str], project: Path
) -> None:
    """An agent whose provider cannot be set up answers ``session/new``
    without the ``model`` option: those are the bytes sent early."""
    unresolvable = {"sessionStore": "user", "provider": "custom", "protocol": "openai"}
    agent = RhemaAcpAgent(Settings.model_validate({**unresolvable, **settings}))
    new = _line("session/new", {"cwd": str(project), "mcpServers": []}, 5)
    read, write, written = pipe(_line("initialize", INITIALIZE) + new)
    await connect(agent, read, write)
    sdk = [data for data in written if b'"id":5' in data]
    assert len(sdk) == 1
    session_id = json.loads(sdk[0])["result"]["sessionId"]
    read, write, early = pipe(_line("initialize", INITIALIZE) + new)
    answered = await answer_early(read, write, flags)
    assert answered.opened is not None
    mode, thinking = settings.get("mode", "edit"), settings.get("thinking", "default")
    result = new_session_result(session_id, mode, thinking)  # type: ignore[arg-type]
    ours = early[1].replace(answered.opened.session_id.encode(), session_id.encode())
    assert ours == sdk[0]
    assert json.loads(ours)["result"] == result


async def test_the_agent_takes_the_session_over_and_tells_its_commands_then_its_models(
    project: Path,
) -> None:
    with FakeModelServer(wire="openai", models=["fake-model", "fake-large"]) as fake:
        settings = Settings.model_validate(
            {
                "sessionStore": "user",
                "provider": "custom",
                "protocol": "openai",
                "baseUrl": fake.base_url,
                "model": "fake-model",
            }
        )
        both = _line("initialize", INITIALIZE) + _line(
            "session/new", {"cwd": str(project), "mcpServers": []}, 1
        )
        listing = _line("session/list", {"cwd": str(project)}, 2)
        read, write, written = pipe(both)
        early = await answer_early(read, write, {})
        assert early.opened is not None
        agent = RhemaAcpAgent(settings)
        more = asyncio.Event()

        async def rest() -> bytes:
            await more.wait()  # the input stays open until the options came
            return b""

        pending = [listing]

        async def then() -> bytes:
            if pending:
                return pending.pop()
            return await rest()

        async def written_too(data: bytes) -> None:
            written.append(data)
            if b"config_option_update" in data:
                more.set()

        await connect(agent, replaying(early.rest, then), written_too, early.greeting, early.opened)
    sid = early.opened.session_id
    messages = _answers(written)
    updates = [m["params"]["update"] for m in messages if m.get("method") == "session/update"]
    kinds = [u["sessionUpdate"] for u in updates]
    assert kinds[0] == "available_commands_update" and "config_option_update" in kinds
    told = next(u for u in updates if u["sessionUpdate"] == "config_option_update")
    by_id = {o["id"]: o for o in told["configOptions"]}
    assert [o["value"] for o in by_id["model"]["options"]] == ["fake-model", "fake-large"]
    assert by_id["mode"] == early.opened.result["configOptions"][0]
    assert all(m["params"]["sessionId"] == sid for m in messages if m.get("method"))
    assert sid in agent.sessions or agent.door.closed
    listed = next(m for m in messages if m.get("id") == 2)
    assert "result" in listed


async def test_a_client_waiting_after_initialize_lets_the_agent_load_and_is_still_answered(
    project: Path,
) -> None:
    later = asyncio.Event()
    chunks = [_line("initialize", INITIALIZE)]
    idled: list[bool] = []

    async def read() -> bytes:
        if chunks:
            return chunks.pop(0)
        await later.wait()  # the client opens its session only later
        return _line("session/new", {"cwd": str(project), "mcpServers": []}, 1)

    async def write(data: bytes) -> None:
        written.append(data)

    def idle() -> None:
        idled.append(True)
        later.set()  # the load started; now the request comes

    written: list[bytes] = []
    early = await answer_early(read, write, {}, idle)
    assert idled == [True]
    assert early.opened is not None and [a["id"] for a in _answers(written)] == [0, 1]


async def test_a_client_that_goes_on_at_once_does_not_start_the_load_early(
    project: Path,
) -> None:
    new = _line("session/new", {"cwd": str(project), "mcpServers": []})
    read, write, _ = pipe(_line("initialize", INITIALIZE), new)
    idled: list[bool] = []
    early = await answer_early(read, write, {}, lambda: idled.append(True))
    assert early.opened is not None and idled == []
