--- `:RhemaStatus`: what the server runs on, in the lines it prints.
---
--- Contract: the lines name the server's version and mode; the provider (or,
--- with none set up, why and what to do, rhema.errors); the folders, what
--- runs, the MCP servers (rhema.mcp), the project rules in use (and those
--- refused, with why) and who answers the language tools, as `rhema-lsp
--- status` prints them. `rhema.runs` exports `status`, `describe_status` and
--- `rules_and_languages`.
local facts = require('rhema.facts')

local M = {}


--- Show what the server runs on.
--- @param bufnr integer
function M.status(bufnr)
  local runs = require('rhema.runs')
  runs.command(bufnr, facts.commands.status, 'status', {}, function(result)
    runs.notify(table.concat(M.describe_status(result), '\n'))
  end)
end

--- The lines `:RhemaStatus` prints for a `rhema.status` result.
--- @param result table
--- @return string[]
function M.describe_status(result)
  local provider = result.provider or {}
  local lines = { ('rhema-lsp %s · mode %s'):format(result.version or '?', result.mode or '?') }
  local problem = require('rhema.first_run').problem(result)
  if problem == 'missing' then
    local failed = provider.error ~= vim.NIL and tostring(provider.error or '') or ''
    local explained = require('rhema.errors').explain(failed)
    local fix = explained.fix and (' ' .. explained.fix:gsub('^%l', string.upper)) or ''
    table.insert(
      lines,
      ('provider: none: %s%s (:help rhema-first-run)'):format(explained.title, fix)
    )
  else
    table.insert(
      lines,
      ('provider: %s · model %s · %s · %s'):format(
        tostring(provider.name),
        tostring(provider.model),
        tostring(provider.baseUrl),
        tostring(provider.source)
      )
    )
    if problem == 'demo' then
      table.insert(lines, 'the provider is ' .. require('rhema.first_run').DEMO)
    end
  end
  table.insert(lines, 'folders: ' .. table.concat(result.folders or {}, ', '))
  local running = result.running or {}
  table.insert(lines, 'running: ' .. (#running > 0 and table.concat(running, ', ') or 'nothing'))
  vim.list_extend(lines, require('rhema.mcp').status_lines(result))
  vim.list_extend(lines, M.rules_and_languages(result))
  return lines
end

--- The status lines of the project rules in use and who answers the
--- language tools (as `rhema-lsp status` prints them).
--- @param result table
--- @return string[]
function M.rules_and_languages(result)
  local lines, shown = {}, {}
  for _, rules in ipairs(result.rules or {}) do
    if type(rules.refused) ~= 'string' then
      local cut = rules.truncated == true and (' (cut: %d bytes)'):format(rules.bytes or 0) or ''
      table.insert(shown, tostring(rules.path) .. cut)
    end
  end
  table.insert(
    lines,
    'rules: ' .. (#shown > 0 and table.concat(shown, ', ') or 'none (no AGENTS.md or CLAUDE.md found)')
  )
  for _, rules in ipairs(result.rules or {}) do
    if type(rules.refused) == 'string' then
      table.insert(lines, ('  %s: not read — %s'):format(tostring(rules.path), rules.refused))
    end
  end
  local languages = result.languageServers or {}
  local first = result.languageAnswers == 'editor' and "the editor's servers, then " or ''
  local found = #languages > 0 and ('%d server(s)'):format(#languages) or 'no servers found'
  table.insert(lines, ("language: %sthe agent's own: %s"):format(first, found))
  for _, language in ipairs(languages) do
    local where = type(language.folder) == 'string' and (' in ' .. language.folder) or ''
    local pid = type(language.pid) == 'number' and (' (pid %d)'):format(language.pid) or ''
    table.insert(
      lines,
      ('  %s: %s, %s%s%s'):format(
        tostring(language.language),
        tostring(language.name),
        tostring(language.state),
        where,
        pid
      )
    )
  end
  return lines
end

return M
