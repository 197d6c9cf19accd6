"""The chat buffer's keys in real Neovim: `gf` on a tool line opens its
file at the line, `<C-c>` stops the turn, the prompt history outlives
Neovim, and the keys are configurable. (Sending, follow-ups and mentions
are in test_chat.py.)"""

from __future__ import annotations

from pathlib import Path

from tests.editors.fake_settings import settings_for
from tests.editors.nvim.harness import run_nvim
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

GOTO = r"""
vim.cmd.edit(T.workspace .. '/hello.py')
T.attached()
local source_win = vim.api.nvim_get_current_win()
vim.cmd('RhemaChat')
local chat = require('rhema.chat')
vim.api.nvim_buf_set_lines(chat.input, 0, -1, false, { 'Look at the notes and fix hello.' })
vim.cmd.normal(vim.keycode('<CR>'))
T.idle()
local panel_win = require('rhema.window').win
local panel_buf = require('rhema').panel_buffer()
local lines = T.panel_lines()
local function row_of(prefix)
  for index, line in ipairs(lines) do
    if vim.startswith(line, prefix) then
      return index
    end
  end
  error('no line ' .. prefix .. ' in ' .. vim.inspect(lines))
end
local function gf_at(row, col)
  vim.api.nvim_set_current_win(panel_win)
  vim.api.nvim_win_set_cursor(panel_win, { row, col or 4 })
  vim.cmd.normal('gf')
  return {
    file = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(0), ':t'),
    line = vim.api.nvim_win_get_cursor(0)[1],
    in_panel_win = vim.api.nvim_get_current_win() == panel_win,
    in_source_win = vim.api.nvim_get_current_win() == source_win,
  }
end
local r = { lines = lines }
r.read = gf_at(row_of('▸ read_file'))
r.edit = gf_at(row_of('▸ edit_file'))
local text_row = row_of('Fixed.')
r.text = gf_at(text_row, lines[text_row]:find('notes.txt', 1, true) + 2)
r.missing = gf_at(row_of('▸ read_file ./sub/../missing.txt'))
r.panel_still = vim.api.nvim_win_get_buf(panel_win) == panel_buf
r.windows = #vim.api.nvim_tabpage_list_wins(0)
vim.api.nvim_set_current_win(panel_win)
vim.api.nvim_win_set_cursor(panel_win, { 1, 0 })
vim.cmd.normal('gf')
r.nothing_win_is_panel = vim.api.nvim_get_current_win() == panel_win
-- i in the panel goes to the chat's input.
vim.cmd.normal('i')
r.i_goes_to_input = vim.api.nvim_get_current_buf() == chat.input
T.result = r
"""


