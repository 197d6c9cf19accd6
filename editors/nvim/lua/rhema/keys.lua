--- API keys typed in Neovim (`:RhemaKey`), kept outside every workspace.
---
--- Contract: `ask(variable)` asks for a provider's key with
--- `vim.fn.inputsecret` (not echoed, not in the command history) and keeps
--- it in `stdpath('data')/rhema/keys.json` (the folder 0700, the file 0600):
--- never in a workspace, a setting or a log. Only a provider's key variable
--- (`OPENAI_API_KEY` and the like: `*_API_KEY`) is accepted, so no other
--- variable of the server's environment can be set this way. `env()` is
--- what is kept, for the server's environment (`cmd_env` given to setup()
--- wins over it); once a key is kept the running rhema servers are stopped
--- and, once gone, one is started with it for the file buffers.
local M = {}

--- The file the keys are kept in.
--- @return string
function M.file()
  return vim.fs.joinpath(vim.fn.stdpath('data'), 'rhema', 'keys.json')
end

--- Why `name` is not a provider's key variable, or nil.
--- @param name string
--- @return string|nil
function M.variable_problem(name)
  if type(name) == 'string' and #name <= 48 and name:match('^[A-Z][A-Z0-9_]*_API_KEY$') then
    return nil
  end
  return ('%s is not a provider key variable (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...)'):format(
    tostring(name)
  )
end

--- Why `key` cannot be a key (empty, or not one word), or nil.
--- @param key string
--- @return string|nil
function M.key_problem(key)
  if type(key) ~= 'string' or vim.trim(key) == '' then
    return 'no key given'
  end
  if #key > 4096 or vim.trim(key):find('[%s%z]') then
    return 'a key is one word, with no spaces or line breaks'
  end
  return nil
end

--- The keys kept, by variable.
--- @return table<string, string>
function M.env()
  local file = io.open(M.file(), 'r')
  if not file then
    return {}
  end
  local text = file:read('*a')
  file:close()
  local ok, decoded = pcall(vim.json.decode, text)
  local env = {}
  if ok and type(decoded) == 'table' then
    for name, key in pairs(decoded) do
      if M.variable_problem(name) == nil and M.key_problem(key) == nil then
        env[name] = key
      end
    end
  end
  return env
end

--- Keep `key` as `variable`; nil, or why it was not kept.
--- @param variable string
--- @param key string
--- @return string|nil
function M.store(variable, key)
  local problem = M.variable_problem(variable) or M.key_problem(key)
  if problem then
    return problem
  end
  local env = M.env()
  env[variable] = vim.trim(key)
  local dir = vim.fs.dirname(M.file())
  vim.fn.mkdir(dir, 'p', tonumber('700', 8))
  local path = M.file()
  local fd = vim.uv.fs_open(path .. '.tmp', 'w', tonumber('600', 8))
  if not fd then
    return 'could not write ' .. path
  end
  vim.uv.fs_write(fd, vim.json.encode(env))
  vim.uv.fs_close(fd)
  vim.uv.fs_chmod(path .. '.tmp', tonumber('600', 8))
  vim.uv.fs_rename(path .. '.tmp', path)
  return nil
end

--- `:RhemaKey {VARIABLE}`: ask for the key, keep it, and restart the servers with it.
--- @param variable string
function M.ask(variable)
  local runs = require('rhema.runs')
  local problem = M.variable_problem(variable)
  if problem then
    runs.notify(problem, vim.log.levels.ERROR)
    return
  end
  local ok, key = pcall(vim.fn.inputsecret, variable .. ' (kept in ' .. M.file() .. '): ')
  if not ok or key == '' then
    return
  end
  problem = M.store(variable, key)
  if problem then
    runs.notify(problem, vim.log.levels.ERROR)
    return
  end
  local client = require('rhema.client')
  client.use_keys()
  local ids = {}
  for _, c in ipairs(vim.lsp.get_clients({ name = client.name })) do
    table.insert(ids, c.id)
    c:stop()
  end
  -- Once they are gone, a server with the key for the buffers they served.
  local deadline = vim.uv.now() + 10000
  local function restart()
    for _, id in ipairs(ids) do
      if vim.lsp.get_client_by_id(id) and vim.uv.now() < deadline then
        vim.defer_fn(restart, 50)
        return
      end
    end
    for _, buf in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(buf) and client.is_file_buffer(buf) then
        client.start(buf)
      end
    end
  end
  restart()
  runs.notify(
    ('%s kept outside the workspace; the server starts again with it'):format(variable),
    vim.log.levels.INFO
  )
end

return M
