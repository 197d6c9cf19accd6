"""Review mode in real Neovim: the agent's edits open a diff of their changes
(`rhema.review`) instead of applying; the user accepts some hunks and rejects
others with the review's keys; exactly the accepted ones land, and the model hears
which were declined, as the user's choice. A review nobody answers is declined
after `approvalTimeout`. After the turn the quickfix list holds the files it
changed, and `:RhemaDiff` diffs a file against its checkpoint."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.editors.fake_settings import settings_for
from tests.editors.nvim.harness import run_nvim
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

V_OLD = "".join(f"{name} = {value}\n" for value, name in enumerate("abcdefgh", 1))
# Three changes: lines 1, 4 and 7.
V_NEW = V_OLD.replace("a = 1\n", "a = 10\n").replace("d = 4", "d = 40").replace("g = 7", "g = 70")
W_OLD = "".join(f"{name} = {value}\n" for value, name in enumerate("pqrstuvw", 1))
# Two changes: line 2, and lines 6-7.
W_NEW = W_OLD.replace("q = 2", "q = 20").replace("u = 6\nv = 7", "u = 60\nv = 70")


def tool_results(request: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in request["messages"] if m["role"] == "tool"]


REVIEW_TURN = r"""
local review = require('rhema.review')
vim.cmd.edit(T.workspace .. '/v.py')
T.attached()
vim.cmd('RhemaAsk Change v and w')
local r = { seen = {} }
local handled = 0
while handled < 2 do
  local current = T.next_review(handled)
  handled = current.id
  local seen = {
    label = current.label,
    lines = T.lines(current.buf),
    filetype = vim.bo.filetype,
    tabs = #vim.api.nvim_list_tabpages(),
    file_untouched = T.lines(vim.fn.bufnr(T.workspace .. '/v.py')),
  }
  if current.label:find('v.py', 1, true) then
    -- On change 1 already: go to change 2, reject it, apply with <CR>.
    vim.api.nvim_feedkeys(vim.keycode(']]r'), 'x', false)
    seen.before_apply = T.lines(current.buf)
    vim.api.nvim_feedkeys(vim.keycode('<CR>'), 'x', false)
  else
    -- Reject everything, accept change 2 again, and apply with :w.
    vim.api.nvim_feedkeys(vim.keycode('R]]a'), 'x', false)
    seen.before_apply = T.lines(current.buf)
    vim.api.nvim_feedkeys(vim.keycode(':w<CR>'), 'x', false)
  end
  T.wait('the answer', function()
    return review.last ~= nil and review.last.id == current.id
  end)
  seen.answer = review.last.result
  seen.tabs_after = #vim.api.nvim_list_tabpages()
  table.insert(r.seen, seen)
end
T.idle()
r.v = T.lines(vim.fn.bufnr(T.workspace .. '/v.py'))
r.w = T.lines(vim.fn.bufnr(T.workspace .. '/w.py'))
vim.cmd('silent wall')
-- The quickfix list: the turn's files, each at its first changed line.
T.wait('the quickfix list', function()
  return require('rhema.changes').last ~= nil
end)
local qf = vim.fn.getqflist({ title = 1, items = 1, context = 1 })
r.qf_title = qf.title
r.qf_turn = qf.context.rhema.turn
r.qf_session_is_current = qf.context.rhema.session == require('rhema').session()
r.qf = {}
for _, item in ipairs(qf.items) do
  local file = vim.api.nvim_buf_get_name(item.bufnr)
  table.insert(r.qf, { file = file, lnum = item.lnum, text = item.text })
end
-- :RhemaDiff from the quickfix window, on w.py's entry.
vim.cmd('copen')
for index, item in ipairs(r.qf) do
  if item.file:find('w.py', 1, true) then
    vim.api.nvim_win_set_cursor(0, { index, 0 })
  end
