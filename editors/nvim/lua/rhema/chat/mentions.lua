--- The chat's mentions: `#buffer`, `#selection`, `#diagnostics` and `#image`.
---
--- Contract: the mentions `#buffer`, `#selection` and `#diagnostics` name
--- the chat's source buffer (the last file buffer entered, see
--- `rhema.chat.source_buffer`) and become its one `context` ref: the buffer,
--- with the range of its last visual selection, with its diagnostics as
--- `ContextDiagnostic`s; without a mention no context goes along.
--- `#image:path` (relative to the working directory) attaches that image
--- file, and a bare `#image` the file name under the cursor in the source
--- buffer: each is one more `context` ref, which the server reads through its
--- gate and sends as an image when its bytes are one. The input highlights
--- its mentions (`RhemaMention`) and completes them (omnifunc), and the slash
--- commands (MCP prompts, rhema.mcp) at its start. `rhema.chat` exports
--- every function here under the same name.
local runs = require('rhema.runs')

local M = {}

M.mention_kinds = { 'buffer', 'selection', 'diagnostics' }

local function notify(message, level)
  runs.notify(message, level or vim.log.levels.WARN)
end

local function source_buffer()
  return require('rhema.chat').source_buffer()
end

--- The mentions in one line: `{from, to, kind}` (1-based byte columns,
--- inclusive). A mention is `#word` (the whole word) at the start or after a
--- character that is not a word character, `#`, `/` or `:`.
--- @param line string
--- @return {[1]: integer, [2]: integer, [3]: string}[]
local function spans(line)
  local found = {}
  for from, word in line:gmatch('()#([%w_]+)') do
    local before = from > 1 and line:sub(from - 1, from - 1) or ''
    if not before:match('[%w_#/:]') and vim.tbl_contains(M.mention_kinds, word) then
      table.insert(found, { from, from + #word, word })
    end
  end
  return found
end

--- The mentions in `text`: a set of `buffer`, `selection`, `diagnostics`.
--- @param text string
--- @return table<string, boolean>
function M.mentions(text)
  local found = {}
  for _, line in ipairs(vim.split(text, '\n', { plain = true })) do
    for _, span in ipairs(spans(line)) do
      found[span[3]] = true
    end
  end
  return found
end

--- The image mentions of `text` as `context` refs: `#image:path` (relative
--- to the working directory) and `#image` (the file name under the cursor
--- in the source buffer); `nil, problem` when one names no file.
--- @param text string
--- @return table[]|nil refs
--- @return string|nil problem
function M.image_refs(text)
  local refs = {}
  for _, line in ipairs(vim.split(text, '\n', { plain = true })) do
    for from, named in line:gmatch('()#image:?(%S*)') do
      local before = from > 1 and line:sub(from - 1, from - 1) or ''
      if not before:match('[%w_#/:]') then
        local path = named
        if path == '' then
          local src = source_buffer()
          local win = src and vim.fn.bufwinid(src) or -1
          if win ~= -1 then
            path = vim.api.nvim_win_call(win, function()
              return vim.fn.expand('<cfile>')
            end)
          end
        end
        local full = path ~= '' and vim.fn.fnamemodify(vim.fn.expand(path), ':p') or ''
        if full == '' or vim.fn.filereadable(full) == 0 then
          return nil, ('#image: no such file %s'):format(path ~= '' and path or 'under the cursor')
        end
        table.insert(refs, { uri = vim.uri_from_fname(full) })
      end
    end
  end
  return refs, nil
end

local mention_ns = vim.api.nvim_create_namespace('rhema.chat')

--- Highlight the mentions of the input with `RhemaMention`.
--- @param buf integer
function M.highlight_mentions(buf)
  if not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  vim.api.nvim_buf_clear_namespace(buf, mention_ns, 0, -1)
  for row, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    for _, span in ipairs(spans(line)) do
      vim.api.nvim_buf_set_extmark(buf, mention_ns, row - 1, span[1] - 1, {
        end_col = span[2],
        hl_group = 'RhemaMention',
      })
    end
  end
end

local severity_names = { 'error', 'warning', 'information', 'hint' }

--- An LSP position from a 0-based row and byte column of `lines`.
local function position(lines, row, col, encoding)
  if row >= #lines then
    return { line = #lines, character = 0 }
  end
  local text = lines[row + 1] or ''
  col = math.max(0, math.min(col or 0, #text))
  if encoding == 'utf-8' then
    return { line = row, character = col }
  end
  return { line = row, character = vim.str_utfindex(text, encoding, col, false) }
end

--- The diagnostics of `bufnr` as `ContextDiagnostic`s, for `encoding`.
--- @param diagnostics vim.Diagnostic[]
--- @param lines string[]
--- @param encoding string
--- @return table[]
local function context_diagnostics(diagnostics, lines, encoding)
  local out = {}
  for _, d in ipairs(diagnostics) do
    local entry = {
      range = {
        start = position(lines, d.lnum, d.col, encoding),
        ['end'] = position(lines, d.end_lnum or d.lnum, d.end_col or d.col, encoding),
      },
      message = d.message ~= '' and d.message or '(no message)',
      severity = severity_names[d.severity] or 'error',
      source = d.source,
    }
    local code = d.code
    if code == nil and type(d.user_data) == 'table' and type(d.user_data.lsp) == 'table' then
      code = d.user_data.lsp.code
    end
    if type(code) == 'string' or type(code) == 'number' then
      entry.code = code
    end
    table.insert(out, entry)
  end
  return out
end

--- The `context` the mentions of `text` ask for, as a function of the
--- client (positions need its encoding); nil when there is no mention;
--- `nil, problem` when a mention cannot be honoured.
--- @param text string
--- @return (fun(c: vim.lsp.Client): table[])|nil context
--- @return string|nil problem
--- @return integer|nil source buffer
function M.context(text)
  local kinds = M.mentions(text)
  if next(kinds) == nil then
    return nil, nil, nil
  end
  local src = source_buffer()
  if not src then
    return nil, 'no file buffer for ' .. table.concat(vim.tbl_keys(kinds), ', '), nil
  end
  local uri = vim.uri_from_bufnr(src)
  local ranges
  if kinds.selection then
    local first = vim.api.nvim_buf_get_mark(src, '<')
    local last = vim.api.nvim_buf_get_mark(src, '>')
    if first[1] == 0 or last[1] == 0 then
      local name = runs.display(vim.api.nvim_buf_get_name(src))
      return nil, ('#selection: no visual selection in %s yet'):format(name), src
    end
    local selection_range = require('rhema.commands').selection_range
    ranges = {}
    -- visualmode() is the last visual mode of the current buffer: read it in `src`.
    vim.api.nvim_buf_call(src, function()
      for _, encoding in ipairs({ 'utf-8', 'utf-16', 'utf-32' }) do
        ranges[encoding] = selection_range(src, first[1], last[1], encoding)
      end
    end)
  end
  local diagnostics
  if kinds.diagnostics then
    diagnostics = vim.diagnostic.get(src)
    table.sort(diagnostics, function(a, b)
      return a.lnum < b.lnum or (a.lnum == b.lnum and a.col < b.col)
    end)
    if #diagnostics == 0 then
      local name = runs.display(vim.api.nvim_buf_get_name(src))
      notify(('#diagnostics: %s has none'):format(name), vim.log.levels.INFO)
    end
  end
  local lines = vim.api.nvim_buf_get_lines(src, 0, -1, false)
  local function context(c)
    local encoding = c.offset_encoding or 'utf-16'
    local ref = { uri = uri }
    if ranges then
      ref.range = ranges[encoding] or ranges['utf-16']
    end
    if diagnostics and #diagnostics > 0 then
      ref.diagnostics = context_diagnostics(diagnostics, lines, encoding)
    end
    return { ref }
  end
  return context, nil, src
end

--- Omni completion of the mentions in the input (`i_CTRL-X_CTRL-O`), and
--- of the slash commands (MCP prompts, rhema.mcp) at its start.
function M.omnifunc(findstart, base)
  if findstart == 1 then
    local line = vim.api.nvim_get_current_line():sub(1, vim.fn.col('.') - 1)
    if vim.fn.line('.') == 1 and line:match('^/%S*$') then
      return 0
    end
    local start = line:find('#[%w_]*$')
    return start and start - 1 or -3
  end
  if vim.startswith(base, '/') then
    return require('rhema.mcp').complete(base)
  end
  local items = {}
  for _, kind in ipairs(M.mention_kinds) do
    local word = '#' .. kind
    if vim.startswith(word, base) then
      table.insert(items, word)
    end
  end
  return items
end


return M
