"""`:RhemaDiff` and the review in real Neovim, after the edit: right after
an edit, the unsaved buffer diffs against its checkpoint in a tab of its
own; a review opened after Ctrl-S in the chat starts in Normal mode. (The
review's own keys are in test_review.py.)"""

from __future__ import annotations

from pathlib import Path

from tests.editors.fake_settings import settings_for
from tests.editors.nvim.harness import run_nvim
from tests.editors.nvim.test_review import V_OLD
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

UNSAVED_DIFF = r"""
vim.o.columns, vim.o.lines = 160, 48
-- One line of context around a change: the unchanged lines fold.
vim.opt.diffopt:append('context:1')
local path = T.workspace .. '/v.py'
vim.cmd.edit(path)
T.attached()
local file_buf = vim.api.nvim_get_current_buf()
-- The chat takes the right of the screen, as a newcomer has it.
vim.cmd('RhemaChat')
vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'Change d' })
vim.cmd.normal(vim.keycode('<CR>'))
T.idle()
T.wait('the quickfix list', function() return require('rhema.changes').last ~= nil end)
local r = { modified = vim.bo[file_buf].modified, tabs_before = #vim.api.nvim_list_tabpages() }
local function diff_of()
  local last = require('rhema.changes').last_diff
  local left = vim.fn.win_findbuf(last.before)[1]
  local tab = vim.api.nvim_win_get_tabpage(left)
  local right
  for _, win in ipairs(vim.fn.win_findbuf(last.file)) do
    if vim.api.nvim_win_get_tabpage(win) == tab then
      right = win
    end
  end
  return {
    left = T.lines(last.before),
    right = T.lines(last.file),
    right_is_buffer = last.file == file_buf,
    diff = { vim.wo[left].diff, vim.wo[right].diff },
    widths = { vim.api.nvim_win_get_width(left), vim.api.nvim_win_get_width(right) },
    windows = #vim.api.nvim_tabpage_list_wins(tab),
    modified = vim.bo[last.file].modified,
    current_is_before = vim.api.nvim_get_current_win() == left,
    cursor = vim.api.nvim_win_get_cursor(0),
    -- `q` where the cursor lands closes the diff: it never records a macro.
    q_mapped = vim.fn.maparg('q', 'n', false, true).buffer == 1,
    folds = vim.tbl_map(function(win)
      return vim.api.nvim_win_call(win, function()
        return { vim.fn.foldtextresult(1), vim.wo.conceallevel, vim.wo.wrap }
      end)
    end, { left, right }),
  }
end
-- From the file itself, unsaved.
vim.cmd('wincmd t')
r.from_file_win = vim.api.nvim_get_current_buf() == file_buf
require('rhema.changes').last_diff = nil
vim.cmd('RhemaDiff')
T.wait('the diff', function() return require('rhema.changes').last_diff ~= nil end)
r.from_file = diff_of()
T.screenshot('diff-unsaved-buffer')
r.tabs_with_diff = #vim.api.nvim_list_tabpages()
-- q where the cursor landed (the checkpoint) closes the diff's tab.
vim.api.nvim_feedkeys('q', 'x', false)
r.recording = vim.fn.reg_recording()
r.tabs_after_q = #vim.api.nvim_list_tabpages()
r.diff_after_q = vim.wo[vim.fn.win_findbuf(file_buf)[1]].diff
-- From the chat's panel window (whose folds are reasoning), still unsaved.
vim.api.nvim_set_current_win(require('rhema.window').win)
vim.cmd('copen')
require('rhema.changes').last_diff = nil
vim.cmd('RhemaDiff')
T.wait('the diff', function() return require('rhema.changes').last_diff ~= nil end)
r.from_quickfix = diff_of()
-- The panel's and the chat's window options stay theirs: the editor's own are untouched.
r.global = { vim.go.foldtext, vim.go.winbar, vim.go.conceallevel }
r.errors = vim.tbl_filter(function(m) return m.level == vim.log.levels.ERROR end, T.messages)
T.result = r
"""


