"""The panel's rendering of every event type, and its batching, without a server."""

from __future__ import annotations

from pathlib import Path

from tests.editors.nvim.harness import run_nvim

EVENTS = r"""
local panel = require('rhema.panel').new('t', 's1')
panel:show()
local seq = 0
local function send(event, turn)
  seq = seq + 1
  panel:on_event({ session = 's1', turn = turn or 1, seq = seq, event = event })
end
panel:begin_turn('Run the tests', nil)
send({ type = 'step_start', iteration = 1 })
for _, piece in ipairs({ 'Tests ', 'first', '.' }) do
  send({ type = 'thinking_delta', text = piece })
end
-- 400 one-character deltas in one go: batched into one write.
local answer = string.rep('ab', 200)
for index = 1, #answer do
  send({ type = 'text_delta', text = answer:sub(index, index) })
end
local r = { updates_while_streaming = panel.updates }
T.wait('the batch to be written', function() return panel.updates > 0 end)
r.updates_after_batch = panel.updates
send({ type = 'tool_call_start', id = 'c1', name = 'run_command' })
send({ type = 'tool_call_args_delta', id = 'c1', delta = '{"command": ' })
send({ type = 'tool_call_args_delta', id = 'c1', delta = '"pytest -q"}' })
send({ type = 'tool_output_delta', id = 'c1', chunk = '3 passed\n' })
send({ type = 'tool_output_delta', id = 'c1', chunk = 'ok\n' })
send({ type = 'tool_result', id = 'c1', name = 'run_command', content = 'ok', isError = false })
send({ type = 'tool_call_start', id = 'c2', name = 'read_file' })
send({ type = 'tool_call_args_delta', id = 'c2', delta = '{"path": "x.py"}' })
send({ type = 'tool_result', id = 'c2', name = 'read_file', content = 'no such file: x.py\nmore',
       isError = true })
-- A replayed notification is ignored.
panel:on_event({ session = 's1', turn = 1, seq = seq, event = { type = 'text_delta', text = 'X' } })
send({ type = 'step_start', iteration = 2 })
send({ type = 'retry_wait', error = 'HTTP 529: overloaded\ndetails', delaySeconds = 1,
       attempt = 1, total = 5 })
panel:flush()
r.retrying = T.lines(panel.buf)[#T.lines(panel.buf)]
T.wait('the countdown', function()
  panel:flush()
  return T.lines(panel.buf)[#T.lines(panel.buf)]:find('in 0s', 1, true) ~= nil
end)
send({ type = 'text_delta', text = 'Second step.' })
send({ type = 'error', message = 'boom' })
send({ type = 'turn_end', stopReason = 'error', steps = 2, usage = { input = 3, output = 4 },
       text = '' })
-- A run the plugin did not start (a code action) gets its own header.
send({ type = 'text_delta', text = 'Explained.' }, 2)
send({ type = 'turn_end', stopReason = 'end_turn', steps = 1, usage = { input = 1, output = 1 },
       text = 'Explained.' }, 2)
r.lines = T.lines(panel.buf)
T.result = r
"""


def test_the_panel_renders_every_event_and_batches_deltas(tmp_path: Path) -> None:
    r = run_nvim(EVENTS, workspace=tmp_path, tmp_path=tmp_path, settings=None)

    assert r["updates_while_streaming"] == 0
    assert r["updates_after_batch"] == 1
    assert r["retrying"] == "⟳ retrying in 1s (attempt 1 of 5): HTTP 529: overloaded"
    assert r["lines"] == [
        "## You",
        "",
        "Run the tests",
        "",
        "## Rhema",
        "",
        "> Tests first.",
        "",
        "ab" * 200,
        "",
        "▸ run_command pytest -q · done",
        "  │ 3 passed",
        "  │ ok",
        "▸ read_file x.py · failed: no such file: x.py",
        "",
        "⟳ retrying in 0s (attempt 1 of 5): HTTP 529: overloaded",
        "",
        "Second step.",
        "",
        "**Error:** boom",
        "",
        "── failed · 2 steps · 3 in / 4 out tokens ──",
        "",
        "## Rhema",
        "",
        "Explained.",
        "",
        "── done · 1 step · 1 in / 1 out tokens ──",
    ]
