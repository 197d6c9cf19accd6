--- How a panel block reads: pure functions from a block to its lines.
---
--- Contract: `lines(block)` gives the lines of one block without its leading
--- blank, and for blocks whose lines differ in kind (an error's title, fix
--- and detail) the highlight group of each line; `highlight_of` maps the
--- other kinds to the group of all their lines. `closing_text` is the closing
--- line of a turn, in words (`done`, never `end_turn`); `result_status` a
--- tool call's status from its result (`done`, `failed: …`, `rejected` when
--- the user declined the whole change in review, `partly accepted: K of N`);
--- `when` a stored timestamp as a person reads it. Nothing here touches a buffer.
local errors = require('rhema.errors')
local facts = require('rhema.facts')

local M = {}

--- How the server's report of what an edit did to the problems of the files
--- it touched starts a line (rhema_lsp/tools/after_edit.py: "1 new error: …",
--- "2 problems gone:", "basedpyright did not report diagnostics for …").
local PROBLEM_HEADS = {
  '^%d+ new ',
  '^%d+ %a+ gone',
  '^%d+ problems? in ',
  '^diagnostics unavailable: ',
  ' did not report diagnostics for the edited ',
}

function M.split(text)
  local lines = vim.split(text, '\n', { plain = true })
  while #lines > 1 and lines[#lines]:match('^%s*$') do
    table.remove(lines)
  end
  return lines
end

function M.plural(n, word)
  return ('%d %s%s'):format(n, word, n == 1 and '' or 's')
end

--- The lines of a file-changing tool's result that say what it did to the
--- problems of the files it touched (shown under its line in the panel), or nil.
--- @param name string|nil
--- @param content any
--- @return string[]|nil
function M.problem_notes(name, content)
  local tool = facts.tools[name or '']
  if not tool or not tool.changes_files or type(content) ~= 'string' then
    return nil
  end
  local notes, within = {}, false
  for index, line in ipairs(M.split(content)) do
    local head = false
    for _, pattern in ipairs(PROBLEM_HEADS) do
      if index > 1 and line:find(pattern) then
        head = true
        break
      end
    end
    within = head or (within and line:match('^  %S') ~= nil)
    if within then
      table.insert(notes, line)
    end
  end
  return #notes > 0 and notes or nil
end

local stop_words = {
  end_turn = 'done',
  tool_use = 'paused after a tool call · :RhemaStep continues',
  max_tokens = 'stopped at the token limit',
  max_steps = 'stopped at the step limit',
  pause_turn = "paused: the provider's own tools are still at work · a follow-up continues",
  cancelled = 'cancelled',
  error = 'failed',
}

--- A tool call's status from its result. The review's accounts are the
--- server's words (rhema_lsp/tools/edit_base.py, editing.py): "In review the
--- user declined …" (all of it) and "… applied K of N changes … declined …".
--- @param content string|nil
--- @param is_error boolean|nil
--- @return string
function M.result_status(content, is_error)
  content = type(content) == 'string' and content or ''
  if is_error then
    return 'failed: ' .. content:gsub('\n.*', '')
  end
  if content:find('In review the user declined', 1, true) then
    return 'rejected'
  end
  local kept, total = content:match('In review the user applied (%d+) of (%d+) changes')
  if kept then
    return kept == '0' and 'rejected' or ('partly accepted: %s of %s'):format(kept, total)
  end
  return 'done'
end

--- `line` cut at spaces into pieces of at most `width` display cells (a
--- word longer than that stays whole); no width: `line` as it is.
--- @param line string
--- @param width integer|nil
--- @return string[]
function M.wrap(line, width)
  if not width or width < 10 or vim.fn.strdisplaywidth(line) <= width then
    return { line }
  end
  local pieces, current = {}, ''
  for word in line:gmatch('%S+') do
    local joined = current == '' and word or (current .. ' ' .. word)
    if current ~= '' and vim.fn.strdisplaywidth(joined) > width then
      table.insert(pieces, current)
      current = word
    else
      current = joined
    end
  end
  if current ~= '' then
    table.insert(pieces, current)
  end
  return pieces
