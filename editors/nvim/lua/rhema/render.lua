--- How a panel block reads: pure functions from a block to its lines.
---
--- Contract: `lines(block)` gives the lines of one block without its leading
--- blank; `closing_text` is the closing line of a turn; `highlight_of` maps a
--- block kind to its highlight group. Nothing here touches a buffer.
local M = {}

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

local stop_words = {
  end_turn = 'done',
  tool_use = 'paused after a tool call · :RhemaStep continues',
  max_tokens = 'stopped at the token limit',
  max_steps = 'stopped at the step limit',
  cancelled = 'cancelled',
  error = 'failed',
}

--- The words of a closing line.
--- @param stop string
--- @param steps integer|nil
--- @param usage {input: integer, output: integer}|nil
function M.closing_text(stop, steps, usage)
  local parts = { stop_words[stop] or stop }
  if steps then
    table.insert(parts, M.plural(steps, 'step'))
  end
  if usage then
    table.insert(parts, ('%d in / %d out tokens'):format(usage.input or 0, usage.output or 0))
  end
  return '── ' .. table.concat(parts, ' · ') .. ' ──'
end

local function tool_summary(block)
  local ok, args = pcall(vim.json.decode, block.args or '')
  if not ok or type(args) ~= 'table' then
    return ''
  end
  for _, key in ipairs({ 'path', 'command', 'pattern', 'from' }) do
    if type(args[key]) == 'string' then
      local value = args[key]:gsub('\n.*', ' …')
      if key == 'from' and type(args.to) == 'string' then
        value = value .. ' → ' .. args.to
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
    return vim.tbl_map(function(line)
      return line == '' and '>' or '> ' .. line
    end, M.split(block.text))
  elseif kind == 'text' or kind == 'note' then
    return M.split(block.text)
  elseif kind == 'tool' then
    local status = block.status or 'running'
    local lines = { ('▸ %s%s · %s'):format(block.name or 'tool', tool_summary(block), status) }
    if block.output and block.output ~= '' then
      for _, line in ipairs(M.split(block.output)) do
        table.insert(lines, '  │ ' .. line)
      end
    end
    return lines
  elseif kind == 'retry' then
    return {
      ('⟳ retrying in %ds (attempt %d of %d): %s'):format(
        block.remaining or 0,
        block.attempt or 0,
        block.total or 0,
        (block.text or ''):gsub('\n.*', '')
      ),
    }
  elseif kind == 'error' then
    return { '**Error:** ' .. (block.text or ''):gsub('\n', ' ') }
  elseif kind == 'closing' then
    return { block.text }
  end
  return {}
end

M.highlight_of = {
  thinking = 'RhemaThinking',
  tool = 'RhemaTool',
  retry = 'RhemaTool',
  error = 'RhemaError',
  closing = 'RhemaClosing',
}

return M
