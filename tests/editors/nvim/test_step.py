"""`:RhemaStep` runs one exchange at a time; `:RhemaStatus` shows the provider, the
project rules in use and who answers the language tools."""

from __future__ import annotations

from pathlib import Path

from tests.editors.fake_settings import settings_for
from tests.editors.nvim.harness import run_nvim
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

STEP = r"""
vim.cmd.edit(T.workspace .. '/hello.py')
T.attached()
vim.cmd('RhemaStep What does greet do?')
T.idle()
local r = { first = T.panel_lines(), first_result = require('rhema.runs').last['rhema.step'] }
vim.cmd('RhemaStep')
T.idle()
r.second = T.panel_lines()
r.second_result = require('rhema.runs').last['rhema.step']
vim.cmd('RhemaStatus')
T.wait('the status', function() return require('rhema.runs').last['rhema.status'] ~= nil end)
r.messages = T.messages
-- A file without a filetype is attached too.
vim.cmd.edit(T.workspace .. '/NOTES')
T.attached()
r.notes_filetype = vim.bo.filetype
T.result = r
"""


def test_rhema_step_runs_one_exchange_at_a_time(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    (workspace / "NOTES").write_text("plain notes\n")
    fake.script(
        tool_reply(("read_file", {"path": "hello.py"}), usage=(10, 2)),
        text_reply("It greets by name.", usage=(30, 4)),
    )

    r = run_nvim(STEP, workspace=workspace, tmp_path=tmp_path, settings=settings_for(fake.base_url))

    assert r["first_result"]["stopReason"] == "tool_use"
    assert r["first_result"]["toolCalls"] == [
        {"id": "call_1", "name": "read_file", "isError": False}
    ]
    head = [
        "## You",
        "",
        "What does greet do?",
        "",
        "Context: hello.py",
        "",
        "## Rhema",
        "",
        "▸ read_file hello.py · done",
        "",
        "── paused after a tool call · :RhemaStep continues · 1 step · 10 in / 2 out tokens ──",
    ]
    assert r["first"] == head
    assert r["second_result"]["stopReason"] == "end_turn"
    assert r["second_result"]["session"] == r["first_result"]["session"]
    assert r["second"] == [
        *head,
        "",
        "It greets by name.",
        "",
        "── done · 1 step · 30 in / 4 out tokens ──",
    ]
    status = [m["message"] for m in r["messages"] if "provider" in m["message"]]
    assert len(status) == 1
    lines = status[0].split("\n")
    assert lines[0].startswith("rhema: rhema-lsp ") and lines[0].endswith(" · mode edit")
    assert lines[1].startswith(f"provider: custom · model fake-model · {fake.base_url} · ")
    assert lines[2] == f"folders: {workspace}"
    assert lines[3] == "running: nothing"
    assert "rules: none (no AGENTS.md or CLAUDE.md found)" in lines
    assert any(line.startswith("language: ") for line in lines), lines
    assert r["notes_filetype"] == ""