end

--- The words of a closing line.
--- @param stop string
--- @param steps integer|nil
--- @param usage {input: integer, output: integer}|nil
function M.closing_text(stop, steps, usage)
  local parts = { stop_words[stop] or tostring(stop):gsub('_', ' ') }
  if steps then
    table.insert(parts, M.plural(steps, 'step'))
  end
  if usage then
    table.insert(parts, ('%d in / %d out tokens'):format(usage.input or 0, usage.output or 0))
  end
  return '── ' .. table.concat(parts, ' · ') .. ' ──'
end

--- How each plan entry's status reads in the checklist.
local PLAN_MARKS = { pending = '[ ]', in_progress = '[~]', completed = '[x]' }

--- The argument shown beside a call's name: the tool's own main argument
--- (generated from the server's tool facts), or for a tool not the server's
--- (an MCP server's) the first of the fallback arguments it has.
local function tool_summary(block)
  local ok, args = pcall(vim.json.decode, block.args or '')
  if not ok or type(args) ~= 'table' then
    return ''
  end
  local tool = facts.tools[block.name or '']
  local keys = facts.fallback_arguments
  if tool then
    keys = { tool.main }
  end
  for _, key in ipairs(keys) do
    if type(args[key]) == 'string' and args[key] ~= '' then
      local value = args[key]:gsub('\n.*', ' …')
      local target = tool and tool.target and args[tool.target]
      if type(target) == 'string' then
        value = value .. ' → ' .. target
      elseif key == 'path' and type(args.offset) == 'number' and args.offset > 1 then
        value = ('%s:%d'):format(value, args.offset)
      end
      return ' ' .. value
    end
  end
  return ''
end

--- The lines of one block, without its leading blank.
--- @param block rhema.Block
--- @return string[]
function M.lines(block)
  local kind = block.kind
  if kind == 'you' then
    local lines = { '## You', '' }
    vim.list_extend(lines, M.split(block.text))
    if block.context and block.context ~= '' then
      vim.list_extend(lines, { '', 'Context: ' .. block.context })
    end
    return lines
  elseif kind == 'rhema' then
    return { '## Rhema' }
  elseif kind == 'thinking' then
    -- Wrapped here, at the panel's width, so every line keeps its "> ".
    local out = {}
    for _, line in ipairs(M.split(block.text)) do
      if line == '' then
        table.insert(out, '>')
      else
        for _, piece in ipairs(M.wrap(line, block.width and block.width - 2 or nil)) do
          table.insert(out, '> ' .. piece)
        end
      end
    end
    return out
  elseif kind == 'text' or kind == 'note' or kind == 'notice' then
    return M.split(block.text)
  elseif kind == 'tool' then
    local status = block.status or 'running'
    local lines = { ('▸ %s%s · %s'):format(block.name or 'tool', tool_summary(block), status) }
    if block.output and block.output ~= '' then
      for _, line in ipairs(M.split(block.output)) do
        table.insert(lines, '  │ ' .. line)
      end
    end
    for _, note in ipairs(block.notes or {}) do
      table.insert(lines, '  ' .. note)
    end
    return lines
  elseif kind == 'plan' then
    local lines = { 'Plan:' }
    for _, entry in ipairs(block.entries or {}) do
      local mark = PLAN_MARKS[entry.status] or '[ ]'
      table.insert(lines, ('  %s %s'):format(mark, tostring(entry.content or '')))
    end
    return lines
  elseif kind == 'retry' then
    local reason = errors.explain((block.text or ''):gsub('\n.*', '')).title:gsub('%.$', '')
    local next_attempt = ('attempt %d of %d'):format((block.attempt or 0) + 1, block.total or 0)
    local state
    if block.settled then
      state = 'retried: ' .. next_attempt .. ' went through'
    elseif (block.remaining or 0) > 0 then
      state = ('retrying in %ds (%s)'):format(block.remaining, next_attempt)
    else
      state = ('retrying now (%s)…'):format(next_attempt)
    end
    return { ('⟳ %s · %s'):format(reason, state) }
  elseif kind == 'error' then
    return M.error_lines(block)
  elseif kind == 'waiting' then
    return { '… waiting for the model' }
  elseif kind == 'setup' then
    return block.lines or {}
  elseif kind == 'closing' then
    return { block.text }
  end
  return {}
end

--- The lines of an error block, and their highlight groups: what failed,
--- what to do (and how to retry, once offered), then the detail.
--- @param block rhema.Block
--- @return string[] lines, string[] groups
function M.error_lines(block)
  local explained = errors.explain(block.text or '')
  local lines = { '✗ ' .. explained.title }
  local groups = { 'RhemaError' }
  local fix = explained.fix
  if block.retry then
    local key = type(block.retry) == 'string' and (block.retry .. ' or ') or ''
    local retry = key .. ':RhemaRetry tries again'
    fix = fix and (fix .. ' · ' .. retry) or retry
  end
  if fix then
    table.insert(lines, '  What to do: ' .. fix)
    table.insert(groups, 'RhemaErrorFix')
  end
  local function plain(text)
    return text:gsub('[.%s]+$', ''):lower()
  end
  if explained.detail ~= '' and plain(explained.detail) ~= plain(explained.title) then
    table.insert(lines, '  Detail: ' .. explained.detail:gsub('%s*\n%s*', ' '))
    table.insert(groups, 'RhemaErrorDetail')
  end
  return lines, groups
end

--- The seconds since the epoch of a UTC date and time. `os.time` reads
--- its fields as local time; `isdst = false` on both sides keeps the
--- correction the standard offset, in summer too.
local function utc_epoch(fields)
  fields.isdst = false
  local guess = os.time(fields)
  local back = os.date('!*t', guess)
  ---@cast back osdate
  back.isdst = false
  return guess + (guess - os.time(back))
end

--- A stored timestamp (ISO 8601 in UTC, `2025-03-04T05:06:07.123456Z`) as
--- a person reads it, in local time: "just now", "12 min ago", "today
--- 14:05", "yesterday 09:30", "Mon 3 Mar 14:05", "3 Mar 2024"; anything
--- else as given.
--- @param iso string|nil
--- @param now integer|nil seconds since the epoch (default: now)
--- @return string
function M.when(iso, now)
  if type(iso) ~= 'string' then
    return ''
  end
  local y, mo, d, h, mi, sec = iso:match('^(%d%d%d%d)%-(%d%d)%-(%d%d)T(%d%d):(%d%d):(%d%d)')
  if not y then
    return iso
  end
  local time = utc_epoch({ year = y, month = mo, day = d, hour = h, min = mi, sec = sec })
  now = now or os.time()
  local ago = now - time
  if ago >= 0 and ago < 60 then
    return 'just now'
  elseif ago >= 0 and ago < 3600 then
    return ('%d min ago'):format(math.floor(ago / 60))
  end
  local today = os.date('%Y-%m-%d', now)
  local yesterday = os.date('%Y-%m-%d', now - 86400)
  local day = os.date('%Y-%m-%d', time)
  if day == today then
    return 'today ' .. os.date('%H:%M', time)
  elseif day == yesterday then
    return 'yesterday ' .. os.date('%H:%M', time)
  elseif os.date('%Y', time) == os.date('%Y', now) then
    return (os.date('%a %d %b %H:%M', time):gsub(' 0(%d) ', ' %1 '))
  end
  return (os.date('%d %b %Y', time):gsub('^0', ''))
end

M.highlight_of = {
  thinking = 'RhemaThinking',
  tool = 'RhemaTool',
  retry = 'RhemaTool',
  waiting = 'RhemaClosing',
  notice = 'RhemaWarning',
  closing = 'RhemaClosing',
}

return M