def test_gf_on_a_tool_line_opens_its_file_at_the_line(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    (workspace / "notes.txt").write_text("one\ntwo\nthree\nfour\nfive\n")
    fake.script(
        tool_reply(
            ("read_file", {"path": "notes.txt", "offset": 3}),
            ("edit_file", {"path": "hello.py", "old_text": "hello ", "new_text": "hi there "}),
            ("read_file", {"path": "./sub/../missing.txt"}),
        ),
        text_reply("Fixed. See notes.txt:2 for more."),
    )

    r = run_nvim(GOTO, workspace=workspace, tmp_path=tmp_path, settings=settings_for(fake.base_url))

    assert "▸ read_file notes.txt:3 · done" in r["lines"]
    assert "▸ edit_file hello.py · done" in r["lines"]
    # read_file's offset is the line; edit_file's is where the new text is.
    assert r["read"] == {
        "file": "notes.txt",
        "line": 3,
        "in_panel_win": False,
        "in_source_win": True,
    }
    assert r["edit"] == {
        "file": "hello.py",
        "line": 2,
        "in_panel_win": False,
        "in_source_win": True,
    }
    # A path:line in the answer's text works too.
    assert r["text"] == {
        "file": "notes.txt",
        "line": 2,
        "in_panel_win": False,
        "in_source_win": True,
    }
    # A file that is not there is said so, and nothing opens.
    assert r["missing"]["in_panel_win"] is True
    assert "rhema: missing.txt does not exist (any more)" in [m["message"] for m in r["messages"]]
    assert r["panel_still"] is True
    assert r["windows"] == 3
    # A line without a file leaves the cursor in the panel.
    assert r["nothing_win_is_panel"] is True
    assert any("no file on this line" in m["message"] for m in r["messages"])
    assert r["i_goes_to_input"] is True


STOP = r"""
vim.cmd.edit(T.workspace .. '/hello.py')
T.attached()
vim.cmd('RhemaChat')
local chat = require('rhema.chat')
local runs = require('rhema.runs')
vim.api.nvim_buf_set_lines(chat.input, 0, -1, false, { 'Write a lot.' })
vim.cmd.normal(vim.keycode('<CR>'))
T.wait_panel_text('some streamed text', 'word word word')
local winbar = vim.api.nvim_eval_statusline(vim.wo[chat.input_win].winbar,
  { winid = chat.input_win, use_winbar = true }).str
vim.cmd.normal(vim.keycode('<C-c>'))
local r = { at_stop = T.panel_lines(), winbar = winbar }
T.wait('the turn to answer', function() return runs.last['rhema.turn'] ~= nil end)
T.wait('rhema.cancel to answer', function() return runs.last['rhema.cancel'] ~= nil end)
r.result = runs.last['rhema.turn']
r.status = T.command('rhema.status')
r.running = require('rhema').is_running()
-- The chat goes on in the same session: <C-s> sends from insert mode.
vim.api.nvim_buf_set_lines(chat.input, 0, -1, false, { 'Shorter, please.' })
vim.api.nvim_feedkeys(vim.keycode('A<C-s><Esc>'), 'mx', false)
r.input_after_ctrl_s = T.lines(chat.input)
T.idle()
r.next = runs.last['rhema.turn']
r.lines = T.panel_lines()
T.result = r
"""


def test_ctrl_c_in_the_chat_stops_the_turn(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    fake.script(text_reply("word " * 400, chunk=5, delay=0.02), text_reply("Short."))

    r = run_nvim(STOP, workspace=workspace, tmp_path=tmp_path, settings=settings_for(fake.base_url))

    assert r["winbar"] == "Rhema · edit · running, <C-c> stops · #buffer: hello.py"
    assert r["at_stop"][-2:] == ["", "── cancelled ──"]
    assert r["result"]["stopReason"] == "cancelled"
    assert r["status"]["running"] == []
    assert r["running"] is False
    assert fake.disconnects >= 1
    assert r["input_after_ctrl_s"] == [""]
    assert r["next"]["stopReason"] == "end_turn"
    assert r["next"]["session"] == r["result"]["session"]
    assert r["lines"][-3:] == ["Short.", "", "── done · 1 step · 10 in / 6 out tokens ──"]


HISTORY_WRITE = r"""
vim.cmd('RhemaChat')
local chat = require('rhema.chat')
for _, text in ipairs({ 'one', 'two', 'three' }) do
  vim.api.nvim_buf_set_lines(chat.input, 0, -1, false, { text })
  vim.cmd.normal(vim.keycode('<CR>'))
  T.idle()
end
T.result = { file = chat.history_file() }
"""

HISTORY_READ = r"""
vim.cmd('RhemaChat')
local chat = require('rhema.chat')
local seen = {}
for _ = 1, 3 do
  vim.cmd.normal(vim.keycode('<C-p>'))
  table.insert(seen, T.lines(chat.input)[1])
end
T.result = { seen = seen }
"""


def test_chat_history_outlives_neovim(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    fake.script(*(text_reply("ok") for _ in range(3)))
    settings = settings_for(fake.base_url)
    extra = {"chat": {"history": 2}}

    first = run_nvim(
        HISTORY_WRITE,
        workspace=workspace,
        tmp_path=tmp_path,
        settings=settings,
        setup_extra=extra,
    )
    second = run_nvim(
        HISTORY_READ,
        workspace=workspace,
        tmp_path=tmp_path,
        settings=settings,
        setup_extra=extra,
    )

    # The newest two are kept, in the user's state directory.
    assert first["file"].startswith(str(tmp_path / "xdg" / "state"))
    assert Path(first["file"]).read_text() == '["two","three"]'
    assert second["seen"] == ["three", "two", "two"]


KEYS = r"""
vim.cmd('RhemaChat')
local chat = require('rhema.chat')
local function mapped(lhs, mode)
  return vim.fn.maparg(lhs, mode or 'n', false, true).buffer == 1
end
local panel = require('rhema').panel_buffer() or require('rhema.runs').blank.buf
T.result = {
  input = { cr = mapped('<CR>'), send = mapped('<Space>s'), up = mapped('<Up>'),
            up_insert = mapped('<Up>', 'i'), q = mapped('q'), stop = mapped('<C-c>') },
  panel = { q = vim.api.nvim_buf_call(panel, function() return mapped('q') end),
            gf = vim.api.nvim_buf_call(panel, function() return mapped('gf') end),
            go = vim.api.nvim_buf_call(panel, function() return mapped('go') end) },
}
"""


def test_the_chat_keys_are_configurable(tmp_path: Path) -> None:
    keys = {"send": "<Space>s", "arrows": False, "close": False, "goto_file": "go"}
    r = run_nvim(
        KEYS,
        workspace=tmp_path,
        tmp_path=tmp_path,
        settings={},
        setup_extra={"cmd": ["rhema-lsp-not-installed"], "chat": {"keys": keys}},
    )

    assert r["input"] == {
        "cr": False,
        "send": True,
        "up": False,
        "up_insert": False,
        "q": False,
        "stop": True,
    }
    assert r["panel"] == {"q": False, "gf": False, "go": True}
