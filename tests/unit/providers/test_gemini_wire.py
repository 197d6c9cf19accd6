"""The Gemini adapter against hand-written ``streamGenerateContent?alt=sse`` transcripts."""

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
    ToolCallStart,
    ToolResult,
    Usage,
    UsageUpdate,
)
from rhema_lsp.providers import ProviderStreamError, Secret, build_http_provider
from tests.fakes.model_server import FakeModelServer, raw_reply, text_reply
from tests.unit.providers.helpers import READ_FILE, Recorder, adapter, ask


def data(
    parts: list[dict[str, object]], usage: tuple[int, int, int], finish: str | None = None
) -> list[str]:
    candidate: dict[str, object] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    meta = {
        "promptTokenCount": usage[0],
        "candidatesTokenCount": usage[1],
        "thoughtsTokenCount": usage[2],
        "totalTokenCount": sum(usage),
    }
    return [
        "data: "
        + json.dumps({"candidates": [candidate], "usageMetadata": meta, "modelVersion": "g"}),
        "",
    ]


async def test_thoughts_text_calls_and_cumulative_usage(gemini_server: FakeModelServer) -> None:
    gemini_server.script(
        raw_reply(
            data([{"text": "Considering files.", "thought": True}], (30, 0, 12))
            + data([{"text": "I will read"}], (30, 3, 12))
            + data([{"text": " two files."}], (30, 6, 12))
            + data(
                [
                    {
                        "functionCall": {"name": "read_file", "args": {"path": "a.py"}},
                        "thoughtSignature": "U0lHLTE=",
                    },
                    {"functionCall": {"id": "fc-9", "name": "read_file", "args": {"path": "b.py"}}},
                ],
                (30, 20, 12),
                "STOP",
            )
        )
    )
    sink = Recorder()
    provider = build_http_provider(
        "gemini",
        name="gemini",
        base_url=gemini_server.base_url,
        model="gemini-2.5-flash",
        key=Secret("g-key"),
    )
    output = await provider.complete(ask(tools=[READ_FILE]), sink)
    assert "".join(e.text for e in sink.of(ThinkingDelta)) == "Considering files."
    assert "".join(e.text for e in sink.of(TextDelta)) == "I will read two files."
    assert sink.of(UsageUpdate)[-1].usage == Usage(input=30, output=32)
    first, second = output.message.tool_calls
    assert first.id.startswith("gemini_call_") and first.provider_data == {
        "thoughtSignature": "U0lHLTE="
    }
    assert second.id == "fc-9"
    assert [e.id for e in sink.of(ToolCallStart)] == [first.id, "fc-9"]
    assert output.stop_reason is StopReason.TOOL_USE
    assert output.usage == Usage(input=30, output=32)
    post = gemini_server.posts[0]
    assert post.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    assert post.headers["x-goog-api-key"] == "g-key"
    assert "key=" not in post.path


async def test_crlf_and_max_tokens(gemini_server: FakeModelServer) -> None:
    lines = data([{"text": "cut"}], (1, 1, 0)) + data([], (1, 2, 0), "MAX_TOKENS")
    gemini_server.script(raw_reply("\r\n".join(lines).encode()))
    output = await adapter(gemini_server).complete(ask(), Recorder())
    assert output.message.text == "cut"
    assert output.stop_reason is StopReason.MAX_TOKENS


async def test_stream_without_finish_reason_is_an_error(gemini_server: FakeModelServer) -> None:
    gemini_server.script(raw_reply(data([{"text": "half"}], (1, 1, 0))))
    with pytest.raises(ProviderStreamError, match="without a finishReason"):
        await adapter(gemini_server).complete(ask(), Recorder())


async def test_signature_round_trips_and_results_merge(gemini_server: FakeModelServer) -> None:
    gemini_server.script(text_reply("ok"))
    history = [
        Message.user("q"),
        Message(
            role=Role.ASSISTANT,
            content=[
                ToolCall(
                    id="gemini_call_7",
                    name="read_file",
                    args={"path": "a"},
                    provider_data={"thoughtSignature": "SIG=="},
                ),
                ToolCall(
                    id="fc-2", name="grep", args={"pattern": "x"}, provider_data={"wire_id": True}
                ),
            ],
        ),
        Message(role=Role.TOOL, content=[ToolResult.success("gemini_call_7", "A")]),
        Message(role=Role.TOOL, content=[ToolResult.failure("fc-2", "bad")]),
        Message.user("cancelled"),
        Message.user("again"),
    ]
    request = ModelRequest(
        system="sys",
        messages=history,
        tools=[READ_FILE],
        params=ChatParams(max_tokens=300, thinking=ThinkingEffort.LOW),
    )
    await adapter(gemini_server).complete(request, Recorder())
    body = gemini_server.requests[0]
    assert body["systemInstruction"] == {"parts": [{"text": "sys"}]}
    assert body["generationConfig"] == {
        "maxOutputTokens": 300,
        "thinkingConfig": {"thinkingBudget": 1024, "includeThoughts": True},
    }
    contents = body["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    assert contents[1]["parts"][0] == {
        "functionCall": {"name": "read_file", "args": {"path": "a"}},
        "thoughtSignature": "SIG==",
    }
    assert contents[1]["parts"][1] == {
        "functionCall": {"name": "grep", "args": {"pattern": "x"}, "id": "fc-2"}
    }
    assert contents[2]["parts"] == [
        {"functionResponse": {"name": "read_file", "response": {"content": "A"}}},
        {"functionResponse": {"name": "grep", "response": {"error": "bad"}, "id": "fc-2"}},
        {"text": "cancelled"},
        {"text": "again"},
    ]
    assert body["tools"][0]["functionDeclarations"][0]["name"] == "read_file"


async def test_default_effort_sends_no_thinking_config(gemini_server: FakeModelServer) -> None:
    gemini_server.script(text_reply("ok"))
    await adapter(gemini_server).complete(ask(), Recorder())
    assert "generationConfig" not in gemini_server.requests[0]
