--- The first run: a server with no real model yet says so, with the choices.
---
--- Contract: `status(client, done)` asks `rhema.status` once per client and
--- keeps the answer. `problem(status)` reads it: `"missing"` when the server
--- resolved no provider (`provider.error`), `"demo"` when it is the embedded
--- demo model (`provider.name == "embedded"`), else nil. `lines(status)` is
--- the Markdown the chat shows then: what is wrong, in plain words, and how to
--- choose a provider with `settings.provider` in setup(): the setup choices
--- `rhema.status` lists when it carries them (`choices_of`, the one place that
--- reads them), else the presets this plugin knows. `on_chat_open(panel,
--- bufnr)` shows them in the chat's empty panel; `annotate(panel, client)`
--- marks a run answered by the demo model (no tools, no edits).
local M = {}

--- `rhema.status` results by client id.
--- @type table<integer, table>
M.statuses = {}

--- Ask the server what it runs on, once per client; `done(status|nil)`.
--- @param c vim.lsp.Client
--- @param done fun(status: table|nil)
function M.status(c, done)
  local known = M.statuses[c.id]
  if known then
    done(known)
    return
  end
  require('rhema.client').execute(c, 'rhema.status', {}, function(err, result)
    if err or type(result) ~= 'table' then
      done(nil)
      return
    end
    M.statuses[c.id] = result
    done(result)
  end)
end

--- What is wrong with the provider `status` names, if anything.
--- @param status table|nil a `rhema.status` result
--- @return "missing"|"demo"|nil
function M.problem(status)
  if type(status) ~= 'table' then
    return nil
  end
  local provider = type(status.provider) == 'table' and status.provider or {}
  local failed = provider.error
  if (failed ~= nil and failed ~= vim.NIL) or provider.name == nil or provider.name == vim.NIL then
    return 'missing'
  end
  if provider.name == 'embedded' then
    return 'demo'
  end
  return nil
end

--- The setup choices `rhema.status` carries, or nil when it carries none.
--- This is the hook for the server's list of choices (local servers found,
--- keys present, presets and their variables, the demo model).
--- @param status table|nil
--- @return table|nil
function M.choices_of(status)
  local setup = type(status) == 'table' and status.setup or nil
  if type(setup) ~= 'table' or type(setup.presets) ~= 'table' then
    return nil
  end
  return setup
end

--- What the tiny demo model is, in one line.
M.DEMO = 'the tiny demo model (SmolLM2-135M, in process): no tools, no edits, not for real work'

--- The choices this plugin knows, as Markdown list items.
local function known_choices()
  return {
    '- **A local server** on its default port: `provider = "ollama"` (11434),',
    '  `"lmstudio"` (1234), `"llamacpp"` (8080) or `"vllm"` (8000); any other',
    '  with `provider = "custom", baseUrl = "http://127.0.0.1:PORT/v1", protocol = "openai"`.',
    '- **A hosted provider**, its key in the environment Neovim starts rhema-lsp with',
    '  (or `cmd_env` in setup()): `provider = "anthropic"` (ANTHROPIC_API_KEY),',
    '  `"openai"` (OPENAI_API_KEY), `"gemini"` (GEMINI_API_KEY), `"openrouter"`',
    '  (OPENROUTER_API_KEY), `"groq"` (GROQ_API_KEY).',
    '- **' .. M.DEMO:gsub('^the ', 'The ', 1):gsub(':', '**:', 1) .. ' (`provider = "embedded"`).',
  }
end

