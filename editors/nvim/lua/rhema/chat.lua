--- The chat: the current session's panel with an input buffer under it.
---
--- Contract: `open()` shows the current session's panel in the panel window
--- (an empty one for a new session) and, just below it, the one input
--- buffer (`rhema://chat`, 'buftype' acwrite, markdown), and focuses the
--- input. `send()` (`<CR>` in normal mode, `:w`) sends the input as a
--- `rhema.turn` of the current session (`runs.run`), so every message after
--- the first is a follow-up in the same session; it is refused while a run
--- is in flight. Its mentions become the turn's `context`
--- (rhema.chat.mentions). A prompt that starts with a slash command (an MCP
--- server's prompt, see rhema.mcp) sends the prompt's text. Sent prompts are
--- kept and recalled (rhema.chat.history); the input's and the panels' keys
--- are rhema.chat.keys (every key is `chat.keys`, see config). The winbar
--- says the mode, how to send, that a turn runs, or that it is stopping; it
--- is drawn again the moment a run ends. An empty chat whose server has no
--- real model shows the setup choices (rhema.first_run). This module also
--- exports the functions of rhema.chat.mentions, rhema.chat.history and
--- rhema.chat.keys, under their names.
local client = require('rhema.client')
local config = require('rhema.config')
local history = require('rhema.chat.history')
local chat_keys = require('rhema.chat.keys')
local mentions = require('rhema.chat.mentions')
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

M.mention_kinds = mentions.mention_kinds
M.mentions = mentions.mentions
M.image_refs = mentions.image_refs
M.highlight_mentions = mentions.highlight_mentions
M.context = mentions.context
M.omnifunc = mentions.omnifunc
M.history_file = history.history_file
M.get_history = history.get_history
M.chat_keys = chat_keys.chat_keys
M.panel_keys = chat_keys.panel_keys

local function notify(message, level)
  runs.notify(message, level or vim.log.levels.WARN)
end

local function valid_win(win)
  return win ~= nil and vim.api.nvim_win_is_valid(win)
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
  history.remember(text)
  history.reset()
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

--- Recall the previous sent prompt.
function M.history_prev()
  local lines = history.recall(-1, input_lines())
  if lines then
    set_input(lines)
  end
end

--- Recall the next sent prompt (past the newest: what was being written).
function M.history_next()
  local lines = history.recall(1, input_lines())
  if lines then
    set_input(lines)
  end
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
      M.input, M.input_win = nil, nil
      history.reset()
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
  chat_keys.input_keys(buf)
  return buf
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
    local wo = vim.wo[M.input_win][0]
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
