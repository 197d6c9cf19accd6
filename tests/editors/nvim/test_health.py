"""`:checkhealth rhema` reports Neovim, the server and the provider it resolves."""

from __future__ import annotations

from pathlib import Path

from tests.editors.fake_settings import settings_for
from tests.editors.nvim.harness import run_nvim
from tests.fakes.model_server import FakeModelServer

HEALTH = r"""
vim.cmd('checkhealth rhema')
local options = require('rhema.config').options
T.screenshot(('checkhealth-%s%s'):format(options.settings.provider or 'none',
  vim.fn.exepath(options.cmd[1]) == '' and '-no-server' or ''))
T.result = { lines = T.lines(0), clients = #vim.lsp.get_clients() }
"""


def test_checkhealth_passes_with_the_server_and_a_provider(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    r = run_nvim(
        HEALTH, workspace=workspace, tmp_path=tmp_path, settings=settings_for(fake.base_url)
    )

    text = "\n".join(r["lines"])
    assert "OK Neovim 0.11" in text
    assert 'OK require("rhema").setup() was called' in text
    assert 'OK server command "' in text
    assert "OK rhema-lsp " in text
    assert f"OK provider custom resolved: model fake-model at {fake.base_url}" in text
    assert "OK sandbox: bubblewrap" in text and "commands run without asking" in text
    assert "ERROR" not in text and "WARNING" not in text


def test_checkhealth_warns_when_commands_run_unconfined(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    settings = settings_for(fake.base_url, sandbox="off")
    r = run_nvim(HEALTH, workspace=workspace, tmp_path=tmp_path, settings=settings)

    text = "\n".join(r["lines"])
    assert "WARNING sandbox: off (setting)" in text
    assert 'settings.sandbox = "auto"' in text


def test_checkhealth_reports_a_missing_server(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    r = run_nvim(
        HEALTH,
        workspace=workspace,
        tmp_path=tmp_path,
        settings=settings_for(fake.base_url),
        setup_extra={"cmd": ["rhema-lsp-not-installed"]},
    )

    text = "\n".join(r["lines"])
    assert "OK Neovim 0.11" in text
    assert 'ERROR server command "rhema-lsp-not-installed" not found' in text
    assert "provider" not in text.split("rhema: server")[-1].split("ERROR")[0]


def test_checkhealth_warns_that_the_embedded_model_is_a_demo(
    workspace: Path, tmp_path: Path
) -> None:
    r = run_nvim(HEALTH, workspace=workspace, tmp_path=tmp_path, settings={"provider": "embedded"})

    text = "\n".join(r["lines"])
    assert "OK rhema-lsp " in text
    assert (
        "WARNING provider embedded: the tiny demo model (SmolLM2-135M, in process): "
        "no tools, no edits, not for real work"
    ) in text
    assert "choose one with `settings.provider`" in text
    assert "OK provider" not in text and "ERROR" not in text


def test_checkhealth_names_the_fix_of_a_provider_that_is_set_up_but_fails(
    workspace: Path, tmp_path: Path
) -> None:
    # The harness gives the server an empty OPENAI_API_KEY.
    r = run_nvim(HEALTH, workspace=workspace, tmp_path=tmp_path, settings={"provider": "openai"})

    text = "\n".join(r["lines"])
    assert "ERROR provider not resolved: The provider has no API key. " in text
    assert "set OPENAI_API_KEY in the environment of the process that starts rhema-lsp" in text
    assert "OK provider" not in text


VERDICTS = r"""
local verdict = require('rhema.health').verdict
local missing = 'no model provider found; set rhema.provider to a preset with its key in the '
  .. 'environment (ANTHROPIC_API_KEY, OPENAI_API_KEY), or start a local server'
local server_words = 'no model provider is set up (the demo model is used only when '
  .. 'rhema.provider names it); choose one: a hosted provider: rhema.provider openai with '
  .. 'OPENAI_API_KEY in the environment'
local function status(provider)
  return { version = '1', provider = provider }
end
T.result = {
  nothing_set = verdict(status({ error = missing }), {}),
  server_words = verdict(status({ error = server_words }), {}),
  new_words = verdict(status({ error = 'no model is set up; pick one of the choices' }), {}),
  set_but_failing = verdict(status({ error = "rhema.provider 'x' is unknown: pick one of a, b" }),
                            { provider = 'x' }),
  demo = verdict(status({ name = 'embedded', model = 'SmolLM2-135M-Instruct', source = 'x' }), {}),
  real = verdict(status({ name = 'ollama', model = 'qwen3', baseUrl = 'http://127.0.0.1:11434/v1',
                          source = 'autodetected' }), {}),
}
"""


def test_the_provider_verdict_warns_unless_a_real_model_answers(tmp_path: Path) -> None:
    r = run_nvim(VERDICTS, workspace=tmp_path, tmp_path=tmp_path, settings=None)

    assert r["nothing_set"]["level"] == "warn"
    assert r["nothing_set"]["message"].startswith("no model provider found; set settings.provider")
    # The server's words are said once (not "no model provider is set up: no
    # model provider is set up …"), in Neovim's names.
    assert r["server_words"]["level"] == "warn"
    assert r["server_words"]["message"] == (
        "no model provider is set up (the demo model is used only when settings.provider names"
        " it); choose one: a hosted provider: settings.provider openai with OPENAI_API_KEY in the"
        " environment"
    )
    assert r["server_words"]["advice"][0].startswith("choose one with `settings.provider`")
    # Whatever the server's words, nothing in `settings` means "not set up yet".
    assert r["new_words"]["level"] == "warn"
    assert r["set_but_failing"]["level"] == "error"
    assert r["set_but_failing"]["message"].startswith(
        "provider not resolved: `settings.provider` names no provider I know."
    )
    assert r["demo"]["level"] == "warn"
    assert r["real"] == {
        "level": "ok",
        "message": (
            "provider ollama resolved: model qwen3 at http://127.0.0.1:11434/v1 (autodetected)"
        ),
    }


def test_checkhealth_says_once_that_no_provider_is_set_up(workspace: Path, tmp_path: Path) -> None:
    # Nothing in settings, no key in the server's environment, no local server.
    r = run_nvim(HEALTH, workspace=workspace, tmp_path=tmp_path, settings={})

    text = "\n".join(r["lines"])
    assert (
        "WARNING no model provider is set up (the demo model is used only when settings.provider"
        " names it); choose one:"
    ) in text
    assert text.count("no model provider is set up") == 1
    assert "choose one with `settings.provider`" in text
    assert "OK provider" not in text and "ERROR" not in text
