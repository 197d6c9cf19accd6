"""The first run: a server with no real model says so in the chat, with the
choices and how to write them in setup(), instead of an empty chat or an
answer from the demo model nobody chose."""

from __future__ import annotations

import json
from pathlib import Path

from tests.editors.nvim.harness import run_nvim

GROQ_KEY = "gsk-first-run-test-value-0123456789"

OPEN_CHAT = r"""
vim.o.columns, vim.o.lines = 160, 48
vim.cmd.edit(T.workspace .. '/hello.py')
T.attached()
vim.cmd('RhemaChat')
local runs = require('rhema.runs')
T.wait('the setup notice', function()
  local blank = runs.blank
  return blank ~= nil and #blank.blocks > 0
end)
local panel = runs.blank
panel:flush()
T.screenshot('first-run-' .. NAME)
local r = { notice = T.lines(panel.buf), input_current = vim.api.nvim_get_current_buf()
            == require('rhema.chat').input }
vim.cmd('RhemaStatus')
T.wait('the status', function() return runs.last['rhema.status'] ~= nil end)
r.status = vim.split(T.messages[#T.messages].message, '\n')
if SEND then
  vim.api.nvim_buf_set_lines(require('rhema.chat').input, 0, -1, false, { 'Hello?' })
  vim.cmd.normal(vim.keycode('<CR>'))
  T.idle()
  r.after_send = T.panel_lines()
  T.screenshot('first-run-' .. NAME .. '-sent')
end
T.result = r
"""


# The turn's opening as the plugin writes it for the server's status (the
# demo model itself is not run: the panel shows what precedes its answer).
DEMO_TURN = r"""
local c = vim.lsp.get_clients({ name = 'rhema' })[1]
local p = require('rhema.panel').new('demo', nil)
p:begin_turn('Hello?', nil)
require('rhema.first_run').annotate(p, c)
p:flush()
T.result.demo_turn = T.lines(p.buf)
"""


def test_the_chat_opens_on_the_setup_choices_when_the_provider_cannot_be_resolved(
    workspace: Path, tmp_path: Path
) -> None:
    # `openai` with no key in the server's environment (the harness empties
    # it), and a Groq key there: the choices are the server's own survey.
    r = run_nvim(
        OPEN_CHAT.replace("SEND", "true").replace("NAME", "'no-key'"),
        workspace=workspace,
        tmp_path=tmp_path,
        settings={"provider": "openai"},
        setup_extra={"cmd_env": {"GROQ_API_KEY": GROQ_KEY}},
    )

    notice = r["notice"]
    assert r["input_current"] is True
    assert notice[:4] == [
        "## Set up a model",
        "",
        "The provider has no API key.",
        "What to do: set OPENAI_API_KEY in the environment of the process that starts rhema-lsp"
        " (it is never read from settings or files) and restart the language server",
    ]
    text = "\n".join(notice)
    assert "Choose one with `settings.provider` in your setup() call" in text
    assert 'require("rhema").setup({ settings = { provider = "ollama" } })' in text
    assert '`provider = "anthropic"` (ANTHROPIC_API_KEY)' in text
    # The server found the key (named, never shown) and lists its preset first.
    assert (
        '- **A key is set** in the server\'s environment: `provider = "groq"` (GROQ_API_KEY).'
    ) in notice
    assert text.count("GROQ_API_KEY") == 1 and GROQ_KEY not in text
    assert '`"ollama"` (11434)' in text and '`"vllm"` (8000)' in text
    assert (
        "**The tiny demo model (SmolLM2-135M, in process)**: no tools, no edits, not for real work"
        ' (`provider = "embedded"`).'
    ) in text
    # The detail is what the server said, less the advice already given.
    assert notice[-1] == "Detail: provider openai needs its key"
    assert r["status"][1] == (
        "provider: none: The provider has no API key. Set OPENAI_API_KEY in the environment of"
        " the process that starts rhema-lsp (it is never read from settings or files) and restart"
        " the language server (:help rhema-first-run)"
    )
    # Sending anyway: the error in plain words, and no answer from any model.
    after = r["after_send"]
    assert after[: len(notice)] == notice
    errors = [line for line in after if line.startswith("✗ ")]
    assert errors == ["✗ The provider has no API key."]
    # The choices are not repeated under the error, and no retry is offered that cannot help.
    assert after.count("## Set up a model") == 1
    assert not [line for line in after if "RhemaRetry" in line]
    assert after[-1] == "── failed · 0 steps · 0 in / 0 out tokens ──"


