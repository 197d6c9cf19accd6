"""`:RhemaSessions` lists the stored sessions and reopens one; `:RhemaAsk` continues it;
`:RhemaWorktrees` lists a worktree session, reviews its diff and applies it."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.editors.fake_settings import settings_for
from tests.editors.nvim.harness import run_nvim
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

SESSIONS = r"""
-- From a scratch buffer: no file context, the client starts for the cwd.
require('rhema').ask('First question')
T.idle()
local first = require('rhema').session()
vim.cmd('RhemaNew')
vim.cmd('RhemaAsk Second question')
T.idle()
local second = require('rhema').session()
local shown
vim.ui.select = function(items, opts, on_choice)
  shown = vim.tbl_map(opts.format_item, items)
  for _, item in ipairs(items) do
    if item.session == first then
      return on_choice(item)
    end
  end
end
vim.cmd('RhemaSessions')
T.wait('the session to open', function()
  return require('rhema.runs').last['rhema.openSession'] ~= nil
end)
local r = { first = first, second = second, shown = shown }
r.current = require('rhema').session()
r.reopened = T.panel_lines()
r.panel_shown = #vim.fn.win_findbuf(require('rhema').panel_buffer())
vim.cmd('RhemaAsk And then?')
T.idle()
r.continued = T.panel_lines()
r.turn = require('rhema.runs').last['rhema.turn']
T.result = r
"""


def test_rhema_sessions_lists_and_reopens_a_session(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    fake.script(
        text_reply("Answer one.", thinking="First thoughts."),
        text_reply("Answer two."),
        text_reply("Answer three.", usage=(5, 3)),
    )

    r = run_nvim(
        SESSIONS, workspace=workspace, tmp_path=tmp_path, settings=settings_for(fake.base_url)
    )

    assert r["first"] != r["second"]
    # Newest first; two turns may share a timestamp, so the order is not asserted.
    assert sorted(item.split(" · ")[0] for item in r["shown"]) == [
        "First question",
        "Second question",
    ]
    assert all(item.split(" · ")[1] == "1 turn" for item in r["shown"])
    # When, as a person reads it (not ISO 8601 with microseconds).
    assert all(item.split(" · ")[2] in ("just now", "1 min ago") for item in r["shown"])
    assert r["current"] == r["first"]
    assert r["reopened"] == [
        "## You",
        "",
        "First question",
        "",
        "## Rhema",
        "",
        "> First thoughts.",
        "",
        "Answer one.",
    ]
    assert r["panel_shown"] == 1
    assert r["turn"]["session"] == r["first"]
    assert r["turn"]["turn"] == 2
    assert r["continued"] == [
        *r["reopened"],
        "",
        "## You",
        "",
        "And then?",
        "",
        "## Rhema",
        "",
        "Answer three.",
        "",
        "── done · 1 step · 5 in / 3 out tokens ──",
    ]
    # The follow-up carried the first session's history to the model.
    contents = [str(m.get("content")) for m in fake.requests[2]["messages"]]
    assert any("First question" in c for c in contents)
    assert any("Answer one." in c for c in contents)


WORKTREE = r"""
vim.cmd('RhemaAskWorktree say hi')
local trees = require('rhema.worktrees')
T.wait('the worktree turn', function() return trees.last.turn ~= nil end, 60000)
local shown
vim.ui.select = function(items, opts, on_choice)
  shown = vim.tbl_map(opts.format_item, items)
  on_choice(items[1])
end
vim.cmd('RhemaWorktrees')
T.wait('the review tab', function() return trees.last.diff ~= nil and trees.buf ~= nil end)
local r = { turn = trees.last.turn, shown = shown, review = T.lines(trees.buf) }
r.disk_before = vim.fn.readfile(T.workspace .. '/hello.py')
vim.api.nvim_feedkeys('a', 'x', false)
T.wait('the apply', function() return trees.last.apply ~= nil end)
r.apply = trees.last.apply
r.disk_after = vim.fn.readfile(T.workspace .. '/hello.py')
T.result = r
"""


def test_a_worktree_session_is_listed_reviewed_and_applied(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    for args in (["init", "-q"], ["add", "hello.py"], ["commit", "-qm", "init"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=workspace, check=True
        )
    edit = {"path": "hello.py", "old_text": '"hello "', "new_text": '"hi "'}
    fake.script(tool_reply(("edit_file", edit)), text_reply("Done."))

    r = run_nvim(
        WORKTREE,
        workspace=workspace,
        tmp_path=tmp_path,
        settings=settings_for(fake.base_url, diagnosticsWait=0),
    )

    session = r["turn"]["session"]
    assert r["shown"] == [f"say hi · rhema/{session} · done · 1 file changed"]
    assert r["review"][0].startswith(f"Worktree rhema/{session} → ")
    assert '-    return "hello " + name' in r["review"]
    assert '+    return "hi " + name' in r["review"]
    assert r["disk_before"][1] == '    return "hello " + name'  # the checkout untouched
    assert (r["apply"]["applied"], r["apply"]["conflicts"]) == (["hello.py"], [])
    assert r["disk_after"][1] == '    return "hi " + name'
