"""The ``initialize`` answered before the SDK loads is the SDK path's answer,
byte for byte; the handshake answers only the params the SDK takes as they
are and leaves every other first line to it; and the agent still learns of
the request it did not see (the client's capabilities), with nothing sent
twice and nothing read lost."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import acp
import pytest

from rhema_lsp.acp.agent import RhemaAcpAgent
from rhema_lsp.acp.connection import connect
from rhema_lsp.acp.handshake import PROTOCOL_VERSION, Greeting, replaying, vouched
from rhema_lsp.acp.ready import answer_early
from rhema_lsp.runs.settings import Settings, parse_settings

FS = {"readTextFile": True, "writeTextFile": True}

VOUCHED: list[dict[str, Any]] = [
    {"protocolVersion": 1},
    {"protocolVersion": 0},
    {"protocolVersion": 2},
    {"protocolVersion": 65535, "clientCapabilities": None, "clientInfo": None, "_meta": None},
    {"protocolVersion": 1, "clientCapabilities": {"fs": FS, "terminal": True}},  # CodeCompanion
    {
        "protocolVersion": 1,
        "clientCapabilities": {
            "fs": {**FS, "_meta": {"x": 1}},
            "terminal": True,
            "_meta": {"terminal_output": True, "terminal-auth": True},
        },
        "clientInfo": {"name": "zed", "title": "Zed", "version": "0.200.0"},
    },
    {"protocolVersion": 1, "clientCapabilities": {}, "clientInfo": {"name": "a", "version": "1"}},
    {"protocolVersion": 1, "clientCapabilities": {"fs": None, "terminal": None}, "_meta": {}},
    # what the Python SDK's client sends
    {"protocolVersion": 1, "clientCapabilities": {"fs": FS, "auth": {"terminal": False}}},
    # a client that runs Terminal Auth: the terminal method is offered too
    {"protocolVersion": 1, "clientCapabilities": {"auth": {"terminal": True}}},
]

LEFT_TO_THE_SDK: list[Any] = [
    None,
    [],
    {},
    {"protocolVersion": "2024-11-05"},  # the SDK reads it as 1
    {"protocolVersion": "1"},
    {"protocolVersion": True},
    {"protocolVersion": 1.0},
    {"protocolVersion": -1},  # the SDK refuses these two
    {"protocolVersion": 70000},
    {"protocol_version": 1},  # a field name: the SDK takes it
    {"protocolVersion": 1, "clientCapabilities": {"auth": {"terminal": "yes"}}},
    {"protocolVersion": 1, "clientCapabilities": {"elicitation": {}}},
    {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": "yes"}}},
    {"protocolVersion": 1, "clientCapabilities": {"fs": []}},
    {"protocolVersion": 1, "clientCapabilities": {"terminal": 1}},
    {"protocolVersion": 1, "clientCapabilities": []},
    {"protocolVersion": 1, "clientInfo": {"name": "no version"}},
    {"protocolVersion": 1, "clientInfo": {"name": "a", "version": 1}},
    {"protocolVersion": 1, "_meta": {"protocol_version": 2}},  # the SDK makes _meta arguments
    {"protocolVersion": 1, "extra": True},
]


def _line(params: Any, msg_id: Any = 0) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": "initialize"}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode() + b"\n"


def pipe(
    *chunks: bytes,
) -> tuple[Callable[[], Awaitable[bytes]], Callable[[bytes], Awaitable[None]], list[bytes]]:
    """A read function handing out ``chunks`` then the end, and a write
    function recording what it is given."""
    pending = list(chunks)
    written: list[bytes] = []

    async def read() -> bytes:
        await asyncio.sleep(0)
        return pending.pop(0) if pending else b""

    async def write(data: bytes) -> None:
        written.append(data)

    return read, write, written


async def answer_first(
    read: Callable[[], Awaitable[bytes]], write: Callable[[bytes], Awaitable[None]]
) -> tuple[Greeting | None, bytes]:
    """The door's early answers to ``read`` (no session/new follows here)."""
    early = await answer_early(read, write, {})
    assert early.opened is None
    return early.greeting, early.rest


def _agent(project: Path) -> RhemaAcpAgent:
    return RhemaAcpAgent(Settings.model_validate({"sessionStore": "user"}))


async def _sdk_answer(agent: RhemaAcpAgent, line: bytes) -> list[bytes]:
    """What the SDK path (no handshake) writes for ``line``."""
    read, write, written = pipe(line)
    await connect(agent, read, write)
    return written


