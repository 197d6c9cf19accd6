"""`:RhemaRewind` in real Neovim: a turn edits three files, the server is killed (a new
Neovim starts a new one), and rewinding the session restores all three exactly, writes
the buffers that were clean, and leaves the file the user changed since alone; a rewind
of the conversation draws the panel again without the turns taken back, and the
quickfix list drops the changes restored."""

from __future__ import annotations

import hashlib
from pathlib import Path

from tests.editors.fake_settings import settings_for
from tests.editors.nvim.harness import run_nvim
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

ORIGINAL = {"a.py": "a = 1\n", "b.py": "b = 2\n", "c.py": "c = 3\n"}
EDITED = {"a.py": "a = 10\n", "b.py": "b = 20\n", "c.py": "c = 30\n"}

TURN = r"""
vim.cmd.edit(T.workspace .. '/hello.py')
T.attached()
vim.cmd('RhemaAsk Change a, b and c')
T.idle()
vim.cmd('silent wall')
local r = { session = require('rhema').session() }
-- The server dies without a goodbye.
for _, pid in ipairs(vim.api.nvim_get_proc_children(vim.fn.getpid())) do
  local cmdline = table.concat(vim.fn.readfile('/proc/' .. pid .. '/cmdline', 'b'), ' ')
  if cmdline:find('rhema_lsp', 1, true) then
    vim.uv.kill(pid, 'sigkill')
    r.killed = true
  end
end
T.result = r
"""

REWIND = r"""
vim.cmd.edit(T.workspace .. '/c.py')
T.attached()
vim.api.nvim_buf_set_lines(0, -1, -1, false, { '# mine' })
vim.ui.select = function(items, opts, on_choice)
  for _, item in ipairs(items) do
    if item.session == SESSION then
      return on_choice(item)
    end
  end
end
vim.cmd('RhemaSessions')
T.wait('the session to open', function()
  return require('rhema.runs').last['rhema.openSession'] ~= nil
end)
vim.cmd('RhemaRewind 1 code')
T.wait('the rewind', function()
  return require('rhema.runs').last['rhema.rewind'] ~= nil
end)
local r = { result = require('rhema.runs').last['rhema.rewind'] }
T.wait('a.py to be written', function()
  return vim.fn.filereadable(T.workspace .. '/a.py') == 1
    and vim.fn.readfile(T.workspace .. '/a.py')[1] == 'a = 1'
end)
r.c_lines = T.lines(0)
r.c_modified = vim.bo.modified
r.a_modified = vim.bo[vim.fn.bufnr(T.workspace .. '/a.py')].modified
T.result = r
"""


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_rhema_rewind_restores_three_files_after_the_server_was_killed(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    for name, text in ORIGINAL.items():
        (workspace / name).write_text(text)
    before = {name: digest(workspace / name) for name in ORIGINAL}
    fake.script(
        tool_reply(
            *[
                ("edit_file", {"path": name, "old_text": ORIGINAL[name], "new_text": new})
                for name, new in EDITED.items()
            ]
        ),
        text_reply("Changed three files."),
    )
    settings = settings_for(fake.base_url)
    first = run_nvim(TURN, workspace=workspace, tmp_path=tmp_path, settings=settings)
    assert first["killed"] is True
    for name, text in EDITED.items():
        assert (workspace / name).read_text() == text

    body = REWIND.replace("SESSION", repr(first["session"]).replace("'", '"'))
    r = run_nvim(body, workspace=workspace, tmp_path=tmp_path, settings=settings)

    result = r["result"]
    uris = {name: (workspace / name).as_uri() for name in ORIGINAL}
    assert sorted(result["restored"]) == sorted([uris["a.py"], uris["b.py"]])
    assert [c["uri"] for c in result["conflicts"]] == [uris["c.py"]]
    assert digest(workspace / "a.py") == before["a.py"]
    assert digest(workspace / "b.py") == before["b.py"]
    assert r["a_modified"] is False  # written back: clean, as before the turn
    assert r["c_lines"] == ["c = 30", "# mine"]  # the user's edit survives
    assert (workspace / "c.py").read_text() == EDITED["c.py"]


REDRAW = r"""
vim.o.columns, vim.o.lines = 120, 40
vim.cmd.edit(T.workspace .. '/hello.py')
T.attached()
vim.cmd('RhemaAsk Change a')
T.idle()
vim.cmd('RhemaAsk Change b')
T.idle()
T.wait('the quickfix list of turn 2', function()
  local context = vim.fn.getqflist({ context = 1 }).context
  return type(context) == 'table' and type(context.rhema) == 'table' and context.rhema.turn == 2
end)
local function qf_files()
  return vim.tbl_map(function(item)
    return vim.fn.fnamemodify(vim.api.nvim_buf_get_name(item.bufnr), ':t')
  end, vim.fn.getqflist())
end
local r = { before = T.panel_lines(), qf_before = qf_files() }
vim.cmd('RhemaRewind 2 both')
T.wait_panel_text('the redrawn panel', 'rewound to before turn 2')
r.after = T.panel_lines()
r.qf_after = qf_files()
r.qf_title = vim.fn.getqflist({ title = 1 }).title
r.a = T.lines(vim.fn.bufnr(T.workspace .. '/a.py'))
r.b = T.lines(vim.fn.bufnr(T.workspace .. '/b.py'))
T.result = r
"""


def test_rewinding_the_conversation_redraws_the_panel_and_the_quickfix_list(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    for name, text in ORIGINAL.items():
        (workspace / name).write_text(text)
    fake.script(
        tool_reply(("edit_file", {"path": "a.py", "old_text": "a = 1", "new_text": "a = 10"})),
        text_reply("Changed a."),
        tool_reply(("edit_file", {"path": "b.py", "old_text": "b = 2", "new_text": "b = 20"})),
        text_reply("Changed b."),
    )

    r = run_nvim(
        REDRAW, workspace=workspace, tmp_path=tmp_path, settings=settings_for(fake.base_url)
    )

    assert "error" not in r, r.get("error")
    assert "Change b" in r["before"] and "Changed b." in r["before"]
    assert r["qf_before"] == ["b.py"]
    # Drawn again from the store: turn 1 stays, turn 2 is gone, and the panel says why.
    assert "Change a" in r["after"] and "Changed a." in r["after"]
    assert "Change b" not in r["after"] and "Changed b." not in r["after"]
    message = (
        "rewound to before turn 2; 1 file(s) restored;"
        " turn 2 and after taken out of the conversation"
    )
    assert r["after"][-1] == "↶ " + message
    assert r["qf_after"] == []  # the restored change is no longer listed
    assert r["qf_title"] == "Rhema: turn 2 (rewound: 1 file(s) restored)"
    assert r["a"] == ["a = 10"]  # turn 1's change stays
    assert r["b"] == ["b = 2"]
