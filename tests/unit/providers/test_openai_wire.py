"""The OpenAI-compatible adapter against hand-written Chat Completions transcripts."""

from __future__ import annotations

import json

import pytest

from rhema_lsp.engine import (
    ChatParams,
    Message,
    ModelRequest,
    Role,
    StopReason,
    TextDelta,
    ThinkingDelta,
    ThinkingEffort,
    ToolCall,
    ToolCallArgsDelta,
    ToolCallStart,
    ToolResult,
    Usage,
    UsageUpdate,
    invalid_json_arguments,
)
from rhema_lsp.providers import ProviderStreamError, Secret, build_http_provider
from tests.fakes.model_server import FakeModelServer, raw_reply, text_reply, tool_reply
from tests.unit.providers.helpers import READ_FILE, Recorder, adapter, ask


def chunk(delta: dict[str, object], finish: str | None = None, **extra: object) -> str:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }
    return "data: " + json.dumps(body)


USAGE = "data: " + json.dumps(
    {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "choices": [],
        "usage": {"prompt_tokens": 21, "completion_tokens": 7, "total_tokens": 28},
    }
)


async def test_text_reasoning_usage_and_done(openai_server: FakeModelServer) -> None:
    openai_server.script(
        raw_reply(
            [
                ": OPENROUTER PROCESSING",
                "",
                chunk({"role": "assistant", "content": ""}),
                "",
                chunk({"reasoning_content": "Let me "}),
                "",
                chunk({"reasoning": "think."}),
                "",
                ": OPENROUTER PROCESSING",
                "",
                chunk({"content": "Hello"}),
                "",
                "event: unknown_kind",
                'data: {"choices":[],"note":"an event type this client does not know"}',
                "",
                chunk({"content": ", world"}),
                "",
                chunk({}, "stop"),
                "",
                USAGE,
                "",
                "data: [DONE]",
                "",
            ]
        )
    )
    sink = Recorder()
    output = await adapter(openai_server).complete(ask(), sink)
    assert "".join(e.text for e in sink.of(ThinkingDelta)) == "Let me think."
    assert "".join(e.text for e in sink.of(TextDelta)) == "Hello, world"
    assert sink.types().index("thinking_delta") < sink.types().index("text_delta")
    assert sink.of(UsageUpdate)[-1] == UsageUpdate(Usage(input=21, output=7))
    assert output.message.text == "Hello, world"
    assert output.message.content[0].type == "thinking"
    assert output.stop_reason is StopReason.END_TURN
    assert output.usage == Usage(input=21, output=7)


async def test_crlf_line_endings(openai_server: FakeModelServer) -> None:
    body = "\r\n".join(
        [
            chunk({"content": "A"}),
            "",
            chunk({"content": "B"}, "length"),
            "",
            USAGE,
            "",
            "data: [DONE]",
            "",
            "",
        ]
    )
    openai_server.script(raw_reply(body.encode()))
    sink = Recorder()
    output = await adapter(openai_server).complete(ask(), sink)
    assert output.message.text == "AB"
    assert output.stop_reason is StopReason.MAX_TOKENS


