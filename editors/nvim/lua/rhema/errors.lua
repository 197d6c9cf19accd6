--- Failures in plain words: what failed, what to do, then the detail.
---
--- Contract: `explain(message)` reads an error message of the server (a
--- provider's HTTP status, a connection that failed, a missing key or
--- provider, a store failure) and returns `{title, fix, detail, setup,
--- retryable, fix_first}`: `title` says what failed, in plain words; `fix` what to do
--- (the server's own advice when it gives some, else the rule's); `detail`
--- the message as the server sent it (less the advice, said once as `fix`). Setting names are given the way a
--- Neovim user writes them (`settings.baseUrl`, not `rhema.baseUrl`).
--- `setup` is true when no provider is configured at all (the first run);
--- `retryable` when trying the same request again may work; `fix_first`
--- when it cannot until the fix is made (no provider, no key: no retry is
--- offered). The rules are
--- the one table below; a message no rule knows keeps its first clause as
--- the title. Nothing here touches a buffer.
local M = {}

--- The settings whose `rhema.` names become `settings.` names.
local SETTINGS = {
  'provider',
  'model',
  'baseUrl',
  'protocol',
  'thinking',
  'maxTokens',
  'maxSteps',
  'mode',
  'review',
  'contextWindow',
}

--- In the words a Neovim user writes the settings with.
--- @param text string
--- @return string
function M.neovim_names(text)
  for _, name in ipairs(SETTINGS) do
    text = text:gsub('rhema%.' .. name .. '%f[^%w]', 'settings.' .. name)
  end
  return text
end

--- @class rhema.ErrorRule
--- @field find string a Lua pattern the message matches
--- @field title string
--- @field fix string|nil what to do when the server gives no advice
--- @field advice string|nil what precedes the server's advice in the message
--- @field retryable boolean|nil
--- @field setup boolean|nil
--- @field fix_first boolean|nil a retry fails the same way until the fix is made

--- The rules, most specific first.
--- @type rhema.ErrorRule[]
M.rules = {
  {
    -- The server's words (older servers said "no model provider found").
    find = '^no model provider',
    title = 'No model is set up yet.',
    fix = 'choose one with `settings.provider` in setup() (see below, and :help rhema-setup)',
    setup = true,
    fix_first = true,
  },
  {
    find = 'needs its key',
    title = 'The provider has no API key.',
    advice = 'needs its key: ',
    fix = "set the provider's key in the environment Neovim starts rhema-lsp with",
    fix_first = true,
  },
  {
    find = 'is unknown: pick one of',
    title = '`settings.provider` names no provider I know.',
    fix_first = true,
  },
  {
    find = 'embedded model is not installed',
    title = 'The demo model is not installed.',
    fix_first = true,
  },
  {
    find = 'needs settings%.protocol',
    title = 'A custom `settings.baseUrl` needs `settings.protocol`.',
    fix_first = true,
  },
  {
    find = 'custom needs settings%.baseUrl',
    title = 'The custom provider needs `settings.baseUrl`.',
    fix_first = true,
  },
  {
    find = 'HTTP 40[13]',
    title = 'The model provider refused the request: the API key is missing or not accepted.',
    advice = ' — ',
    fix = 'check the key in the environment Neovim starts rhema-lsp with, then restart Neovim',
  },
  {
    find = 'HTTP 429',
    title = 'The model provider is limiting requests (or the quota is used up).',
    fix = 'wait a little, then retry',
    retryable = true,
  },
  {
    find = 'HTTP 404',
    title = 'The model provider does not know this model or address.',
    fix = 'check `settings.model` and `settings.baseUrl` in setup()',
  },
  {
    find = 'HTTP 5%d%d',
    title = 'The model provider is failing or overloaded.',
    fix = 'retry in a moment',
    retryable = true,
  },
  {
    find = 'answered a redirect',
    title = 'The model server sent the request elsewhere.',
    advice = ' — ',
  },
  {
    find = 'HTTP 4%d%d',
    title = 'The model provider rejected the request.',
    fix = 'the detail below says why',
  },
  {
    find = 'could not connect to',
    title = 'Could not reach the model server.',
    fix = 'start it, or point `settings.baseUrl` at it; then retry',
    retryable = true,
  },
  {
    find = 'did not answer in time',
    title = 'The model server did not answer in time.',
    fix = 'check that it is running and reachable, then retry',
    retryable = true,
  },
  {
    find = 'stream broke mid%-answer',
    title = 'The connection broke off in the middle of the answer.',
    fix = 'retry (the partial answer was not kept)',
    retryable = true,
  },
  {
    find = 'stream stalled',
    title = 'The model stopped sending in the middle of the answer.',
    fix = 'retry',
    retryable = true,
  },
  {
    find = 'connection dropped',
    title = 'The connection to the model dropped.',
    fix = 'retry',
    retryable = true,
  },
  {
    find = 'cannot read',
    title = "The model server's answer is not in the expected format.",
    advice = '; ',
  },
  {
    find = 'could not save the session',
    title = 'The session could not be saved.',
    fix = "check that the workspace's .rhema folder (or the user state folder) is writable",
    retryable = true,
  },
  { find = 'exceed', title = 'The conversation no longer fits the model.', advice = '; ' },
}

--- The server's advice after `marker` in `message`, or nil.
local function advice_after(message, marker)
  local at = message:find(marker, 1, true)
  if not at then
    return nil
  end
  local text = vim.trim(message:sub(at + #marker))
  return text ~= '' and text or nil
end

--- The HTTP status a message names, or nil.
local function status_of(message)
  return message:match('HTTP (%d%d%d)')
end

--- @class rhema.Explained
--- @field title string
--- @field fix string|nil
--- @field detail string
--- @field setup boolean
--- @field retryable boolean
--- @field fix_first boolean a retry fails the same way until the fix is made

--- What `message` means, and what to do.
--- @param message string
--- @return rhema.Explained
function M.explain(message)
  local detail = M.neovim_names(vim.trim(tostring(message or '')))
  -- The retry ladder's suffix: said in the title, not part of the match.
  local core, attempts = detail:match('^(.-)%s*%(gave up after (%d+) attempts; try again later%)$')
  core = core or detail
  for _, rule in ipairs(M.rules) do
    if core:find(rule.find) then
      local title = rule.title
      local status = status_of(core)
      if status and not title:find('HTTP', 1, true) then
        title = title:gsub('%.$', '') .. (' (HTTP %s).'):format(status)
      end
      if attempts then
        title = title:gsub('%.$', '') .. (', %s attempts.'):format(attempts)
      end
      local fix = rule.advice and advice_after(core, rule.advice) or nil
      if fix then
        -- The advice is said once, as the fix; the detail is what precedes it.
        local upto = core:sub(1, core:find(rule.advice, 1, true) + #rule.advice - 1)
        detail = (upto:gsub('%s*—%s*$', ''):gsub('[:;%s]+$', ''))
      end
      return {
        title = title,
        fix = fix or rule.fix,
        detail = detail,
        setup = rule.setup == true,
        retryable = rule.retryable == true or attempts ~= nil,
        fix_first = rule.fix_first == true,
      }
    end
  end
  local line = core:match('^[^\n]*')
  local first = line:match('^(.-);%s') or line:match('^(.-)%s—%s') or line
  local rest = line:sub(#first + 1):gsub('^;%s*', ''):gsub('^%s*—%s*', '')
  return {
    title = (first:gsub('^%l', string.upper):gsub('[.:]$', '')) .. '.',
    fix = rest ~= '' and rest or nil,
    detail = detail,
    setup = false,
    retryable = false,
    fix_first = false,
  }
end

return M
