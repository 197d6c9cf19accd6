--- `:checkhealth rhema`: Neovim's version, the server command, and the
--- provider the server resolves (asked through `rhema.status`).
---
--- Contract: uses the running rhema client when there is one; otherwise it
--- starts a temporary client (attached to no buffer), asks it, and stops it.
local config = require('rhema.config')

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
    command = 'rhema.status',
    arguments = { vim.empty_dict() },
  }, 20000)
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
  local provider = status.provider or {}
  if provider.error or not provider.name then
    health.error('provider not resolved: ' .. tostring(provider.error), {
      'set `provider`, `model` and `baseUrl` in setup({ settings = { ... } })',
      'API keys come from the server environment (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...)',
    })
    return
  end
  health.ok(
    ('provider %s resolved: model %s at %s (%s)'):format(
      tostring(provider.name),
      tostring(provider.model),
      tostring(provider.baseUrl),
      tostring(provider.source)
    )
  )
end

--- The check `:checkhealth rhema` runs.
function M.check()
  check_neovim()
  if check_server() then
    check_provider()
  end
end

return M
