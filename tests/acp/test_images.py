"""ACP image blocks through ``rhema-lsp acp`` (a child process, the SDK's
client side): the agent declares ``promptCapabilities.image`` only when the
configured model reads images (not with ``--no-vision``, nor for a local
model whose name says nothing of images); an image
block reaches the model as an image, byte-exact; a model that reads no
images refuses the prompt before any request; a block that is not an image
is invalid params."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from acp import RequestError, image_block, text_block
from acp.schema import AgentMessageChunk, ImageContentBlock, TextContentBlock, UserMessageChunk

from tests.acp.client import RecordingClient, start_agent
from tests.fakes.images import images_sent
from tests.fakes.mcp_server import PNG
from tests.fakes.model_server import FakeModelServer, text_reply

VISION = ("--model", "fake-vision-model")


async def test_an_image_block_reaches_the_model_as_an_image(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    fake.script(text_reply("A tiny image."), text_reply("Still tiny."))
    async with start_agent(RecordingClient(), fake, state, *VISION) as (conn, init):
        assert init.agent_capabilities is not None
        prompts = init.agent_capabilities.prompt_capabilities
        assert prompts is not None and prompts.image is True
        session = await conn.new_session(cwd=str(workspace))
        response = await conn.prompt(
            session_id=session.session_id,
            prompt=[
                text_block("What is this?"),
                image_block(base64.b64encode(PNG).decode(), "image/png"),
            ],
        )
    assert response.stop_reason == "end_turn"
    content = fake.requests[0]["messages"][-1]["content"]
    assert content[0] == {"type": "text", "text": "What is this?"}
    assert images_sent("openai", fake.requests[0]) == [("image/png", PNG)]

    # Loaded in a new agent: the image is shown again, and sent again.
    later = RecordingClient()
    async with start_agent(later, fake, state, *VISION) as (conn, _init):
        await conn.load_session(cwd=str(workspace), session_id=session.session_id)
        await conn.prompt(session_id=session.session_id, prompt=[text_block("And now?")])
    shown = [update.content for update in later.of(UserMessageChunk)]
    assert [type(block) for block in shown[:2]] == [TextContentBlock, ImageContentBlock]
    assert base64.b64decode(shown[1].data) == PNG
    assert images_sent("openai", fake.requests[1]) == [("image/png", PNG)]


async def test_an_image_to_a_model_without_vision_is_refused_before_any_request(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    async with start_agent(RecordingClient(), fake, state) as (conn, init):
        # a local model whose name says nothing of images: none asked for
        assert init.agent_capabilities is not None
        prompts = init.agent_capabilities.prompt_capabilities
        assert prompts is not None and prompts.image is False
        session = await conn.new_session(cwd=str(workspace))
        with pytest.raises(RequestError) as refused:
            await conn.prompt(
                session_id=session.session_id,
                prompt=[
                    text_block("Look"),
                    image_block(base64.b64encode(PNG).decode(), "image/png"),
                ],
            )
        with pytest.raises(RequestError) as invalid:
            await conn.prompt(
                session_id=session.session_id,
                prompt=[text_block("Look"), image_block("bm90IGFuIGltYWdl", "image/png")],
            )
    assert fake.requests == []
    assert "fake-model is not known to read images" in str(refused.value.data or refused.value)
    assert invalid.value.code == -32602
    assert "not a PNG, JPEG, GIF or WebP image" in str(invalid.value.data or invalid.value)


async def test_no_vision_declares_no_image_capability(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    async with start_agent(RecordingClient(), fake, state, *VISION, "--no-vision") as (_, init):
        assert init.agent_capabilities is not None
        prompts = init.agent_capabilities.prompt_capabilities
        assert prompts is not None and prompts.image is False


async def test_an_image_after_a_switch_to_a_model_without_vision_is_left_out_with_a_note(
    state: Path, workspace: Path
) -> None:
    client = RecordingClient()
    with FakeModelServer(wire="openai", models=["fake-vision-model", "fake-model"]) as fake:
        fake.script(text_reply("No image here."))
        async with start_agent(client, fake, state, *VISION) as (conn, init):
            assert init.agent_capabilities is not None
            prompts = init.agent_capabilities.prompt_capabilities
            assert prompts is not None and prompts.image is True  # said at initialize
            session = await conn.new_session(cwd=str(workspace))
            sid = session.session_id
            await conn.set_config_option(config_id="model", session_id=sid, value="fake-model")
            response = await conn.prompt(
                session_id=sid,
                prompt=[
                    text_block("What is this?"),
                    image_block(base64.b64encode(PNG).decode(), "image/png"),
                ],
            )
    assert response.stop_reason == "end_turn"
    [request] = fake.requests
    assert request["model"] == "fake-model" and images_sent("openai", request) == []
    said = "".join(
        u.content.text
        for u in client.of(AgentMessageChunk)
        if isinstance(u.content, TextContentBlock)
    )
    assert said.startswith("(The image was left out: the local model fake-model is not known")
    assert said.endswith("No image here.")
