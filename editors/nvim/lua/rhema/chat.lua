--- The chat: the current session's panel with an input buffer under it.
---
--- Contract: `open()` shows the current session's panel in the panel window
--- (an empty one for a new session) and, just below it, the one input
--- buffer (`rhema://chat`, 'buftype' acwrite, markdown), and focuses the
--- input. `send()` (`<CR>` in normal mode, `:w`) sends the input as a
--- `rhema.turn` of the current session (`runs.run`), so every message after
--- the first is a follow-up in the same session; it is refused while a run
--- is in flight. The mentions `#buffer`, `#selection` and `#diagnostics`
--- name the chat's source buffer (the last file buffer entered) and become
--- its one `context` ref: the buffer, with the range of its last visual
--- selection, with its diagnostics as `ContextDiagnostic`s; without a
--- mention no context goes along. `#image:path` (relative to the working
--- directory) attaches that image file, and a bare `#image` the file name
--- under the cursor in the source buffer: each is one more `context` ref,
--- which the server reads through its gate and sends as an image when its
--- bytes are one. A prompt that starts with a slash command (an MCP server's
--- prompt, see rhema.mcp) sends the prompt's text. Sent prompts are kept in
--- `history` (and
--- on disk, across restarts), recalled with `<C-p>`/`<C-n>` (and
--- `<Up>`/`<Down>` on the first/last line). Every panel gets `gf`
--- (`rhema.jump`), `i` (to the input), `R` (retry the failed turn), and the
--- chat's stop, close and mode keys (the mode: rhema.modes, the chat's
--- prompts run in it). Every key is `chat.keys` (see config). The
--- winbar says the mode, how to send, that a turn runs, or that it is stopping; it is
--- drawn again the moment a run ends. An empty chat whose server has no real
--- model shows the setup choices (rhema.first_run).
local client = require('rhema.client')
local config = require('rhema.config')
local runs = require('rhema.runs')

local M = {}

--- The input buffer, once made.
--- @type integer|nil
M.input = nil
--- The input window, while open.
--- @type integer|nil
M.input_win = nil
--- The file buffer the mentions name.
--- @type integer|nil
M.source = nil
--- Prompts sent, oldest first (loaded from `history_file()` on first use).
--- @type string[]|nil
M.history = nil
--- While recalling: the history index shown and the draft put aside.
--- @type {index: integer, draft: string[]}|nil
local recall = nil

M.mention_kinds = { 'buffer', 'selection', 'diagnostics' }

local function notify(message, level)
  runs.notify(message, level or vim.log.levels.WARN)
end

local function valid_win(win)
  return win ~= nil and vim.api.nvim_win_is_valid(win)
end

-- mentions --------------------------------------------------------------------

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
          local src = M.source_buffer()
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

--- The buffer the mentions name: the last file buffer entered, else a file
--- buffer shown in the current tab.
--- @return integer|nil
function M.source_buffer()
  if M.source and client.is_file_buffer(M.source) then
    return M.source
  end
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local buf = vim.api.nvim_win_get_buf(win)
    if client.is_file_buffer(buf) then
      return buf
    end
  end
  return nil
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
  local src = M.source_buffer()
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

-- history -------------------------------------------------------------------------

--- Where the sent prompts are kept across restarts.
--- @return string
function M.history_file()
  return vim.fs.joinpath(vim.fn.stdpath('state'), 'rhema', 'chat_history.json')
end

--- The sent prompts, oldest first.
--- @return string[]
function M.get_history()
  if M.history then
    return M.history
  end
  M.history = {}
  local file = io.open(M.history_file(), 'r')
  if file then
    local ok, list = pcall(vim.json.decode, file:read('*a'))
    file:close()
    if ok and type(list) == 'table' then
      for _, item in ipairs(list) do
        if type(item) == 'string' then
          table.insert(M.history, item)
        end
      end
    end
  end
  return M.history
end