@pytest.mark.parametrize("params", VOUCHED)
async def test_the_early_answer_is_the_sdk_paths_byte_for_byte(
    params: dict[str, Any], project: Path
) -> None:
    assert vouched(params)
    for msg_id in (0, 7, "init-1"):
        line = _line(params, msg_id)
        read, write, early = pipe(line[:10], line[10:])
        greeting, rest = await answer_first(read, write)
        assert greeting is not None and rest == b""
        assert early == await _sdk_answer(_agent(project), line)
        assert len(early) == 1 and early[0].endswith(b"\n")


@pytest.mark.parametrize("params", LEFT_TO_THE_SDK)
async def test_params_it_cannot_vouch_for_are_left_to_the_sdk(params: Any, project: Path) -> None:
    assert not vouched(params)
    line = _line(params)
    read, write, early = pipe(line)
    greeting, rest = await answer_first(read, write)
    assert (greeting, early, rest) == (None, [], line)
    answer = json.loads((await _sdk_answer(_agent(project), line))[0])
    assert answer["id"] == 0 and ("result" in answer or "error" in answer)


@pytest.mark.parametrize(
    "first",
    [
        _line({"protocolVersion": 1}, msg_id=None),
        _line({"protocolVersion": 1})[:-1],  # the input ends before the line does
        b" " * 70_000,
    ],
)
async def test_an_initialize_it_cannot_take_whole_is_left_to_the_sdk(first: bytes) -> None:
    read, write, early = pipe(first)
    greeting, rest = await answer_first(read, write)
    assert (greeting, early, rest) == (None, [], first)


async def test_the_agent_learns_the_capabilities_and_nothing_is_sent_twice_or_lost(
    project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    params = {"protocolVersion": 1, "clientCapabilities": {"fs": FS}, "clientInfo": None}
    after = b'{"jsonrpc": "2.0", "id": 0, "method": "session/list", "params": {}}\n'
    more = b'{"jsonrpc": "2.0", "id": 1, "method": "session/list", "params": {}}\n'
    read, write, written = pipe(_line(params) + after[:20], after[20:] + more[:9], more[9:])
    greeting, rest = await answer_first(read, write)
    assert greeting is not None and rest == after + more[:9]
    agent = _agent(project)
    with caplog.at_level(logging.ERROR):
        await connect(agent, replaying(rest, read), write, greeting)
    answers = [json.loads(data) for data in written]
    assert [answer["id"] for answer in answers] == [0, 0, 1]  # the id is free once answered
    assert answers[0]["result"]["protocolVersion"] == 1
    assert answers[1]["result"] == {"sessions": []}
    fs = agent._capabilities.fs
    assert fs is not None and fs.read_text_file and fs.write_text_file
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_the_protocol_version_is_the_sdks() -> None:
    assert PROTOCOL_VERSION == acp.PROTOCOL_VERSION


IMAGES: list[tuple[dict[str, Any], bool]] = [
    ({}, True),  # nothing named yet: the provider refuses images when built, naming why
    ({"vision": False}, False),  # --no-vision
    ({"provider": "openai", "vision": False}, False),
    ({"provider": "openai"}, True),
    ({"provider": "embedded"}, False),
    ({"provider": "embedded", "vision": True}, False),
    ({"provider": "ollama", "model": "qwen2.5-coder:7b"}, False),  # a local text-only model
    ({"provider": "ollama", "model": "llava:13b"}, True),
    ({"provider": "ollama", "model": "qwen2.5-coder:7b", "vision": True}, True),
    ({"provider": "ollama"}, True),  # its model is asked of the server later
    (
        {
            "provider": "custom",
            "protocol": "openai",
            "baseUrl": "http://127.0.0.1:9/v1",
            "model": "fake-model",
        },
        False,
    ),
    (
        {
            "provider": "custom",
            "protocol": "openai",
            "baseUrl": "https://models.example.com/v1",
            "model": "fake-model",
        },
        True,
    ),
    # hostile values: the settings leave them at their defaults, so does the answer
    ({"vision": "maybe", "provider": 7, "model": None}, True),
    ({"provider": "custom", "baseUrl": "http://[::1", "model": "x"}, True),
]


@pytest.mark.parametrize(("raw", "image"), IMAGES)
async def test_the_image_capability_follows_the_configured_model_on_both_paths(
    raw: dict[str, Any], image: bool, project: Path
) -> None:
    line = _line({"protocolVersion": 1})
    read, write, early = pipe(line)
    answered = await answer_early(read, write, raw)
    assert answered.greeting is not None
    capabilities = json.loads(early[0])["result"]["agentCapabilities"]
    assert capabilities["promptCapabilities"]["image"] is image
    settings, _problems = parse_settings({"sessionStore": "user", **raw})
    read, write, sdk = pipe(line)
    await connect(RhemaAcpAgent(settings), read, write)
    assert sdk == early
