"""The chat buffer: `:RhemaChat` opens the session's panel with an input under
it; `<CR>` and `:w` send, follow-ups stay in the session, prompts come back
with `<C-p>`/`<C-n>`/`<Up>`, mentions become context, `gf` opens tool files,
`<C-c>` stops and `q` closes."""

from __future__ import annotations

from pathlib import Path

from tests.editors.fake_settings import settings_for
from tests.editors.nvim.harness import run_nvim
from tests.fakes.model_server import FakeModelServer, text_reply

CHAT = r"""
vim.cmd.edit(T.workspace .. '/hello.py')
T.attached()
local source_win = vim.api.nvim_get_current_win()
vim.cmd('RhemaChat')
local chat = require('rhema.chat')
local runs = require('rhema.runs')
local panel_win = require('rhema.window').win
local r = {
  input_current = vim.api.nvim_get_current_buf() == chat.input,
  input_name = vim.api.nvim_buf_get_name(chat.input),
  buftype = vim.bo[chat.input].buftype,
  filetype = vim.bo[chat.input].filetype,
  input_row = vim.fn.win_screenpos(chat.input_win)[1],
  input_col = vim.fn.win_screenpos(chat.input_win)[2],
  panel_row = vim.fn.win_screenpos(panel_win)[1],
  panel_col = vim.fn.win_screenpos(panel_win)[2],
  input_height = vim.api.nvim_win_get_height(chat.input_win),
  winbar = vim.api.nvim_eval_statusline(vim.wo[chat.input_win].winbar,
    { winid = chat.input_win, use_winbar = true }).str,
}
local hint_ns = vim.api.nvim_create_namespace('rhema.chat.hint')
local function hint()
  local marks = vim.api.nvim_buf_get_extmarks(vim.api.nvim_win_get_buf(panel_win), hint_ns, 0, -1,
    { details = true })
  local out = {}
  for _, mark in ipairs(marks) do
    for _, line in ipairs(mark[4].virt_lines or {}) do
      table.insert(out, line[1][1])
    end
  end
  return out
end
r.hint = hint()
vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'What does', 'greet do?' })
vim.cmd.normal(vim.keycode('<CR>'))
r.input_after_send = T.lines(chat.input)
local streamed
T.wait('the answer to stream', function()
  local buf = require('rhema').panel_buffer()
  for _, line in ipairs(buf and T.lines(buf) or {}) do
    if line:find('greets greets', 1, true) then
      streamed = line
      return true
    end
  end
  return false
end)
r.streamed = streamed
r.running_while_streaming = require('rhema').is_running()
-- Sending while the turn runs is refused; the input keeps the text.
vim.api.nvim_buf_set_lines(chat.input, 0, -1, false, { 'too early' })
vim.cmd.normal(vim.keycode('<CR>'))
r.refused_input = T.lines(chat.input)
T.idle()
r.first = T.panel_lines()
r.hint_after = hint()
r.first_result = runs.last['rhema.turn']
r.panel_win_shows_panel = vim.api.nvim_win_get_buf(panel_win) == require('rhema').panel_buffer()
local thinking_line
for index, line in ipairs(r.first) do
  if line:sub(1, 2) == '> ' and not thinking_line then
    thinking_line = index
  end
end
r.thinking_fold = vim.api.nvim_win_call(panel_win, function()
  return { vim.fn.foldclosed(thinking_line), vim.fn.foldclosedend(thinking_line) }
end)
r.thinking_line = thinking_line
-- A follow-up, sent with :w.
vim.api.nvim_buf_set_lines(chat.input, 0, -1, false, { 'And then?' })
-- A draft is never "modified" (it would hold up :qa), and :w sends it anyway.
T.wait('the draft to be unmodified', function() return not vim.bo[chat.input].modified end)
vim.cmd('write')
r.input_after_write = T.lines(chat.input)
T.idle()
r.second = T.panel_lines()
r.second_result = runs.last['rhema.turn']
-- History: a draft, back through both prompts, then forward to the draft.
vim.api.nvim_buf_set_lines(chat.input, 0, -1, false, { 'draft' })
local history = {}
for _, key in ipairs({ '<C-p>', '<C-p>', '<C-p>', '<C-n>', '<C-n>' }) do
  vim.cmd.normal(vim.keycode(key))
  table.insert(history, table.concat(T.lines(chat.input), '|'))
end
r.history = history
-- <Up> in insert mode on the first line recalls too.
vim.api.nvim_feedkeys(vim.keycode('ggi<Up><Esc>'), 'mx', false)
r.insert_up = T.lines(chat.input)
-- q closes the chat; :RhemaChat brings the same session back, focused.
vim.cmd.normal('q')
r.after_q = { input = chat.is_open(), panel = vim.api.nvim_win_is_valid(panel_win),
              windows = #vim.api.nvim_tabpage_list_wins(0) }
vim.api.nvim_set_current_win(source_win)
vim.cmd('RhemaChat')
r.reopened = { input_current = vim.api.nvim_get_current_buf() == chat.input,
               panel = T.lines(vim.api.nvim_win_get_buf(require('rhema.window').win)),
               windows = #vim.api.nvim_tabpage_list_wins(0) }
vim.cmd('RhemaChat')
r.focused_again_windows = #vim.api.nvim_tabpage_list_wins(0)
-- :RhemaNew empties the chat's panel; closing the panel closes the input.
local old_panel = require('rhema').panel_buffer()
vim.cmd('RhemaNew')
local shown = vim.api.nvim_win_get_buf(require('rhema.window').win)
r.after_new = { other = shown ~= old_panel, lines = T.lines(shown), input = chat.is_open() }
vim.api.nvim_win_close(require('rhema.window').win, false)
T.wait('the input to close with the panel', function() return not chat.is_open() end)
r.windows_after_panel_close = #vim.api.nvim_tabpage_list_wins(0)
T.result = r
"""


