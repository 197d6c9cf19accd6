"""The Anthropic Messages adapter against hand-written streaming transcripts."""

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
    TextPart,
    ThinkingDelta,
    ThinkingEffort,
    ThinkingPart,
    ToolCall,
    ToolCallArgsDelta,
    ToolCallStart,
    ToolResult,
    Usage,
    UsageUpdate,
)
from rhema_lsp.providers import ProviderError, ProviderStreamError
from rhema_lsp.providers.anthropic import thinking_budget
from tests.fakes.model_server import FakeModelServer, raw_reply, text_reply
from tests.unit.providers.helpers import READ_FILE, Recorder, adapter, ask


def event(name: str, data: dict[str, object]) -> list[str]:
    return [f"event: {name}", "data: " + json.dumps({"type": name, **data}), ""]


START = event(
    "message_start",
    {
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": "m",
            "stop_reason": None,
            "usage": {"input_tokens": 42, "output_tokens": 1},
        }
    },
)
STOP = event("message_stop", {})


def block(index: int, start: dict[str, object], *deltas: dict[str, object]) -> list[str]:
    lines = event("content_block_start", {"index": index, "content_block": start})
    for delta in deltas:
        lines += event("content_block_delta", {"index": index, "delta": delta})
    return lines + event("content_block_stop", {"index": index})


def message_delta(reason: str, output: int) -> list[str]:
    return event(
        "message_delta",
        {
            "delta": {"stop_reason": reason, "stop_sequence": None},
            "usage": {"output_tokens": output},
        },
    )


async def test_thinking_redacted_text_and_parallel_tools(anthropic_server: FakeModelServer) -> None:
    anthropic_server.script(
        raw_reply(
            START
            + event("ping", {})
            + block(
                0,
                {"type": "thinking", "thinking": ""},
                {"type": "thinking_delta", "thinking": "Plan: "},
                {"type": "thinking_delta", "thinking": "read both."},
                {"type": "signature_delta", "signature": "EqQBCgIYAhIM"},
            )
            + block(1, {"type": "redacted_thinking", "data": "EmwKAhgBEgy3"})
            + block(2, {"type": "text", "text": ""}, {"type": "text_delta", "text": "Reading."})
            + event("brand_new_event", {"anything": 1})
            + block(
                3,
                {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}},
                {"type": "input_json_delta", "partial_json": ""},
                {"type": "input_json_delta", "partial_json": '{"path": '},
                {"type": "input_json_delta", "partial_json": '"a.py"}'},
            )
            + block(
                4,
                {"type": "tool_use", "id": "toolu_2", "name": "read_file", "input": {}},
                {"type": "input_json_delta", "partial_json": '{"path": "b.py"}'},
            )
            + message_delta("tool_use", 77)
            + STOP
        )
    )
    sink = Recorder()
    output = await adapter(anthropic_server).complete(ask(tools=[READ_FILE]), sink)
    assert "".join(e.text for e in sink.of(ThinkingDelta)) == "Plan: read both."
    assert [e.text for e in sink.of(TextDelta)] == ["Reading."]
    assert sink.of(ToolCallStart) == [
        ToolCallStart("toolu_1", "read_file"),
        ToolCallStart("toolu_2", "read_file"),
    ]
    assert [e.id for e in sink.of(ToolCallArgsDelta)] == ["toolu_1", "toolu_1", "toolu_2"]
    # One network read carried the whole transcript: the tally is reported once, at its latest.
    assert sink.of(UsageUpdate)[-1] == UsageUpdate(Usage(input=42, output=77))
    thinking, redacted, text, first, second = output.message.content
    assert thinking == ThinkingPart(text="Plan: read both.", signature="EqQBCgIYAhIM")
    assert redacted == ThinkingPart(text="", provider_data={"redacted_data": "EmwKAhgBEgy3"})
    assert text == TextPart(text="Reading.")
    assert isinstance(first, ToolCall) and first.args == {"path": "a.py"}
    assert isinstance(second, ToolCall) and second.args == {"path": "b.py"}
    assert output.stop_reason is StopReason.TOOL_USE
    assert output.usage == Usage(input=42, output=77)
    assert anthropic_server.posts[0].path == "/v1/messages"
    assert anthropic_server.posts[0].headers["anthropic-version"] == "2023-06-01"


async def test_crlf_and_max_tokens(anthropic_server: FakeModelServer) -> None:
    lines = (
        START
        + block(0, {"type": "text", "text": ""}, {"type": "text_delta", "text": "cut"})
        + message_delta("max_tokens", 5)
        + STOP
    )
    anthropic_server.script(raw_reply("\r\n".join(lines).encode() + b"\r\n"))
    output = await adapter(anthropic_server).complete(ask(), Recorder())
    assert output.message.text == "cut"
    assert output.stop_reason is StopReason.MAX_TOKENS


