"""Real Neovim with basedpyright attached as a second client: ``rhema/language``
is answered by that client (never by rhema itself), positions and all, and
diagnostics wait for the edited version of the buffer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.editors.fake_settings import settings_for
from tests.editors.nvim.harness import run_nvim
from tests.editors.tool_results import tool_results
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

CORE = 'def greet(name: str) -> str:\n    return "hello " + name\n'
USE = 'from pkg.core import greet\n\nprint(greet("Ann"))\n'

BASEDPYRIGHT = r"""
vim.lsp.config('basedpyright', {
  cmd = { 'basedpyright-langserver', '--stdio' },
  filetypes = { 'python' },
  root_markers = { 'pyrightconfig.json' },
})
vim.lsp.enable('basedpyright')
local core = T.workspace .. '/pkg/core.py'
local use = T.workspace .. '/pkg/use.py'
vim.cmd.edit(core)
vim.cmd.edit(use)
T.attached()
T.wait('basedpyright to attach', function()
  local c = vim.lsp.get_clients({ name = 'basedpyright', bufnr = 0 })[1]
  return c ~= nil and c.initialized == true
end)
local language = require('rhema.language')
--- rhema/language as the server sends it: the handler in its own coroutine.
local function ask(method, params)
  local out
  coroutine.wrap(function()
    local result, err = language.handle(nil, { method = method, params = params }, {})
    out = { result = result, err = err }
  end)()
  T.wait(method, function() return out ~= nil end)
  return out
end
local function doc(path) return { uri = vim.uri_from_fname(path) } end
"""


@pytest.fixture
def python_workspace(workspace: Path) -> Path:
    (workspace / "pyrightconfig.json").write_text("{}\n")
    (workspace / "pkg").mkdir()
    (workspace / "pkg" / "__init__.py").write_text("")
    (workspace / "pkg" / "core.py").write_text(CORE)
    (workspace / "pkg" / "use.py").write_text(USE)
    (workspace / "notes.txt").write_text("greet\n")
    return workspace


def test_the_other_attached_client_answers_the_lsp_methods(
    python_workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    body = (
        BASEDPYRIGHT
        + r"""
local r = {}
-- diagnostics first: once basedpyright has analysed the file, the rest is warm.
local use_version = vim.lsp.util.buf_versions[vim.fn.bufnr(use)]
r.first_problems = ask('diagnostics', { uri = doc(use).uri, version = use_version, waitMs = 20000 })
local function at(path, line, character)
  return { textDocument = doc(path), position = { line = line, character = character } }
end
r.definition = ask('textDocument/definition', at(use, 2, 8))
r.references = ask('textDocument/references', vim.tbl_extend('force', at(core, 0, 5), {
  context = { includeDeclaration = true },
}))
r.outline = ask('textDocument/documentSymbol', { textDocument = doc(core) })
r.symbols = ask('workspace/symbol', { query = 'greet' })
local rename = vim.tbl_extend('force', at(core, 0, 5), { newName = 'welcome' })
r.rename = ask('textDocument/rename', rename)
vim.cmd.edit(T.workspace .. '/notes.txt')
r.plain_text = ask('textDocument/definition', at(T.workspace .. '/notes.txt', 0, 1))
r.core_uri, r.use_uri = doc(core).uri, doc(use).uri
T.result = r
"""
    )
    r = run_nvim(
        body,
        workspace=python_workspace,
        tmp_path=tmp_path,
        settings=settings_for(fake.base_url),
        timeout=120,
    )
    core, use = r["core_uri"], r["use_uri"]
    assert r["first_problems"]["result"]["source"] == "nvim: basedpyright"
    assert r["first_problems"]["result"]["diagnostics"] == []
    definition = r["definition"]["result"]
    assert definition["source"] == "nvim: basedpyright"
    assert [(d.get("uri") or d.get("targetUri")) for d in definition["result"]] == [core]
    references = r["references"]["result"]["result"]
    assert sorted((ref["uri"], ref["range"]["start"]["line"]) for ref in references) == sorted(
        [(core, 0), (use, 0), (use, 2)]
    )
    outline = r["outline"]["result"]["result"]
    assert [symbol["name"] for symbol in outline] == ["greet"]
    assert any(symbol["name"] == "greet" for symbol in r["symbols"]["result"]["result"])
    edit: dict[str, Any] = r["rename"]["result"]["result"]
    changed = set(edit.get("changes", {})) | {
        change["textDocument"]["uri"] for change in edit.get("documentChanges", [])
    }
    assert changed == {core, use}
    assert r["plain_text"] == {"result": None}


def test_diagnostics_wait_for_the_edited_version(
    python_workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    body = (
        BASEDPYRIGHT
        + r"""
