--- The panel's turns: how a turn opens, waits, retries, fails and closes.
---
--- Contract: a "waiting for the model" line stands from the start of a turn
--- and of each step until the model's first event. A run of retries is one
--- line, updated on each retry, counting down, and saying "went through" once
--- the stream goes on (removed when the turn fails or stops). An error reads
--- in plain words (rhema.errors): what failed, what to do, the detail; the
--- setup choices follow an error that no provider is set up (unless the panel
--- shows them already); an error a retry cannot help (no provider, no key:
--- `fix_first` in rhema.errors) offers none. A turn that ends while no window
--- shows its panel is notified. The plan (`update_plan`) is one checklist
--- per turn, ticked in place. These are methods of rhema.Panel (mixed in by
--- rhema.panel).
local render = require('rhema.render')

local Panel = {}

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

return Panel
