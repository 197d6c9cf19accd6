--- Sessions and runs: which panel shows which session, and the requests in flight.
---
--- Contract: every `rhema/event` goes to the panel of its session; an event
--- of a session no panel shows yet goes to the oldest panel waiting for its
--- first answer (a new session), else to a new panel. `ask`, `step` and
--- `edit` send their command through `client:request` and remember the
--- request, so `cancel()` can both `client:cancel_request` it and call
--- `rhema.cancel`; the panel is closed by the plugin itself right away (Neovim
--- drops a `RequestCancelled` answer), and what the run still sends is
--- dropped. `current` is the session `:RhemaAsk` continues. Whenever a run
--- ends or is cancelled, the winbars and statuslines are drawn again. A run
--- that fails can be asked again (rhema.runs.retry). This module also
--- exports the functions of rhema.runs.retry (`retry`), rhema.runs.sessions
--- (the stored sessions) and rhema.runs.status (`:RhemaStatus`).
local client = require('rhema.client')
local panel = require('rhema.panel')
local render_plural = require('rhema.render').plural
local facts = require('rhema.facts')

local M = {}

--- @type table<string, rhema.Panel>
M.panels = {}
--- Panels whose first request started a new session, oldest first.
--- @type rhema.Panel[]
M.pending = {}
--- @type string|nil
M.current = nil
--- @type rhema.Panel|nil
M.current_panel = nil
--- An empty panel the chat shows before a new session's first run streams into it.
--- @type rhema.Panel|nil
M.blank = nil
--- Requests in flight: {client, id, panel, kind}.
M.running = {}
--- The last result of each command, by command name (for statuslines and tests).
M.last = {}

local function notify(message, level)
  vim.notify('rhema: ' .. message, level or vim.log.levels.INFO)
end
M.notify = notify

local function bind(p, session)
  if p.session == session then
    return
  end
  for index, waiting in ipairs(M.pending) do
    if waiting == p then
      table.remove(M.pending, index)
      break
    end
  end
  p:bind(session)
  M.panels[session] = p
end

--- The panel `params.session` goes to.
local function panel_for(session)
  local found = M.panels[session]
  if found then
    return found
  end
  local waiting = M.pending[1]
  if waiting then
    bind(waiting, session)
    return waiting
  end
  local created = panel.new('session', session)
  M.panels[session] = created
  created:show()
  return created
end

--- `rhema/event` from the server.
--- @param params table
function M.on_event(params)
  if type(params) ~= 'table' or type(params.session) ~= 'string' then
    return
  end
  panel_for(params.session):on_event(params)
end

local function forget(request)
  for index, candidate in ipairs(M.running) do
    if candidate == request then
      table.remove(M.running, index)
      break
    end
  end
  -- Winbars and statuslines saying "running" are drawn again now, not at
  -- the next keypress.
  vim.cmd('redrawstatus!')
end

--- Whether any request of the plugin is still running.
function M.is_running()
  return #M.running > 0
end

--- Whether a run goes on that the user did not stop (a cancelled one may
--- still be answering).
function M.is_working()
  for _, request in ipairs(M.running) do
    if not request.cancelled then
      return true
    end
  end
  return false
end