async def test_error_event_after_200_is_transient(anthropic_server: FakeModelServer) -> None:
    anthropic_server.script(
        raw_reply(
            START + event("error", {"error": {"type": "overloaded_error", "message": "Overloaded"}})
        ),
        raw_reply(
            START
            + block(0, {"type": "text", "text": ""}, {"type": "text_delta", "text": "ok"})
            + message_delta("end_turn", 2)
            + STOP
        ),
    )
    sink = Recorder()
    output = await adapter(anthropic_server).complete(ask(), sink)
    assert output.message.text == "ok"
    assert "retry_wait" in sink.types()
    assert len(anthropic_server.requests) == 2


async def test_invalid_request_error_event_is_permanent(anthropic_server: FakeModelServer) -> None:
    anthropic_server.script(
        raw_reply(
            START + event("error", {"error": {"type": "invalid_request_error", "message": "bad"}})
        )
    )
    with pytest.raises(ProviderError, match="invalid_request_error"):
        await adapter(anthropic_server).complete(ask(), Recorder())
    assert len(anthropic_server.requests) == 1


async def test_eof_before_message_stop_is_an_error(anthropic_server: FakeModelServer) -> None:
    anthropic_server.script(
        raw_reply(
            START
            + block(
                0,
                {"type": "tool_use", "id": "t1", "name": "write_file", "input": {}},
                {"type": "input_json_delta", "partial_json": '{"path": "x", "cont'},
            )
        )
    )
    with pytest.raises(ProviderStreamError, match="mid-answer") as caught:
        await adapter(anthropic_server).complete(ask(), Recorder())
    assert "message_stop during a tool call" in str(caught.value)
    assert len(anthropic_server.requests) == 1


async def test_request_round_trips_thinking_and_merges_user_turns(
    anthropic_server: FakeModelServer,
) -> None:
    anthropic_server.script(text_reply("ok"))
    history = [
        Message.user("q1"),
        Message(
            role=Role.ASSISTANT,
            content=[
                ThinkingPart(text="plan", signature="SIG-1"),
                ThinkingPart(text="", provider_data={"redacted_data": "REDACTED-1"}),
                ThinkingPart(text="unsigned from another provider"),
                TextPart(text="calling"),
                ToolCall(id="t1", name="read_file", args={"path": "a"}, raw_args='{"path":"a"}'),
                ToolCall(id="t2", name="read_file", args={"path": "b"}),
            ],
        ),
        Message(role=Role.TOOL, content=[ToolResult.success("t1", "A")]),
        Message(role=Role.TOOL, content=[ToolResult.failure("t2", "missing")]),
        Message(role=Role.ASSISTANT, content=[TextPart(text="partial answer")]),
        Message.user("cancelled"),
        Message.user("again"),
    ]
    request = ModelRequest(
        system="sys",
        messages=history,
        tools=[READ_FILE],
        params=ChatParams(max_tokens=2048, thinking=ThinkingEffort.HIGH, temperature=0.3),
    )
    await adapter(anthropic_server).complete(request, Recorder())
    body = anthropic_server.requests[0]
    assert body["system"] == [
        {"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2047}
    assert "temperature" not in body
    assert body["tools"][0]["input_schema"] == READ_FILE.parameters
    messages = body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    assert messages[1]["content"][:2] == [
        {"type": "thinking", "thinking": "plan", "signature": "SIG-1"},
        {"type": "redacted_thinking", "data": "REDACTED-1"},
    ]
    assert [b["type"] for b in messages[1]["content"]] == [
        "thinking",
        "redacted_thinking",
        "text",
        "tool_use",
        "tool_use",
    ]
    # the user message before the newest is a cache breakpoint
    assert messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "A", "is_error": False},
        {
            "type": "tool_result",
            "tool_use_id": "t2",
            "content": "missing",
            "is_error": True,
            "cache_control": {"type": "ephemeral"},
        },
    ]
    assert [b["text"] for b in messages[4]["content"]] == ["cancelled", "again"]


def test_thinking_budget_stays_below_max_tokens() -> None:
    assert thinking_budget(ThinkingEffort.DEFAULT, 8192) is None
    assert thinking_budget(ThinkingEffort.LOW, 8192) == 1024
    assert thinking_budget(ThinkingEffort.HIGH, 8192) == 8191
    assert thinking_budget(ThinkingEffort.MEDIUM, 1000) is None
