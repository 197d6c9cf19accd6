"""Real Neovim with basedpyright attached (to hello.py, and by hand to
README.md; on the server's ``PATH`` too): a review turn that edits a file
no language server serves (README.md) waits for no diagnostics: it takes
under 1 s more than the same turn without basedpyright attached, and the
model hears of no missing report (it waited 20 s twice, on the server's own
basedpyright, which was never given the file)."""

from __future__ import annotations

from pathlib import Path

from tests.editors.fake_settings import settings_for
from tests.editors.nvim.harness import run_nvim
from tests.editors.tool_results import tool_results
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

BASEDPYRIGHT = r"""
vim.lsp.config('basedpyright', {
  cmd = { 'basedpyright-langserver', '--stdio' },
  filetypes = { 'python' },
  root_markers = { 'pyrightconfig.json' },
})
vim.lsp.enable('basedpyright')
vim.cmd.edit(T.workspace .. '/hello.py')
T.attached()
T.wait('basedpyright to attach', function()
  local c = vim.lsp.get_clients({ name = 'basedpyright', bufnr = 0 })[1]
  return c ~= nil and c.initialized == true
end)
-- Attached by hand to README.md too: it is still not a server of Markdown.
local pyright = vim.lsp.get_clients({ name = 'basedpyright' })[1]
vim.cmd.edit(T.workspace .. '/README.md')
vim.lsp.buf_attach_client(0, pyright.id)
T.wait('basedpyright on README.md', function()
  return vim.lsp.get_clients({ name = 'basedpyright', bufnr = 0 })[1] ~= nil
end)
vim.cmd.edit(T.workspace .. '/hello.py')
"""

TURN = r"""
if not BASEDPYRIGHT then
  vim.cmd.edit(T.workspace .. '/README.md')
  vim.cmd.edit(T.workspace .. '/hello.py')
  T.attached()
end
local started = vim.uv.hrtime()
vim.cmd('RhemaAsk Fix the readme')
T.next_review(0)
vim.api.nvim_feedkeys(vim.keycode('<CR>'), 'x', false)
T.idle()
T.result = { ms = (vim.uv.hrtime() - started) / 1e6 }
"""


def _turn(
    workspace: Path, fake: FakeModelServer, tmp_path: Path, with_pyright: bool
) -> tuple[float, dict[str, str]]:
    """The turn's wall time (ms) and its tool results."""
    (workspace / "README.md").write_text("# Helo\n")
    before = len(fake.requests)
    fake.script(
        tool_reply(("edit_file", {"path": "README.md", "old_text": "Helo", "new_text": "Hello"})),
        text_reply("Fixed."),
    )
    body = (BASEDPYRIGHT + "BASEDPYRIGHT = true\n" if with_pyright else "") + TURN
    r = run_nvim(
        body,
        workspace=workspace,
        tmp_path=tmp_path,
        settings=settings_for(fake.base_url, review=True, diagnosticsWait=20),
        timeout=120,
    )
    assert "error" not in r, r
    return float(r["ms"]), tool_results(fake.requests[before:])


def test_editing_a_file_basedpyright_does_not_serve_waits_for_nothing(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    (workspace / "pyrightconfig.json").write_text("{}\n")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    without, plain = _turn(workspace, fake, tmp_path / "a", False)
    with_, attached = _turn(workspace, fake, tmp_path / "b", True)
    assert plain == {"edit_file": "edited README.md: 1 replacement"}, plain
    assert attached == plain, attached
    assert with_ - without < 1000, (without, with_)
