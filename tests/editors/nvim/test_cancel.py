"""`:RhemaCancel` mid-stream stops the run: the panel closes and stays as it was."""

from __future__ import annotations

from pathlib import Path

from tests.editors.fake_settings import settings_for
from tests.editors.nvim.harness import run_nvim
from tests.fakes.model_server import FakeModelServer, text_reply

CANCEL = r"""
vim.cmd.edit(T.workspace .. '/hello.py')
T.attached()
vim.cmd('RhemaAsk Write a lot.')
T.wait_panel_text('some streamed text', 'word word word')
vim.cmd('RhemaCancel')
local runs = require('rhema.runs')
local panel = runs.current_panel
local r = { at_cancel = T.lines(panel.buf), updates_at_cancel = panel.updates }
T.wait('the turn to answer', function() return runs.last['rhema.turn'] ~= nil end)
T.wait('rhema.cancel to answer', function() return runs.last['rhema.cancel'] ~= nil end)
r.status = T.command('rhema.status')
r.sessions = T.command('rhema.sessions')
-- Whatever the run still sent has arrived by now: the panel did not change.
vim.wait(300)
panel:flush()
r.after = T.lines(panel.buf)
r.updates_after = panel.updates
r.result = runs.last['rhema.turn']
r.cancel = runs.last['rhema.cancel']
r.running = require('rhema').is_running()
T.result = r
"""


def test_rhema_cancel_mid_stream_stops_the_run(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    words = "word " * 400
    fake.script(text_reply(words, chunk=5, delay=0.02))

    r = run_nvim(
        CANCEL, workspace=workspace, tmp_path=tmp_path, settings=settings_for(fake.base_url)
    )

    at_cancel = r["at_cancel"]
    prompt = ["## You", "", "Write a lot.", "", "Context: hello.py", "", "## Rhema", ""]
    assert at_cancel[:8] == prompt
    streamed = at_cancel[8]
    assert streamed.startswith("word word word") and words.startswith(streamed)
    assert len(streamed) < len(words.rstrip())
    assert at_cancel[9:] == ["", "── cancelled ──"]
    # No more panel updates after the cancel.
    assert r["after"] == at_cancel
    assert r["updates_after"] == r["updates_at_cancel"]
    # The run stopped: the server says cancelled and runs nothing, the stream was closed.
    assert r["result"]["stopReason"] == "cancelled"
    assert r["status"]["running"] == []
    assert [s["running"] for s in r["sessions"]] == [False]
    assert r["sessions"][0]["session"] == r["result"]["session"]
    assert r["running"] is False
    assert fake.disconnects >= 1
