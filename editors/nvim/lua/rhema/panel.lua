--- The output panel: one scratch markdown buffer per session, built from blocks.
---
--- Contract: a panel is a list of blocks (`you`, `rhema`, `thinking`, `text`,
--- `tool`, `retry`, `error`, `setup`, `notice`, `waiting`, `closing`, `note`,
--- `plan`). What fills them: `rhema/event` notifications and stored
--- conversations (rhema.panel.events), the turn's life (rhema.panel.turns);
--- their methods are the panel's. A change to the blocks marks the first
--- changed block dirty; a timer of `panel.flush_ms` then renders the blocks
--- from that one to the end and writes the lines that differ from the
--- buffer's (from the first that does), so a fast stream costs one buffer
--- write of its new lines per batch, not one per delta, and the window
--- showing it keeps its place. Every block but the first starts with one
--- blank line, except a tool line that follows another tool block. Reasoning
--- lines start with `> `, carry the `RhemaThinking` highlight and fold
--- (foldexpr) into one closed fold once the answer starts (a later block, or
--- the turn's end): while the model reasons it can be watched.
local config = require('rhema.config')
local render = require('rhema.render')

local M = {}

local ns = vim.api.nvim_create_namespace('rhema.panel')

--- @class rhema.Block
--- @field kind string
--- @field text string|nil
--- @field start integer first buffer line (0-based) once flushed
--- @field count integer lines it takes once flushed

--- @class rhema.Panel
--- @field buf integer
--- @field session string|nil
--- @field title string
--- @field blocks rhema.Block[]
--- @field dirty integer|nil first block to rewrite
--- @field open boolean a turn is streaming into the panel
--- @field turn integer|nil the turn number streaming
--- @field dropping boolean events of the cancelled turn are ignored
--- @field dropped_turn integer|nil
--- @field tools table<string, rhema.Block> tool blocks by call id
--- @field levels table<integer, string> fold level per line (1-based)
--- @field last_seq integer
--- @field updates integer buffer writes so far (a test hook: it stops after a cancel)
--- @field usage {input: integer, output: integer}|nil
--- @field waiting rhema.Block|nil the "waiting for the model" line, while shown
--- @field mode string|nil the mode the turn streaming runs in (for the plan hint)
--- @field retrying rhema.Block|nil the retry line of the retries in progress
--- @field quiet boolean|nil never notify its end (`rhema.edit`'s hidden panels)
--- @field retry table|nil what `:RhemaRetry` runs again (set by rhema.runs)
local Panel = {}
Panel.__index = Panel

--- Every panel by buffer number (the foldexpr reads their fold levels).
M.by_buf = {}
local serial = 0

--- Highlight groups, defined `default` so a colorscheme can override them.
function M.define_highlights()
  local set = vim.api.nvim_set_hl
  set(0, 'RhemaThinking', { default = true, link = 'Comment' })
  set(0, 'RhemaTool', { default = true, link = 'Special' })
  set(0, 'RhemaError', { default = true, link = 'DiagnosticError' })
  set(0, 'RhemaErrorFix', { default = true, link = 'Normal' })
  set(0, 'RhemaErrorDetail', { default = true, link = 'Comment' })
  set(0, 'RhemaWarning', { default = true, link = 'DiagnosticWarn' })
  set(0, 'RhemaClosing', { default = true, link = 'NonText' })
  set(0, 'RhemaMention', { default = true, link = 'Special' })
  require('rhema.tables').define_highlights()
end

--- A new, empty panel.
--- @param title string
--- @param session string|nil
--- @return rhema.Panel
function M.new(title, session)
  serial = serial + 1
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.bo[buf].undolevels = -1
  vim.api.nvim_buf_set_name(buf, ('rhema://%d/%s'):format(serial, session or 'new'))
  vim.bo[buf].filetype = 'markdown'
  vim.bo[buf].modifiable = false
  require('rhema.markdown').attach(buf)
  local panel = setmetatable({
    buf = buf,
    session = session,
    title = title,
    blocks = {},
    dirty = nil,
    open = false,
    turn = nil,
    dropping = false,
    dropped_turn = nil,
    tools = {},
    levels = {},
    last_seq = 0,
    updates = 0,
    usage = nil,
  }, Panel)
  M.by_buf[buf] = panel
  require('rhema.chat').panel_keys(buf)
  vim.api.nvim_create_autocmd('BufWipeout', {
    buffer = buf,
    once = true,
    callback = function()
      M.by_buf[buf] = nil
    end,
  })
  return panel
end

--- Name the buffer after the session once it is known.
--- Name the buffer after the session once it is known.
--- @param session string
function Panel:bind(session)
  self.session = session
  local name = vim.api.nvim_buf_get_name(self.buf):gsub('/new$', '/' .. session)
  pcall(vim.api.nvim_buf_set_name, self.buf, name)
end

local function leads_blank(blocks, index)
  if index == 1 then
    return false
  end
  return not (blocks[index].kind == 'tool' and blocks[index - 1].kind == 'tool')
end

--- Write the dirty blocks into the buffer now.
function Panel:flush()
  local first = self.dirty
  if first == nil or not vim.api.nvim_buf_is_valid(self.buf) then
    return
  end
  self.dirty = nil
  local start = first == 1 and 0 or (self.blocks[first - 1].start + self.blocks[first - 1].count)
  local lines = {}
  local marks = {}
  local row = start
  for index = first, #self.blocks do
    local block = self.blocks[index]
    block.start = row
    if block.kind == 'thinking' then
      block.width = self:text_width()
    end
    local body, groups = render.lines(block)
    if leads_blank(self.blocks, index) then
      table.insert(lines, '')
      row = row + 1
    end
    local group = render.highlight_of[block.kind]
    if groups then
      for offset, line_group in ipairs(groups) do
        table.insert(marks, { row + offset - 1, row + offset - 1, line_group, block.kind })
      end
    elseif group and #body > 0 then
      -- Reasoning folds once something follows it: it stays open while it streams.
      local settled = index < #self.blocks or not self.open
      table.insert(marks, { row, row + #body - 1, group, block.kind, settled })
    end
    vim.list_extend(lines, body)
    row = row + #body
    block.count = row - block.start
  end
  local buf = self.buf
  -- The empty chat's hint (rhema.chat) goes with the first block.
  vim.api.nvim_buf_clear_namespace(buf, vim.api.nvim_create_namespace('rhema.chat.hint'), 0, -1)
  -- Only the lines that changed are written: a streaming answer costs its new
  -- lines, the window keeps its place, and the foldexpr runs on those alone.
  local old = vim.api.nvim_buf_get_lines(buf, start, -1, false)
  local same = 0
  while same < #old and same < #lines and old[same + 1] == lines[same + 1] do
    same = same + 1
  end
  -- Fold levels first: writing the lines re-evaluates the foldexpr. A line
  -- whose level changes is written again, so its fold is made anew.
  local old_levels = {}
  for line, level in pairs(self.levels) do
    if line > start then
      old_levels[line] = level
      self.levels[line] = nil
    end
  end
  for _, mark in ipairs(marks) do
    if mark[4] == 'thinking' and mark[5] then
      for line = mark[1], mark[2] do
        self.levels[line + 1] = line == mark[1] and '>1' or '1'
      end
    end
  end
  for line = start + 1, start + same do
    if old_levels[line] ~= self.levels[line] then
      same = line - start - 1
      break
    end
  end
  if same < #old or same < #lines then
    vim.bo[buf].modifiable = true
    vim.api.nvim_buf_set_lines(buf, start + same, -1, false, vim.list_slice(lines, same + 1))
    vim.bo[buf].modifiable = false
  end
  require('rhema.markdown').fences(buf, vim.list_slice(lines, same + 1))
  require('rhema.tables').decorate(buf, start, lines)
  self.updates = self.updates + 1
  vim.api.nvim_buf_clear_namespace(buf, ns, start, -1)
  for _, mark in ipairs(marks) do
    local from, to, group = mark[1], mark[2], mark[3]
    vim.api.nvim_buf_set_extmark(buf, ns, from, 0, {
      end_row = to,
      end_col = #(lines[to - start + 1] or ''),
      hl_group = group,
      hl_eol = true,
      priority = 200,
    })
  end
  self:follow()
end

--- The width text has in the panel's window (the configured size while it is not shown).
--- @return integer
function Panel:text_width()
  local win = vim.fn.win_findbuf(self.buf)[1]
  if win then
    local info = vim.fn.getwininfo(win)[1]
    return vim.api.nvim_win_get_width(win) - (info and info.textoff or 0)
  end
  local position = config.options.panel.position
  return (position == 'left' or position == 'right') and config.options.panel.size or vim.o.columns
end

--- Keep the panel window at the end of the buffer while the turn streams.
function Panel:follow()
  if not config.options.panel.follow then
    return
  end
  for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
    if win ~= vim.api.nvim_get_current_win() then
      local last = vim.api.nvim_buf_line_count(self.buf)
      pcall(vim.api.nvim_win_set_cursor, win, { last, 0 })
    end
  end
end

--- Mark block `index` (and all after it) for rewriting, and start the batch timer.
--- @param index integer
function Panel:touch(index)
  if self.dirty == nil or index < self.dirty then
    self.dirty = index
  end
  if self.timer then
    return
  end
  self.timer = vim.defer_fn(function()
    self.timer = nil
    self:flush()
  end, config.options.panel.flush_ms)
end

--- Append a block and mark it dirty.
--- @param block table
--- @return rhema.Block
function Panel:add(block)
  block.start, block.count = 0, 0
  local before = self.blocks[#self.blocks]
  if before and before.kind == 'thinking' then
    -- The answer starts: the reasoning above it folds (rewritten with its fold).
    self:touch(#self.blocks)
  end
  table.insert(self.blocks, block)
  self:touch(#self.blocks)
  return block
end

local function last(self)
  return self.blocks[#self.blocks]
end

--- Append `text` to the trailing block of `kind`, or start one.
function Panel:append(kind, text)
  local block = last(self)
  if not block or block.kind ~= kind or block.sealed then
    block = self:add({ kind = kind, text = '' })
  end
  block.text = block.text .. text
  self:touch(#self.blocks)
end

--- Remove `block` from the panel.
--- @param block rhema.Block
function Panel:remove(block)
  for index = #self.blocks, 1, -1 do
    if self.blocks[index] == block then
      table.remove(self.blocks, index)
      self:touch(index)
      return
    end
  end
end

function Panel:touch_block(block)
  for index = #self.blocks, 1, -1 do
    if self.blocks[index] == block then
      self:touch(index)
      return
    end
  end
end

--- Whether the panel shows a block of `kind` (the setup choices are shown once).
--- @param kind string
--- @return boolean
function Panel:shows(kind)
  for _, block in ipairs(self.blocks) do
    if block.kind == kind then
      return true
    end
  end
  return false
end

--- Show the panel in the panel window, leaving the cursor where it was.
--- @return integer window
function Panel:show()
  local win = require('rhema.window').show(self.buf)
  self:follow()
  return win
end

-- The methods of the turn's life and of what fills the blocks.
for _, part in ipairs({ 'rhema.panel.turns', 'rhema.panel.events' }) do
  for name, method in pairs(require(part)) do
    Panel[name] = method
  end
end

return M
