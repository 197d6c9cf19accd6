"""Images through the real server process: a context file whose bytes are an
image, or an image sent by value in ``images``, reaches the model as an
image block on each wire, byte-exact; it is stored once in the store's
blobs and replayed when a new server continues the session; an MCP tool's
image reaches Anthropic inside the tool result; a model that reads no
images, an image over a wire's limit, a ``.png`` that is not one and an
oversized attachment are refused with a clear error before any request."""

from __future__ import annotations

import base64
import hashlib
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.e2e.editor_client import EDITORS, start_editor
from tests.fakes.images import images_sent, png
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply
from tests.fakes.wire import Wire

ROOT = Path(__file__).resolve().parents[2]
VISION = "fake-vision-model"
"""A model name that says it reads images (see ``providers/images.py``)."""


def settings(fake: FakeModelServer, wire: Wire, **extra: Any) -> dict[str, Any]:
    return {
        "provider": "custom",
        "protocol": wire,
        "baseUrl": fake.base_url,
        "model": VISION,
        **extra,
    }


def env_for(tmp_path: Path) -> dict[str, str]:
    return {
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "OPENAI_API_KEY": "",
    }


@pytest.mark.parametrize("wire", ["openai", "anthropic", "gemini"])
async def test_a_context_image_reaches_the_model_and_is_replayed_by_a_new_server(
    wire: Wire, workspace: Path, tmp_path: Path
) -> None:
    image = png(4, 4)
    (workspace / "shot.png").write_bytes(image)
    pasted = png(2, 5)
    with FakeModelServer(wire=wire) as fake:
        fake.script(text_reply("A red square."), text_reply("Still red."))
        client = await start_editor(
            EDITORS[0], [workspace], settings(fake, wire), env_for(tmp_path)
        )
        try:
            result = await client.command(
                "rhema.turn",
                {
                    "prompt": "What is in these?",
                    "context": [{"uri": (workspace / "shot.png").as_uri()}],
                    "images": [{"data": base64.b64encode(pasted).decode(), "name": "pasted"}],
                },
            )
            assert result["stopReason"] == "end_turn", result
            session = result["session"]
        finally:
            await client.shutdown_session()
        client = await start_editor(
            EDITORS[1], [workspace], settings(fake, wire), env_for(tmp_path)
        )
        try:
            again = await client.command("rhema.turn", {"prompt": "and now?", "session": session})
            assert again["stopReason"] == "end_turn", again
            opened = await client.command("rhema.openSession", {"session": session})
        finally:
            await client.shutdown_session()
        first, second = fake.requests

    assert images_sent(wire, first) == [("image/png", image), ("image/png", pasted)]
    assert images_sent(wire, second) == [("image/png", image), ("image/png", pasted)]
    # Stored once, by reference: the rows hold no base64, the blobs the bytes.
    database = next((workspace / ".rhema").glob("*.sqlite*"))
    with sqlite3.connect(database) as conn:
        bodies = "".join(row[0] for row in conn.execute("SELECT body FROM messages"))
        sizes = sorted(row[0] for row in conn.execute("SELECT size FROM blobs"))
    assert base64.b64encode(image).decode() not in bodies
    assert '"type":"image"' in bodies
    assert sorted([len(image), len(pasted)]) == sizes
    # Reopened, the images are named by their reference: the editor is not sent the bytes.
    shown = [p for m in opened["messages"] for p in m["content"] if p["type"] == "image"]
    assert [(p["name"], p["size"], p["data"]) for p in shown] == [
        ("shot.png", len(image), ""),
        ("pasted", len(pasted), ""),
    ]
    assert [p["sha256"] for p in shown] == [hashlib.sha256(b).hexdigest() for b in (image, pasted)]


