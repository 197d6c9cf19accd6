"""Inline completion in real Neovim 0.11 with the plugin: typing in Insert mode asks
the real server, ghost text (an extmark) shows the scripted model's fill-in-the-middle
answer at the cursor, and the accept key (``<M-l>``) inserts it."""

from __future__ import annotations

from pathlib import Path

from tests.editors.fake_settings import settings_for
from tests.editors.nvim.harness import run_nvim
from tests.fakes.model_server import FakeModelServer, text_reply

GHOST = r"""
vim.cmd.edit(T.workspace .. '/calc.py')
T.attached()
local inline = require('rhema.inline')
local ns = vim.api.nvim_get_namespaces()['rhema.inline']
-- What Insert-mode typing leaves (unsaved), then what each change runs (TextChangedI).
vim.api.nvim_buf_set_lines(0, -1, -1, false, { 'def add(a, b):', '    ret' })
vim.o.virtualedit = 'onemore' -- the cursor after the last character, as in Insert mode
vim.api.nvim_win_set_cursor(0, { 3, 7 })
local r = {}
r.on_change = #vim.api.nvim_get_autocmds({ group = 'rhema.inline', event = 'TextChangedI' })
inline.request()
T.wait('the ghost text', function() return inline.shown(0) ~= nil end)
local marks = vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true })
r.ghost = marks[1][4].virt_text[1][1]
r.at = { marks[1][2], marks[1][3] }
-- The accept key, as Insert mode runs it.
vim.fn.maparg('<M-l>', 'i', false, true).callback()
r.lines = T.lines(0)
r.cursor = vim.api.nvim_win_get_cursor(0)
r.cleared = #vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, {})
T.result = r
"""


def test_ghost_text_shows_the_model_s_middle_and_the_accept_key_inserts_it(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    (workspace / "calc.py").write_text("import math\n")
    fake.responder = lambda body: text_reply("urn a + b")
    r = run_nvim(
        GHOST,
        workspace=workspace,
        tmp_path=tmp_path,
        settings=settings_for(fake.base_url, inlineCompletion=True, completionDebounce=50),
    )
    assert r["ghost"] == "urn a + b"
    assert r["on_change"] == 1
    assert r["at"] == [2, 7]  # right after "    ret"
    assert r["lines"][:3] == ["import math", "def add(a, b):", "    return a + b"]
    assert r["cursor"] == [3, 16]
    assert r["cleared"] == 0
    prompts = [post.body["prompt"] for post in fake.posts if post.path == "/v1/completions"]
    assert any(prompt.endswith("def add(a, b):\n    ret") for prompt in prompts), prompts


NEXT_EDIT = r"""
vim.cmd.edit(T.workspace .. '/area.py')
T.attached()
local next_edit = require('rhema.next_edit')
-- The user's signature change (as Insert mode leaves it), then what leaving it runs.
vim.api.nvim_buf_set_text(0, 0, 13, 0, 13, { ', unit' })
vim.api.nvim_win_set_cursor(0, { 1, 18 })
local r = {}
r.on_leave = #vim.api.nvim_get_autocmds({ group = 'rhema.next_edit', event = 'InsertLeave' })
next_edit.request()
T.wait('the next edit', function() return next_edit.shown(0) ~= nil end)
r.edit = next_edit.shown(0).edit
local key = vim.fn.maparg('<M-;>', 'n', false, true).callback
key() -- jump
r.cursor = vim.api.nvim_win_get_cursor(0)
key() -- apply
r.lines = T.lines(0)
r.shown_after = next_edit.shown(0) ~= nil
T.result = r
"""

ZETA = (
    "<|editable_region_start|>\n"
    'def area(w, h, unit):\n    return w * h\n\n\nprint(area(2, 3, "m"))\n'
    "<|editable_region_end|>"
)


def test_a_next_edit_is_shown_jumped_to_and_applied(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    (workspace / "area.py").write_text("def area(w, h):\n    return w * h\n\n\nprint(area(2, 3))\n")
    fake.script(text_reply(ZETA))
    r = run_nvim(
        NEXT_EDIT,
        workspace=workspace,
        tmp_path=tmp_path,
        settings=settings_for(fake.base_url, inlineCompletion=True),
    )
    assert r["on_leave"] == 1
    assert r["edit"]["text"] == ', "m"'
    assert r["edit"]["range"]["start"] == {"line": 4, "character": 15}
    assert r["cursor"] == [5, 15]
    assert r["lines"][4] == 'print(area(2, 3, "m"))'
    assert not r["shown_after"]
    (request,) = fake.requests
    assert "+def area(w, h, unit):" in str(request["messages"])
