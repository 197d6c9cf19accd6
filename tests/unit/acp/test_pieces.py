"""The ACP agent's pure pieces: prompt blocks to a user message, event
coalescing in the update queue, and the first changed line of a diff."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp.schema import (
    AgentMessageChunk,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from rhema_lsp.acp.editor import first_changed_line
from rhema_lsp.acp.prompt import user_prompt
from rhema_lsp.acp.updates import UpdateStream
from rhema_lsp.engine import ImageRefused, TextDelta, ThinkingDelta, ToolCallStart
from tests.fakes.mcp_server import PNG

PNG_B64 = base64.b64encode(PNG).decode()


def test_a_prompt_keeps_links_in_place_and_attaches_embedded_text() -> None:
    asked = user_prompt(
        [
            TextContentBlock(type="text", text="explain "),
            ResourceContentBlock(type="resource_link", name="a.py", uri="file:///w/a.py"),
            EmbeddedResourceContentBlock(
                type="resource",
                resource=TextResourceContents(uri="file:///w/b.py", text="x = 1\n"),
            ),
            ImageContentBlock(type="image", data=PNG_B64, mime_type="image/jpeg"),
        ],
        Path("/w"),
    )
    text = asked.text
    assert text.startswith("explain `a.py`\n\nFiles the user pointed to")
    assert "- a.py" in text
    assert "b.py (the editor's current text" in text and "x = 1" in text
    # The image is the prompt's, typed by its bytes (not the block's mime type).
    [image] = asked.images
    assert (image.media_type, image.raw()) == ("image/png", base64.b64decode(PNG_B64))


def test_an_image_block_that_is_no_image_is_refused() -> None:
    for data in ("", "%%%", base64.b64encode(b"plain text").decode()):
        with pytest.raises(ImageRefused):
            user_prompt([ImageContentBlock(type="image", data=data, mime_type="image/png")], Path())


def test_adjacent_text_blocks_are_kept_apart() -> None:
    # CodeCompanion's /file note and the question after it, as it sends them.
    text = user_prompt(
        [
            TextContentBlock(type="text", text="Here is the file /w/hello.py"),
            TextContentBlock(type="text", text="Explain this file."),
            TextContentBlock(type="text", text=" Then "),
            TextContentBlock(type="text", text="stop"),
            ResourceContentBlock(type="resource_link", name="a.py", uri="file:///w/a.py"),
        ],
        Path("/w"),
    ).text
    assert text.startswith("Here is the file /w/hello.py\nExplain this file. Then stop `a.py`")


class _Slow:
    def __init__(self) -> None:
        self.sent: list[Any] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        await anyio.sleep(0.01)
        self.sent.append(update)


async def test_chunks_queued_behind_a_slow_client_merge_in_order() -> None:
    client = _Slow()
    stream = UpdateStream(client, "s")
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(stream.pump)
        for piece in ("Hel", "lo", " there"):
            stream.emit(TextDelta(text=piece))
        stream.emit(ThinkingDelta(text="hm"))
        stream.emit(TextDelta(text="!"))
        stream.emit(ToolCallStart(id="c1", name="read_file"))
        stream.close()
    kinds = [update.session_update for update in client.sent]
    assert kinds == [
        "agent_message_chunk",
        "agent_thought_chunk",
        "agent_message_chunk",
        "tool_call",
    ]
    first = client.sent[0]
    assert isinstance(first, AgentMessageChunk)
    assert isinstance(first.content, TextContentBlock) and first.content.text == "Hello there"
    assert client.sent[3].kind == "read"


def test_the_first_changed_line_is_zero_based() -> None:
    assert first_changed_line("a\nb\nc\n", "a\nB\nc\n") == 1
    assert first_changed_line(None, "new\n") == 0
    assert first_changed_line("a\n", "a\nb\n") == 1


def test_replay_pairs_each_call_with_its_own_result_even_when_an_old_session_repeats_ids() -> None:
    from acp.schema import ToolCallStart as AcpToolCallStart

    from rhema_lsp.acp.replay import replay
    from rhema_lsp.engine import Message, Role, Session, ToolCall, ToolResult

    def round_(path: str, name: str, result: str) -> list[Message]:
        call = ToolCall(id="call_1", name=name, args={"path": path})
        return [
            Message(role=Role.ASSISTANT, content=[call]),
            Message(role=Role.TOOL, content=[ToolResult.success("call_1", result)]),
        ]

    # stored before ids were made unique: both calls are call_1
    session = Session(
        history=[
            Message.user("go"),
            *round_("hello.py", "read_file", "def greet(name): ..."),
            *round_("hello.py", "edit_file", "edited hello.py: 1 replacement"),
        ]
    )
    calls = [u for u in replay(session) if isinstance(u, AcpToolCallStart)]
    texts = [u.content[0].content.text for u in calls]  # type: ignore[index]
    assert [c.title for c in calls] == ["Read hello.py", "Edit hello.py"]
    assert texts == ["def greet(name): ...", "edited hello.py: 1 replacement"]
