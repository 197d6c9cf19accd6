"""What the chat says between a message and its answer: "waiting for the
model" until the first token, the input's winbar drawn again when a turn ends
or is cancelled, failures in plain words with a retry, and a message when a
turn ends while the chat is hidden."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from tests.editors.fake_settings import settings_for
from tests.editors.nvim.harness import run_nvim
from tests.fakes.model_server import FakeModelServer, Reply, error_reply, text_reply

# Reads the input's winbar off the screen: what the user sees, not what it
# would evaluate to. `:redraw` draws only what is out of date, as Neovim's
# main loop does between keys.
WINBAR = r"""
vim.o.columns, vim.o.lines = 160, 48
local chat = require('rhema.chat')
local runs = require('rhema.runs')
function _G.winbar_on_screen()
  vim.cmd('redraw')
  local pos = vim.fn.win_screenpos(chat.input_win)
  local width = vim.api.nvim_win_get_width(chat.input_win)
  local cells = {}
  for col = pos[2], pos[2] + width - 1 do
    table.insert(cells, vim.fn.screenstring(pos[1], col))
  end
  return vim.trim(table.concat(cells))
end
vim.cmd.edit(T.workspace .. '/hello.py')
T.attached()
vim.cmd('RhemaChat')
local r = {}
"""

CANCEL = (
    WINBAR
    + r"""
vim.api.nvim_buf_set_lines(chat.input, 0, -1, false, { 'Write a lot.' })
vim.cmd.normal(vim.keycode('<CR>'))
T.wait_panel_text('some streamed text', 'word word word')
vim.cmd('redraw!')
r.running = winbar_on_screen()
r.statusline_running = require('rhema').status()
vim.cmd.normal(vim.keycode('<C-c>'))
r.right_after_cancel = winbar_on_screen()
T.screenshot('chat-stopping')
T.wait('the turn to answer', function() return runs.last['rhema.turn'] ~= nil end)
r.after = winbar_on_screen()
T.screenshot('chat-cancelled')
T.wait('the statusline to clear', function() return require('rhema').status() == '' end, 5000)
T.result = r
"""
)


def test_the_winbar_and_statusline_clear_when_a_turn_is_cancelled(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    fake.script(text_reply("word " * 400, chunk=5, delay=0.02))

    r = run_nvim(
        CANCEL, workspace=workspace, tmp_path=tmp_path, settings=settings_for(fake.base_url)
    )

    assert r["running"] == "Rhema · edit · running, <C-c> stops · #buffer: hello.py"
    assert r["statusline_running"].startswith("Rhema")
    # Stopped, not yet answered; then idle again, on the screen.
    assert r["right_after_cancel"] == "Rhema · edit · stopping… · #buffer: hello.py"
    assert r["after"] == "Rhema · edit · <CR> or :w sends · #buffer: hello.py"


FAILURE = (
    WINBAR
    + r"""
vim.api.nvim_buf_set_lines(chat.input, 0, -1, false, { 'Hello?' })
vim.cmd.normal(vim.keycode('<CR>'))
T.wait_panel_text('the turn to start', 'Hello?')
T.idle()
-- The winbar follows the run's end on the next redraw the plugin schedules.
T.wait('the winbar to clear', function() return not winbar_on_screen():find('running', 1, true) end)
r.after = winbar_on_screen()
T.wait('the statusline to clear', function() return require('rhema').status() == '' end, 5000)
local panel = runs.current_panel
r.failed = T.panel_lines()
T.screenshot('chat-error-with-retry')
-- The error's lines and their highlights.
local ns = vim.api.nvim_get_namespaces()['rhema.panel']
r.marks = {}
for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(panel.buf, ns, 0, -1, { details = true })) do
  r.marks[tostring(mark[2] + 1)] = mark[4].hl_group
end
r.markdown_errors = 0
vim.treesitter.get_parser(panel.buf):parse(true)
for row = 0, #r.failed - 1 do
  for col = 0, #r.failed[row + 1] - 1 do
    for _, capture in ipairs(vim.treesitter.get_captures_at_pos(panel.buf, row, col)) do
      if capture.capture:find('error') then
        r.markdown_errors = r.markdown_errors + 1
      end
    end
  end
