--- The panel window: one split that shows a session's panel buffer.
---
--- Contract: `show(buf)` puts `buf` in the panel window, opening it at
--- `panel.position` (`right`/`left` with `size` columns, `top`/`bottom` with
--- `size` lines) without entering it. The window folds reasoning through
--- `foldexpr`, reading the fold levels the panel computed for its lines.
local config = require('rhema.config')
local render = require('rhema.render')

local M = {}

--- The panel window, once opened.
M.win = nil

--- The fold level of line `lnum` of the panel in the current window (foldexpr).
function M.foldexpr(lnum)
  local panel = require('rhema.panel').by_buf[vim.api.nvim_get_current_buf()]
  if not panel then
    return '0'
  end
  return panel.levels[lnum or vim.v.lnum] or '0'
end

--- What a closed reasoning fold shows (foldtext).
function M.foldtext()
  local count = vim.v.foldend - vim.v.foldstart + 1
  return ('> reasoning (%s)'):format(render.plural(count, 'line'))
end

local function set_window_options(win)
  local wo = vim.wo[win][0]
  wo.wrap = true
  wo.linebreak = true
  wo.breakindent = true
  -- A wrapped list item goes on under its text, not under its dash.
  wo.breakindentopt = 'list:-1'
  wo.number = false
  wo.relativenumber = false
  wo.signcolumn = 'no'
  wo.foldmethod = 'expr'
  wo.foldexpr = "v:lua.require'rhema.window'.foldexpr(v:lnum)"
  wo.foldtext = "v:lua.require'rhema.window'.foldtext()"
  wo.foldlevel = config.options.panel.fold_thinking and 0 or 99
  wo.foldenable = true
  wo.winfixwidth = true
  -- Markdown reads as text: treesitter's markdown queries conceal the
  -- markers (backticks, `**`, link brackets); the line under the cursor shows them.
  wo.conceallevel = 2
  wo.concealcursor = ''
end

--- Show `buf` in the panel window (a split opened when needed), leaving the
--- cursor where it was.
--- @param buf integer
--- @return integer window
function M.show(buf)
  local win = M.win
  if win and vim.api.nvim_win_is_valid(win) then
    vim.api.nvim_win_set_buf(win, buf)
  else
    local options = config.options.panel
    local position = options.position
    local split = ({ top = 'above', bottom = 'below' })[position] or position
    local spec = { split = split, win = -1 }
    if position == 'left' or position == 'right' then
      spec.width = options.size
    else
      spec.height = options.size
    end
    win = vim.api.nvim_open_win(buf, false, spec)
    M.win = win
  end
  set_window_options(win)
  return win
end

return M
