"""Edits land in buffers: unsaved, the user's own changes intact, one undo step each."""

from __future__ import annotations

from pathlib import Path

from tests.editors.fake_settings import settings_for
from tests.editors.nvim.harness import run_nvim
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

ORIGINAL = ["def greet(name):", '    return "hello " + name']
USER_VERSION = ["# greeting helpers", *ORIGINAL, "", 'print(greet("Zoë"))']

EDIT_TURN = r"""
local path = T.workspace .. '/hello.py'
vim.cmd.edit(path)
T.attached()
-- The user's own changes, not saved.
vim.api.nvim_buf_set_lines(0, 0, 0, false, { '# greeting helpers' })
vim.api.nvim_buf_set_lines(0, -1, -1, false, { '', 'print(greet("Zoë"))' })
vim.cmd('RhemaAsk Use an f-string.')
T.idle()
local r = {}
r.edited = T.lines(0)
r.modified = vim.bo.modified
r.panel = T.panel_lines()
r.result = require('rhema.runs').last['rhema.turn']
vim.cmd('undo')
r.after_undo = T.lines(0)
vim.cmd('undo')
r.after_second_undo = T.lines(0)
vim.cmd('redo')
vim.cmd('redo')
r.after_redo = T.lines(0)
vim.cmd('RhemaUndoTurn')
T.wait('the turn to be reverted', function()
  return require('rhema.runs').last['rhema.undoTurn'] ~= nil
end)
T.wait('the revert to reach the buffer', function()
  return T.lines(0)[3] == '    return "hello " + name'
end)
r.after_undo_turn = T.lines(0)
r.undo_turn = require('rhema.runs').last['rhema.undoTurn']
r.modified_at_end = vim.bo.modified
T.result = r
"""


