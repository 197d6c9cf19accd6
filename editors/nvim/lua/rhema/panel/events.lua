--- What fills a panel's blocks: the server's `rhema/event`s of a live turn,
--- and a stored conversation (`rhema.openSession`).
---
--- Contract: events carry a `seq`; one at or below the last seen is dropped,
--- and so is every event of a cancelled turn. An event of a turn the plugin
--- did not start (a code action) opens its own answer header. Events that
--- show nothing (`step_start`, `usage`, `context`, `rules`...) leave the
--- waiting line standing; any other ends it and settles a retry in
--- progress. Tool calls are blocks by call id; `update_plan` calls show only
--- as the plan's checklist. The rules files given are one line per turn.
--- A stored conversation replaces every block. These are methods of
--- rhema.Panel (mixed in by rhema.panel).
local render = require('rhema.render')

local Panel = {}

--- Events that show nothing: the waiting line stays through them.
local quiet_events = { step_start = true, step_end = true, usage = true, context = true, rules = true }

local function last(self)
  return self.blocks[#self.blocks]
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

-- a stored conversation ---------------------------------------------------------

--- Replace the panel's content with a stored conversation (`rhema.openSession`).
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

return Panel
