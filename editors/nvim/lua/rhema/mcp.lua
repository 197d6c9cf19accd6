--- The MCP servers in Neovim.
---
--- Contract:
--- - `:RhemaMcp` lists the configured servers with their state (a failed one
---   with its reason, one waiting for a sign-in with its page) and offers to
---   restart one (`vim.ui.select`); `:RhemaMcpRestart {name}` restarts one
---   (`rhema.mcpRestart`: a failed server tried again, a sign-in asked again)
---   and says how it came back. `:RhemaStatus` and `:checkhealth rhema` show
---   the same lines.
--- - The servers' prompts are slash commands: `/mcp__<server>__<prompt>
---   words…` sent from the chat input (or `:RhemaPrompt` with the same
---   words) sends the prompt's text (`rhema.mcpPrompt`) as the turn. The
---   words fill the prompt's arguments: `name=value` names one, the others
---   go to the arguments not named, in order, the last taking the rest; a
---   required one still missing is asked with `vim.ui.input` (dismissed: not
---   sent). `<C-x><C-o>` in the input and `:RhemaPrompt <Tab>` complete the
---   commands (listed with `rhema.mcpPrompts`, which starts the servers;
---   remembered until a send).
--- - `rhema/askText` (an MCP form's free-text field) is a `vim.ui.input`;
---   dismissing it cancels the form.
local client = require('rhema.client')
local facts = require('rhema.facts')

local M = {}

--- The prompts, once listed (`nil`: list them on next use).
--- @type table[]|nil
M.listed = nil

local STATES = {
  idle = 'not started yet (starts with the first agent turn)',
  starting = 'starting',
  ready = 'ready',
  restarting = 'restarting',
  authorizing = 'waiting for you to sign in',
  failed = 'failed',
  stopped = 'stopped',
  disabled = 'disabled',
}

local function text(value)
  return (value ~= nil and value ~= vim.NIL) and tostring(value) or ''
end

local function notify(message, level)
  require('rhema.runs').notify(message, level or vim.log.levels.INFO)
end

-- servers -------------------------------------------------------------------------

--- A server's state on one line: `name: failed (stdio) — reason`.
--- @param server table an entry of `rhema.status`'s `mcpServers`
--- @return string
function M.server_line(server)
  local facts = { text(server.transport) }
  if server.state == 'ready' then
    table.insert(facts, ('%d tool%s'):format(server.tools or 0, server.tools == 1 and '' or 's'))
  end
  if (server.restarts or 0) > 0 then
    local plural = server.restarts == 1 and '' or 's'
    table.insert(facts, ('%d restart%s'):format(server.restarts, plural))
  end
  if server.deferred == true then
    table.insert(facts, 'tools behind find_tools')
  end
  if server.source ~= 'settings' then
    table.insert(facts, text(server.source))
  end
  local reason = ''
  if text(server.error) ~= '' and server.state ~= 'ready' then
    reason = ' — ' .. text(server.error)
  end
  return ('%s: %s (%s)%s'):format(
    text(server.name),
    STATES[server.state] or text(server.state),
    table.concat(facts, ', '),
    reason
  )
end

--- Whether a server needs the user: it failed, or waits for a sign-in.
function M.needs_you(server)
  return server.state == 'failed' or server.state == 'authorizing'
end

--- The lines `:RhemaStatus` adds for a `rhema.status` result.
--- @param status table
--- @return string[]
function M.status_lines(status)
  local lines = {}
  for _, server in ipairs(status.mcpServers or {}) do
    table.insert(lines, 'MCP ' .. M.server_line(server))
  end
  return lines
end

--- `:RhemaMcpRestart {name}`.
function M.restart(name, bufnr)
  notify(('restarting the MCP server %s…'):format(name))
  local runs = require('rhema.runs')
  runs.command(bufnr, facts.commands.mcpRestart, 'MCP restart', { name = name }, function(reports)
    local worst = vim.log.levels.INFO
    local lines = {}
    for _, report in ipairs(reports or {}) do
      table.insert(lines, 'MCP server ' .. M.server_line(report))
      if M.needs_you(report) then
        worst = vim.log.levels.WARN
      end
    end
    notify(table.concat(lines, '\n'), worst)
  end)
end

--- `:RhemaMcp`: the servers, and one to restart.
function M.servers(bufnr)
  require('rhema.runs').command(bufnr, facts.commands.status, 'status', {}, function(status)
    local servers = status.mcpServers or {}
    if #servers == 0 then
      notify('no MCP server is configured (settings.mcpServers; see :help rhema-mcp)')
      return
    end
    vim.ui.select(servers, {
      prompt = 'MCP servers (pick one to restart it)',
      format_item = M.server_line,
    }, function(picked)
      if picked then
        M.restart(picked.name, bufnr)
      end
    end)
  end)
end

--- The result of the command `name` (no arguments), waited for up to
--- `timeout_ms`; nil without a client, an answer or on an error.
local function command_sync(name, timeout_ms)
  local c = client.get()
  if not c then
    return nil
  end
  local response = c:request_sync('workspace/executeCommand', {
    command = name,
    arguments = { vim.empty_dict() },
  }, timeout_ms)
  if not response or response.err then
    return nil
  end
  return response.result
end

--- The configured servers' names, for `:RhemaMcpRestart <Tab>`.
function M.names()
  local status = command_sync(facts.commands.status, 5000)
  local names = {}
  for _, server in ipairs(status and status.mcpServers or {}) do
    table.insert(names, server.name)
  end
  return names
end

-- prompts -------------------------------------------------------------------------

--- The prompts, listed now if needed (blocks up to 20 s: the servers start).
--- @return table[]
function M.prompts()
  if M.listed then
    return M.listed
  end
  local listed = command_sync(facts.commands.mcpPrompts, 20000)
  if not listed then
    return {}
  end
  M.listed = listed
  return M.listed
end

--- Whether `typed` starts with a slash command (`/word`).
function M.is_slash(typed)
  return vim.trim(typed):match('^/%S+') ~= nil
end

--- `typed` read as a slash command of one of `prompts`: `{prompt, values,
--- missing}`, or nil when its command names none.
--- @param typed string
--- @param prompts table[]
function M.parse(typed, prompts)
  local command, rest = vim.trim(typed):match('^/(%S+)%s*(.*)$')
  if not command then
    return nil
  end
  local prompt
  for _, candidate in ipairs(prompts) do
    if candidate.command == command then
      prompt = candidate
    end
  end
  if not prompt then
    return nil
  end
  local names, values, loose = {}, {}, {}
  for _, argument in ipairs(prompt.arguments or {}) do
    names[argument.name] = true
  end
  for word in rest:gmatch('%S+') do
    local key, value = word:match('^([^=%s]+)=(.*)$')
    if key and names[key] then
      values[key] = value
    else
      table.insert(loose, word)
    end
  end
  local open = {}
  for _, argument in ipairs(prompt.arguments or {}) do
    if values[argument.name] == nil then
      table.insert(open, argument)
    end
  end
  for index, argument in ipairs(open) do
    if #loose == 0 then
      break
    end
    if index == #open then
      values[argument.name] = table.concat(loose, ' ')
      loose = {}
    else
      values[argument.name] = table.remove(loose, 1)
    end
  end
  local missing = {}
  for _, argument in ipairs(prompt.arguments or {}) do
    if argument.required and (values[argument.name] or '') == '' then
      table.insert(missing, argument)
    end
  end
  return { prompt = prompt, values = values, missing = missing }
end

--- Ask for the missing arguments one by one, then `done(values)` (nil: dismissed).
local function ask_missing(parsed, done)
  local index = 0
  local function next_one()
    index = index + 1
    local argument = parsed.missing[index]
    if not argument then
      done(parsed.values)
      return
    end
    local about = text(argument.description) ~= '' and (' (' .. argument.description .. ')') or ''
    local question = ('/%s %s%s: '):format(parsed.prompt.command, argument.name, about)
    vim.ui.input({ prompt = question }, function(value)
      if not value or vim.trim(value) == '' then
        done(nil)
        return
      end
      parsed.values[argument.name] = value
      next_one()
    end)
  end
  next_one()
end

--- Turn `typed` into the text to send: `done(text)`, or `done(nil, problem)`
--- when it cannot be sent (an unknown `/mcp__…` command, a dismissed question,
--- a failed `rhema.mcpPrompt`). Not a slash command of a prompt: `typed` itself.
--- @param typed string
--- @param bufnr integer|nil
--- @param done fun(text: string|nil, problem: string|nil)
function M.expand(typed, bufnr, done)
  M.listed = nil -- servers come and go: list them again for each send
  local parsed = M.parse(typed, M.prompts())
  if not parsed then
    if vim.trim(typed):match('^/mcp__') then
      done(nil, ('no MCP prompt %s: <C-x><C-o> lists them'):format(vim.trim(typed):match('^%S+')))
    else
      done(typed)
    end
    return
  end
  ask_missing(parsed, function(values)
    if not values then
      done(nil, 'not sent: a question about the prompt was dismissed')
      return
    end
    local args = { server = parsed.prompt.server, name = parsed.prompt.name, arguments = values }
    if next(values) == nil then
      args.arguments = vim.empty_dict()
    end
    client.with_client(bufnr, function(c, problem)
      if not c then
        done(nil, problem)
        return
      end
      client.execute(c, facts.commands.mcpPrompt, args, function(err, result)
        if err then
          done(nil, 'MCP prompt: ' .. text(err.message))
        else
          done(result.text)
        end
      end)
    end)
  end)
end

--- The prompts' commands starting with `base` (a `/word`), for completion.
--- @param base string
--- @return table[] complete-items
function M.complete(base)
  local items = {}
  local word = base:gsub('^/', '')
  for _, prompt in ipairs(M.prompts()) do
    if vim.startswith(prompt.command, word) or vim.startswith(prompt.name, word) then
      local args = {}
      for _, argument in ipairs(prompt.arguments or {}) do
        table.insert(args, argument.required and argument.name or ('[' .. argument.name .. ']'))
      end
      table.insert(items, {
        word = '/' .. prompt.command,
        menu = table.concat(args, ' '),
        info = text(prompt.description),
      })
    end
  end
  return items
end

--- `:RhemaPrompt {command} [words]`: the prompt's text as a turn.
function M.prompt_command(opts)
  local bufnr = vim.api.nvim_get_current_buf()
  local typed = opts.args:match('^/') and opts.args or ('/' .. opts.args)
  M.expand(typed, bufnr, function(expanded, problem)
    if not expanded then
      notify(problem, vim.log.levels.WARN)
      return
    end
    require('rhema.runs').run('turn', { prompt = expanded, context = {} }, bufnr)
  end)
end

--- Completion of `:RhemaPrompt`'s first word.
function M.complete_command(lead, line)
  if line:match('^%S+%s+%S+%s') then
    return {}
  end
  local words = {}
  for _, item in ipairs(M.complete('/' .. lead:gsub('^/', ''))) do
    table.insert(words, (item.word:gsub('^/', '')))
  end
  return words
end

-- rhema/askText -------------------------------------------------------------------

--- The `rhema/askText` handler: a `vim.ui.input`; `{value = nil}` when dismissed.
function M.ask_text(_, params)
  local co, is_main = coroutine.running()
  local opts = { prompt = text(params.message) .. ': ', default = text(params.value) }
  if co and not is_main then
    vim.ui.input(opts, function(value)
      vim.schedule(function()
        coroutine.resume(co, { value = value == nil and vim.NIL or value })
      end)
    end)
    return coroutine.yield()
  end
  local dismissed = '\0dismissed'
  local ok, value =
    pcall(vim.fn.input, { prompt = opts.prompt, default = opts.default, cancelreturn = dismissed })
  return { value = (ok and value ~= dismissed) and value or vim.NIL }
end

return M
