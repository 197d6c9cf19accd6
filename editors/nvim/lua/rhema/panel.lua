--- The output panel: one scratch markdown buffer per session, built from blocks.
---
--- Contract: a panel is a list of blocks (`you`, `rhema`, `thinking`, `text`,
--- `tool`, `retry`, `error`, `setup`, `notice`, `waiting`, `closing`, `note`).
--- `rhema/event` notifications
--- change blocks in memory and mark the first changed block dirty; a timer of
--- `panel.flush_ms` then renders the blocks from that one to the end and
--- writes the lines that differ from the buffer's (from the first that does),
--- so a fast stream costs one buffer write of its new lines per batch, not one
--- per delta, and the window showing it keeps its place. Every
--- block but the first starts with one blank line, except a tool line that
--- follows another tool block. Reasoning lines start with `> `, carry the
--- `RhemaThinking` highlight and fold (foldexpr) into one closed fold once
--- the answer starts (a later block, or the turn's end): while the model
--- reasons it can be watched. A "waiting for the model" line stands from the
--- start of a turn and of each step until the model's first event. A run of
--- retries is one line, updated on each retry, counting down, and saying
--- "went through" once the stream goes on (removed when the turn fails or
--- stops). An error reads in plain words (rhema.errors): what failed, what
--- to do, the detail; the setup choices follow an error that no provider is
--- set up (unless the panel shows them already); an error a retry cannot
--- help (no provider, no key: `fix_first` in rhema.errors) offers none. A turn that ends while no window shows its panel is notified.
local config = require('rhema.config')
local render = require('rhema.render')

local M = {}

local ns = vim.api.nvim_create_namespace('rhema.panel')

--- Events that show nothing: the waiting line stays through them.
local quiet_events = { step_start = true, step_end = true, usage = true, context = true, rules = true }

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

-- turns -----------------------------------------------------------------------

--- Start a turn the user asked for: the prompt, then the answer header.
--- @param prompt string
--- @param context string|nil where the context came from
function Panel:begin_turn(prompt, context)
  self.dropping, self.dropped_turn, self.rules_block = false, nil, nil
  self.open, self.turn, self.plan, self.mode = true, nil, nil, nil
  self:add({ kind = 'you', text = prompt, context = context })
  self:add({ kind = 'rhema' })
  self:wait_for_model()
end

--- Continue the session's last turn (`:RhemaStep` without a prompt).
function Panel:continue_turn()
  self.dropping, self.dropped_turn, self.rules_block = false, nil, nil
  self.open, self.turn, self.plan = true, nil, nil
  self:wait_for_model()
end

--- Show the model's plan (`update_plan`): one checklist per turn, ticked in
--- place as later plans replace it.
--- @param entries table[]|nil `{content, status}` each
function Panel:show_plan(entries)
  local block = self.plan
  if not block then
    block = self:add({ kind = 'plan' })
    self.plan = block
  end
  block.entries = entries or {}
  self:touch_block(block)
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

--- Show "waiting for the model" until its first event arrives.
function Panel:wait_for_model()
  if not self.waiting then
    self.waiting = self:add({ kind = 'waiting' })
  end
end

--- The model answered (or the turn ended): the waiting line goes.
function Panel:stop_waiting()
  if self.waiting then
    self:remove(self.waiting)
    self.waiting = nil
  end
end

--- The retry being waited for is over: it went through (the stream goes on),
--- or it is moot (the turn failed or stopped) and its line goes.
--- @param went_through boolean
function Panel:settle_retry(went_through)
  local block = self.retrying
  if not block then
    return
  end
  self.retrying = nil
  self:stop_countdown()
  if went_through then
    block.settled = true
    self:touch_block(block)
  else
    self:remove(block)
  end
end

--- Close the open turn with a closing line; when no window shows the panel,
--- say so (how it ended, and how to see it).
--- @param stop string
--- @param steps integer|nil
--- @param usage table|nil
function Panel:close_turn(stop, steps, usage)
  if not self.open then
    return
  end
  self:stop_waiting()
  self:settle_retry(false)
  self.open = false
  local text = render.closing_text(stop, steps, usage)
  self:add({ kind = 'closing', text = text })
  if self.plan and self.mode == 'plan' and stop == 'end_turn' then
    self:add({ kind = 'notice', text = require('rhema.modes').plan_hint() })
  end
  self:flush()
  if stop ~= 'cancelled' and not self.quiet and #vim.fn.win_findbuf(self.buf) == 0 then
    self:tell_hidden(stop, text)
  end
end

--- The message of a turn that ended out of sight.
function Panel:tell_hidden(stop, closing)
  local level = vim.log.levels.INFO
  local what = closing:gsub('^── ', ''):gsub(' ──$', '')
  if stop == 'error' then
    level = vim.log.levels.WARN
    for index = #self.blocks, 1, -1 do
      if self.blocks[index].kind == 'error' then
        what = 'failed: ' .. require('rhema.errors').explain(self.blocks[index].text).title
        break
      end
    end
  end
  local title = self.title
  for index = #self.blocks, 1, -1 do
    if self.blocks[index].kind == 'you' then
      title = self.blocks[index].text:match('^[^\n]*')
      break
    end
  end
  if #title > 40 then
    title = title:sub(1, vim.str_utf_start(title, 40) + 39) .. '…'
  end
  vim.notify(('rhema: "%s" %s · :RhemaChat shows it'):format(title, what), level)
end

--- Offer a retry in the turn's last error block: `key` (a panel key), or
--- `true` (:RhemaRetry only).
--- @param key string|true
function Panel:offer_retry(key)
  for index = #self.blocks, 1, -1 do
    local block = self.blocks[index]
    if block.kind == 'error' then
      if require('rhema.errors').explain(block.text or '').fix_first then
        return -- a retry fails the same way until the fix is made: none is offered
      end
      block.retry = key
      self:touch(index)
      self:flush()
      return
    elseif block.kind == 'you' then
      return
    end
  end
end

--- The user cancelled: close the turn now and drop whatever the run still sends.
function Panel:cancel()
  if not self.open then
    return
  end
  self.dropping, self.dropped_turn = true, self.turn
  self:close_turn('cancelled', nil, nil)
end

--- Add a note (a failure the plugin saw, not the server).
function Panel:note(text)
  self:error(text)
end

--- An error block; when the failure is that no provider is set up, the
--- setup choices follow it.
--- @param text string
function Panel:error(text)
  self:add({ kind = 'error', text = text })
  if require('rhema.errors').explain(text).setup and not self:shows('setup') then
    self:add({ kind = 'setup', lines = require('rhema.first_run').lines(nil) })
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

function Panel:stop_countdown()
  if self.countdown then
    self.countdown:stop()
    self.countdown:close()
    self.countdown = nil
  end
end

function Panel:start_countdown(block)
  self:stop_countdown()
  local timer = vim.uv.new_timer()
  self.countdown = timer
  timer:start(
    1000,
    1000,
    vim.schedule_wrap(function()
      if self.countdown ~= timer then
        return
      end
      block.remaining = math.max(0, (block.remaining or 0) - 1)
      for index, candidate in ipairs(self.blocks) do
        if candidate == block then
          self:touch(index)
        end
      end
      if block.remaining == 0 then
        self:stop_countdown()
      end
    end)
  )
end

--- Whether an event of `turn` belongs in this panel.
--- @param turn integer|nil
--- @return boolean
function Panel:accepts(turn)
  if self.dropping then
    if self.dropped_turn == nil then
      self.dropped_turn = turn
    end
    if turn == nil or turn == self.dropped_turn then
      return false
    end
    self.dropping = false
  end
  if not self.open then
    -- A run the plugin did not start (a code action): its own answer header.
    self.open, self.turn = true, turn
    self:add({ kind = 'rhema' })
  elseif self.turn == nil then
    self.turn = turn
  end
  return true
end

--- Apply one `rhema/event` notification.
--- @param params {session: string, turn: integer, seq: integer, event: table}
function Panel:on_event(params)
  if params.seq and params.seq <= self.last_seq then
    return
  end
  self.last_seq = params.seq or self.last_seq
  if not self:accepts(params.turn) then
    return
  end
  local event = params.event or {}
  local kind = event.type
  if not quiet_events[kind] then
    self:stop_waiting()
    if kind ~= 'retry_wait' then
      self:settle_retry(kind ~= 'error' and kind ~= 'turn_end')
    end
  end
  if kind == 'step_start' then
    local block = last(self)
    if block then
      block.sealed = true
    end
    self:wait_for_model()
  elseif kind == 'thinking_delta' then
    self:append('thinking', event.text or '')
  elseif kind == 'text_delta' then
    self:append('text', event.text or '')
  elseif kind == 'tool_call_start' then
    self:tool(event.id, event.name)
  elseif kind == 'tool_call_args_delta' then
    local block = self:tool(event.id, nil)
    block.args = (block.args or '') .. (event.delta or '')
    self:touch_block(block)
  elseif kind == 'tool_output_delta' then
    local block = self:tool(event.id, nil)
    block.output = (block.output or '') .. (event.chunk or '')
    self:touch_block(block)
  elseif kind == 'tool_status' then
    local block = self:tool(event.id, nil)
    block.status = tostring(event.status and event.status.activity or 'running')
    self:touch_block(block)
  elseif kind == 'tool_result' then
    local block = self:tool(event.id, event.name)
    block.status = render.result_status(event.content, event.isError)
    if not event.isError then
      block.notes = render.problem_notes(block.name, event.content)
    end
    self:touch_block(block)
  elseif kind == 'plan' then
    self:show_plan(event.entries)
  elseif kind == 'provider_tool' then
    local detail = tostring(event.detail or ''):gsub('\n.*', '')
    self:add({
      kind = 'note',
      text = ('▸ %s%s · by the provider'):format(
        event.name or 'tool',
        detail ~= '' and (': ' .. detail) or ''
      ),
    })
  elseif kind == 'usage' then
    self.usage = { input = event.input, output = event.output }
  elseif kind == 'compaction' then
    self:add({
      kind = 'note',
      text = ('⇣ compacted the conversation: %s → %s tokens (summary %s)'):format(
        tostring(event.before),
        tostring(event.after),
        tostring(event.summaryTokens)
      ),
    })
  elseif kind == 'context' then
    self.context = { tokens = event.tokens, window = event.window }
    vim.cmd('redrawstatus')
  elseif kind == 'rules' then
    -- One line per turn, naming every rules file given so far.
    local text = 'Rules: ' .. table.concat(event.files or {}, ', ')
    if self.rules_block then
      self.rules_block.text = text
      self:touch_block(self.rules_block)
    else
      self.rules_block = self:add({ kind = 'note', text = text })
    end
  elseif kind == 'retry_wait' then
    -- One line per run of retries, updated: the next failure replaces it.
    local block = self.retrying
    if not block then
      block = self:add({ kind = 'retry' })
      self.retrying = block
    end
    block.text = event.error
    block.remaining = math.ceil(tonumber(event.delaySeconds) or 0)
    block.attempt, block.total = event.attempt, event.total
    self:touch_block(block)
    self:start_countdown(block)
  elseif kind == 'error' then
    self:error(tostring(event.message or ''))
  elseif kind == 'turn_end' then
    self:close_turn(event.stopReason or 'end_turn', event.steps, event.usage)
  elseif kind == 'subagent' then
    require('rhema.subagents').on_event(self, event)
  end
end

--- The context fill of the session ("ctx 12k/200k 6%"), or "" before the first step.
--- @return string
function Panel:fill_text()
  local context = self.context
  if not context or type(context.tokens) ~= 'number' then
    return ''
  end
  local function k(n)
    return n >= 1000 and ('%.1fk'):format(n / 1000) or tostring(n)
  end
  if type(context.window) ~= 'number' or context.window <= 0 then
    return 'ctx ' .. k(context.tokens)
  end
  return ('ctx %s/%s %d%%'):format(
    k(context.tokens),
    k(context.window),
    math.floor(100 * context.tokens / context.window)
  )
end

--- The tool block of call `id` (created when new).
function Panel:tool(id, name)
  local block = self.tools[id]
  if block == nil and name == 'update_plan' then
    -- The plan's checklist shows these calls: their block is never added.
    block = { kind = 'tool', id = id, name = name }
    self.tools[id] = block
  elseif block == nil then
    block = self:add({ kind = 'tool', id = id, name = name })
    self.tools[id] = block
  elseif name and not block.name then
    block.name = name
    self:touch_block(block)
  end
  return block
end

function Panel:touch_block(block)
  for index = #self.blocks, 1, -1 do
    if self.blocks[index] == block then
      self:touch(index)
      return
    end
  end
end

-- a stored conversation ---------------------------------------------------------

--- Replace the panel's content with a stored conversation (`rhema.openSession`).
--- @param messages table[] the engine's messages
function Panel:show_messages(messages)
  self.blocks, self.tools, self.dirty = {}, {}, nil
  self.open, self.turn, self.plan = false, nil, nil
  self:stop_countdown()
  self.waiting, self.retrying = nil, nil
  local answering = false
  for _, message in ipairs(messages or {}) do
    local role = message.role
    local content = message.content or {}
    if role == 'user' then
      local texts = {}
      for _, part in ipairs(content) do
        if part.type == 'text' then
          table.insert(texts, part.text)
        end
      end
      self:add({ kind = 'you', text = table.concat(texts, '\n') })
      answering = false
    elseif role == 'assistant' then
      if not answering then
        self:add({ kind = 'rhema' })
        answering, self.plan = true, nil
      end
      for _, part in ipairs(content) do
        if part.type == 'thinking' then
          self:add({ kind = 'thinking', text = part.text or '' })
        elseif part.type == 'text' then
          self:add({ kind = 'text', text = part.text or '' })
        elseif part.type == 'tool_call' then
          local block = self:tool(part.id, part.name)
          block.args = vim.json.encode(part.args or vim.empty_dict())
          if part.name == 'update_plan' and type(part.args) == 'table' then
            self:show_plan(part.args.entries)
          end
        end
      end
    elseif role == 'tool' then
      for _, part in ipairs(content) do
        if part.type == 'tool_result' then
          local block = self:tool(part.id, nil)
          block.status = render.result_status(part.content, part.is_error)
          if not part.is_error then
            block.notes = render.problem_notes(block.name, part.content)
          end
        end
      end
    end
  end
  self.dirty = 1
  vim.bo[self.buf].modifiable = true
  vim.api.nvim_buf_set_lines(self.buf, 0, -1, false, {})
  vim.bo[self.buf].modifiable = false
  if #self.blocks > 0 then
    self:flush()
  end
end

--- Show the panel in the panel window, leaving the cursor where it was.
--- @return integer window
function Panel:show()
  local win = require('rhema.window').show(self.buf)
  self:follow()
  return win
end

return M