async def test_an_mcp_image_result_reaches_anthropic_inside_the_tool_result(
    workspace: Path, tmp_path: Path
) -> None:
    from tests.fakes.mcp_server import PNG

    marks = tmp_path / "marks"
    marks.mkdir()
    servers = {
        "fake": {
            "command": sys.executable,
            "args": ["-m", "tests.fakes.mcp_server", "stdio"],
            "env": {"FAKE_MCP_MARKS": str(marks), "PYTHONPATH": str(ROOT)},
            "allow": ["picture"],
        }
    }
    with FakeModelServer(wire="anthropic") as fake:
        fake.script(tool_reply(("fake__picture", {})), text_reply("A tiny picture."))
        client = await start_editor(
            EDITORS[1],
            [workspace],
            settings(fake, "anthropic", mode="agent", mcpServers=servers),
            env_for(tmp_path),
        )
        try:
            result = await client.command("rhema.turn", {"prompt": "show me the picture"})
        finally:
            await client.shutdown_session()
        assert result["stopReason"] == "end_turn", result
        answer = fake.requests[1]["messages"][-1]["content"]
    [tool_result] = [block for block in answer if block["type"] == "tool_result"]
    assert isinstance(tool_result["content"], list)
    assert images_sent("anthropic", fake.requests[1]) == [("image/png", PNG)]


async def test_an_mcp_image_result_follows_the_tool_messages_on_openai(
    workspace: Path, tmp_path: Path
) -> None:
    from tests.fakes.mcp_server import PNG

    marks = tmp_path / "marks"
    marks.mkdir()
    servers = {
        "fake": {
            "command": sys.executable,
            "args": ["-m", "tests.fakes.mcp_server", "stdio"],
            "env": {"FAKE_MCP_MARKS": str(marks), "PYTHONPATH": str(ROOT)},
            "allow": ["picture", "echo"],
        }
    }
    with FakeModelServer(wire="openai") as fake:
        fake.script(
            tool_reply(("fake__picture", {}), ("fake__echo", {"text": "x"})),
            text_reply("Seen."),
        )
        client = await start_editor(
            EDITORS[0],
            [workspace],
            settings(fake, "openai", mode="agent", mcpServers=servers),
            env_for(tmp_path),
        )
        try:
            result = await client.command("rhema.turn", {"prompt": "show me the picture"})
        finally:
            await client.shutdown_session()
        assert result["stopReason"] == "end_turn", result
        messages = fake.requests[1]["messages"]
    roles = [message["role"] for message in messages]
    assert roles[-3:] == ["tool", "tool", "user"]  # the tool messages stay together
    note = messages[-1]["content"][0]["text"]
    assert "returned" in note
    assert images_sent("openai", fake.requests[1]) == [("image/png", PNG)]


async def test_an_image_to_the_embedded_model_is_refused_before_any_request(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / "shot.png").write_bytes(png())
    client = await start_editor(
        EDITORS[0], [workspace], {"provider": "embedded"}, env_for(tmp_path)
    )
    try:
        result = await client.command(
            "rhema.turn",
            {"prompt": "describe", "context": [{"uri": (workspace / "shot.png").as_uri()}]},
        )
        errors = client.events_of("error")
    finally:
        await client.shutdown_session()
    assert result["stopReason"] == "error"
    assert "the embedded model reads no images" in errors[0]["message"]


async def test_a_local_model_without_vision_is_refused_and_no_request_is_sent(
    workspace: Path, tmp_path: Path
) -> None:
    with FakeModelServer(wire="openai") as fake:
        client = await start_editor(
            EDITORS[1],
            [workspace],
            settings(fake, "openai", model="qwen2.5-coder"),
            env_for(tmp_path),
        )
        try:
            result = await client.command(
                "rhema.turn",
                {"prompt": "describe", "images": [{"data": base64.b64encode(png()).decode()}]},
            )
            errors = client.events_of("error")
            fake.script(text_reply("fine"))
            plain = await client.command("rhema.turn", {"prompt": "just text"})
        finally:
            await client.shutdown_session()
        assert len(fake.requests) == 1  # only the text turn went out
    assert result["stopReason"] == "error"
    message = errors[0]["message"]
    assert "qwen2.5-coder is not known to read images" in message
    assert "set the rhema.vision setting to true" in message  # the setting, by its name
    assert "choose a provider and model that read images" in message
    assert plain["stopReason"] == "end_turn"