--- Remember a sent prompt: the newest `chat.history` are kept, on disk too
--- (0: kept in memory only, for this Neovim).
--- @param text string
local function remember(text)
  local history = M.get_history()
  if history[#history] ~= text then
    table.insert(history, text)
  end
  local size = config.options.chat.history
  if size <= 0 then
    return
  end
  while #history > size do
    table.remove(history, 1)
  end
  local path = M.history_file()
  vim.fn.mkdir(vim.fs.dirname(path), 'p')
  local temp = path .. '.tmp'
  local file = io.open(temp, 'w')
  if file then
    file:write(vim.json.encode(history))
    file:close()
    os.rename(temp, path)
  end
end

-- the input ---------------------------------------------------------------------

local function input_lines()
  return vim.api.nvim_buf_get_lines(M.input, 0, -1, false)
end

local function set_input(lines)
  vim.api.nvim_buf_set_lines(M.input, 0, -1, false, lines)
  vim.bo[M.input].modified = false
  if valid_win(M.input_win) and vim.api.nvim_win_get_buf(M.input_win) == M.input then
    local last = #lines
    vim.api.nvim_win_set_cursor(M.input_win, { last, #(lines[last] or '') })
  end
end

--- Send the input as the next message of the current session.
--- @return boolean sent
function M.send()
  local text = vim.trim(table.concat(input_lines(), '\n'))
  if text == '' then
    notify('nothing to send: write a message first', vim.log.levels.INFO)
    return false
  end
  if runs.is_running() then
    notify('a turn is running: <C-c> or :RhemaCancel stops it')
    return false
  end
  local context, problem, src = M.context(text)
  if problem then
    notify(problem)
    return false
  end
  local images, missing = M.image_refs(text)
  if missing then
    notify(missing)
    return false
  end
  if #images > 0 then
    local of_mentions = context
    context = function(c)
      local refs = of_mentions and of_mentions(c) or {}
      vim.list_extend(refs, images)
      return refs
    end
  end
  remember(text)
  recall = nil
  set_input({ '' })
  local bufnr = src or M.source_buffer() or M.input
  local mcp = require('rhema.mcp')
  if not mcp.is_slash(text) then
    runs.run('turn', { prompt = text, context = context, mode = require('rhema.modes').chosen_mode() }, bufnr)
    return true
  end
  -- A slash command: an MCP server's prompt, filled in, is the turn's prompt.
  mcp.expand(text, bufnr, function(expanded, why)
    if not expanded then
      notify(why)
      if vim.trim(table.concat(input_lines(), '\n')) == '' then
        set_input(vim.split(text, '\n', { plain = true }))
      end
      return
    end
    runs.run('turn', { prompt = expanded, context = context, mode = require('rhema.modes').chosen_mode() }, bufnr)
  end)
  return true
end

--- Show history entry `index` (past the newest: the draft) in the input.
local function show_history(step)
  local history = M.get_history()
  if #history == 0 then
    return
  end
  if recall == nil then
    if step > 0 then
      return
    end
    recall = { index = #history + 1, draft = input_lines() }
  end
  local index = math.max(1, math.min(#history + 1, recall.index + step))
  if index == recall.index then
    return
  end
  recall.index = index
  if index > #history then
    local draft = recall.draft
    recall = nil
    set_input(draft)
  else
    set_input(vim.split(history[index], '\n', { plain = true }))
  end
end

--- Recall the previous sent prompt.
function M.history_prev()
  show_history(-1)
end

--- Recall the next sent prompt (past the newest: what was being written).
function M.history_next()
  show_history(1)
end

--- The input buffer (made on first use).
--- @return integer
function M.input_buffer()
  if M.input and vim.api.nvim_buf_is_valid(M.input) then
    return M.input
  end
  local buf = vim.api.nvim_create_buf(false, true)
  M.input = buf
  vim.bo[buf].buftype = 'acwrite'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.api.nvim_buf_set_name(buf, 'rhema://chat')
  vim.bo[buf].filetype = 'markdown'
  require('rhema.markdown').attach(buf)
  vim.bo[buf].omnifunc = "v:lua.require'rhema.chat'.omnifunc"
  vim.api.nvim_create_autocmd('BufWriteCmd', {
    buffer = buf,
    callback = function()
      if M.send() then
        vim.bo[buf].modified = false
      end
    end,
  })
  vim.api.nvim_create_autocmd('BufWipeout', {
    buffer = buf,
    once = true,
    callback = function()
      M.input, M.input_win, recall = nil, nil, nil
    end,
  })
  local pending = false
  vim.api.nvim_buf_attach(buf, false, {
    on_lines = function()
      if not pending then
        pending = true
        vim.schedule(function()
          pending = false
          M.highlight_mentions(buf)
          if vim.api.nvim_buf_is_valid(buf) then
            require('rhema.markdown').fences(buf, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
          end
          -- A draft never holds up :qa (E162); :w sends all the same.
          if vim.api.nvim_buf_is_valid(buf) then
            vim.bo[buf].modified = false
          end
        end)
      end
    end,
  })
  local keys = config.options.chat.keys
  local function map(modes, lhs, rhs, desc, opts)
    if lhs then
      local options = { buffer = buf, desc = 'Rhema chat: ' .. desc }
      vim.keymap.set(modes, lhs, rhs, vim.tbl_extend('force', options, opts or {}))
    end
  end
  map('n', keys.send, M.send, 'send')
  map({ 'n', 'i' }, keys.send_insert, M.send, 'send')
  map('n', keys.history_prev, M.history_prev, 'previous message')
  map('n', keys.history_next, M.history_next, 'next message')
  if keys.arrows then
    -- On the first (last) line the arrow recalls, elsewhere it moves (with its count).
    local function edge(first, key, recall_fn)
      return function()
        local row = vim.api.nvim_win_get_cursor(0)[1]
        if row == (first and 1 or vim.api.nvim_buf_line_count(buf)) then
          return ("<Cmd>lua require'rhema.chat'.%s()<CR>"):format(recall_fn)
        end
        return key
      end
    end
    map({ 'n', 'i' }, '<Up>', edge(true, '<Up>', 'history_prev'), 'previous message', {
      expr = true,
    })
    map({ 'n', 'i' }, '<Down>', edge(false, '<Down>', 'history_next'), 'next message', {
      expr = true,
    })
  end
  M.chat_keys(buf)
  return buf
end

--- The keys the input and the panels share: stop and close.
--- @param buf integer
function M.chat_keys(buf)
  local keys = config.options.chat.keys
  if keys.stop then
    vim.keymap.set('n', keys.stop, function()
      runs.cancel()
    end, { buffer = buf, desc = 'Rhema: stop the running turn' })
  end
  if keys.close then
    vim.keymap.set('n', keys.close, M.close, { buffer = buf, desc = 'Rhema: close the chat' })
  end
  if keys.mode then
    vim.keymap.set('n', keys.mode, function()
      require('rhema.modes').pick()
    end, { buffer = buf, desc = "Rhema: pick the mode of the chat's prompts" })
  end
end

-- the windows -------------------------------------------------------------------

--- The winbar of the input window.
--- @return string
function M.winbar()
  local src = M.source_buffer()
  local name = src and runs.display(vim.api.nvim_buf_get_name(src)) or 'no file'
  local keys = config.options.chat.keys
  local state
  if runs.is_working() then
    state = 'running' .. (keys.stop and (', ' .. keys.stop .. ' stops') or '')
  elseif runs.is_running() then
    state = 'stopping…'
  else
    state = (keys.send and (keys.send .. ' or ') or '') .. ':w sends'
  end
  return ('Rhema · %s · %s · #buffer: %s'):format(require('rhema.modes').current(), state, name)
end

--- The panel the chat shows: the current session's, else an empty one that
--- the first message streams into.
--- @return rhema.Panel
local function chat_panel()
  local p = runs.current_panel
  if p and vim.api.nvim_buf_is_valid(p.buf) then
    return p
  end
  local blank = runs.blank
  if blank and vim.api.nvim_buf_is_valid(blank.buf) then
    return blank
  end
  blank = require('rhema.panel').new('chat', nil)
  runs.blank = blank
  return blank
end

--- Whether the chat's input window is open.
--- @return boolean
function M.is_open()
  return valid_win(M.input_win) and vim.api.nvim_win_get_buf(M.input_win) == M.input
end

--- Open the chat (or focus it): the session's panel, the input under it.
--- @param opts {text: string|nil, selection: boolean|nil}|nil
function M.open(opts)
  opts = opts or {}
  local current = vim.api.nvim_get_current_buf()
  if client.is_file_buffer(current) then
    M.source = current
  end
  local shown = chat_panel()
  local panel_win = shown:show()
  if #shown.blocks == 0 then
    -- A first run with no real model says so, with the choices.
    require('rhema.first_run').on_chat_open(shown, M.source_buffer() or current)
    M.hint(shown)
  end
  local input = M.input_buffer()
  if not M.is_open() then
    M.input_win = vim.api.nvim_open_win(input, false, {
      split = 'below',
      win = panel_win,
      height = config.options.chat.height,
    })
    local wo = vim.wo[M.input_win]
    wo.wrap = true
    wo.linebreak = true
    wo.number = false
    wo.relativenumber = false
    wo.signcolumn = 'no'
    wo.foldenable = false
    wo.winfixheight = true
    wo.winbar = "%{v:lua.require'rhema.chat'.winbar()}"
  end
  vim.api.nvim_set_current_win(M.input_win)
  if opts.selection then
    local lines = input_lines()
    local last = lines[#lines]
    lines[#lines] = last .. ((last == '' or last:match('%s$')) and '' or ' ') .. '#selection '
    set_input(lines)
  end
  if opts.text and opts.text ~= '' then
    set_input(vim.split(opts.text, '\n', { plain = true }))
    M.send()
  end
end

--- The lines an empty chat panel shows (virtual: the buffer stays empty, and
--- the first block written clears them, see Panel:flush).
--- @return string[]
function M.hint_lines()
  local keys = config.options.chat.keys
  local send = keys.send and (keys.send .. ' or :w') or ':w'
  local pick = keys.mode and (keys.mode .. ' or :RhemaMode') or ':RhemaMode'
  return {
    ('Ask about your code below; %s sends, and every message follows up in this session.'):format(send),
    '#buffer, #selection and #diagnostics attach the file you came from; #image:path an image.',
    ('Mode: %s (%s picks another) · :RhemaSessions reopens a session · :help rhema-chat'):format(
      require('rhema.modes').current(),
      pick
    ),
  }
end

--- Show how to use the chat in `p`, an empty panel.
--- @param p rhema.Panel
function M.hint(p)
  if #p.blocks > 0 or not vim.api.nvim_buf_is_valid(p.buf) then
    return
  end
  local ns = vim.api.nvim_create_namespace('rhema.chat.hint')
  vim.api.nvim_buf_clear_namespace(p.buf, ns, 0, -1)
  local lines = vim.tbl_map(function(line)
    return { { line, 'Comment' } }
  end, M.hint_lines())
  vim.api.nvim_buf_set_extmark(p.buf, ns, 0, 0, { virt_lines = lines })
end

--- A new session began (`:RhemaNew`): an open chat shows an empty panel.
function M.on_new_session()
  if M.is_open() then
    local p = chat_panel()
    p:show()
    M.hint(p)
  end
end

--- Close the chat's windows; the buffers stay.
function M.close()
  local wins = {}
  if valid_win(M.input_win) then
    table.insert(wins, M.input_win)
  end
  local panel_win = require('rhema.window').win
  if valid_win(panel_win) then
    table.insert(wins, panel_win)
  end
  for _, win in ipairs(wins) do
    if #vim.api.nvim_tabpage_list_wins(0) > 1 then
      pcall(vim.api.nvim_win_close, win, false)
    end
  end
  M.input_win = nil
end

--- The keys of a panel buffer: `gf`, `i`, `R`, and the chat's stop and close.
--- @param buf integer
function M.panel_keys(buf)
  local keys = config.options.chat.keys
  if keys.goto_file then
    vim.keymap.set('n', keys.goto_file, function()
      require('rhema.jump').goto_file()
    end, {
      buffer = buf,
      desc = 'Rhema: open the file of this tool line',
    })
  end
  if keys.input then
    vim.keymap.set('n', keys.input, function()
      M.open()
      vim.cmd.startinsert({ bang = true })
    end, { buffer = buf, desc = 'Rhema: write in the chat' })
  end
  if keys.retry then
    vim.keymap.set('n', keys.retry, function()
      runs.retry(M.source_buffer() or buf)
    end, { buffer = buf, desc = 'Rhema: retry the failed turn' })
  end
  M.chat_keys(buf)
end

--- Follow the file buffer the user works in, and close the input with the panel.
function M.setup()
  local group = vim.api.nvim_create_augroup('rhema.chat', { clear = true })
  vim.api.nvim_create_autocmd('BufEnter', {
    group = group,
    callback = function(args)
      if client.is_file_buffer(args.buf) then
        M.source = args.buf
      end
    end,
  })
  vim.api.nvim_create_autocmd('WinClosed', {
    group = group,
    callback = function(args)
      local closed = tonumber(args.match)
      if closed and closed == require('rhema.window').win and M.is_open() then
        vim.schedule(function()
          if M.is_open() and #vim.api.nvim_tabpage_list_wins(0) > 1 then
            pcall(vim.api.nvim_win_close, M.input_win, false)
          end
          M.input_win = nil
        end)
      end
    end,
  })
end

return M
