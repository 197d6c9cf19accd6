--- Subagents in the panel: a `task` call's child shown nested and live under
--- the task's line, and cancelled on its own.
---
--- Contract: a `subagent` event (`{id, session, event}`) carries one event of
--- the child turn that the task call `id` started, stored as session
--- `session`. The child is drawn into the task block's output lines (the
--- block's `│` lines, which a task call has no other use for): a header
--- with the child's state, one line per child tool call (`▸ name arg · ✓`),
--- the child's answer as it streams. Nothing else of the panel changes: the
--- parent's own text, tools and turn end stay the parent's. A running child
--- is cancelled alone by `:RhemaCancelTask` (the latest running child of a
--- running turn; `rhema.cancel {session}` with the child's session): its
--- task then ends with a cancelled result and the parent goes on.
local M = {}

--- The running children: { client = client, session = string, block = rhema.Block }.
M.running = {}

local function short(value, width)
  value = tostring(value or ''):gsub('\n.*', ' …')
  return #value > width and (value:sub(1, width - 1) .. '…') or value
end

local function call_text(call)
  local ok, args = pcall(vim.json.decode, call.args ~= '' and call.args or '{}')
  local main = ''
  if ok and type(args) == 'table' then
    for _, key in ipairs({ 'path', 'pattern', 'query', 'command', 'name', 'url' }) do
      if type(args[key]) == 'string' then
        main = ' ' .. short(args[key], 60)
        break
      end
    end
  end
  return ('▸ %s%s · %s'):format(call.name, main, call.mark)
end

--- The task block's output lines for its child's state.
local function draw(child)
  local state = child.ended and child.ended:gsub('_', ' ')
    or 'running · :RhemaCancelTask stops it'
  local lines = { ('↳ subagent %s · %s'):format(child.session, state) }
  for _, id in ipairs(child.order) do
    table.insert(lines, call_text(child.calls[id]))
  end
  local answer = vim.trim(table.concat(child.answer))
  if answer ~= '' then
    vim.list_extend(lines, vim.split(answer, '\n', { plain = true }))
  end
  if child.error then
    table.insert(lines, '✗ ' .. short(child.error, 200))
  end
  return table.concat(lines, '\n')
end

local function forget(child)
  for index, candidate in ipairs(M.running) do
    if candidate == child then
      table.remove(M.running, index)
      return
    end
  end
end

--- One `subagent` event for `panel` (its `on_event` hands it over).
--- @param panel rhema.Panel
--- @param event table the `subagent` event
function M.on_event(panel, event)
  local inner = type(event.event) == 'table' and event.event or {}
  local block = panel:tool(event.id, 'task')
  local child = block.child
  if not child then
    child = { session = event.session, panel = panel, calls = {}, order = {}, answer = {} }
    block.child = child
    table.insert(M.running, child)
  end
  local kind = inner.type
  if kind == 'tool_call_start' then
    child.calls[inner.id] = { name = inner.name or 'tool', args = '', mark = 'running' }
    table.insert(child.order, inner.id)
  elseif kind == 'tool_call_args_delta' then
    local call = child.calls[inner.id]
    if call and #call.args < 4096 then
      call.args = call.args .. (inner.delta or '')
    end
    return
  elseif kind == 'tool_result' then
    local call = child.calls[inner.id]
    if call then
      call.mark = inner.isError and '✗' or '✓'
    end
  elseif kind == 'step_start' then
    child.answer = {}
  elseif kind == 'text_delta' then
    table.insert(child.answer, inner.text or '')
  elseif kind == 'error' then
    child.error = inner.message
  elseif kind == 'turn_end' then
    child.ended = inner.stopReason or 'end_turn'
    forget(child)
  else
    return
  end
  block.output = draw(child)
  block.status = block.status or 'running'
  panel:touch_block(block)
end

--- Cancel the latest running child (`:RhemaCancelTask`).
function M.cancel()
  local runs = require('rhema.runs')
  local child = M.running[#M.running]
  if not child then
    runs.notify('no subagent is running')
    return
  end
  local target
  for _, request in ipairs(runs.running) do
    if request.panel == child.panel or not target then
      target = request.client
    end
  end
  if not target then
    runs.notify('no subagent is running')
    return
  end
  local facts = require('rhema.facts')
  local args = { session = child.session }
  require('rhema.client').execute(target, facts.commands.cancel, args, function(err)
    if err then
      runs.notify('cancel failed: ' .. (err.message or ''), vim.log.levels.ERROR)
    end
  end)
end

--- Define `:RhemaCancelTask`.
function M.define()
  vim.api.nvim_create_user_command('RhemaCancelTask', M.cancel, {
    desc = 'Stop the running subagent (its task ends cancelled, the turn goes on)',
  })
end

return M
