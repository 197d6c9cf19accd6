--- `:checkhealth rhema`: Neovim's version, the server command, the
--- provider the server resolves and the MCP servers, started and waited for
--- (asked through `rhema.status {check = true}`).
---
--- Contract: uses the running rhema client when there is one; otherwise it
--- starts a temporary client (attached to no buffer), asks it, and stops it.
--- The provider is OK only when it is a real model: no provider set up (none
--- in `settings`, none the server found) and the embedded demo model are
--- warnings, with the choices; a provider that is set up but fails is an
--- error naming what to fix (`verdict` decides, from the status alone).
local config = require('rhema.config')
local facts = require('rhema.facts')

local M = {}

local health = vim.health

local function check_neovim()
  health.start('rhema: Neovim')
  local v = vim.version()
  local text = ('%d.%d.%d'):format(v.major, v.minor, v.patch)
  if vim.fn.has('nvim-0.11') == 1 then
    health.ok('Neovim ' .. text)
  else
    health.error('Neovim ' .. text .. ' is too old', { 'rhema.nvim needs Neovim 0.11 or later' })
  end
  if require('rhema').did_setup then
    health.ok('require("rhema").setup() was called')
  else
    health.warn('require("rhema").setup() was not called', {
      'call it from your init.lua; this check uses the default options',
    })
  end
end

--- @return boolean found
local function check_server()
  health.start('rhema: server')
  local cmd = config.options.cmd
  local path = vim.fn.exepath(cmd[1])
  if path == '' then
    health.error(('server command %q not found'):format(cmd[1]), {
      'install it: pip install rhema-lsp',
      'or set `cmd` in require("rhema").setup({ cmd = { "/path/to/rhema-lsp" } })',
    })
    return false
  end
  health.ok(('server command %q found: %s'):format(cmd[1], path))
  return true
end

local function temporary_client()
  local resolved = vim.lsp.config.rhema and vim.deepcopy(vim.lsp.config.rhema)
  if not resolved or not resolved.cmd then
    local options = config.options
    resolved = {
      name = 'rhema',
      cmd = options.cmd,
      cmd_env = options.cmd_env,
      init_options = require('rhema.client').init_options(options.settings),
      settings = { rhema = options.settings },
    }
  end
  resolved.root_dir = vim.fn.getcwd()
  resolved.name = 'rhema-health'
  local id = vim.lsp.start(resolved, {
    attach = false,
    reuse_client = function()
      return false
    end,
  })
  return id and vim.lsp.get_client_by_id(id) or nil
end

local function check_provider()
  health.start('rhema: provider')
  local client = require('rhema.client').get()
  local temporary = false
  if not client then
    client = temporary_client()
    temporary = true
  end
  if not client then
    health.error('the server could not be started')
    return
  end
  local ready = vim.wait(20000, function()
    return client.initialized == true or client:is_stopped()
  end, 20)
  if not ready or not client.initialized then
    health.error('the server did not answer `initialize`', { 'see :LspLog' })
    if temporary then
      client:stop(true)
    end
    return
  end
  local response, problem = client:request_sync('workspace/executeCommand', {
    command = facts.commands.status,
    arguments = { { check = true } }, -- starts the MCP servers and waits for them, bounded
  }, 40000)
  if temporary then
    client:stop()
  end
  if not response or response.err then
    local message = problem or (response and response.err and response.err.message) or 'no answer'
    health.error('rhema.status failed: ' .. tostring(message))
    return
  end
  local status = response.result or {}
  health.ok('rhema-lsp ' .. tostring(status.version))
  local verdict = M.verdict(status, config.options.settings)
  health[verdict.level](verdict.message, verdict.advice)
  M.report_sandbox(status)
  M.report_mcp(status)
end

--- The command sandbox of a `rhema.status` result: the server's own line
--- ("sandbox: bubblewrap …; commands run without asking"), a warning when
--- commands run unconfined or are refused.
--- @param status table
function M.report_sandbox(status)
  local line = type(status.sandbox) == 'string' and status.sandbox or ''
  if line == '' then
    return
  end
  if line:find('^sandbox: off') or line:find('^sandbox: none') or line:find('^sandbox: required') then
    health.warn(line, { 'settings.sandbox = "auto" runs commands in a sandbox where one is available' })
  else
    health.ok(line)
  end
end

--- The MCP servers of a `rhema.status {check = true}` result: a failed
--- server is an error with its reason, one waiting for a sign-in a warning.
--- @param status table
function M.report_mcp(status)
  local servers = status.mcpServers or {}
  if #servers == 0 then
    return
  end
  local mcp = require('rhema.mcp')
  health.start('rhema: MCP servers')
  for _, server in ipairs(servers) do
    local line = mcp.server_line(server)
    if server.state == 'failed' then
      health.error(line, { ':RhemaMcpRestart ' .. server.name .. ' tries it again' })
    elseif server.state == 'authorizing' then
      local again = ':RhemaMcpRestart ' .. server.name .. ' asks again'
      health.warn(line, { 'sign in on the page; ' .. again })
    elseif server.state == 'ready' then
      health.ok(line)
    else
      health.info(line)
    end
  end
end

--- How `:checkhealth` reports the provider of a `rhema.status` result.
--- @param status table
--- @param settings table the `settings` given to setup()
--- @return {level: "ok"|"warn"|"error", message: string, advice: string[]|nil}
function M.verdict(status, settings)
  local first_run = require('rhema.first_run')
  local provider = type(status.provider) == 'table' and status.provider or {}
  local problem = first_run.problem(status)
  local choose = {
    'choose one with `settings.provider` in require("rhema").setup({ settings = { ... } }):',
    'a local server ("ollama", "lmstudio", "llamacpp", "vllm"), a hosted provider with its key '
      .. 'in the environment ("anthropic", "openai", "gemini", "openrouter", "groq"), or '
      .. '"custom" with `baseUrl` and `protocol`; see :help rhema-first-run',
  }
  if problem == 'demo' then
    return {
      level = 'warn',
      message = ('provider embedded: %s (model %s)'):format(
        first_run.DEMO,
        tostring(provider.model)
      ),
      advice = choose,
    }
  end
  if problem == 'missing' then
    local explained = require('rhema.errors').explain(tostring(provider.error or ''))
    local configured = type(settings) == 'table' and (settings.provider or settings.baseUrl)
    if explained.setup then
      -- The server's own words say so, with the choices it found.
      return { level = 'warn', message = explained.detail, advice = choose }
    end
    if not configured then
      return {
        level = 'warn',
        message = 'no model provider is set up: ' .. explained.detail,
        advice = choose,
      }
    end
    local advice = { explained.fix or 'see the detail above' }
    table.insert(advice, 'API keys come from the environment Neovim starts rhema-lsp with')
    return {
      level = 'error',
      message = ('provider not resolved: %s %s'):format(explained.title, explained.detail),
      advice = advice,
    }
  end
  return {
    level = 'ok',
    message = ('provider %s resolved: model %s at %s (%s)'):format(
      tostring(provider.name),
      tostring(provider.model),
      tostring(provider.baseUrl),
      tostring(provider.source)
    ),
  }
end

--- The check `:checkhealth rhema` runs.
function M.check()
  check_neovim()
  if check_server() then
    check_provider()
  end
end

return M
