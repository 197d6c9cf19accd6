"""`:help rhema` documents every command, the options and the API."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.editors.nvim.harness import PLUGIN, run_nvim

HELP = r"""
local docs = T.workspace
vim.cmd('helptags ' .. docs .. '/doc')
vim.opt.runtimepath:prepend(docs)
local r = { missing = {}, commands = {} }
for name in pairs(vim.api.nvim_get_commands({})) do
  if name:match('^Rhema') then
    table.insert(r.commands, name)
    if not pcall(vim.cmd.help, ':' .. name) then
      table.insert(r.missing, name)
    end
  end
end
table.sort(r.commands)
for _, tag in ipairs({ 'rhema-chat', 'rhema-chat-keys', 'rhema-mentions', 'rhema.chat()',
                       'rhema-mcp' }) do
  if not pcall(vim.cmd.help, tag) then
    table.insert(r.missing, tag)
  end
end
for _, tag in ipairs({ 'rhema', 'rhema-options', 'rhema-panel', 'rhema-cancel', 'rhema-edits',
                       'rhema-progress', 'rhema-health', 'rhema-review', 'rhema-quickfix',
                       'rhema.setup()', 'rhema.status()', 'rhema-errors', 'rhema-highlighting',
                       'rhema-first-run', 'rhema.retry()' }) do
  if not pcall(vim.cmd.help, tag) then
    table.insert(r.missing, tag)
  end
end
vim.cmd.help('rhema')
r.file = vim.fn.expand('%:t')
T.result = r
"""


def test_help_documents_every_command(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(PLUGIN / "doc", docs / "doc")

    r = run_nvim(
        HELP,
        workspace=docs,
        tmp_path=tmp_path,
        settings={},
        setup_extra={"cmd": ["rhema-lsp-not-installed"]},
    )

    assert r["commands"] == [
        "RhemaAsk",
        "RhemaAskWorktree",
        "RhemaCancel",
        "RhemaCancelTask",
        "RhemaChat",
        "RhemaCompact",
        "RhemaDiff",
        "RhemaEdit",
        "RhemaKey",
        "RhemaMcp",
        "RhemaMcpRestart",
        "RhemaMode",
        "RhemaNew",
        "RhemaPrompt",
        "RhemaRetry",
        "RhemaReview",
        "RhemaRewind",
        "RhemaRunPlan",
        "RhemaSessions",
        "RhemaStatus",
        "RhemaStep",
        "RhemaUndoTurn",
        "RhemaWorktrees",
    ]
    assert r["missing"] == []
    assert r["file"] == "rhema.txt"


OPTIONS = r"""
local panel = require('rhema.panel').new('t', nil)
local win = panel:show()
T.result = {
  ask = vim.fn.maparg('<leader>ra', 'n'),
  ask_visual = vim.fn.maparg('<leader>ra', 'x'),
  edit = vim.fn.maparg('<leader>re', 'x'),
  cancel = vim.fn.maparg('<leader>rc', 'n'),
  sessions = vim.fn.maparg('<Space>s', 'n'),
  step = vim.fn.maparg('<leader>rn', 'n'),
  chat = vim.fn.maparg('<leader>rr', 'n'),
  chat_visual = vim.fn.maparg('<leader>rr', 'x'),
  layout = vim.fn.winlayout()[1],
  bottom = vim.fn.win_screenpos(win)[1] > vim.fn.win_screenpos(vim.fn.win_getid(1))[1],
  height = vim.api.nvim_win_get_height(win),
  current_is_panel = vim.api.nvim_get_current_win() == win,
}
"""


def test_keymaps_are_opt_in_and_the_panel_position_is_configurable(tmp_path: Path) -> None:
    r = run_nvim(
        OPTIONS,
        workspace=tmp_path,
        tmp_path=tmp_path,
        settings={},
        setup_extra={
            "cmd": ["rhema-lsp-not-installed"],
            "keymaps": {"sessions": "<Space>s", "step": False},
            "panel": {"position": "bottom", "size": 7},
        },
    )

    assert r["ask"] == "<Cmd>RhemaAsk<CR>"
    assert r["ask_visual"] == ":RhemaAsk<CR>"
    assert r["edit"] == ":RhemaEdit<CR>"
    assert r["cancel"] == "<Cmd>RhemaCancel<CR>"
    assert r["sessions"] == "<Cmd>RhemaSessions<CR>"
    assert r["step"] == ""
    assert (r["chat"], r["chat_visual"]) == ("<Cmd>RhemaChat<CR>", ":RhemaChat<CR>")
    assert r["layout"] == "col"
    assert r["bottom"] is True
    assert r["height"] == 7
    assert r["current_is_panel"] is False


def test_no_keymaps_without_opting_in(tmp_path: Path) -> None:
    r = run_nvim(
        OPTIONS,
        workspace=tmp_path,
        tmp_path=tmp_path,
        settings={},
        setup_extra={"cmd": ["rhema-lsp-not-installed"]},
    )

    assert (r["ask"], r["edit"], r["cancel"]) == ("", "", "")
    assert r["layout"] == "row"
