"""``referenced``: a message as a client is shown it, each image by its reference alone,
whether the image is the user's or inside a tool's result; the message itself is untouched."""

from __future__ import annotations

import base64

from rhema_lsp.engine import ImagePart, Message, Role, TextPart, ToolResult
from rhema_lsp.sessions import referenced

DATA = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 40).decode()


def image(name: str) -> ImagePart:
    return ImagePart(media_type="image/png", data=DATA, sha256="ab" * 32, size=48, name=name)


def test_each_image_keeps_its_reference_and_loses_its_bytes() -> None:
    message = Message(
        role=Role.USER,
        content=[
            TextPart(text="look"),
            image("shot.png"),
            ToolResult(id="c1", content="a screenshot", images=(image("mcp"),)),
        ],
    )

    shown = referenced(message)

    top, result = shown.images[0], shown.tool_results[0].images[0]
    for part, name in ((top, "shot.png"), (result, "mcp")):
        assert (part.data, part.sha256, part.size, part.name) == ("", "ab" * 32, 48, name)
    assert shown.text == "look" and shown.tool_results[0].content == "a screenshot"
    assert message.images[0].data == DATA  # the original is not changed


def test_a_message_without_images_is_returned_as_it_is() -> None:
    message = Message.user("no pictures")
    assert referenced(message) is message