async def test_two_interleaved_parallel_tool_calls(openai_server: FakeModelServer) -> None:
    def call(index: int, **fields: object) -> dict[str, object]:
        return {"index": index, **fields}

    openai_server.script(
        raw_reply(
            [
                chunk({"role": "assistant", "content": None}),
                "",
                chunk(
                    {
                        "tool_calls": [
                            call(
                                0,
                                id="call_a",
                                type="function",
                                function={"name": "read_file", "arguments": ""},
                            )
                        ]
                    }
                ),
                "",
                chunk(
                    {
                        "tool_calls": [
                            call(
                                1,
                                id="call_b",
                                type="function",
                                function={"name": "grep", "arguments": '{"pat'},
                            )
                        ]
                    }
                ),
                "",
                chunk({"tool_calls": [call(0, function={"arguments": '{"path": '})]}),
                "",
                chunk({"tool_calls": [call(1, function={"arguments": 'tern": "x"}'})]}),
                "",
                chunk({"tool_calls": [call(0, function={"arguments": '"a.py"}'})]}),
                "",
                chunk({}, "tool_calls"),
                "",
                USAGE,
                "",
                "data: [DONE]",
                "",
            ]
        )
    )
    sink = Recorder()
    output = await adapter(openai_server).complete(ask(tools=[READ_FILE]), sink)
    assert sink.of(ToolCallStart) == [
        ToolCallStart("call_a", "read_file"),
        ToolCallStart("call_b", "grep"),
    ]
    assert [(e.id, e.delta) for e in sink.of(ToolCallArgsDelta)] == [
        ("call_b", '{"pat'),
        ("call_a", '{"path": '),
        ("call_b", 'tern": "x"}'),
        ("call_a", '"a.py"}'),
    ]
    calls = output.message.tool_calls
    assert [(c.id, c.name, c.args, c.raw_args) for c in calls] == [
        ("call_a", "read_file", {"path": "a.py"}, '{"path": "a.py"}'),
        ("call_b", "grep", {"pattern": "x"}, '{"pattern": "x"}'),
    ]
    assert output.stop_reason is StopReason.TOOL_USE


async def test_tool_fragments_without_index(openai_server: FakeModelServer) -> None:
    openai_server.script(
        raw_reply(
            [
                chunk(
                    {"tool_calls": [{"id": "c1", "function": {"name": "a", "arguments": '{"x"'}}]}
                ),
                "",
                chunk({"tool_calls": [{"function": {"arguments": ": 1}"}}]}),
                "",
                chunk({"tool_calls": [{"id": "c2", "function": {"name": "b", "arguments": "{}"}}]}),
                "",
                # Ollama-style: tool calls but finish_reason "stop".
                chunk({}, "stop"),
                "",
                "data: [DONE]",
                "",
            ]
        )
    )
    output = await adapter(openai_server).complete(ask(), Recorder())
    assert [(c.id, c.name, c.args) for c in output.message.tool_calls] == [
        ("c1", "a", {"x": 1}),
        ("c2", "b", {}),
    ]
    assert output.stop_reason is StopReason.TOOL_USE


async def test_truncated_tool_call_json_is_kept_raw(openai_server: FakeModelServer) -> None:
    openai_server.script(
        raw_reply(
            [
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "c1",
                                "function": {"name": "read_file", "arguments": '{"path": "a.p'},
                            }
                        ]
                    }
                ),
                "",
                chunk({}, "tool_calls"),
                "",
                "data: [DONE]",
                "",
            ]
        )
    )
    output = await adapter(openai_server).complete(ask(), Recorder())
    (call,) = output.message.tool_calls
    assert call.args == {}
    assert call.raw_args == '{"path": "a.p'
    assert invalid_json_arguments(call)


async def test_eof_inside_a_tool_call_is_an_error(openai_server: FakeModelServer) -> None:
    openai_server.script(
        raw_reply(
            [
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "c1",
                                "function": {"name": "write_file", "arguments": '{"pa'},
                            }
                        ]
                    }
                ),
                "",
            ],
        )
    )
    with pytest.raises(ProviderStreamError, match="without \\[DONE\\] during a tool call"):
        await adapter(openai_server, attempts=1).complete(ask(), Recorder())


async def test_groq_usage_in_x_groq(openai_server: FakeModelServer) -> None:
    openai_server.script(
        raw_reply(
            [
                chunk({"content": "hi"}),
                "",
                chunk(
                    {},
                    "stop",
                    x_groq={"id": "req_1", "usage": {"prompt_tokens": 3, "completion_tokens": 1}},
                ),
                "",
                "data: [DONE]",
                "",
            ]
        )
    )
    output = await adapter(openai_server).complete(ask(), Recorder())
    assert output.usage == Usage(input=3, output=1)


