"""`:RhemaAsk` streams reasoning and the answer into the panel, line by line."""

from __future__ import annotations

import re
from pathlib import Path

from tests.editors.fake_settings import settings_for
from tests.editors.nvim.harness import run_nvim
from tests.fakes.model_server import FakeModelServer, text_reply

ASK = r"""
vim.cmd.edit(T.workspace .. '/hello.py')
T.attached()
local progress = {}
vim.api.nvim_create_autocmd('LspProgress', { callback = function(args)
  local value = args.data.params.value
  local status = require('rhema').status()
  table.insert(progress, { kind = value.kind, title = value.title, status = status })
end })
vim.cmd('RhemaAsk Explain this file.')
local panel_buf
T.wait('the panel', function()
  panel_buf = require('rhema').panel_buffer()
  return panel_buf ~= nil
end)
T.idle()
local panel = require('rhema.runs').current_panel
local win = vim.fn.win_findbuf(panel_buf)[1]
local ns = vim.api.nvim_get_namespaces()['rhema.panel']
local thinking = {}
for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(panel_buf, ns, 0, -1, { details = true })) do
  if mark[4].hl_group == 'RhemaThinking' then
    table.insert(thinking, { mark[2], mark[4].end_row })
  end
end
T.result = {
  lines = T.lines(panel_buf),
  filetype = vim.bo[panel_buf].filetype,
  buftype = vim.bo[panel_buf].buftype,
  thinking = thinking,
  fold_start = vim.api.nvim_win_call(win, function() return vim.fn.foldclosed(9) end),
  fold_end = vim.api.nvim_win_call(win, function() return vim.fn.foldclosedend(9) end),
  fold_text = vim.api.nvim_win_call(win, function() return vim.fn.foldtextresult(9) end),
  answer_fold = vim.api.nvim_win_call(win, function() return vim.fn.foldclosed(12) end),
  panel_windows = #vim.fn.win_findbuf(panel_buf),
  current_is_source = vim.api.nvim_buf_get_name(0) == T.workspace .. '/hello.py',
  result = require('rhema.runs').last['rhema.turn'],
  progress = progress,
  status_after = require('rhema').status(),
  updates = panel.updates,
  session = require('rhema').session(),
}
"""


def test_ask_streams_reasoning_and_answer_into_the_panel(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    answer = "Hello **world**\nsecond line"
    fake.script(text_reply(answer, thinking="Let me think.\nOK.", usage=(12, 34)))

    result = run_nvim(
        ASK, workspace=workspace, tmp_path=tmp_path, settings=settings_for(fake.base_url)
    )

    assert result["lines"] == [
        "## You",
        "",
        "Explain this file.",
        "",
        "Context: hello.py",
        "",
        "## Rhema",
        "",
        "> Let me think.",
        "> OK.",
        "",
        "Hello **world**",
        "second line",
        "",
        "── done · 1 step · 12 in / 34 out tokens ──",
    ]
    assert result["filetype"] == "markdown"
    assert result["buftype"] == "nofile"
    # The reasoning is dimmed and folded, the answer is not.
    assert result["thinking"] == [[8, 9]]
    assert (result["fold_start"], result["fold_end"]) == (9, 10)
    assert result["fold_text"] == "> reasoning (2 lines)"
    assert result["answer_fold"] == -1
    # The panel opens beside the source, which keeps the cursor.
    assert result["panel_windows"] == 1
    assert result["current_is_source"] is True
    assert result["result"]["stopReason"] == "end_turn"
    assert result["result"]["text"] == answer
    assert result["session"] == result["result"]["session"]
    # The server saw the file as context.
    user = fake.requests[0]["messages"][-1]["content"]
    assert "Explain this file." in str(user)
    assert 'return "hello " + name' in str(user)
    # Progress went through LspProgress into the statusline function.
    kinds = [p["kind"] for p in result["progress"]]
    assert kinds[0] == "begin" and kinds[-1] == "end"
    assert result["progress"][0]["title"] == "Rhema"
    assert result["progress"][0]["status"].startswith("Rhema")
    # After the turn: no activity, the session's context fill (the fake names no window).
    assert re.fullmatch(r"Rhema ctx \d+(\.\d)?k?", result["status_after"]), result["status_after"]


ASK_SELECTION = r"""
vim.cmd.edit(T.workspace .. '/names.py')
T.attached()
-- Select "🙂 café" charwise.
vim.cmd('normal! 0f🙂vf"h\27')
vim.cmd("'<,'>RhemaAsk What is this?")
T.idle()
T.result = { lines = T.panel_lines() }
"""


def test_ask_sends_the_visual_selection_as_context(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    (workspace / "names.py").write_text('greeting = "Zoë 🙂 café"\nother = 1\n')
    fake.script(text_reply("A greeting.", usage=(1, 2)))

    r = run_nvim(
        ASK_SELECTION, workspace=workspace, tmp_path=tmp_path, settings=settings_for(fake.base_url)
    )

    assert r["lines"] == [
        "## You",
        "",
        "What is this?",
        "",
        "Context: names.py:1-1",
        "",
        "## Rhema",
        "",
        "A greeting.",
        "",
        "── done · 1 step · 1 in / 2 out tokens ──",
    ]
    user = str(fake.requests[0]["messages"][-1]["content"])
    assert 'greeting = "Zoë «selection»🙂 café«/selection»"' in user
