"""Provider resolution: explicit settings, local autodetection, environment keys,
the embedded model, and the errors that say how to configure one."""

from __future__ import annotations

import socket
from collections.abc import Sequence
from pathlib import Path

import pytest

from rhema_lsp.providers import (
    LocalServer,
    OpenAIProvider,
    ProviderConfigError,
    ProviderSettings,
    resolve_provider,
)
from rhema_lsp.providers import resolve as resolve_module
from rhema_lsp.providers.embedded import EmbeddedProvider
from rhema_lsp.providers.local import ModelListing, find_local_servers
from tests.fakes.model_server import FakeModelServer, text_reply
from tests.unit.providers.helpers import Recorder, ask


def closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def no_embedded() -> Path | None:
    return None


@pytest.fixture(autouse=True)
def patient_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    """Live test servers get 5 s to answer the autodetection probe, not its
    0.15 s: these tests are about what is found and said, and a loaded
    machine misses 0.15 s (a closed port still answers at once)."""
    real = find_local_servers

    async def patient(
        servers: Sequence[LocalServer], wait: float
    ) -> list[tuple[LocalServer, ModelListing]]:
        return await real(servers, max(wait, 5.0))

    monkeypatch.setattr(resolve_module, "find_local_servers", patient)


NOTHING_LOCAL = [LocalServer("ollama", closed_port_url())]


async def test_autodetects_a_local_server(openai_server: FakeModelServer) -> None:
    servers = [
        LocalServer("ollama", closed_port_url()),
        LocalServer("lmstudio", openai_server.base_url),
    ]
    resolved = await resolve_provider(ProviderSettings(), {}, local_servers=servers)
    assert (resolved.name, resolved.protocol, resolved.model) == (
        "lmstudio",
        "openai",
        "fake-model",
    )
    assert resolved.source.startswith("preset lmstudio, autodetected")
    assert isinstance(resolved.provider, OpenAIProvider)
    openai_server.script(text_reply("local"))
    output = await resolved.provider.complete(ask(), Recorder())
    assert output.message.text == "local"


async def test_detection_prefers_the_first_listed(openai_server: FakeModelServer) -> None:
    with FakeModelServer(wire="openai", models=["other"]) as second:
        servers = [
            LocalServer("ollama", openai_server.base_url),
            LocalServer("llamacpp", second.base_url),
        ]
        resolved = await resolve_provider(ProviderSettings(model="mine"), {}, local_servers=servers)
    assert (resolved.name, resolved.model) == ("ollama", "mine")


async def test_explicit_settings_win_over_detection(openai_server: FakeModelServer) -> None:
    resolved = await resolve_provider(
        ProviderSettings(provider="anthropic"),
        {"ANTHROPIC_API_KEY": "sk-ant-x"},
        local_servers=[LocalServer("ollama", openai_server.base_url)],
    )
    assert resolved.name == "anthropic"
    assert resolved.base_url == "https://api.anthropic.com"
    assert resolved.source == "preset anthropic, from rhema.provider, key from ANTHROPIC_API_KEY"
    assert openai_server.received == []


async def test_environment_key_when_nothing_local() -> None:
    resolved = await resolve_provider(
        ProviderSettings(),
        {"GEMINI_API_KEY": "g", "GROQ_API_KEY": "q"},
        local_servers=NOTHING_LOCAL,
    )
    assert (resolved.name, resolved.protocol, resolved.model) == (
        "gemini",
        "gemini",
        "gemini-2.5-flash",
    )
    assert "key in environment" in resolved.source


async def test_the_embedded_model_is_never_chosen_by_itself(tmp_path: Path) -> None:
    model = tmp_path / "model.gguf"
    with pytest.raises(ProviderConfigError) as caught:
        await resolve_provider(
            ProviderSettings(), {}, local_servers=NOTHING_LOCAL, locate_embedded=lambda: model
        )
    message = str(caught.value)
    assert message.startswith("no model provider is set up")
    assert "rhema.provider embedded (SmolLM2-135M-Instruct, a tiny demo model: no tools" in message
    assert "not for real work; installed)" in message


async def test_explicit_embedded_is_used_when_installed(tmp_path: Path) -> None:
    model = tmp_path / "model.gguf"
    resolved = await resolve_provider(
        ProviderSettings(provider="embedded"), {}, locate_embedded=lambda: model
    )
    assert resolved.name == "embedded"
    assert isinstance(resolved.provider, EmbeddedProvider)
    assert resolved.source.startswith("preset embedded (model.gguf), from rhema.provider; no tools")


async def test_nothing_configured_lists_every_choice() -> None:
    with pytest.raises(ProviderConfigError) as caught:
        await resolve_provider(
            ProviderSettings(), {}, local_servers=NOTHING_LOCAL, locate_embedded=no_embedded
        )
    message = str(caught.value)
    hints = ("rhema.provider", "OPENAI_API_KEY", "rhema.baseUrl", "Ollama", "rhema-lsp[local]")
    for hint in (*hints, "8000", "8080", "11434", "1234", "not installed"):
        assert hint in message