async def test_an_event_the_fast_decoder_refuses_is_still_read(
    openai_server: FakeModelServer,
) -> None:
    # JSON allows a number beyond a float (msgspec refuses it, json reads inf);
    # the event goes the slow way and nothing in it is lost.
    openai_server.script(
        raw_reply(
            [
                chunk({"content": "hi"}),
                "",
                'data: {"choices": [], "usage": {"prompt_tokens": 4, '
                '"completion_tokens": 2, "cost": 1e400}}',
                "",
                "data: [DONE]",
                "",
            ]
        )
    )
    output = await adapter(openai_server).complete(ask(), Recorder())
    assert output.message.text == "hi"
    assert output.usage == Usage(input=4, output=2)


async def test_request_body_history_and_tools(openai_server: FakeModelServer) -> None:
    openai_server.script(text_reply("ok"))
    history = [
        Message.user("first"),
        Message(
            role=Role.ASSISTANT,
            content=[
                ToolCall(id="c1", name="read_file", args={"path": "a"}, raw_args='{"path":"a"}'),
                ToolCall(id="c2", name="read_file", args={}, raw_args='{"path":'),
            ],
        ),
        Message(role=Role.TOOL, content=[ToolResult.success("c1", "A")]),
        Message(role=Role.TOOL, content=[ToolResult.failure("c2", "bad json")]),
        Message.user("cancelled question"),
        Message.user("second question"),
    ]
    request = ModelRequest(
        system="be brief",
        messages=history,
        tools=[READ_FILE],
        params=ChatParams(max_tokens=100, temperature=0.1),
    )
    await adapter(openai_server).complete(request, Recorder())
    body = openai_server.requests[0]
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["model"] == "fake-model"
    assert body["max_tokens"] == 100
    assert "reasoning_effort" not in body
    assert body["tools"][0]["function"]["name"] == "read_file"
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "tool", "user", "user"]
    calls = body["messages"][2]["tool_calls"]
    assert calls[0]["function"]["arguments"] == '{"path":"a"}'  # raw text resent verbatim
    assert calls[1]["function"]["arguments"] == "{}"  # broken JSON is not resent
    assert [m.get("tool_call_id") for m in body["messages"][3:5]] == ["c1", "c2"]


@pytest.mark.parametrize(
    ("name", "effort", "expected"),
    [
        ("ollama", ThinkingEffort.HIGH, {"reasoning_effort": "high"}),
        ("openrouter", ThinkingEffort.LOW, {"reasoning": {"effort": "low"}}),
        ("openai", ThinkingEffort.MEDIUM, {"reasoning_effort": "medium"}),
        ("ollama", ThinkingEffort.DEFAULT, {}),
    ],
)
async def test_thinking_effort_mapping(
    openai_server: FakeModelServer, name: str, effort: ThinkingEffort, expected: dict[str, object]
) -> None:
    openai_server.script(text_reply("ok"))
    provider = build_http_provider(
        "openai", name=name, base_url=openai_server.base_url, model="m", key=None
    )
    await provider.complete(ask(params=ChatParams(thinking=effort, max_tokens=50)), Recorder())
    body = openai_server.requests[0]
    for key in ("reasoning_effort", "reasoning"):
        assert body.get(key) == expected.get(key)
    assert ("max_completion_tokens" in body) == (name == "openai")


async def test_bearer_key_header(openai_server: FakeModelServer) -> None:
    openai_server.script(text_reply("ok"))
    provider = build_http_provider(
        "openai", name="x", base_url=openai_server.base_url, model="m", key=Secret("sk-test-123")
    )
    await provider.complete(ask(), Recorder())
    assert openai_server.posts[0].headers["authorization"] == "Bearer sk-test-123"
    assert openai_server.posts[0].path == "/v1/chat/completions"


async def test_builder_transcript_round_trip(openai_server: FakeModelServer) -> None:
    openai_server.script(
        tool_reply(
            ("read_file", {"path": "a.py"}),
            ("grep", {"pattern": "x"}),
            text="Looking.",
            keepalive=True,
            crlf=True,
        )
    )
    sink = Recorder()
    output = await adapter(openai_server).complete(ask(), sink)
    assert [c.id for c in output.message.tool_calls] == ["call_1", "call_2"]
    assert output.message.text == "Looking."
    assert (
        "".join(e.delta for e in sink.of(ToolCallArgsDelta) if e.id == "call_2")
        == '{"pattern": "x"}'
    )