--- `path` relative to the root of a rhema client holding it, else to the cwd.
local function display(path)
  for _, c in ipairs(vim.lsp.get_clients({ name = client.name })) do
    local root = c.root_dir
    if root and vim.startswith(path, root .. '/') then
      return path:sub(#root + 2)
    end
  end
  return vim.fn.fnamemodify(path, ':~:.')
end
M.display = display

--- Start a run of `kind` that `:RhemaCancel` can stop from this call on, and
--- hand it the buffer's client once there is one.
--- @param kind string
--- @param bufnr integer
--- @param start fun(request: table, c: vim.lsp.Client)
local function tracked(kind, bufnr, start)
  local request = { kind = kind }
  table.insert(M.running, request)
  client.with_client(bufnr, function(c, problem)
    if request.cancelled then
      return
    end
    if not c then
      forget(request)
      notify(problem or 'no server', vim.log.levels.ERROR)
      return
    end
    -- What the server runs on, once per client: a run of the demo model says so.
    require('rhema.first_run').status(c, function()
      if not request.cancelled then
        start(request, c)
      end
    end)
  end)
end

--- Stop routing events to a panel still waiting for its session.
local function unpend(p)
  for index, waiting in ipairs(M.pending) do
    if waiting == p then
      table.remove(M.pending, index)
      return
    end
  end
end

--- Run one command on the buffer's client: a missing server or an error is
--- notified, a result remembered in `M.last` and handed to `on_result`.
--- @param bufnr integer
--- @param name string
--- @param label string
--- @param args table
--- @param on_result fun(result: any, c: vim.lsp.Client)
local function command(bufnr, name, label, args, on_result)
  client.with_client(bufnr, function(c, problem)
    if not c then
      notify(problem or 'no server', vim.log.levels.ERROR)
      return
    end
    client.execute(c, name, args, function(err, result)
      if err then
        notify(label .. ': ' .. (err.message or ''), vim.log.levels.ERROR)
        return
      end
      M.last[name] = result
      on_result(result, c)
    end)
  end)
end

M.command = command
--- Bind panel `p` to `session` (rhema.runs.sessions opens stored ones).
M.bind = bind

local function context_label(context)
  local parts = {}
  for _, ref in ipairs(context or {}) do
    local label = display(vim.uri_to_fname(ref.uri))
    if ref.range then
      label = ('%s:%d-%d'):format(label, ref.range.start.line + 1, ref.range['end'].line + 1)
    end
    if ref.diagnostics and #ref.diagnostics > 0 then
      label = ('%s (%s)'):format(label, render_plural(#ref.diagnostics, 'diagnostic'))
    end
    table.insert(parts, label)
  end
  return table.concat(parts, ', ')
end

--- The panel a new run of the current session streams into.
local function panel_for_run(title)
  if M.current and M.panels[M.current] then
    return M.panels[M.current]
  end
  -- The empty panel the chat shows for a new session, else a new one.
  local p = M.blank
  M.blank = nil
  if not (p and vim.api.nvim_buf_is_valid(p.buf)) then
    p = panel.new(title, nil)
  end
  table.insert(M.pending, p)
  M.current_panel = p
  return p
end

--- Run `rhema.turn` (`kind = "turn"`) or `rhema.step` (`kind = "step"`).
--- `args.context` may be a function of the client (the range needs its
--- position encoding). The run counts as running from this call on.
--- @param kind "turn"|"step"
--- @param args {prompt: string|nil, context: table|fun(c: vim.lsp.Client): table|nil, mode: string|nil}
--- @param bufnr integer
function M.run(kind, args, bufnr)
  if kind == 'step' and args.prompt == nil and not M.current then
    notify('no session to continue: give :RhemaStep a prompt', vim.log.levels.WARN)
    return
  end
  tracked(kind, bufnr, function(request, c)
    local context = args.context
    if type(context) == 'function' then
      context = context(c)
    end
    local p = panel_for_run(args.prompt or 'step')
    p.retry = nil
    if args.prompt then
      p:begin_turn(args.prompt, context_label(context))
      p.mode = require('rhema.modes').of_run(args.mode)
    else
      p:continue_turn()
    end
    require('rhema.first_run').annotate(p, c)
    p:show()
    request.again = { kind = kind, prompt = args.prompt, context = context, mode = args.mode }
    local request_args = {
      prompt = args.prompt,
      session = M.current,
      context = context and #context > 0 and context or nil,
      mode = args.mode,
    }
    request.client, request.panel = c, p
    request.id = client.execute(c, facts.commands[kind], request_args, function(err, result)
      forget(request)
      M.finished(request, err, result)
    end)
  end)
end

--- The answer to a run: bind the session, and close the panel if no
--- `turn_end` did.
function M.finished(request, err, result)
  local p = request.panel
  if err then
    -- No session came of it: the panel must not catch another run's events.
    unpend(p)
    if p.open then
      p:note(err.message or vim.inspect(err))
      p:close_turn('error', nil, nil)
      require('rhema.runs.retry').offer(request, nil)
    else
      notify(err.message or vim.inspect(err), vim.log.levels.ERROR)
    end
    return
  end
  M.last[facts.commands[request.kind]] = result
  if type(result) == 'table' and result.session then
    bind(p, result.session)
    M.current = result.session
    M.current_panel = p
    if p.open then
      p:close_turn(result.stopReason or 'end_turn', result.steps, result.usage)
    end
    if result.stopReason == 'error' then
      require('rhema.runs.retry').offer(request, result)
    end
    if result.turn and request.client then
      require('rhema.changes').after_turn(request.client, result.session, result.turn)
    end
  end
end

--- Rewrite `range` of `uri` through `rhema.edit`.
--- @param args {uri: string, range: table, instruction: string}
--- @param bufnr integer
--- @param done fun(result: table|nil)|nil
function M.edit(args, bufnr, done)
  tracked('edit', bufnr, function(request, c)
    if type(args.range) == 'function' then
      args.range = args.range(c)
    end
    -- The edit's own session streams into a hidden panel, never the current one.
    local p = panel.new('Edit: ' .. args.instruction, nil)
    p.quiet = true
    table.insert(M.pending, p)
    p:begin_turn('Edit: ' .. args.instruction, context_label({ args }))
    request.client, request.panel = c, p
    request.id = client.execute(c, facts.commands.edit, args, function(err, result)
      forget(request)
      if err then
        unpend(p)
        notify('edit failed: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
        return
      end
      M.last[facts.commands.edit] = result
      if result.session then
        bind(p, result.session)
      end
      p:close_turn(result.stopReason or 'end_turn', nil, result.usage)
      if result.applied then
        notify('edit applied')
      else
        notify(
          ('edit not applied (%s)'):format(result.stopReason or 'rejected'),
          vim.log.levels.WARN
        )
      end
      if done then
        done(result)
      end
    end, bufnr)
  end)
end

--- Stop the running turns of the current session (or all runs of the plugin).
function M.cancel()
  require('rhema.review').decline_all('the user cancelled the run')
  if #M.running == 0 then
    notify('nothing is running')
    return
  end
  local sessions = {}
  for _, request in ipairs(vim.list_slice(M.running)) do
    if request.panel == nil then
      -- Still waiting for the server to start: it never will be sent.
      request.cancelled = true
      forget(request)
    else
      request.cancelled = true
      request.panel:cancel()
      if request.id then
        request.client:cancel_request(request.id)
      end
      local session = request.panel.session
      local key = tostring(request.client.id) .. ':' .. tostring(session)
      if not sessions[key] then
        sessions[key] = true
        client.execute(request.client, facts.commands.cancel, { session = session }, function(err, result)
          if err then
            notify('cancel failed: ' .. (err.message or ''), vim.log.levels.ERROR)
          else
            M.last[facts.commands.cancel] = result
          end
        end)
      end
    end
  end
  vim.cmd('redrawstatus!')
end

--- Start a new session: the next `:RhemaAsk` opens a new panel.
function M.new_session()
  M.current = nil
  M.current_panel = nil
  require('rhema.chat').on_new_session()
end

local retry = require('rhema.runs.retry')
local sessions = require('rhema.runs.sessions')
local status = require('rhema.runs.status')
M.retry = retry.retry
M.sessions = sessions.sessions
M.open_session = sessions.open_session
M.undo_turn = sessions.undo_turn
M.compact = sessions.compact
M.status = status.status
M.describe_status = status.describe_status
M.rules_and_languages = status.rules_and_languages

return M