def test_the_chat_says_the_demo_model_is_a_demo(workspace: Path, tmp_path: Path) -> None:
    r = run_nvim(
        OPEN_CHAT.replace("SEND", "false").replace("NAME", "'demo-model'") + DEMO_TURN,
        workspace=workspace,
        tmp_path=tmp_path,
        settings={"provider": "embedded"},
    )

    assert r["notice"][:3] == [
        "## Set up a model",
        "",
        "Rhema answers with the tiny demo model (SmolLM2-135M, in process): no tools, no edits,"
        " not for real work.",
    ]
    assert "Detail:" not in "\n".join(r["notice"])
    assert r["status"][1].startswith("provider: embedded · model SmolLM2-135M-Instruct · ")
    assert r["status"][2] == (
        "the provider is the tiny demo model (SmolLM2-135M, in process): no tools, no edits,"
        " not for real work"
    )
    # A turn it answers starts with a warning saying so.
    assert r["demo_turn"] == [
        "## You",
        "",
        "Hello?",
        "",
        "## Rhema",
        "",
        (
            "⚠ Answering with the tiny demo model (SmolLM2-135M, in process): no tools, no edits,"
            " not for real work. Choose a provider with `settings.provider` in setup()"
            " (:help rhema-setup)."
        ),
        "",
        "… waiting for the model",
    ]


KEY = "sk-rhema-nvim-test-0123456789"

TYPE_KEY = r"""
vim.cmd.edit(T.workspace .. '/hello.py')
T.attached()
local runs = require('rhema.runs')
local first = vim.lsp.get_clients({ name = 'rhema' })[1]
vim.cmd('RhemaStatus')
T.wait('the status', function() return runs.last['rhema.status'] ~= nil end)
local r = { before = runs.last['rhema.status'].provider }
-- Not a provider's key variable: refused before anything is asked.
vim.fn.inputsecret = function() error('asked') end
vim.cmd('RhemaKey PATH')
vim.fn.inputsecret = function(prompt)
  r.prompt = prompt
  return THE_KEY
end
vim.cmd('RhemaKey OPENAI_API_KEY')
T.wait('a new server', function()
  local now = vim.lsp.get_clients({ name = 'rhema', bufnr = 0 })[1]
  return now ~= nil and now.id ~= first.id and now.initialized
end)
runs.last['rhema.status'] = nil
vim.cmd('RhemaStatus')
T.wait('the new status', function() return runs.last['rhema.status'] ~= nil end)
r.after = runs.last['rhema.status'].provider
r.file = require('rhema.keys').file()
r.mode = vim.uv.fs_stat(r.file).mode % 512
T.result = r
"""


def test_a_key_typed_in_neovim_is_kept_outside_the_workspace_and_used(
    workspace: Path, tmp_path: Path
) -> None:
    r = run_nvim(
        TYPE_KEY.replace("THE_KEY", repr(KEY).replace("'", '"')),
        workspace=workspace,
        tmp_path=tmp_path,
        settings={"provider": "openai"},
    )

    assert "error" not in r, r.get("error")
    assert "needs its key" in str(r["before"]["error"])
    assert r["after"].get("error") is None and r["after"]["name"] == "openai"
    assert any("PATH is not a provider key variable" in m["message"] for m in r["messages"]), r[
        "messages"
    ]
    assert r["prompt"].startswith("OPENAI_API_KEY (kept in ")
    kept = Path(r["file"])
    assert workspace not in kept.parents and kept.stat().st_mode & 0o777 == 0o600
    assert r["mode"] == 0o600
    assert json.loads(kept.read_text()) == {"OPENAI_API_KEY": KEY}
    for path in workspace.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
    assert all(KEY not in m["message"] for m in r["messages"])