--- The Markdown of the setup notice for `status` (nil: the server's status
--- is not known; the choices are the plugin's own).
--- @param status table|nil
--- @return string[]
function M.lines(status)
  local lines = { '## Set up a model', '' }
  local problem = M.problem(status)
  local explained = nil
  if problem == 'missing' then
    local failed = status.provider.error
    explained = require('rhema.errors').explain(failed ~= vim.NIL and tostring(failed or '') or '')
  end
  if problem == 'demo' then
    table.insert(lines, 'Rhema answers with ' .. M.DEMO .. '.')
  elseif explained then
    if explained.setup or explained.detail == '' then
      table.insert(lines, 'No model provider is set up yet: there is nothing to answer with.')
    else
      table.insert(lines, explained.title)
      if explained.fix then
        table.insert(lines, 'What to do: ' .. explained.fix)
      end
    end
  else
    table.insert(lines, 'No model provider is set up yet: there is nothing to answer with.')
  end
  vim.list_extend(lines, {
    '',
    'Choose one with `settings.provider` in your setup() call, then restart Neovim:',
    '',
    '```lua',
    'require("rhema").setup({ settings = { provider = "ollama" } })',
    '```',
    '',
  })
  vim.list_extend(lines, M.choice_lines(M.choices_of(status)) or known_choices())
  vim.list_extend(lines, { '', '`:checkhealth rhema` says what the server finds.' })
  if explained and not explained.setup and explained.detail ~= '' then
    vim.list_extend(lines, { '', 'Detail: ' .. explained.detail })
  end
  return lines
end

--- The Markdown list of the server's setup choices, or nil to use the
--- plugin's own.
--- @param choices table|nil
--- @return string[]|nil
function M.choice_lines(choices)
  if type(choices) ~= 'table' then
    return nil
  end
  local lines = {}
  for _, server in ipairs(choices.servers or {}) do
    local models = server.models or {}
    local what = #models > 0 and ('serving ' .. table.concat(models, ', '))
      or 'no model loaded: load one, or set `model`'
    table.insert(
      lines,
      ('- **%s found** at %s (%s): `provider = "%s"`.'):format(server.label, server.baseUrl, what, server.preset)
    )
  end
  local ready, hosted, ports = {}, {}, {}
  for _, preset in ipairs(choices.presets) do
    if preset.kind == 'hosted' then
      local entry = ('`provider = "%s"` (%s)'):format(preset.name, preset.keyVar)
      table.insert(preset.keyPresent and ready or hosted, entry)
    else
      local port = tostring(preset.baseUrl):match(':(%d+)') or '?'
      table.insert(ports, ('`"%s"` (%s)'):format(preset.name, port))
    end
  end
  if #ready > 0 then
    table.insert(lines, '- **A key is set** in the server\'s environment: ' .. table.concat(ready, ', ') .. '.')
  end
  if #ports > 0 then
    table.insert(lines, '- **A local server** on its default port: `provider =` ' .. table.concat(ports, ', ') .. ';')
    table.insert(lines, '  any other with `provider = "custom", baseUrl = "http://127.0.0.1:PORT/v1", protocol = "openai"`.')
  end
  if #hosted > 0 then
    table.insert(lines, '- **A hosted provider**, its key typed with `:RhemaKey VARIABLE` (kept outside')
    table.insert(lines, '  the workspace) or in the environment Neovim starts rhema-lsp with: ' .. table.concat(hosted, ', ') .. '.')
  end
  local demo = type(choices.demo) == 'table' and choices.demo or {}
  local line = '- **' .. M.DEMO:gsub('^the ', 'The ', 1):gsub(':', '**:', 1) .. ' (`provider = "embedded"`)'
  if demo.available == false and type(demo.install) == 'string' then
    line = line .. '; not installed: `' .. demo.install .. '`'
  end
  table.insert(lines, line .. '.')
  return lines
end

--- Show the setup notice in `panel` (the chat's, still empty) when the
--- server has no real model.
--- @param panel rhema.Panel
--- @param bufnr integer the buffer whose client to ask
function M.on_chat_open(panel, bufnr)
  require('rhema.client').with_client(bufnr, function(c)
    if not c then
      return
    end
    M.status(c, function(status)
      if not M.problem(status) or #panel.blocks > 0 then
        return
      end
      panel:add({ kind = 'setup', lines = M.lines(status) })
      panel:flush()
    end)
  end)
end

--- Mark a run of `panel` answered by the demo model, when it is.
--- @param panel rhema.Panel
--- @param c vim.lsp.Client
function M.annotate(panel, c)
  if M.problem(M.statuses[c.id]) ~= 'demo' then
    return
  end
  panel:stop_waiting()
  panel:add({
    kind = 'notice',
    text = '⚠ Answering with '
      .. M.DEMO
      .. '. Choose a provider with `settings.provider` in setup() (:help rhema-setup).',
  })
  panel:wait_for_model()
end

return M
