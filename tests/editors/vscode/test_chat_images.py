"""Images in the real VS Code chat view (code-server): an image pasted into the
input, or dropped on it, shows as a chip and reaches the model with the
prompt, byte-exact (the screenshot of the chips is kept among the artifacts);
`@file:` of an image in the workspace reaches it too, and the follow-up
replays the earlier images from the store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.editors.vscode.conftest import VSCode
from tests.fakes.images import images_sent, png
from tests.fakes.model_server import FakeModelServer, text_reply

pytestmark = pytest.mark.timeout(900)

CHAT = {"in": "chat"}
VISION = {"rhema.model": "fake-vision-model"}


def chat(step: dict[str, Any]) -> dict[str, Any]:
    return {**step, **CHAT}


@pytest.mark.parametrize("extra_settings", [VISION], ids=["vision-model"])
def test_an_image_pasted_into_the_chat_input_reaches_the_model(
    vscode: VSCode, model: FakeModelServer, artifacts: Path, extra_settings: dict[str, Any]
) -> None:
    pasted = png(16, 9)
    (vscode.workspace / "diagram.png").write_bytes(png(4, 4))
    clip = vscode.workspace.parent / "clipboard.png"
    clip.write_bytes(pasted)
    dropped = png(7, 3)
    dropped_file = vscode.workspace.parent / "mockup.png"
    dropped_file.write_bytes(dropped)
    model.script(text_reply("A blue rectangle."), text_reply("A small square."))
    shot = artifacts / "chat-image-pasted.png"
    vscode.drive(
        [
            {"command": "Rhema: Open Chat"},
            chat({"waitFor": "#input"}),
            chat({"click": "#input"}),
            chat({"pasteImage": str(clip), "name": "image.png"}),
            chat({"waitFor": ".image-chip", "hasText": "pasted-1.png"}),
            chat({"pasteImage": str(dropped_file), "name": "mockup.png", "drop": True}),
            chat({"waitFor": ".image-chip", "hasText": "mockup.png"}),
            {"typeText": "What is in this screenshot?"},
            {"screenshot": str(shot)},
            {"press": "Enter"},
            chat({"waitFor": ".answer", "hasText": "A blue rectangle."}),
            chat({"waitFor": "#attachments", "state": "hidden"}),
            chat({"click": "#input"}),
            {"typeText": "And @file:diagram.png ?"},
            {"press": "Enter"},
            chat({"waitFor": ".answer", "hasText": "A small square."}),
        ]
    )
    first, second = model.requests
    assert first["messages"][-1]["content"][0]["text"] == "What is in this screenshot?"
    assert [data for _, data in images_sent("openai", first)] == [pasted, dropped]
    # The follow-up replays the earlier images (from the store) and adds the file's.
    assert [data for _, data in images_sent("openai", second)] == [pasted, dropped, png(4, 4)]
    assert shot.stat().st_size > 0
