--- Jumping from a panel to the files its tool calls touched.
---
--- Contract: `goto_file()` (`gf` in a panel) opens the file of the tool
--- line under the cursor: `path` (where the call goes for one that moves a
--- file: `to` for `rename_path`, from the generated tool facts), relative to the
--- workspace root, at `offset` for `read_file` and at the line that now
--- holds `new_text` for `edit_file`; on any other line the `path` or
--- `path:line` under the cursor. The file opens in the previous window when
--- it shows neither a panel nor the chat's input, else in another such
--- window, else in a new split; the panel keeps its window.
local client = require('rhema.client')
local facts = require('rhema.facts')

local M = {}

local function valid_win(win)
  return win ~= nil and vim.api.nvim_win_is_valid(win)
end

--- The loaded buffer of file `path`, or nil.
local function loaded(path)
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.api.nvim_buf_get_name(buf) == path then
      return buf
    end
  end
  return nil
end

--- The first line of `needle`'s first non-blank line in `path` (1-based), or nil.
local function line_of(path, needle)
  if type(needle) ~= 'string' then
    return nil
  end
  local want = nil
  for _, line in ipairs(vim.split(needle, '\n', { plain = true })) do
    if vim.trim(line) ~= '' then
      want = line
      break
    end
  end
  if not want then
    return nil
  end
  local bufnr = loaded(path)
  local lines
  if bufnr then
    lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  else
    local ok, read = pcall(vim.fn.readfile, path)
    lines = ok and read or {}
  end
  for index, line in ipairs(lines) do
    if line == want then
      return index
    end
  end
  for index, line in ipairs(lines) do
    if line:find(vim.trim(want), 1, true) then
      return index
    end
  end
  return nil
end

--- The workspace root paths of the tools are relative to.
local function root_of()
  local c = client.get(require('rhema.chat').source_buffer())
  if c and c.root_dir then
    return c.root_dir
  end
  return vim.fn.getcwd()
end

local function absolute(path)
  if path:sub(1, 1) == '/' or path:match('^%a:[/\\]') then
    return vim.fn.simplify(path)
  end
  return vim.fn.simplify(vim.fs.joinpath(root_of(), path))
end

--- The file (absolute) and line a tool block points at, or nil.
--- @param block rhema.Block
--- @return string|nil path
--- @return integer|nil line
function M.tool_target(block)
  local ok, args = pcall(vim.json.decode, block.args or '')
  if not ok or type(args) ~= 'table' then
    return nil
  end
  local path = args.path
  local tool = facts.tools[block.name or '']
  if tool and tool.target and type(args[tool.target]) == 'string' then
    path = args[tool.target]
  end
  if type(path) ~= 'string' or path == '' then
    return nil
  end
  path = absolute(path)
  local line = nil
  if type(args.offset) == 'number' and args.offset >= 1 then
    line = math.floor(args.offset)
  elseif block.name == 'edit_file' then
    line = line_of(path, args.new_text)
  end
  return path, line
end

--- The file and line under the cursor in panel `p` (row 0-based): the tool
--- line's file, else a `path` or `path:line` under the cursor.
--- @return string|nil path
--- @return integer|nil line
function M.target_at(p, row)
  p:flush()
  for _, block in ipairs(p.blocks) do
    if block.kind == 'tool' and row >= block.start and row < block.start + block.count then
      local path, line = M.tool_target(block)
      if path then
        return path, line
      end
    end
  end
  local cfile = vim.fn.expand('<cfile>')
  if cfile == '' then
    return nil
  end
  local text = vim.api.nvim_get_current_line()
  local at = text:find(cfile, 1, true)
  local line = at and tonumber(text:sub(at + #cfile):match('^:(%d+)')) or nil
  local plain, suffix = cfile:match('^(.-):(%d+)$')
  if plain then
    cfile, line = plain, line or tonumber(suffix)
  end
  local path = absolute(cfile)
  if vim.uv.fs_stat(path) == nil then
    return nil
  end
  return path, line
end

--- A window to open a file in: the previous one, else one that shows
--- neither the chat nor a panel, else a new split left of the panel.
local function target_window()
  local panels = require('rhema.panel').by_buf
  local function usable(win)
    if not valid_win(win) or vim.api.nvim_win_get_config(win).relative ~= '' then
      return false
    end
    local buf = vim.api.nvim_win_get_buf(win)
    return buf ~= require('rhema.chat').input and panels[buf] == nil
  end
  local previous = vim.fn.win_getid(vim.fn.winnr('#'))
  if usable(previous) then
    return previous
  end
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if usable(win) then
      return win
    end
  end
  vim.cmd('topleft vsplit')
  return vim.api.nvim_get_current_win()
end

--- `gf` in a panel: open the file of the tool line under the cursor (at
--- its line when it has one), in a window other than the chat's.
function M.goto_file()
  local buf = vim.api.nvim_get_current_buf()
  local p = require('rhema.panel').by_buf[buf]
  if not p then
    return
  end
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  local path, line = M.target_at(p, row)
  if not path then
    require('rhema.runs').notify('no file on this line', vim.log.levels.WARN)
    return
  end
  if not loaded(path) and vim.uv.fs_stat(path) == nil then
    local name = require('rhema.runs').display(path)
    require('rhema.runs').notify(name .. ' does not exist (any more)', vim.log.levels.WARN)
    return
  end
  local win = target_window()
  vim.api.nvim_set_current_win(win)
  vim.cmd.edit(vim.fn.fnameescape(path))
  if line then
    local last = vim.api.nvim_buf_line_count(0)
    vim.api.nvim_win_set_cursor(0, { math.min(line, last), 0 })
    vim.cmd('normal! zvzz')
  end
end

return M