@pytest.mark.parametrize(("model", "vision"), [("qwen2.5-coder", True), (VISION, False)])
async def test_the_vision_setting_overrides_the_guess_from_the_model_name(
    workspace: Path, tmp_path: Path, model: str, vision: bool
) -> None:
    image = png(3, 3)
    with FakeModelServer(wire="openai") as fake:
        fake.script(text_reply("A small square."))
        client = await start_editor(
            EDITORS[0],
            [workspace],
            settings(fake, "openai", model=model, vision=vision),
            env_for(tmp_path),
        )
        try:
            result = await client.command(
                "rhema.turn",
                {"prompt": "describe", "images": [{"data": base64.b64encode(image).decode()}]},
            )
            errors = client.events_of("error")
        finally:
            await client.shutdown_session()
        requests = fake.requests
    if vision:  # a local model whose name does not say vision, said to read images
        assert result["stopReason"] == "end_turn", result
        assert images_sent("openai", requests[0]) == [("image/png", image)]
    else:  # a model that reads images, and the user wants none sent
        assert result["stopReason"] == "error" and requests == []
        assert "images are turned off (the vision setting is false)" in errors[0]["message"]


async def test_hostile_images_are_refused_with_a_clear_error_and_the_server_goes_on(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / "fake.png").write_bytes(b"\x00\x01binary, not an image\xff" * 10)
    (workspace / "big.png").write_bytes(png(extra=b"x" * (4 << 20)))  # over Anthropic's 3.75 MiB
    (workspace / "huge.png").write_bytes(png(extra=b"x" * (21 << 20)))  # over any image's 20 MiB
    with FakeModelServer(wire="anthropic") as fake:
        client = await start_editor(
            EDITORS[0], [workspace], settings(fake, "anthropic"), env_for(tmp_path)
        )
        try:

            async def refused(args: dict[str, Any]) -> str:
                with pytest.raises(JsonRpcException) as caught:
                    await client.command("rhema.turn", {"prompt": "look", **args})
                assert caught.value.code == -32602  # invalid params, nothing sent
                return str(caught.value)

            def ref(name: str) -> dict[str, Any]:
                return {"context": [{"uri": (workspace / name).as_uri()}]}

            not_image = await refused(ref("fake.png"))
            huge = await refused(ref("huge.png"))
            garbage = await refused({"images": [{"data": "not base64!", "name": "clip"}]})
            not_image_bytes = await refused(
                {"images": [{"data": base64.b64encode(b"GIF88a nope").decode()}]}
            )
            too_many = await refused({"images": [{"data": base64.b64encode(png()).decode()}] * 21})
            big = await client.command("rhema.turn", {"prompt": "look", **ref("big.png")})
            big_error = client.events_of("error")[-1]["message"]
            fake.script(text_reply("still here"))
            after = await client.command("rhema.turn", {"prompt": "hello"})
        finally:
            await client.shutdown_session()
        assert len(fake.requests) == 1
    assert "fake.png" in not_image and "binary" in not_image
    assert "huge.png" in huge and "over the" in huge and "smaller" in huge
    assert "clip" in garbage and "not base64" in garbage
    assert "not a PNG, JPEG, GIF or WebP image" in not_image_bytes
    assert "images" in too_many
    assert big["stopReason"] == "error"
    assert "big.png" in big_error and "per image" in big_error
    assert after["stopReason"] == "end_turn"


def test_ask_image_sends_each_named_image_even_from_outside_the_folder(
    workspace: Path, tmp_path: Path
) -> None:
    from tests.e2e.test_cli import ask_command, run

    outside = tmp_path / "Desktop"
    outside.mkdir()
    first, second = png(1, 1), png(6, 2)
    (outside / "one.png").write_bytes(first)
    (outside / "two.png").write_bytes(second)
    (outside / "not.png").write_text("just text\n")
    with FakeModelServer(wire="openai") as fake:
        fake.script(text_reply("Two red images."))
        command = ask_command(fake, workspace)
        command[command.index("fake-model")] = VISION
        done = run(
            [
                *command,
                "--image",
                str(outside / "one.png"),
                "--image",
                str(outside / "two.png"),
                "compare them",
            ],
            tmp_path,
        )
        refused = run([*command, "--image", str(outside / "not.png"), "look"], tmp_path)
        assert len(fake.requests) == 1
        sent = fake.requests[0]
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Two red images.\n"
    assert images_sent("openai", sent) == [("image/png", first), ("image/png", second)]
    assert refused.returncode == 2
    assert "not.png is not a PNG, JPEG, GIF or WebP image" in refused.stderr
