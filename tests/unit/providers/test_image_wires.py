"""Images on each wire's request body, and what each provider declares it
takes (presets and known models)."""

from __future__ import annotations

import base64

import pytest

from rhema_lsp.engine import Message, ModelRequest, Role, TextPart, ToolCall, ToolResult, image_part
from rhema_lsp.providers.anthropic import anthropic_messages
from rhema_lsp.providers.gemini import gemini_contents
from rhema_lsp.providers.images import WIRE_LIMITS, image_support
from rhema_lsp.providers.openai import openai_messages

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(40))
B64 = base64.b64encode(PNG).decode()


def request() -> ModelRequest:
    shot = image_part(PNG, "shot.png")
    return ModelRequest(
        messages=[
            Message(role=Role.USER, content=[TextPart(text="look"), shot]),
            Message(
                role=Role.ASSISTANT,
                content=[ToolCall(id="c1", name="snap", args={}), ToolCall(id="c2", name="x")],
            ),
            Message(role=Role.TOOL, content=[ToolResult(id="c1", content="ok", images=(shot,))]),
            Message(role=Role.TOOL, content=[ToolResult(id="c2", content="done")]),
        ]
    )


def test_openai_images_are_data_urls_and_a_results_follow_the_tool_messages() -> None:
    out = openai_messages(request())
    assert out[0] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "look"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{B64}"}},
        ],
    }
    assert [m["role"] for m in out] == ["user", "assistant", "tool", "tool", "user"]
    assert out[2] == {"role": "tool", "tool_call_id": "c1", "content": "ok"}
    note, image = out[4]["content"]
    assert "c1" in note["text"]
    assert image["image_url"]["url"].endswith(B64)


def test_anthropic_images_are_base64_blocks_a_results_inside_it() -> None:
    out = anthropic_messages(request())
    source = {"type": "base64", "media_type": "image/png", "data": B64}
    assert out[0]["content"] == [
        {"type": "text", "text": "look"},
        {"type": "image", "source": source},
    ]
    first, second = out[2]["content"]
    assert first["content"] == [{"type": "text", "text": "ok"}, {"type": "image", "source": source}]
    assert second["content"] == "done"


def test_gemini_images_are_inline_data_a_results_after_its_response() -> None:
    out = gemini_contents(request())
    inline = {"inline_data": {"mime_type": "image/png", "data": B64}}
    assert out[0]["parts"] == [{"text": "look"}, inline]
    parts = out[2]["parts"]
    assert "functionResponse" in parts[0]
    assert "c1" in parts[1]["text"] and parts[2] == inline
    assert "functionResponse" in parts[3]


@pytest.mark.parametrize(
    ("protocol", "model", "local", "limit"),
    [
        ("anthropic", "claude-sonnet-4-5", False, WIRE_LIMITS["anthropic"]),
        ("openai", "gpt-4.1-mini", False, 20 << 20),
        ("gemini", "gemini-2.5-flash", False, 15 << 20),
        ("openai", "llava:13b", True, 20 << 20),
        ("openai", "qwen2.5vl:7b", True, 20 << 20),
        ("openai", "gemma3:4b", True, 20 << 20),
        ("openai", "qwen2.5-coder:7b", True, 0),
        ("openai", "", True, 0),
        ("embedded", "SmolLM2-135M-Instruct", False, 0),
    ],
)
def test_what_a_provider_takes(protocol: str, model: str, local: bool, limit: int) -> None:
    support = image_support(protocol, model, local=local)
    assert support.max_bytes == limit
    if not limit:
        assert support.why


def test_anthropics_limit_is_5_mib_of_base64() -> None:
    assert WIRE_LIMITS["anthropic"] * 4 // 3 <= 5 << 20
