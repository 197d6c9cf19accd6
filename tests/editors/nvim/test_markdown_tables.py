"""Markdown tables in the panel, in real Neovim: drawn as aligned boxes
(pipes concealed as box-drawing, cells padded to their column, markers not
counted), while the buffer keeps the Markdown; a table streamed in pieces
is drawn again as its rows arrive; a table in a code fence stays as typed."""

from __future__ import annotations

from pathlib import Path

from tests.editors.nvim.harness import run_nvim

TABLES = r"""
vim.o.columns, vim.o.lines = 100, 40
local panel = require('rhema.panel').new('t', 's1')
panel:show()
local seq = 0
local function send(text)
  seq = seq + 1
  local event = { type = 'text_delta', text = text }
  panel:on_event({ session = 's1', turn = 1, seq = seq, event = event })
  panel:flush()
end
-- What the panel's window shows, row by row.
local function screen()
  vim.cmd('redraw!')
  local win = vim.fn.win_findbuf(panel.buf)[1]
  local top, left = unpack(vim.fn.win_screenpos(win))
  local rows = {}
  for row = top, top + vim.api.nvim_win_get_height(win) - 1 do
    local cells = {}
    for col = left, left + vim.api.nvim_win_get_width(win) - 1 do
      table.insert(cells, vim.fn.screenstring(row, col))
    end
    local text = vim.trim(table.concat(cells))
    if text ~= '' then
      table.insert(rows, text)
    end
  end
  return rows
end
local function table_rows()
  return vim.tbl_filter(function(row)
    return row:find('^[┌├│└]') ~= nil
  end, screen())
end
-- The cursor stays out of the panel (its line would show the pipes as typed).
vim.cmd('wincmd p')
send('The sizes:\n\n| Name | Size |\n|:-----|-----:|\n| `a.py` | 1 |\n')
local r = { first = table_rows() }
send('| **bigger_name.py** | 12345 |\n\nDone.\n\n```\n| not | a table |\n|---|---|\n```\n')
r.second = table_rows()
-- Hostile shapes: wide characters, an empty cell, a short row, a lone
-- delimiter, a row cut off mid-stream.
send('\n| 名前 | n |\n|---|---|\n| 日本語 |  |\n| x |\n\nno | table\n---\n\n|---|\n\n| cut | o')
r.hostile = vim.list_slice(table_rows(), 7)
r.screen = screen()
r.buffer = T.lines(panel.buf)
T.screenshot('markdown-tables')
T.result = r
"""


def test_the_panel_draws_markdown_tables_as_aligned_boxes(tmp_path: Path) -> None:
    r = run_nvim(
        TABLES,
        workspace=tmp_path,
        tmp_path=tmp_path,
        settings={},
        setup_extra={"cmd": ["rhema-lsp-not-installed"]},
    )

    # The code span's backticks are concealed: "a.py" is 4 wide, not 6.
    assert r["first"] == [
        "┌──────┬──────┐",
        "│ Name │ Size │",
        "├──────┼──────┤",
        "│ a.py │    1 │",
        "└──────┴──────┘",
    ]
    # A longer row widens its column: the table is drawn again; the bold
    # markers are not counted; the second column stays right-aligned.
    assert r["second"] == [
        "┌────────────────┬───────┐",
        "│ Name           │  Size │",
        "├────────────────┼───────┤",
        "│ a.py           │     1 │",
        "│ bigger_name.py │ 12345 │",
        "└────────────────┴───────┘",
    ]
    # Wide characters count twice; an empty or missing cell is padded; a
    # "table" without its delimiter row, or a delimiter alone, is text.
    assert r["hostile"] == [
        "┌────────┬───┐",
        "│ 名前   │ n │",
        "├────────┼───┤",
        "│ 日本語 │   │",
        "│ x      │   │",
        "└────────┴───┘",
    ]
    assert "no | table" in r["screen"] and "| cut | o" in r["screen"]
    # The buffer keeps the Markdown; the fenced "table" is shown as typed.
    assert "| **bigger_name.py** | 12345 |" in r["buffer"]
    assert "| not | a table |" in r["screen"]
    plain = {"| not | a table |", "|---|---|", "no | table", "|---|", "| cut | o"}
    assert [row for row in r["screen"] if "|" in row and row not in plain] == []
