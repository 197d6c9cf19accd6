"""The last check: the server's own keys never leave in a request body, on
any wire, wherever in the conversation they turned up; the request still
goes through, and the log names the variable, never the value."""

from __future__ import annotations

import json
import logging

import pytest

from rhema_lsp.engine import Message, ModelRequest, Role, TextPart, ToolCall, ToolResult
from rhema_lsp.providers.secrets import SERVER_KEY_VARS, KeyGuard, Secret
from tests.fakes.model_server import FakeModelServer, text_reply
from tests.unit.providers.helpers import Recorder, adapter

KEYS = {
    "OPENAI_API_KEY": "sk-proj-openai-0123456789abcdef",
    "ANTHROPIC_API_KEY": "sk-ant-api03-anthropic-0123456789",
    "GEMINI_API_KEY": "AIzaSyGemini0123456789abcdefgh",
    "OPENROUTER_API_KEY": "sk-or-v1-openrouter-0123456789",
    "GROQ_API_KEY": "gsk_groq0123456789abcdefghijkl",
    "RHEMA_API_KEY": 'rhema-"quoted"\\-key-0123',  # escaped in JSON: still found
}


def leaky_request(key: str) -> ModelRequest:
    """``key`` in the system prompt, a user message and a tool result."""
    return ModelRequest(
        system=f"You are helpful. Deployment token: {key}",
        messages=[
            Message.user(f"my key is {key}, keep it safe"),
            Message(
                role=Role.ASSISTANT,
                content=[ToolCall(id="call_1", name="read_file", args={"path": ".env"})],
            ),
            Message(role=Role.TOOL, content=[ToolResult.success("call_1", f"API_KEY={key}\n")]),
            Message.user("what did you find?"),
        ],
    )


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    return KEYS


@pytest.mark.parametrize("variable", sorted(KEYS))
async def test_no_key_reaches_the_model_on_any_wire(
    any_wire: FakeModelServer,
    keys: dict[str, str],
    variable: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    any_wire.script(text_reply("answered"), text_reply("again"))
    provider = adapter(any_wire)  # built after the environment is set, as the server's is
    key = keys[variable]
    with caplog.at_level(logging.WARNING, logger="rhema_lsp.providers"):
        output = await provider.complete(leaky_request(key), Recorder())
        again = await provider.complete(leaky_request(key), Recorder())
    assert (output.message.text, again.message.text) == ("answered", "again")
    marker = f"[redacted {variable}]"
    for post in any_wire.posts:
        body = post.raw.decode()
        assert key not in body and json.dumps(key)[1:-1] not in body
        assert body.count(marker) == 3  # system prompt, user message, tool result
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1  # once, naming the variable
    assert variable in warnings[0] and key not in warnings[0]


async def test_a_clean_request_goes_out_unchanged(
    openai_server: FakeModelServer, keys: dict[str, str]
) -> None:
    openai_server.script(text_reply("fine"))
    provider = adapter(openai_server)
    request = ModelRequest(messages=[Message.user("nothing secret here")])
    await provider.complete(request, Recorder())
    assert openai_server.requests[0]["messages"] == [
        {"role": "user", "content": "nothing secret here"}
    ]


async def test_the_providers_own_key_is_guarded_even_without_a_variable(
    anthropic_server: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in SERVER_KEY_VARS:
        monkeypatch.delenv(name, raising=False)
    anthropic_server.script(text_reply("ok"))
    own = "sk-ant-own-key-given-directly-42"
    provider = adapter(anthropic_server, key=own)
    await provider.complete(leaky_request(own), Recorder())
    post = anthropic_server.posts[0]
    assert own not in post.raw.decode()
    assert post.headers["x-api-key"] == own  # the one place it belongs


def test_short_values_are_not_searched() -> None:
    guard = KeyGuard({"RHEMA_API_KEY": "abc123", "GROQ_API_KEY": "gsk_long_enough_1"})
    assert guard.guarded == ["GROQ_API_KEY"]
    assert guard.scrub(b'{"t": "abc123 gsk_long_enough_1"}', "test") == (
        b'{"t": "abc123 [redacted GROQ_API_KEY]"}'
    )


def test_a_key_inside_another_is_replaced_whole() -> None:
    guard = KeyGuard({"OPENAI_API_KEY": "sk-12345678", "RHEMA_API_KEY": "sk-12345678-extra"})
    assert guard.scrub(b'"sk-12345678-extra sk-12345678"', "t") == (
        b'"[redacted RHEMA_API_KEY] [redacted OPENAI_API_KEY]"'
    )


def test_the_guard_reads_every_servers_key_variable() -> None:
    assert set(SERVER_KEY_VARS) == set(KEYS)
    env = {**KEYS, "UNRELATED_TOKEN": "0123456789abcdef"}
    assert KeyGuard.from_env(env, Secret(KEYS["GROQ_API_KEY"])).guarded == sorted(KEYS)


def test_text_parts_survive_redaction_as_json() -> None:
    guard = KeyGuard(KEYS)
    body = json.dumps(
        {"m": [TextPart(text=f"x {v} y").model_dump() for v in KEYS.values()]}, ensure_ascii=False
    ).encode()
    scrubbed = json.loads(guard.scrub(body, "t"))
    assert [part["text"] for part in scrubbed["m"]] == [f"x [redacted {n}] y" for n in KEYS]
