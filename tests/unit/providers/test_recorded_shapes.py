"""The adapters on streams shaped like real providers' (see :mod:`.streams`).

Each stream is served by the fake server on 127.0.0.1 in one piece and cut
into pieces of 1 to 2,048 bytes; both must give the same events and output.
Then what the provider keeps for itself goes back on the next request
exactly as it came.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from rhema_lsp.engine import (
    Message,
    ModelOutput,
    ModelRequest,
    ProviderPart,
    ProviderToolUse,
    Role,
    TextDelta,
    TextPart,
    ThinkingDelta,
    ThinkingPart,
    ToolCall,
    ToolCallArgsDelta,
    ToolCallStart,
    UsageUpdate,
)
from tests.fakes.model_server import FakeModelServer, raw_reply, text_reply
from tests.unit.providers.helpers import Recorder, adapter, ask
from tests.unit.providers.streams import COMPACTION, MCP, WEB_SEARCH, Case
from tests.unit.providers.streams_more import CASES, GEMINI_CODE

MODES = {"whole": None, "split-1": 1, "split-2": 2, "split-3": 3}


async def _complete(case: Case, split: int | None) -> tuple[ModelOutput, Recorder]:
    with FakeModelServer(wire=case.wire) as server:  # type: ignore[arg-type]
        server.script(raw_reply(case.body, split=split))
        sink = Recorder()
        output = await adapter(server, attempts=1).complete(ask(), sink)
    return output, sink


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
async def test_stream_decodes_exactly(case: Case, mode: str) -> None:
    output, sink = await _complete(case, MODES[mode])
    message = output.message

    assert "".join(event.text for event in sink.of(TextDelta)) == case.text == message.text
    reasoning = "".join(part.text for part in message.content if isinstance(part, ThinkingPart))
    assert "".join(event.text for event in sink.of(ThinkingDelta)) == case.reasoning == reasoning
    assert [
        (call.id, call.name, call.args) for call in message.content if isinstance(call, ToolCall)
    ] == list(case.calls)
    # Only our calls are announced, and every argument piece belongs to one of them.
    assert [event.id for event in sink.of(ToolCallStart)] == [call[0] for call in case.calls]
    for call_id, _name, args in case.calls:
        pieces = [event.delta for event in sink.of(ToolCallArgsDelta) if event.id == call_id]
        assert json.loads("".join(pieces)) == args
    assert {event.id for event in sink.of(ToolCallArgsDelta)} <= {call[0] for call in case.calls}
    assert [(event.id, event.name, event.detail) for event in sink.of(ProviderToolUse)] == list(
        case.provider_tools
    )

    assert output.stop_reason.value == case.stop
    usage = output.usage
    assert (usage.input, usage.output, usage.cache_read, usage.cache_write) == case.usage
    assert sink.of(UsageUpdate)[-1].usage == usage

    kept = [part for part in message.content if isinstance(part, ProviderPart)]
    assert [part.kind for part in kept] == list(case.provider_kinds)
    assert {part.wire for part in kept} <= {case.wire}
    signed = [
        part.provider_data["thoughtSignature"]
        for part in message.content
        if isinstance(part, TextPart)
        and isinstance(part.provider_data, dict)
        and "thoughtSignature" in part.provider_data
    ]
    assert signed == list(case.text_signatures)
    thought_signatures = [
        part.signature
        for part in message.content
        if isinstance(part, ThinkingPart) and part.signature
    ]
    assert thought_signatures == list(case.thinking_signatures)


async def _resent(case: Case) -> tuple[ModelOutput, Any]:
    """The case's output, and the body of the request that sends it back."""
    output, _ = await _complete(case, None)
    with FakeModelServer(wire=case.wire) as server:  # type: ignore[arg-type]
        server.script(text_reply("ok"))
        history = [Message.user("hi"), output.message, Message.user("go on")]
        await adapter(server).complete(ModelRequest(messages=history), Recorder())
        return output, server.requests[0]


async def test_server_tool_blocks_go_back_verbatim_in_order() -> None:
    _, body = await _resent(WEB_SEARCH)
    blocks = body["messages"][1]["content"]
    assert [block["type"] for block in blocks] == [
        "text",
        "server_tool_use",
        "web_search_tool_result",
        "text",
    ]
    assert blocks[1] == {
        "type": "server_tool_use",
        "id": "srvtoolu_01",
        "name": "web_search",
        "input": {"query": "rust borrow checker"},
    }
    assert blocks[2]["content"][0]["encrypted_content"] == "EqQBCkYIBxgC"
    assert blocks[3]["citations"][0]["encrypted_index"] == "Eo8BCioIBxgC"


async def test_mcp_blocks_keep_their_streamed_input() -> None:
    output, body = await _resent(MCP)
    (use, result) = [part for part in output.message.content if isinstance(part, ProviderPart)]
    assert use.provider_data["input"] == MCP.extra["mcp_input"]
    assert use.provider_data["server_name"] == "echo"
    assert body["messages"][1]["content"][:2] == [use.provider_data, result.provider_data]


async def test_compaction_block_keeps_its_summary() -> None:
    _, body = await _resent(COMPACTION)
    assert body["messages"][1]["content"][0] == {
        "type": "compaction",
        "content": COMPACTION.extra["compaction"],
    }


async def test_gemini_signatures_and_code_parts_go_back_as_sent() -> None:
    _, body = await _resent(GEMINI_CODE)
    parts = body["contents"][1]["parts"]
    assert parts == [
        {
            "executableCode": {"language": "PYTHON", "code": "print(6 * 7)", "id": "x1"},
            "thoughtSignature": "EqADsig",
        },
        {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "42\n", "id": "x1"}},
        {"text": "It is 42."},
        {"text": "", "thoughtSignature": "EoECsig"},
    ]


async def test_another_wires_provider_parts_are_not_sent() -> None:
    foreign = Message(
        role=Role.ASSISTANT,
        content=[
            TextPart(text="Found it."),
            ProviderPart(wire="gemini", kind="executableCode", provider_data={"x": 1}),
        ],
    )
    with FakeModelServer(wire="anthropic") as server:
        server.script(text_reply("ok"))
        history = [Message.user("hi"), foreign, Message.user("go on")]
        await adapter(server).complete(ModelRequest(messages=history), Recorder())
        assert server.requests[0]["messages"][1]["content"] == [
            {"type": "text", "text": "Found it."}
        ]
