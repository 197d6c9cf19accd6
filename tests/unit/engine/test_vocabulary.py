"""The persisted vocabulary round-trips exactly, and old payloads load."""

from __future__ import annotations

import json

from rhema_lsp.engine import (
    ChatParams,
    Message,
    ModelRequest,
    Role,
    Session,
    TextPart,
    ThinkingEffort,
    ThinkingPart,
    ToolCall,
    ToolResult,
    ToolSpec,
)


def full_session() -> Session:
    return Session(
        history=[
            Message.user("fix the bug in café.py 🐛"),
            Message(
                role=Role.ASSISTANT,
                content=[
                    ThinkingPart(
                        text="let me look", signature="sig==", provider_data={"redacted": None}
                    ),
                    TextPart(text="Reading it."),
                    ToolCall(
                        id="c1",
                        name="read_file",
                        args={"path": "café.py"},
                        raw_args='{"path":"café.py"}',
                        provider_data={"thoughtSignature": "abc", "nested": [1, 2.5, None]},
                    ),
                ],
            ),
            Message(
                role=Role.TOOL, content=[ToolResult.success("c1", "1\tprint('hi')", code=None)]
            ),
            Message(role=Role.TOOL, content=[ToolResult.failure("c2", "exit 3", code=3)]),
        ]
    )


def test_a_session_round_trips_through_json_exactly() -> None:
    session = full_session()
    text = session.model_dump_json()
    loaded = Session.model_validate_json(text)
    assert loaded == session
    assert loaded.model_dump_json() == text
    call = loaded.history[1].tool_calls[0]
    assert call.provider_data == {"thoughtSignature": "abc", "nested": [1, 2.5, None]}


def test_a_tool_result_without_code_loads_from_an_old_history() -> None:
    result = Message.model_validate_json(
        '{"role":"tool","content":[{"type":"tool_result","id":"c1","content":"ok","is_error":false}]}'
    ).tool_results[0]
    assert result.code is None
    assert result == ToolResult.success("c1", "ok")


def test_a_tool_call_without_raw_args_or_provider_data_loads() -> None:
    message = Message.model_validate(
        {
            "role": "assistant",
            "content": [{"type": "tool_call", "id": "c1", "name": "x", "args": {}}],
        }
    )
    assert message.tool_calls[0].raw_args is None
    assert message.tool_calls[0].provider_data is None


def test_chat_params_without_thinking_load_as_default() -> None:
    params = ChatParams.model_validate_json('{"model":"m","temperature":null,"max_tokens":null}')
    assert params.thinking is ThinkingEffort.DEFAULT
    high = ChatParams(model="m", thinking=ThinkingEffort.HIGH)
    dumped = high.model_dump_json()
    assert '"thinking":"high"' in dumped
    assert ChatParams.model_validate_json(dumped) == high


def test_a_request_round_trips() -> None:
    request = ModelRequest(
        system="sys",
        messages=full_session().history,
        tools=[ToolSpec(name="read_file", description="read", parameters={"type": "object"})],
        params=ChatParams(model="m", max_tokens=100),
    )
    assert ModelRequest.model_validate(json.loads(request.model_dump_json())) == request