end
-- R in the panel retries: the same message, once more, in the same session.
vim.api.nvim_set_current_win(require('rhema.window').win)
vim.cmd.normal('R')
T.wait('the retry to start', function() return require('rhema').is_running() end)
T.idle()
r.retried = T.panel_lines()
T.screenshot('chat-retried')
r.result = runs.last['rhema.turn']
r.sessions = #T.command('rhema.sessions')
r.nothing_to_retry = (function()
  vim.cmd('RhemaRetry')
  return T.messages[#T.messages].message
end)()
T.result = r
"""
)


def test_a_failed_turn_reads_plainly_clears_the_winbar_and_retries(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    fake.script(error_reply(401), text_reply("Hello there.", usage=(3, 2)))

    r = run_nvim(
        FAILURE, workspace=workspace, tmp_path=tmp_path, settings=settings_for(fake.base_url)
    )

    # (The winbar of a running turn is the cancel test's: this turn fails at
    # once, often before a redraw could show it running.)
    assert r["after"] == "Rhema · edit · <CR> or :w sends · #buffer: hello.py"
    failed = r["failed"]
    start = failed.index("## Rhema") + 2
    title, fix, detail = failed[start : start + 3]
    # What failed, in plain words, then what to do (and how to retry), then the detail.
    assert title == (
        "✗ The model provider refused the request: the API key is missing or not accepted "
        "(HTTP 401)."
    )
    assert fix.startswith("  What to do: no key was sent: set the provider's key variable")
    assert "RHEMA_KEY_ORIGINS" in fix
    assert fix.endswith(" · R or :RhemaRetry tries again")
    assert detail == "  Detail: custom answered HTTP 401: server_error: fake error 401"
    assert failed[start + 3 :] == ["", "── failed · 0 steps · 0 in / 0 out tokens ──"]
    assert not any("**Error" in line for line in failed)
    assert r["marks"][str(start + 1)] == "RhemaError"
    assert r["marks"][str(start + 2)] == "RhemaErrorFix"
    assert r["marks"][str(start + 3)] == "RhemaErrorDetail"
    assert r["markdown_errors"] == 0
    # The retry asked the same question once more, in the same session, and
    # the model saw it once: the failed attempt left the conversation.
    assert r["retried"][: len(failed)] == failed
    assert r["retried"][len(failed) :] == [
        "",
        "## You",
        "",
        "Hello?",
        "",
        "## Rhema",
        "",
        "Hello there.",
        "",
        "── done · 1 step · 3 in / 2 out tokens ──",
    ]
    assert r["result"]["stopReason"] == "end_turn" and r["result"]["turn"] == 2
    assert r["sessions"] == 1
    users = [m for m in fake.requests[1]["messages"] if m["role"] == "user"]
    assert len(users) == 1 and "Hello?" in str(users[0]["content"])
    assert r["nothing_to_retry"] == "rhema: nothing to retry: the last turn did not fail"


WAITING = (
    WINBAR
    + r"""
vim.api.nvim_buf_set_lines(chat.input, 0, -1, false, { 'Slow one.' })
vim.cmd.normal(vim.keycode('<CR>'))
T.wait_panel_text('the waiting line', 'waiting for the model')
r.waiting = T.panel_lines()
T.screenshot('chat-waiting-for-the-model')
-- Tell the fake model it may answer now.
local file = assert(io.open(os.getenv('RHEMA_TEST_RELEASE'), 'w'))
file:close()
T.idle()
r.answered = T.panel_lines()
T.result = r
"""
)


def test_the_chat_says_it_waits_for_the_model_until_the_first_token(
    workspace: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    release = tmp_path / "release"
    monkeypatch.setenv("RHEMA_TEST_RELEASE", str(release))
    answered = threading.Event()

    def hold_until_released(_body: Any) -> Reply:
        # The first token waits until the editor has shown the waiting line.
        deadline = time.monotonic() + 30
        while not release.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        answered.set()
        return text_reply("At last.", usage=(1, 1))

    with FakeModelServer(wire="openai", responder=hold_until_released) as fake:
        r = run_nvim(
            WAITING, workspace=workspace, tmp_path=tmp_path, settings=settings_for(fake.base_url)
        )

    assert answered.is_set()
    assert r["waiting"][-3:] == ["## Rhema", "", "… waiting for the model"]
    assert "… waiting for the model" not in r["answered"]
    assert r["answered"][-3:] == ["At last.", "", "── done · 1 step · 1 in / 1 out tokens ──"]


HIDDEN = r"""
vim.cmd.edit(T.workspace .. '/hello.py')
T.attached()
vim.cmd('RhemaChat')
local chat = require('rhema.chat')
vim.api.nvim_buf_set_lines(chat.input, 0, -1, false, { 'Tell me about greet, at length.' })
vim.cmd.normal(vim.keycode('<CR>'))
T.wait_panel_text('the answer to start', 'It greets')
-- Close the chat while it answers.
vim.cmd.normal('q')
local r = { open = chat.is_open() }
T.idle()
T.result = r
"""


def test_a_turn_that_ends_while_the_chat_is_hidden_says_so(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    fake.script(text_reply("It greets " * 60, chunk=10, delay=0.02, usage=(4, 5)))

    r = run_nvim(
        HIDDEN, workspace=workspace, tmp_path=tmp_path, settings=settings_for(fake.base_url)
    )

    assert r["open"] is False
    assert {
        "message": (
            'rhema: "Tell me about greet, at length." done · 1 step · 4 in / 5 out tokens'
            " · :RhemaChat shows it"
        ),
        "level": 2,
    } in r["messages"]