def test_rhema_diff_right_after_an_edit_diffs_the_unsaved_buffer_in_a_tab_of_its_own(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    (workspace / "v.py").write_text(V_OLD)
    fake.script(
        tool_reply(("edit_file", {"path": "v.py", "old_text": "d = 4", "new_text": "d = 40"})),
        text_reply("Changed d."),
    )

    r = run_nvim(
        UNSAVED_DIFF, workspace=workspace, tmp_path=tmp_path, settings=settings_for(fake.base_url)
    )

    new = V_OLD.replace("d = 4", "d = 40").splitlines()
    assert r["modified"] is True and r["from_file_win"] is True
    for diff in (r["from_file"], r["from_quickfix"]):
        # The checkpoint against the buffer as it is: unsaved, never reloaded.
        assert diff["left"] == V_OLD.splitlines()
        assert diff["right"] == new and diff["right_is_buffer"] is True
        assert diff["modified"] is True
        assert diff["diff"] == [True, True]
        # The cursor on the checkpoint's change (line 4), where `q` closes the diff.
        assert diff["current_is_before"] is True and diff["cursor"] == [4, 0]
        assert diff["q_mapped"] is True
        # The folds say what they hold, not the panel's "> reasoning"; no panel conceal.
        before, after = diff["folds"]
        assert before[0] == "··· 2 unchanged lines · before turn 1: Change d ···"
        assert after[0] == "··· 2 unchanged lines · v.py now ···"
        assert before[1] == after[1] == 0
        # Its own tab, the two panes sharing the 160 columns.
        assert diff["windows"] == 2
        assert min(diff["widths"]) >= 79
    assert r["tabs_before"] == 1 and r["tabs_with_diff"] == 2
    assert r["tabs_after_q"] == 1 and r["diff_after_q"] is False and r["recording"] == ""
    assert r["errors"] == []
    assert r["global"] == ["foldtext()", "", 0]
    assert (workspace / "v.py").read_text() == V_OLD


CTRL_S_REVIEW = r"""
local review = require('rhema.review')
vim.cmd.edit(T.workspace .. '/v.py')
T.attached()
vim.cmd('RhemaChat')
local chat = require('rhema.chat')
vim.api.nvim_buf_set_lines(chat.input, 0, -1, false, { 'Change v' })
local r = {}
-- If nothing ends Insert mode, this does (and the test fails).
vim.defer_fn(function()
  if vim.api.nvim_get_mode().mode == 'i' then
    r.stuck_in_insert = vim.api.nvim_buf_get_name(0)
    vim.api.nvim_feedkeys(vim.keycode('<Esc>'), 'n', false)
  end
end, 20000)
-- Type in the input and send with <C-s>, staying in Insert mode: this
-- returns once Insert mode ends.
vim.api.nvim_feedkeys(vim.keycode('A<C-s>'), 'x!', false)
T.wait('the review', function() return review.current() ~= nil end)
r.mode = vim.api.nvim_get_mode().mode
T.screenshot('review-after-ctrl-s')
r.in_review = vim.api.nvim_get_current_buf() == review.current().buf
-- The review's keys work at once: reject the change, apply.
vim.api.nvim_feedkeys(vim.keycode('r<CR>'), 'x', false)
T.wait('the answer', function() return review.last ~= nil end)
r.answer = review.last.result
T.idle()
r.v = T.lines(vim.fn.bufnr(T.workspace .. '/v.py'))
T.result = r
"""


def test_a_review_opened_after_ctrl_s_in_the_chat_starts_in_normal_mode(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    (workspace / "v.py").write_text(V_OLD)
    fake.script(
        tool_reply(("edit_file", {"path": "v.py", "old_text": "d = 4", "new_text": "d = 40"})),
        text_reply("Left v alone."),
    )
    settings = settings_for(fake.base_url, review=True)

    r = run_nvim(CTRL_S_REVIEW, workspace=workspace, tmp_path=tmp_path, settings=settings)

    assert "stuck_in_insert" not in r
    assert r["mode"] == "n" and r["in_review"] is True
    assert r["answer"] == {
        "applied": False,
        "failureReason": "the user declined every change in review",
    }
    assert "\n".join(r["v"]) + "\n" == V_OLD
