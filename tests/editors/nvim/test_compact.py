"""`:RhemaCompact` summarises the session's older rounds: the panel shows it
and the statusline shows the context fill against the window."""

from __future__ import annotations

from pathlib import Path

from tests.editors.fake_settings import settings_for
from tests.editors.nvim.harness import run_nvim
from tests.fakes.model_server import FakeModelServer, text_reply

COMPACT = r"""
require('rhema').ask('First question')
T.idle()
vim.cmd('RhemaAsk Second question')
T.idle()
local r = { before = require('rhema').status() }
vim.cmd('RhemaCompact')
T.wait('the compaction', function()
  return require('rhema.runs').last['rhema.compact'] ~= nil
end)
T.wait('the panel line', function()
  for _, line in ipairs(T.panel_lines()) do
    if line:find('compacted the conversation', 1, true) then
      return true
    end
  end
  return false
end)
r.result = require('rhema.runs').last['rhema.compact']
r.lines = T.panel_lines()
r.after = require('rhema').status()
T.result = r
"""


def test_rhema_compact_shows_the_compaction_and_the_fill(workspace: Path, tmp_path: Path) -> None:
    with FakeModelServer(wire="openai", context_window=50_000, report_window=True) as fake:
        fake.script(
            text_reply("Answer one. " + "a" * 3000),
            text_reply("Answer two."),
            text_reply("The user asked two questions."),
        )
        r = run_nvim(
            COMPACT, workspace=workspace, tmp_path=tmp_path, settings=settings_for(fake.base_url)
        )

    assert r["result"]["compacted"] is True
    assert r["result"]["after"] < r["result"]["before"]
    note = next(line for line in r["lines"] if "compacted the conversation" in line)
    assert f"{r['result']['before']} → {r['result']['after']} tokens" in note
    # The statusline's fill: the window the local server reported.
    assert r["before"].startswith("Rhema ctx ") and r["before"].endswith("%")
    assert "/50.0k" in r["before"]
    assert r["after"] != r["before"]  # the compaction's own fill replaced it