def test_chat_sends_streams_follows_up_and_recalls_history(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    answer = "It " + "greets " * 150 + "someone."
    fake.script(
        text_reply(answer, thinking="Let me look.\nAt greet.", chunk=7, delay=0.02, usage=(12, 34)),
        text_reply("Then it returns.", usage=(20, 5)),
    )

    r = run_nvim(CHAT, workspace=workspace, tmp_path=tmp_path, settings=settings_for(fake.base_url))

    # The input opens focused, under the panel, in the same column.
    assert r["input_current"] is True
    assert r["input_name"] == "rhema://chat"
    assert (r["buftype"], r["filetype"]) == ("acwrite", "markdown")
    assert r["input_col"] == r["panel_col"] and r["input_row"] > r["panel_row"]
    assert r["input_height"] == 6
    assert r["winbar"] == "Rhema · edit · <CR> or :w sends · #buffer: hello.py"
    # The empty chat says how to use it (virtual lines: the buffer stays empty); the
    # first answer replaces them.
    assert r["hint"] == [
        "Ask about your code below; <CR> or :w sends, and every message follows up in this"
        " session.",
        "#buffer, #selection and #diagnostics attach the file you came from; #image:path an image.",
        "Mode: edit (gm or :RhemaMode picks another) · :RhemaSessions reopens a session"
        " · :help rhema-chat",
    ]
    assert r["hint_after"] == []
    # <CR> sent the input and emptied it; the answer streamed while the turn ran.
    assert r["input_after_send"] == [""]
    assert r["running_while_streaming"] is True
    assert r["streamed"].startswith("It greets greets") and len(r["streamed"]) < len(answer)
    assert r["refused_input"] == ["too early"]
    assert any("a turn is running" in m["message"] for m in r["messages"])
    turn_one = [
        "## You",
        "",
        "What does",
        "greet do?",
        "",
        "## Rhema",
        "",
        "> Let me look.",
        "> At greet.",
        "",
        answer,
        "",
        "── done · 1 step · 12 in / 34 out tokens ──",
    ]
    assert r["first"] == turn_one
    assert r["panel_win_shows_panel"] is True
    # The reasoning is folded in the chat.
    assert r["thinking_line"] == 8
    assert r["thinking_fold"] == [8, 9]
    # :w sent the follow-up, in the same session.
    assert r["input_after_write"] == [""]
    assert r["second"] == [
        *turn_one,
        "",
        "## You",
        "",
        "And then?",
        "",
        "## Rhema",
        "",
        "Then it returns.",
        "",
        "── done · 1 step · 20 in / 5 out tokens ──",
    ]
    assert r["second_result"]["session"] == r["first_result"]["session"]
    assert (r["first_result"]["turn"], r["second_result"]["turn"]) == (1, 2)
    assert len(fake.requests) == 2
    assert str(fake.requests[0]["messages"][-1]["content"]).count("What does\ngreet do?") == 1
    # No mention: no file went along.
    assert "return" not in str(fake.requests[0]["messages"][-1]["content"])
    follow_up = [str(m.get("content")) for m in fake.requests[1]["messages"]]
    assert "And then?" in follow_up[-1]
    assert any("What does\ngreet do?" in c for c in follow_up[:-1])
    assert any("someone." in c for c in follow_up[:-1])
    # History, newest first, back to the draft; the oldest holds.
    assert r["history"] == [
        "And then?",
        "What does|greet do?",
        "What does|greet do?",
        "And then?",
        "draft",
    ]
    assert r["insert_up"] == ["And then?"]
    # q closed both windows; :RhemaChat reopened the session, twice only focuses.
    assert r["after_q"] == {"input": False, "panel": False, "windows": 1}
    assert r["reopened"]["input_current"] is True
    assert r["reopened"]["panel"] == r["second"]
    assert r["reopened"]["windows"] == 3
    assert r["focused_again_windows"] == 3
    assert r["after_new"] == {"other": True, "lines": [""], "input": True}
    assert r["windows_after_panel_close"] == 1


MENTIONS = r"""
vim.cmd.edit(T.workspace .. '/hello.py')
T.attached()
-- The diagnostics a linter reports.
local ns = vim.api.nvim_create_namespace('test.lint')
vim.diagnostic.set(ns, 0, {
  { lnum = 1, col = 22, end_lnum = 1, end_col = 26, message = "undefined name 'nam'",
    severity = vim.diagnostic.severity.ERROR, source = 'pyflakes', code = 'F821' },
  { lnum = 0, col = 0, end_lnum = 0, end_col = 3, message = 'missing docstring',
    severity = vim.diagnostic.severity.HINT },
})
-- Select "greet" charwise, then :'<,'>RhemaChat mentions the selection.
vim.cmd('normal! 0wve\27')
vim.cmd("'<,'>RhemaChat")
local chat = require('rhema.chat')
local r = { range_input = T.lines(chat.input) }
local mention_ns = vim.api.nvim_get_namespaces()['rhema.chat']
local function marks()
  local out = {}
  for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(chat.input, mention_ns, 0, -1,
                                                       { details = true })) do
    table.insert(out, { mark[2], mark[3], mark[4].end_col, mark[4].hl_group })
  end
  return out
end
vim.api.nvim_buf_set_lines(chat.input, 0, -1, false,
  { '#diagnostics here,', 'not a.md#buffer nor #buffers but (#buffer)' })
T.wait('the mentions to be highlighted', function() return #marks() == 2 end)
r.marks = marks()
local function send(text)
  vim.api.nvim_buf_set_lines(chat.input, 0, -1, false, { text })
  vim.cmd.normal(vim.keycode('<CR>'))
  T.idle()
end
send('A question without a mention.')
send('Explain #buffer please.')
send(r.range_input[1] .. 'what is it?')
send('Fix #diagnostics')
-- Not mentions: a heading, an anchor, an unknown word.
send('# buffer, a.md#buffer, #buffers')
r.lines = T.panel_lines()
r.sessions = #T.command('rhema.sessions')
T.result = r
"""


def test_chat_mentions_become_context(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    fake.script(*(text_reply(f"Answer {n}.", usage=(1, 1)) for n in range(1, 6)))

    r = run_nvim(
        MENTIONS, workspace=workspace, tmp_path=tmp_path, settings=settings_for(fake.base_url)
    )

    assert r["range_input"] == ["#selection "]
    assert r["marks"] == [[0, 0, 12, "RhemaMention"], [1, 34, 41, "RhemaMention"]]
    users = [str(request["messages"][-1]["content"]) for request in fake.requests]
    assert len(users) == 5
    source = 'return "hello " + name'
    # No mention: nothing attached.
    assert "A question without a mention." in users[0]
    assert source not in users[0]
    # #buffer: the file.
    assert "Explain #buffer please." in users[1]
    assert "hello.py" in users[1] and source in users[1]
    assert "«selection»" not in users[1] and "Problems the editor reports" not in users[1]
    # #selection: the file with the selection marked.
    assert "def «selection»greet«/selection»(name):" in users[2]
    # #diagnostics: the file and each diagnostic as a line of text, in order.
    assert source in users[3]
    assert (
        "Problems the editor reports in hello.py:\n"
        "- line 1 (hint): missing docstring\n"
        "- line 2 (error, pyflakes F821): undefined name 'nam'"
    ) in users[3]
    assert source not in users[4]
    # The panel says what went along; all five were one session.
    contexts = [line for line in r["lines"] if line.startswith("Context: ")]
    assert contexts == [
        "Context: hello.py",
        "Context: hello.py:1-1",
        "Context: hello.py (2 diagnostics)",
    ]
    assert r["sessions"] == 1