def test_an_edit_turn_changes_the_open_buffer_and_undo_reverts_it(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    fake.script(
        tool_reply(
            (
                "edit_file",
                {
                    "path": "hello.py",
                    "old_text": '    return "hello " + name',
                    "new_text": '    return f"hello {name}"',
                },
            ),
            usage=(10, 5),
        ),
        text_reply("Done: it uses an f-string now.", usage=(20, 7)),
    )
    disk_before = (workspace / "hello.py").read_text()

    r = run_nvim(
        EDIT_TURN, workspace=workspace, tmp_path=tmp_path, settings=settings_for(fake.base_url)
    )

    edited = [
        "# greeting helpers",
        "def greet(name):",
        '    return f"hello {name}"',
        "",
        'print(greet("Zoë"))',
    ]
    assert r["edited"] == edited
    assert r["modified"] is True
    assert (workspace / "hello.py").read_text() == disk_before
    assert r["result"]["stopReason"] == "end_turn"
    assert r["result"]["steps"] == 2
    usage = r["result"]["usage"]
    # (Indented under the edit's line: what it did to the problems, when the
    # server's own basedpyright reported any.)
    assert [line for line in r["panel"] if not line.startswith("  ")] == [
        "## You",
        "",
        "Use an f-string.",
        "",
        "Context: hello.py",
        "",
        "## Rhema",
        "",
        "▸ edit_file hello.py · done",
        "",
        "Done: it uses an f-string now.",
        "",
        f"── done · 2 steps · {usage['input']} in / {usage['output']} out tokens ──",
    ]
    # One undo step for the agent's edit, the user's changes their own step.
    assert r["after_undo"] == USER_VERSION
    assert r["after_second_undo"] == ORIGINAL
    assert r["after_redo"] == edited
    # :RhemaUndoTurn reverts the turn through the server, the user's changes stay.
    assert r["undo_turn"]["conflicts"] == []
    assert r["undo_turn"]["reverted"] == [(workspace / "hello.py").as_uri()]
    assert r["after_undo_turn"] == USER_VERSION
    assert r["modified_at_end"] is True


EDIT_SELECTION = r"""
vim.cmd.edit(T.workspace .. '/names.py')
local c = T.attached()
vim.fn.cursor(1, 1)
-- Select the text between the quotes, charwise.
vim.cmd('normal! 0f"lvf"h\27')
vim.cmd("'<,'>RhemaEdit Make it upper case")
T.idle()
local r = {}
r.lines = T.lines(0)
r.modified = vim.bo.modified
r.result = require('rhema.runs').last['rhema.edit']
r.encoding = c.offset_encoding
vim.cmd('undo')
r.after_undo = T.lines(0)
-- A linewise selection: the whole second line.
vim.cmd('normal! 2GV\27')
vim.cmd("'<,'>RhemaEdit Double it")
T.idle()
r.linewise = T.lines(0)
T.result = r
"""


def test_rhema_edit_rewrites_a_visual_selection_of_non_ascii_text(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    (workspace / "names.py").write_text('greeting = "Zoë 🙂 café" # ünïcode\nother = 1\nlast = 2\n')
    fake.script(text_reply("ZOË 🙂 CAFÉ"), text_reply("other = 2\n"))

    r = run_nvim(
        EDIT_SELECTION, workspace=workspace, tmp_path=tmp_path, settings=settings_for(fake.base_url)
    )

    assert r["lines"] == ['greeting = "ZOË 🙂 CAFÉ" # ünïcode', "other = 1", "last = 2"]
    assert r["modified"] is True
    assert r["result"]["applied"] is True
    assert r["after_undo"] == ['greeting = "Zoë 🙂 café" # ünïcode', "other = 1", "last = 2"]
    assert r["linewise"] == ['greeting = "Zoë 🙂 café" # ünïcode', "other = 2", "last = 2"]
    # The model was shown exactly the selection.
    prompt = str(fake.requests[0]["messages"][-1]["content"])
    assert "Zoë 🙂 café" in prompt
    assert "Make it upper case" in prompt
    assert (workspace / "names.py").read_text().startswith('greeting = "Zoë 🙂 café"')


CODE_ACTION = r"""
vim.cmd.edit(T.workspace .. '/hello.py')
local c = T.attached()
local range = { start = { line = 1, character = 4 }, ['end'] = { line = 1, character = 26 } }
local response = c:request_sync('textDocument/codeAction', {
  textDocument = { uri = vim.uri_from_bufnr(0) },
  range = range,
  context = { diagnostics = {} },
}, 20000)
local r = { titles = {} }
local edit_action
for _, action in ipairs(response.result or {}) do
  table.insert(r.titles, action.title)
  if action.title == 'Rhema: edit selection' then
    edit_action = action
  end
end
vim.ui.input = function(opts, on_confirm)
  r.input_prompt = opts.prompt
  on_confirm('Use an f-string')
end
-- What Neovim does when the user picks the action: a client-side command.
c:exec_cmd(edit_action.command, { bufnr = vim.api.nvim_get_current_buf() })
T.wait('the edit', function() return require('rhema.runs').last['rhema.edit'] ~= nil end)
T.idle()
r.lines = T.lines(0)
T.result = r
"""


def test_the_edit_selection_code_action_prompts_and_edits(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    fake.script(text_reply('return f"hello {name}"'))

    r = run_nvim(
        CODE_ACTION, workspace=workspace, tmp_path=tmp_path, settings=settings_for(fake.base_url)
    )

    assert r["titles"] == ["Rhema: edit selection", "Rhema: explain selection"]
    assert r["input_prompt"] == "Rhema edit: "
    assert r["lines"] == ["def greet(name):", '    return f"hello {name}"']
    assert "Use an f-string" in str(fake.requests[0]["messages"][-1]["content"])


CREATE_FILE = r"""
vim.cmd.edit(T.workspace .. '/hello.py')
T.attached()
vim.cmd('RhemaAsk Add new.py')
T.idle()
local r = { lines = T.lines(vim.fn.bufnr(T.workspace .. '/new.py')) }
vim.cmd('silent wall')
T.result = r
"""


def test_a_created_file_holds_exactly_its_text_and_can_be_written(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    fake.script(
        tool_reply(("write_file", {"path": "new.py", "content": "z = 3\nw = 4\n"})),
        text_reply("Added new.py."),
    )

    r = run_nvim(
        CREATE_FILE, workspace=workspace, tmp_path=tmp_path, settings=settings_for(fake.base_url)
    )

    assert r["lines"] == ["z = 3", "w = 4"]
    assert (workspace / "new.py").read_text() == "z = 3\nw = 4\n"
    (result,) = [str(m["content"]) for m in fake.requests[1]["messages"] if m["role"] == "tool"]
    assert result == "created new.py (2 lines)"