end
local function diff_pair(path)
  T.wait('the diff of ' .. path, function()
    local last = require('rhema.changes').last_diff
    return last ~= nil and last.path == path
  end)
  local last = require('rhema.changes').last_diff
  local left = vim.fn.win_findbuf(last.before)[1]
  local right = vim.fn.win_findbuf(last.file)
  local pair = {
    left = T.lines(last.before),
    left_diff = vim.wo[left].diff,
    right_file = vim.api.nvim_buf_get_name(last.file),
    right_diff = false,
    left_is_left = false,
    turn = last.turn,
  }
  for _, win in ipairs(right) do
    if vim.api.nvim_win_get_tabpage(win) == vim.api.nvim_win_get_tabpage(left) then
      pair.right_diff = vim.wo[win].diff
      local left_col = vim.api.nvim_win_get_position(left)[2]
      pair.left_is_left = left_col < vim.api.nvim_win_get_position(win)[2]
    end
  end
  -- The cursor lands in the checkpoint, where `q` closes the diff.
  pair.current_is_before = vim.api.nvim_get_current_buf() == last.before
  return pair
end
vim.cmd('RhemaDiff')
r.diff_w = diff_pair(T.workspace .. '/w.py')
-- :RhemaDiff with a path, in a new tab.
vim.cmd('tabnew')
vim.cmd('RhemaDiff v.py')
r.diff_v = diff_pair(T.workspace .. '/v.py')
-- Closing the checkpoint's window ends the diff in the file's.
local last = require('rhema.changes').last_diff
vim.api.nvim_win_close(vim.fn.win_findbuf(last.before)[1], true)
r.diff_after_close = vim.wo.diff
T.result = r
"""


def test_review_applies_the_accepted_hunks_and_tells_the_model_the_declined_ones(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    (workspace / "v.py").write_text(V_OLD)
    (workspace / "w.py").write_text(W_OLD)
    fake.script(
        tool_reply(
            ("write_file", {"path": "v.py", "content": V_NEW}),
            ("write_file", {"path": "w.py", "content": W_NEW}),
        ),
        text_reply("Changed v and w."),
    )
    settings = settings_for(fake.base_url, review=True)

    r = run_nvim(REVIEW_TURN, workspace=workspace, tmp_path=tmp_path, settings=settings)

    by_file = {("v.py" if "v.py" in seen["label"] else "w.py"): seen for seen in r["seen"]}
    assert sorted(by_file) == ["v.py", "w.py"]
    v, w = by_file["v.py"], by_file["w.py"]
    # The review shows before anything is applied: a diff, in a tab of its own.
    assert v["filetype"] == "diff"
    assert v["tabs"] == 2 and w["tabs"] == 2
    assert r["seen"][-1]["tabs_after"] == 1
    assert "\n".join(v["file_untouched"]) + "\n" == V_OLD
    hunks = [line for line in v["lines"] if line.startswith("@@")]
    assert hunks == [
        "@@ [x] change 1 · line 1 @@",
        "@@ [x] change 2 · line 4 @@",
        "@@ [x] change 3 · line 7 @@",
    ]
    body = v["lines"][v["lines"].index("@@ [x] change 2 · line 4 @@") + 1 :]
    assert body[:6] == [" b = 2", " c = 3", "-d = 4", "+d = 40", " e = 5", " f = 6"]
    assert [line for line in v["before_apply"] if line.startswith("@@")] == [
        "@@ [x] change 1 · line 1 @@",
        "@@ [ ] change 2 · line 4 @@",
        "@@ [x] change 3 · line 7 @@",
    ]
    assert v["answer"] == {"applied": True}
    assert [line for line in w["lines"] if line.startswith("@@")] == [
        "@@ [x] change 1 · line 2 @@",
        "@@ [x] change 2 · lines 6-7 @@",
    ]
    assert [line for line in w["before_apply"] if line.startswith("@@")] == [
        "@@ [ ] change 1 · line 2 @@",
        "@@ [x] change 2 · lines 6-7 @@",
    ]
    assert w["answer"] == {"applied": True}

    # Exactly the accepted changes landed.
    v_expected = V_OLD.replace("a = 1\n", "a = 10\n").replace("g = 7", "g = 70")
    w_expected = W_OLD.replace("u = 6\nv = 7", "u = 60\nv = 70")
    assert "\n".join(r["v"]) + "\n" == v_expected
    assert "\n".join(r["w"]) + "\n" == w_expected
    assert (workspace / "v.py").read_text() == v_expected
    assert (workspace / "w.py").read_text() == w_expected

    # The model heard which changes the user declined, as their choice.
    results = tool_results(fake.requests[1])
    assert len(results) == 2
    v_result = next(text for text in results if "v.py" in text)
    w_result = next(text for text in results if "w.py" in text)
    assert "the user applied 2 of 3 changes to v.py and declined 1" in v_result
    assert "their choice, not an error" in v_result
    assert "change 2 at line 4: d = 4 -> d = 40" in v_result
    assert "change 1" not in v_result and "change 3" not in v_result
    assert "the user applied 1 of 2 changes to w.py and declined 1" in w_result
    assert "change 1 at line 2: q = 2 -> q = 20" in w_result
    assert "change 2" not in w_result

    # The quickfix list: both files, at their first changed line.
    assert r["qf_title"] == "Rhema: turn 1"
    assert r["qf_turn"] == 1 and r["qf_session_is_current"] is True
    assert sorted((Path(item["file"]).name, item["lnum"], item["text"]) for item in r["qf"]) == [
        ("v.py", 1, "modified +2 -2"),
        ("w.py", 6, "modified +2 -2"),
    ]

    # :RhemaDiff: the checkpoint's pre-image on the left, the file on the right.
    for pair, old, name in ((r["diff_w"], W_OLD, "w.py"), (r["diff_v"], V_OLD, "v.py")):
        assert pair["left"] == old.splitlines()
        assert pair["right_file"] == str(workspace / name)
        assert pair["left_diff"] is True and pair["right_diff"] is True
        assert pair["left_is_left"] is True
        assert pair["current_is_before"] is True
        assert pair["turn"] == 1
    assert r["diff_after_close"] is False


UNANSWERED = r"""
local review = require('rhema.review')
vim.cmd.edit(T.workspace .. '/v.py')
T.attached()
vim.cmd('RhemaAsk Change v')
T.wait('a review', function()
  return review.current() ~= nil
end)
local r = { tabs = #vim.api.nvim_list_tabpages(), started = vim.uv.now() }
-- q hides the review, :RhemaReview shows it again.
vim.api.nvim_feedkeys('q', 'x', false)
r.tabs_hidden = #vim.api.nvim_list_tabpages()
r.pending_hidden = #review.pending
vim.cmd('RhemaReview')
r.tabs_shown = #vim.api.nvim_list_tabpages()
r.shown_buf = vim.api.nvim_get_current_buf() == review.current().buf
-- Nobody answers: after approvalTimeout (1 s) the review is declined.
T.wait('the review to time out', function()
  return review.last ~= nil
end, 10000)
r.waited = vim.uv.now() - r.started
r.answer = review.last.result
r.pending = #review.pending
r.tabs_after = #vim.api.nvim_list_tabpages()
T.idle()
r.v = T.lines(vim.fn.bufnr(T.workspace .. '/v.py'))
r.modified = vim.bo[vim.fn.bufnr(T.workspace .. '/v.py')].modified
T.result = r
"""


def test_a_review_nobody_answers_is_declined_after_the_approval_timeout(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    (workspace / "v.py").write_text(V_OLD)
    fake.script(
        tool_reply(("write_file", {"path": "v.py", "content": V_NEW})),
        text_reply("Left v alone."),
    )
    settings = settings_for(fake.base_url, review=True, approvalTimeout=1)

    r = run_nvim(UNANSWERED, workspace=workspace, tmp_path=tmp_path, settings=settings)

    assert r["tabs"] == 2 and r["tabs_after"] == 1 and r["pending"] == 0
    assert r["tabs_hidden"] == 1 and r["pending_hidden"] == 1
    assert r["tabs_shown"] == 2 and r["shown_buf"] is True
    assert 500 <= r["waited"] <= 5000
    assert r["answer"] == {
        "applied": False,
        "failureReason": "no answer in review within 1 s: declined",
    }
    assert "\n".join(r["v"]) + "\n" == V_OLD
    assert r["modified"] is False
    assert (workspace / "v.py").read_text() == V_OLD
    (result,) = tool_results(fake.requests[1])
    assert "the user applied 0 of 3 changes to v.py and declined 3" in result
    assert any("not answered in 1 s: declined" in message["message"] for message in r["messages"])


FILE_OPERATIONS = r"""
local review = require('rhema.review')
vim.cmd.edit(T.workspace .. '/hello.py')
T.attached()
vim.cmd('RhemaAsk Add new.py and remove old.py')
local r = { seen = {} }
local handled = 0
while handled < 2 do
  local current = T.next_review(handled)
  handled = current.id
  local seen = { label = current.label, lines = T.lines(current.buf) }
  seen.tabline = vim.api.nvim_eval_statusline(vim.o.tabline, { use_tabline = true }).str
  if current.label:find('old.py', 1, true) then
    vim.api.nvim_feedkeys(vim.keycode('r<CR>'), 'x', false)
  else
    vim.api.nvim_feedkeys(vim.keycode('<CR>'), 'x', false)
  end
  seen.answer = review.last.result
  table.insert(r.seen, seen)
end
T.idle()
vim.cmd('silent wall')
r.panel = T.panel_lines()
T.result = r
"""


def test_review_covers_creating_and_deleting_files(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    (workspace / "old.py").write_text("x = 1\ny = 2\n")
    fake.script(
        tool_reply(
            ("write_file", {"path": "new.py", "content": "z = 3\n"}),
            ("delete_path", {"path": "old.py"}),
        ),
        text_reply("Done."),
    )
    settings = settings_for(fake.base_url, review=True)

    r = run_nvim(FILE_OPERATIONS, workspace=workspace, tmp_path=tmp_path, settings=settings)

    by_file = {("old.py" if "old.py" in seen["label"] else "new.py"): seen for seen in r["seen"]}
    created, deleted = by_file["new.py"], by_file["old.py"]
    assert created["lines"][-2:] == ["@@ [x] change 1 · create new.py @@", "+z = 3"]
    assert deleted["lines"][-3:] == ["@@ [x] change 1 · delete old.py @@", "-x = 1", "-y = 2"]
    assert created["answer"] == {"applied": True}
    assert deleted["answer"] == {
        "applied": False,
        "failureReason": "the user declined every change in review",
    }
    assert (workspace / "new.py").read_text() == "z = 3\n"
    assert (workspace / "old.py").read_text() == "x = 1\ny = 2\n"
    results = tool_results(fake.requests[1])
    assert "created new.py (1 lines)" in results
    assert any(
        "In review the user declined deleting old.py; that is their choice" in text
        for text in results
    )
    # The review's tab reads in words, not "r//r/2".
    tablines = [seen["tabline"] for seen in r["seen"]]
    assert all(" Rhema review " in line and "r//" not in line for line in tablines), tablines
    # The panel says what became of each: the declined delete reads "rejected", not "done".
    tools = [line for line in r["panel"] if line.startswith("▸ ")]
    assert any("new.py" in line and line.endswith(" · done") for line in tools), tools
    assert any("old.py" in line and line.endswith(" · rejected") for line in tools), tools


CANCELLED = r"""
local review = require('rhema.review')
vim.cmd.edit(T.workspace .. '/v.py')
T.attached()
vim.cmd('RhemaAsk Change v')
T.wait('a review', function()
  return review.current() ~= nil
end)
vim.cmd('RhemaCancel')
local r = {
  answer = review.last and review.last.result,
  pending = #review.pending,
  tabs = #vim.api.nvim_list_tabpages(),
}
T.idle()
r.v = T.lines(vim.fn.bufnr(T.workspace .. '/v.py'))
T.result = r
"""


def test_cancelling_the_run_declines_the_open_review(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    (workspace / "v.py").write_text(V_OLD)
    fake.script(
        tool_reply(("write_file", {"path": "v.py", "content": V_NEW})),
        text_reply("Not reached."),
    )
    settings = settings_for(fake.base_url, review=True)

    r = run_nvim(CANCELLED, workspace=workspace, tmp_path=tmp_path, settings=settings)

    assert r["answer"] == {"applied": False, "failureReason": "the user cancelled the run"}
    assert r["pending"] == 0 and r["tabs"] == 1
    assert "\n".join(r["v"]) + "\n" == V_OLD
    assert (workspace / "v.py").read_text() == V_OLD