local r = {}
local buf = vim.fn.bufnr(use)
ask('diagnostics', { uri = doc(use).uri, version = vim.lsp.util.buf_versions[buf], waitMs = 20000 })
vim.api.nvim_buf_set_lines(buf, 2, 3, false, { 'print(greet(42))' })
local broken = vim.lsp.util.buf_versions[buf]
r.broken = ask('diagnostics', { uri = doc(use).uri, version = broken, waitMs = 20000 })
vim.api.nvim_buf_set_lines(buf, 2, 3, false, { 'print(greet("Bo"))' })
local fixed = vim.lsp.util.buf_versions[buf]
r.fixed = ask('diagnostics', { uri = doc(use).uri, version = fixed, waitMs = 20000 })
r.future = ask('diagnostics', { uri = doc(use).uri, version = broken + 100, waitMs = 300 })
T.result = r
"""
    )
    r = run_nvim(
        body,
        workspace=python_workspace,
        tmp_path=tmp_path,
        settings=settings_for(fake.base_url),
        timeout=120,
    )
    broken = r["broken"]["result"]
    assert broken["complete"] is True
    assert len(broken["diagnostics"]) == 1
    problem = broken["diagnostics"][0]
    assert problem["severity"] == 1 and problem["source"] == "basedpyright"
    assert "Literal[42]" in problem["message"]
    assert problem["range"]["start"] == {"line": 2, "character": 12}
    fixed = r["fixed"]["result"]
    assert fixed["complete"] is True and fixed["diagnostics"] == []
    # A version the buffer never reaches: the wait ends, and says so.
    assert r["future"]["result"]["complete"] is False


def edit(old: str, new: str) -> tuple[str, dict[str, str]]:
    """An ``edit_file`` call on pkg/use.py."""
    return ("edit_file", {"path": "pkg/use.py", "old_text": old, "new_text": new})


TURN = r"""
vim.cmd('RhemaAsk Where is greet used? Then rename it.')
T.idle()
T.result = {
  use = T.lines(vim.fn.bufnr(use)),
  core = T.lines(vim.fn.bufnr(core)),
  answer = require('rhema.runs').last['rhema.turn'],
  panel = T.panel_lines(),
}
"""


def test_the_language_tools_are_answered_by_basedpyright_attached_in_neovim(
    python_workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    fake.script(
        tool_reply(
            ("definition", {"path": "pkg/use.py", "line": 3, "symbol": "greet"}),
            ("references", {"path": "pkg/core.py", "line": 1, "symbol": "greet"}),
            ("symbols", {"query": "", "path": "pkg/core.py"}),
        ),
        tool_reply(edit('greet("Ann")', "greet(4)")),
        tool_reply(edit("greet(4)", 'greet("Bo")')),
        tool_reply(
            (
                "rename_symbol",
                {"path": "pkg/core.py", "line": 1, "symbol": "greet", "new_name": "welcome"},
            )
        ),
        text_reply("Renamed greet to welcome."),
    )
    r = run_nvim(
        BASEDPYRIGHT + TURN,
        workspace=python_workspace,
        tmp_path=tmp_path,
        settings=settings_for(fake.base_url, diagnosticsWait=20),
        timeout=180,
    )
    results = tool_results(fake.requests)
    assert "pkg/core.py:1" in results["definition"], results
    assert "pkg/use.py:1" in results["references"] and "pkg/use.py:3" in results["references"]
    assert "greet" in results["symbols"]
    broken, fixed = results["edit_file"], results["edit_file#2"]
    assert "1 new error: pkg/use.py:3:" in broken and "Literal[4]" in broken, broken
    assert "(basedpyright)" in broken
    assert "1 error gone: pkg/use.py:3:" in fixed and "Literal[4]" in fixed, fixed
    assert "welcome" in results["rename_symbol"], results["rename_symbol"]
    # The panel shows what each edit did to the problems, under its line.
    panel: list[str] = r["panel"]
    at = next(i for i, line in enumerate(panel) if line.startswith("▸ edit_file pkg/use.py"))
    assert panel[at + 1].startswith("  1 new error: pkg/use.py:3: "), panel[at : at + 3]
    assert "(basedpyright)" in panel[at + 1]
    assert any(line.startswith("  1 error gone: pkg/use.py:3: ") for line in panel), panel
    assert r["use"] == ["from pkg.core import welcome", "", 'print(welcome("Bo"))']
    assert r["core"][0] == "def welcome(name: str) -> str:"