async def test_a_local_server_listing_no_model_is_named_and_passed_over() -> None:
    with FakeModelServer(wire="openai", models=[]) as empty:
        servers = [LocalServer("ollama", empty.base_url, "Ollama")]
        with pytest.raises(ProviderConfigError) as caught:
            await resolve_provider(
                ProviderSettings(), {}, local_servers=servers, locate_embedded=no_embedded
            )
        message = str(caught.value)
        assert f"Ollama answers at {empty.base_url} but lists no model" in message
        # A key in the environment is the next choice.
        resolved = await resolve_provider(
            ProviderSettings(), {"OPENAI_API_KEY": "sk-x"}, local_servers=servers
        )
    assert resolved.name == "openai"
    assert "no local server listed a model" in resolved.source


async def test_detection_can_be_disabled(openai_server: FakeModelServer) -> None:
    with pytest.raises(ProviderConfigError):
        await resolve_provider(
            ProviderSettings(),
            {},
            detect_local=False,
            local_servers=[LocalServer("ollama", openai_server.base_url)],
            locate_embedded=no_embedded,
        )
    assert openai_server.received == []


async def test_custom_base_url_lists_models(any_wire: FakeModelServer) -> None:
    model = "gem" if any_wire.wire == "gemini" else None
    resolved = await resolve_provider(
        ProviderSettings(base_url=any_wire.base_url, protocol=any_wire.wire, model=model), {}
    )
    assert resolved.name == "custom"
    assert resolved.model == (model or "fake-model")
    assert resolved.source == f"custom rhema.baseUrl ({any_wire.wire}), no key"


@pytest.mark.parametrize(
    ("settings", "needle"),
    [
        (ProviderSettings(provider="nonesuch"), "unknown"),
        (ProviderSettings(provider="custom"), "needs rhema.baseUrl"),
        (ProviderSettings(base_url="http://127.0.0.1:9/v1"), "needs rhema.protocol"),
        (ProviderSettings(base_url="http://127.0.0.1:9", protocol="grpc"), "not one of"),
        (ProviderSettings(provider="openai"), "needs its key: set OPENAI_API_KEY"),
        (
            ProviderSettings(base_url="ftp://127.0.0.1/v1", protocol="openai", model="m"),
            "not an http(s) URL",
        ),
        (ProviderSettings(provider="gemini", base_url="http://127.0.0.1:9"), "GEMINI_API_KEY"),
    ],
)
async def test_config_errors(settings: ProviderSettings, needle: str) -> None:
    with pytest.raises(ProviderConfigError, match=None) as caught:
        await resolve_provider(
            settings, {}, local_servers=NOTHING_LOCAL, locate_embedded=no_embedded
        )
    assert needle in str(caught.value)


async def test_explicit_embedded_missing_says_how_to_install() -> None:
    with pytest.raises(ProviderConfigError, match="rhema-lsp\\[local\\]"):
        await resolve_provider(
            ProviderSettings(provider="embedded"), {}, locate_embedded=no_embedded
        )


async def test_explicit_local_preset_with_base_url(openai_server: FakeModelServer) -> None:
    resolved = await resolve_provider(
        ProviderSettings(provider="vllm", base_url=openai_server.base_url), {}
    )
    assert (resolved.name, resolved.model, resolved.base_url) == (
        "vllm",
        "fake-model",
        openai_server.base_url,
    )
    assert resolved.source == "preset vllm, from rhema.provider, no key"


async def test_max_retries_setting_sets_attempts(openai_server: FakeModelServer) -> None:
    from tests.fakes.model_server import error_reply

    openai_server.script(error_reply(400))
    resolved = await resolve_provider(
        ProviderSettings(
            base_url=openai_server.base_url, protocol="openai", model="m", max_retries=2
        ),
        {},
    )
    assert isinstance(resolved.provider, OpenAIProvider)
    assert resolved.provider.retry.attempts == 2
    assert resolved.provider.stall_timeout == 120.0


async def test_port_8000_is_llamacpp_unless_vllm_owns_the_models() -> None:
    with (
        FakeModelServer(wire="openai", models=["m"]) as llama,
        FakeModelServer(wire="openai", models=["m"], owned_by="vllm") as vllm,
    ):
        owners = (("vllm", "vllm"),)
        found = [
            await resolve_provider(
                ProviderSettings(),
                {},
                local_servers=[LocalServer("llamacpp", server.base_url, "x", owners)],
            )
            for server in (llama, vllm)
        ]
    assert [r.name for r in found] == ["llamacpp", "vllm"]


def test_the_default_probes_cover_the_servers_the_readme_names() -> None:
    from rhema_lsp.providers.presets import LOCAL_AUTODETECT

    assert [(s.preset, s.port) for s in LOCAL_AUTODETECT] == [
        ("ollama", "11434"),
        ("lmstudio", "1234"),
        ("llamacpp", "8080"),
        ("llamacpp", "8000"),
    ]


async def test_messages_use_the_callers_names() -> None:
    from rhema_lsp.providers import SettingNames

    names = SettingNames("--provider", "--model", "--base-url", "--protocol", "export {var}")
    cases = [
        (ProviderSettings(provider="nonesuch"), "--provider 'nonesuch' is unknown: pick one of"),
        (ProviderSettings(provider="openai"), "needs its key: export OPENAI_API_KEY"),
        (ProviderSettings(base_url="ftp://x", protocol="openai"), "--base-url 'ftp://x' is not"),
        (ProviderSettings(provider="custom"), "--provider custom needs --base-url"),
    ]
    for settings, message in cases:
        with pytest.raises(ProviderConfigError) as caught:
            await resolve_provider(settings, {}, names=names, locate_embedded=no_embedded)
        assert message in str(caught.value)
        assert "rhema." not in str(caught.value)
