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
panel:flush()
local r = { waiting = T.lines(panel.buf) }
for _, piece in ipairs({ 'Tests ', 'first', '.' }) do
  send({ type = 'thinking_delta', text = piece })
end
-- 400 one-character deltas in one go: batched into one write.
local answer = string.rep('ab', 200)
for index = 1, #answer do
  send({ type = 'text_delta', text = answer:sub(index, index) })
end
r.updates_while_streaming = panel.updates - 1
T.wait('the batch to be written', function() return panel.updates > 1 end)
r.updates_after_batch = panel.updates - 1
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
panel:flush()
r.waiting_again = T.lines(panel.buf)[#T.lines(panel.buf)]
send({ type = 'retry_wait', error = 'custom answered HTTP 503: busy', delaySeconds = 1,
       attempt = 1, total = 5 })
panel:flush()
r.retrying = T.lines(panel.buf)[#T.lines(panel.buf)]
T.wait('the countdown', function()
  panel:flush()
  return T.lines(panel.buf)[#T.lines(panel.buf)]:find('retrying now', 1, true) ~= nil
end)
r.retrying_now = T.lines(panel.buf)[#T.lines(panel.buf)]
-- The next failure updates the same line.
send({ type = 'retry_wait', error = 'HTTP 529: overloaded\ndetails', delaySeconds = 4,
       attempt = 2, total = 5 })
panel:flush()
r.retrying_again = T.lines(panel.buf)
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

    # Until the model's first event, the turn says it waits.
    assert r["waiting"] == [
        "## You",
        "",
        "Run the tests",
        "",
        "## Rhema",
        "",
        "… waiting for the model",
    ]
    assert r["updates_while_streaming"] == 0
    assert r["updates_after_batch"] == 1
    assert r["waiting_again"] == "… waiting for the model"
    # One retry line, in plain words, counting down, updated by the next failure.
    assert r["retrying"] == (
        "⟳ The model provider is failing or overloaded (HTTP 503) · retrying in 1s (attempt 2 of 5)"
    )
    assert r["retrying_now"] == (
        "⟳ The model provider is failing or overloaded (HTTP 503) · retrying now (attempt 2 of 5)…"
    )
    retry_lines = [line for line in r["retrying_again"] if line.startswith("⟳")]
    assert retry_lines == [
        "⟳ The model provider is failing or overloaded (HTTP 529) · retrying in 4s (attempt 3 of 5)"
    ]
    assert "… waiting for the model" not in r["lines"]
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
        "⟳ The model provider is failing or overloaded (HTTP 529) · "
        "retried: attempt 3 of 5 went through",
        "",
        "Second step.",
        "",
        "✗ Boom.",
        "",
        "── failed · 2 steps · 3 in / 4 out tokens ──",
        "",
        "## Rhema",
        "",
        "Explained.",
        "",
        "── done · 1 step · 1 in / 1 out tokens ──",
    ]


MARKDOWN = r"""
vim.o.columns, vim.o.lines = 160, 48
require('rhema.config').apply({ panel = { treesitter = TREESITTER } })
require('rhema.panel').define_highlights()
local panel = require('rhema.panel').new('t', 's1')
panel:show()
panel:begin_turn('Show me', nil)
local answer = table.concat({
  '## A heading',
  '',
  'Set RHEMA_KEY_ORIGINS and call snake_case_name with `inline code`.',
  '',
  '```python',
  'def greet(name):',
  '    return name',
  '```',
  '',
  '```lua',
  'local x = 1',
  '```',
  '',
  '| a | b |',
  '|---|---|',
  '| 1 | 2 |',
}, '\n')
local delta = { type = 'text_delta', text = answer }
panel:on_event({ session = 's1', turn = 1, seq = 1, event = delta })
panel:flush()
local buf = panel.buf
local lines = T.lines(buf)
local function row_of(text)
  for index, line in ipairs(lines) do
    if line == text then
      return index
    end
  end
  error('no line ' .. text)
end
if vim.treesitter.highlighter.active[buf] then
  vim.treesitter.get_parser(buf):parse(true)
end
local function at(text, col)
  local row = row_of(text)
  local captures = {}
  if vim.treesitter.highlighter.active[buf] then
    for _, capture in ipairs(vim.treesitter.get_captures_at_pos(buf, row - 1, col)) do
      table.insert(captures, capture.lang .. ':' .. capture.capture)
    end
  end
  local syntax = vim.api.nvim_buf_call(buf, function()
    return vim.tbl_map(function(id)
      return vim.fn.synIDattr(id, 'name')
    end, vim.fn.synstack(row, col + 1))
  end)
  return { captures = captures, syntax = syntax }
end
T.screenshot(TREESITTER and 'markdown-treesitter' or 'markdown-vim-syntax')
local prose = 'Set RHEMA_KEY_ORIGINS and call snake_case_name with `inline code`.'
-- What the screen shows of the prose line (the cursor is in another window).
vim.cmd('redraw!')
local shown
for row = 1, vim.o.lines do
  local cells = {}
  for col = 1, vim.o.columns do
    table.insert(cells, vim.fn.screenstring(row, col))
  end
  local text = table.concat(cells)
  if text:find('snake_case_name', 1, true) then
    shown = vim.trim(text:sub(text:find('Set RHEMA', 1, true) or 1))
  end
end
T.result = {
  shown_prose = shown,
  treesitter = vim.treesitter.highlighter.active[buf] ~= nil,
  syntax_option = vim.bo[buf].syntax,
  heading = at('## A heading', 3),
  underscore = at(prose, prose:find('_KEY', 1, true)),
  inline_code = at(prose, prose:find('inline', 1, true)),
  python = at('def greet(name):', 0),
  lua = at('local x = 1', 0),
  table_cell = at('| 1 | 2 |', 0),
  input = (function()
    vim.cmd('RhemaChat')
    local input = require('rhema.chat').input
    return { treesitter = vim.treesitter.highlighter.active[input] ~= nil }
  end)(),
}
"""


def test_the_panel_highlights_markdown_and_fenced_code_with_treesitter(tmp_path: Path) -> None:
    r = run_nvim(
        MARKDOWN.replace("TREESITTER", "true"),
        workspace=tmp_path,
        tmp_path=tmp_path,
        settings={},
        setup_extra={"cmd": ["rhema-lsp-not-installed"]},
    )

    # Neovim 0.11 bundles the markdown parsers: the panel and the input use them.
    assert r["treesitter"] is True and r["input"]["treesitter"] is True
    assert r["syntax_option"] == ""
    assert "markdown:markup.heading.2" in r["heading"]["captures"]
    assert "markdown_inline:markup.raw" in r["inline_code"]["captures"]
    # A word's underscores are prose, not errors.
    assert not [c for c in r["underscore"]["captures"] if "error" in c.lower()]
    assert r["underscore"]["syntax"] == []
    # Lua has a bundled parser: injected. Python has none: Vim's syntax file.
    assert any(c.startswith("lua:") for c in r["lua"]["captures"])
    assert "pythonStatement" in r["python"]["syntax"]
    assert "markdown:markup.raw.block" in r["python"]["captures"]
    assert r["table_cell"]["captures"]
    # The Markdown markers are concealed on screen: the code span shows without backticks.
    assert r["shown_prose"] == "Set RHEMA_KEY_ORIGINS and call snake_case_name with inline code."


def test_without_treesitter_vim_syntax_highlights_fences_and_no_underscore_is_an_error(
    tmp_path: Path,
) -> None:
    r = run_nvim(
        MARKDOWN.replace("TREESITTER", "false"),
        workspace=tmp_path,
        tmp_path=tmp_path,
        settings={},
        setup_extra={"cmd": ["rhema-lsp-not-installed"], "panel": {"treesitter": False}},
    )

    assert r["treesitter"] is False and r["input"]["treesitter"] is False
    assert r["syntax_option"] == "markdown"
    assert "markdownH2" in r["heading"]["syntax"]
    assert "markdownError" not in r["underscore"]["syntax"]
    assert "pythonStatement" in r["python"]["syntax"]
    assert any(name.startswith("lua") for name in r["lua"]["syntax"])


FOLDS = r"""
local panel = require('rhema.panel').new('t', 's1')
local win = panel:show()
local seq = 0
local function send(event)
  seq = seq + 1
  panel:on_event({ session = 's1', turn = 1, seq = seq, event = event })
  panel:flush()
end
local function fold_at(row)
  return vim.api.nvim_win_call(win, function()
    return { vim.fn.foldclosed(row), vim.fn.foldclosedend(row) }
  end)
end
panel:begin_turn('Think first', nil)
send({ type = 'step_start', iteration = 1 })
send({ type = 'thinking_delta', text = 'One.\n' })
send({ type = 'thinking_delta', text = 'Two.' })
local r = { lines_thinking = T.lines(panel.buf) }
r.while_thinking = fold_at(7)
T.screenshot('reasoning-while-it-streams')
send({ type = 'text_delta', text = 'The answer.' })
r.lines_answering = T.lines(panel.buf)
r.once_answering = fold_at(7)
T.screenshot('reasoning-folded-once-the-answer-starts')
-- A reasoning line wider than the window is wrapped with its "> " on every line.
vim.api.nvim_win_set_width(win, 40)
panel:begin_turn('Think long', nil)
send({ type = 'step_start', iteration = 1 })
send({ type = 'thinking_delta', text = string.rep('word ', 30) })
r.text_width = panel:text_width()
local lines = T.lines(panel.buf)
r.long = vim.list_slice(lines, #lines - 3)
T.result = r
"""


def test_reasoning_stays_open_while_it_streams_and_folds_when_the_answer_starts(
    tmp_path: Path,
) -> None:
    r = run_nvim(FOLDS, workspace=tmp_path, tmp_path=tmp_path, settings=None)

    assert r["lines_thinking"][6:] == ["> One.", "> Two."]
    assert r["while_thinking"] == [-1, -1]
    assert r["lines_answering"][6:] == ["> One.", "> Two.", "", "The answer."]
    assert r["once_answering"] == [7, 8]
    long = [line for line in r["long"] if line.startswith(">")]
    assert len(long) >= 3, r["long"]
    assert all(line.startswith("> word") for line in long)
    assert all(len(line) <= r["text_width"] for line in long)


WHEN = r"""
-- Central European time, summer and winter (a POSIX rule: no tz database needed).
vim.env.TZ = 'CET-1CEST,M3.5.0,M10.5.0/3'
local render = require('rhema.render')
local now = os.time({ year = 2025, month = 7, day = 10, hour = 15, min = 0, sec = 0 })
local out = {}
for _, iso in ipairs({
  '2025-07-10T12:59:30.123456Z',
  '2025-07-10T12:30:00.000001Z',
  '2025-07-10T08:05:00.000000Z',
  '2025-07-09T20:00:00.000000Z',
  '2025-03-03T13:05:00.000000Z',
  '2024-11-30T23:30:00.000000Z',
  'not a time',
}) do
  table.insert(out, render.when(iso, now))
end
T.result = {
  when = out,
  closing = {
    render.closing_text('end_turn', 2, { input = 5, output = 6 }),
    render.closing_text('pause_turn', nil, nil),
    render.closing_text('some_new_reason', nil, nil),
  },
}
"""


def test_timestamps_and_closing_lines_read_as_words(tmp_path: Path) -> None:
    r = run_nvim(WHEN, workspace=tmp_path, tmp_path=tmp_path, settings=None)

    assert r["when"] == [
        "just now",
        "30 min ago",
        "today 10:05",
        "yesterday 22:00",
        "Mon 3 Mar 14:05",
        "1 Dec 2024",
        "not a time",
    ]
    assert r["closing"] == [
        "── done · 2 steps · 5 in / 6 out tokens ──",
        "── paused: the provider's own tools are still at work · a follow-up continues ──",
        "── some new reason ──",
    ]


TAIL_WRITES = r"""
local panel = require('rhema.panel').new('t', 's1')
panel:show()
panel:begin_turn('Long answer', nil)
panel:flush()
local writes = {}
vim.api.nvim_buf_attach(panel.buf, false, {
  on_lines = function(_, _, _, first, last_old, last_new)
    table.insert(writes, { first = first, old = last_old - first, new = last_new - first,
                           count = vim.api.nvim_buf_line_count(panel.buf) })
  end,
})
local seq = 0
local before = {}
for n = 1, 200 do
  seq = seq + 1
  local delta = { type = 'text_delta', text = ('line %d of a long answer\n'):format(n) }
  panel:on_event({ session = 's1', turn = 1, seq = seq, event = delta })
  if n % 20 == 0 then
    table.insert(before, vim.api.nvim_buf_line_count(panel.buf))
    panel:flush()
  end
end
T.result = { writes = writes, before = before, lines = #T.lines(panel.buf) }
"""


def test_a_streaming_answer_writes_only_its_new_lines(tmp_path: Path) -> None:
    r = run_nvim(TAIL_WRITES, workspace=tmp_path, tmp_path=tmp_path, settings=None)

    writes, before = r["writes"], r["before"]
    # The first batch replaces the waiting line; every later one starts at
    # the last line written before (the answer's unfinished line), never above.
    assert len(writes) == len(before) == 10
    for write, count in zip(writes[1:], before[1:], strict=True):
        assert write["first"] >= count - 1
        assert write["old"] <= 1
    assert r["lines"] == 6 + 200
