"""Images in the real VS Code chat view (code-server): an image pasted into the
input, or dropped on it, shows as a chip with its thumbnail and reaches the model with the
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
    steps = vscode.drive(
        [
            {"command": "Rhema: Open Chat"},
            chat({"waitFor": "#input"}),
            chat({"click": "#input"}),
            chat({"pasteImage": str(clip), "name": "image.png"}),
            chat({"waitFor": ".image-chip", "hasText": "pasted-1.png"}),
            chat({"pasteImage": str(dropped_file), "name": "mockup.png", "drop": True}),
            chat({"waitFor": ".image-chip", "hasText": "mockup.png"}),
            # Each chip shows its image: the thumbnail decoded at the image's own size.
            chat({"waitFor": ".image-chip[data-thumb='7x3'] img.thumb"}),
            chat({"waitFor": ".image-chip[data-thumb='16x9'] img.thumb"}),
            chat({"query": ".image-chip"}),
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
    (chips,) = [step["elements"] for step in steps if "query" in step]
    assert [(c["text"].split(" (")[0], c["data"].get("thumb")) for c in chips] == [
        ("image pasted-1.png", "16x9"),
        ("image mockup.png", "7x3"),
    ]
    first, second = model.requests
    assert first["messages"][-1]["content"][0]["text"] == "What is in this screenshot?"
    assert [data for _, data in images_sent("openai", first)] == [pasted, dropped]
    # The follow-up replays the earlier images (from the store) and adds the file's.
    assert [data for _, data in images_sent("openai", second)] == [pasted, dropped, png(4, 4)]
    assert shot.stat().st_size > 0


def test_an_image_for_a_local_model_not_named_for_vision_names_the_setting(
    vscode: VSCode, model: FakeModelServer, artifacts: Path
) -> None:
    """The configured model (``fake-model`` on 127.0.0.1) is a local one whose name
    says nothing of images: the prompt is refused before any request, the error
    names ``rhema.vision`` (a drop-down in the Settings editor), and Retry shows
    the prompt and its error once, not once per attempt."""
    clip = vscode.workspace.parent / "clipboard.png"
    clip.write_bytes(png(5, 5))
    shot = artifacts / "chat-image-refused.png"
    steps = vscode.drive(
        [
            {"command": "Rhema: Open Chat"},
            chat({"waitFor": "#input"}),
            chat({"click": "#input"}),
            chat({"pasteImage": str(clip), "name": "image.png"}),
            chat({"waitFor": ".image-chip", "hasText": "pasted-1.png"}),
            {"typeText": "What is this?"},
            {"press": "Enter"},
            chat({"waitFor": ".notice.error .fix", "hasText": "rhema.vision"}),
            chat({"click": ".notice.error button.retry"}),
            chat({"waitFor": "#send"}),
            chat({"waitFor": ".notice.error .fix", "hasText": "rhema.vision"}),
            chat({"query": "#transcript > *"}),
            {"screenshot": str(shot)},
            {"command": "Preferences: Open Settings (UI)"},
            {"typeText": "rhema.vision"},
            {"waitFor": ".setting-item-enum", "hasText": "Vision"},
            {"query": ".setting-item-enum select, .setting-item-enum .monaco-select-box"},
        ],
        timeout_s=120,
    )
    transcript, control = [step["elements"] for step in steps if "query" in step]
    kinds = [element["data"].get("kind") for element in transcript]
    assert kinds.count("user") == 1, kinds  # the retry did not add another copy
    errors = [e for e in transcript if e["data"].get("kind") == "notice"]
    assert len(errors) == 1, errors
    assert errors[0]["text"].startswith(
        "The image was not sent: the local model fake-model is not known to read images."
    )
    assert len(control) >= 1  # rhema.vision is a drop-down in the Settings editor
    assert model.requests == []  # refused before any request
    assert shot.stat().st_size > 0
