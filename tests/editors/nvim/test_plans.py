"""Plans in real Neovim against the real server: a turn in plan mode shows
its checklist in the panel and ends saying how to run it, and `:RhemaRunPlan`
runs it in edit mode, the checklist ticking as it goes; the chat's mode
picker (`gm`, `:RhemaMode`) sets the mode of the chat's prompts."""

from __future__ import annotations

from pathlib import Path

from rhema_lsp.tools import TOOLS_BY_MODE
from tests.editors.fake_settings import settings_for
from tests.editors.nvim.harness import run_nvim
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

STEPS = ["Read hello.py", "Make the greeting French"]


def _plan(*statuses: str) -> dict[str, object]:
    return {
        "entries": [
            {"content": step, "status": status}
            for step, status in zip(STEPS, statuses, strict=True)
        ]
    }


PLAN = r"""
vim.o.columns, vim.o.lines = 100, 40
vim.cmd.edit(T.workspace .. '/hello.py')
T.attached()
vim.cmd('RhemaAsk Plan the change.')
T.wait_panel_text('the plan', '[ ] Make the greeting French')
T.idle()
local r = { planned = T.panel_lines() }
T.screenshot('plan-in-the-panel')
vim.cmd('RhemaRunPlan')
T.idle()
r.ran = T.panel_lines()
T.screenshot('plan-run')
r.buffer = T.lines(vim.fn.bufnr(T.workspace .. '/hello.py'))
T.result = r
"""


def test_the_plan_shows_in_the_panel_and_rhema_run_plan_ticks_it(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    fake.script(
        tool_reply(("update_plan", _plan("pending", "pending"))),
        text_reply("Two steps."),
        tool_reply(("update_plan", _plan("in_progress", "pending"))),
        tool_reply(
            ("edit_file", {"path": "hello.py", "old_text": '"hello "', "new_text": '"bonjour "'}),
            ("update_plan", _plan("completed", "completed")),
        ),
        text_reply("Done."),
    )

    r = run_nvim(
        PLAN,
        workspace=workspace,
        tmp_path=tmp_path,
        settings=settings_for(fake.base_url, mode="plan"),
    )

    assert "error" not in r, r.get("error")
    planned = r["planned"]
    at = planned.index("Plan:")
    assert planned[at : at + 3] == [
        "Plan:",
        "  [ ] Read hello.py",
        "  [ ] Make the greeting French",
    ]
    assert "Two steps." in planned
    assert planned[-1] == "Run this plan: :RhemaRunPlan (edit mode) or :RhemaRunPlan agent"
    assert [tool["function"]["name"] for tool in fake.requests[0]["tools"]] == [
        *TOOLS_BY_MODE["plan"],
        "task",
        "update_plan",
    ]
    ran = r["ran"][len(planned) :]
    at = ran.index("Plan:")
    assert ran[at : at + 3] == ["Plan:", "  [x] Read hello.py", "  [x] Make the greeting French"]
    assert ran.count("Plan:") == 1  # one checklist per turn, ticked in place
    assert "Carry out the plan." in ran
    assert r["buffer"] == ["def greet(name):", '    return "bonjour " + name']
    assert "edit_file" in [tool["function"]["name"] for tool in fake.requests[2]["tools"]]


MODE_PICKER = r"""
vim.o.columns, vim.o.lines = 100, 40
vim.cmd.edit(T.workspace .. '/hello.py')
T.attached()
vim.cmd('RhemaChat')
local chat = require('rhema.chat')
local function winbar()
  return vim.api.nvim_eval_statusline(vim.wo[chat.input_win].winbar,
    { winid = chat.input_win, use_winbar = true }).str
end
local r = { before = winbar() }
-- The chat's mode key offers the server's modes; the user picks plan.
vim.ui.select = function(items, opts, on_choice)
  r.offered = vim.tbl_map(opts.format_item, items)
  on_choice('plan', 2)
end
vim.cmd.normal('gm')
r.after = winbar()
vim.cmd('RhemaMode bogus')
r.after_bogus = winbar()
vim.api.nvim_buf_set_lines(chat.input, 0, -1, false, { 'Plan the change.' })
vim.cmd.normal(vim.keycode('<CR>'))
T.wait_panel_text('the plan', '[ ] Make the greeting French')
T.idle()
r.panel = T.panel_lines()
vim.cmd('RhemaMode ask')
r.asked = winbar()
T.result = r
"""


def test_the_chat_s_mode_picker_runs_its_prompts_in_the_picked_mode(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    fake.script(
        tool_reply(("update_plan", _plan("pending", "pending"))),
        text_reply("Two steps."),
    )

    r = run_nvim(
        MODE_PICKER,
        workspace=workspace,
        tmp_path=tmp_path,
        settings=settings_for(fake.base_url),
    )

    assert "error" not in r, r.get("error")
    assert r["before"].startswith("Rhema · edit · ")
    assert r["offered"] == ["ask", "plan", "edit (current)", "agent"]
    assert r["after"].startswith("Rhema · plan · ")
    assert r["after_bogus"] == r["after"]  # not a mode: refused, the pick stands
    offered = [tool["function"]["name"] for tool in fake.requests[0]["tools"]]
    assert "edit_file" not in offered and "update_plan" in offered
    assert r["panel"][-1] == "Run this plan: :RhemaRunPlan (edit mode) or :RhemaRunPlan agent"
    assert r["asked"].startswith("Rhema · ask · ")
