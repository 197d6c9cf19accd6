"""`:RhemaSessions` lists the stored sessions and reopens one; `:RhemaAsk` continues it."""

from __future__ import annotations

from pathlib import Path

from tests.editors.fake_settings import settings_for
from tests.editors.nvim.harness import run_nvim
from tests.fakes.model_server import FakeModelServer, text_reply

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
