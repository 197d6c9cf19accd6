--- The chat's keys: those of the input buffer, and those every panel gets.
---
--- Contract: the input sends with `chat.keys.send` (normal mode) and
--- `send_insert`, recalls the history with `history_prev`/`history_next`
--- (and, with `arrows`, `<Up>`/`<Down>` on its first/last line; elsewhere the
--- arrow moves, with its count). Every panel gets `gf` (`rhema.jump`), `i`
--- (to the input), `R` (retry the failed turn); the input and the panels
--- share stop, close and mode (rhema.modes: the chat's prompts run in it).
--- A key set to false in `chat.keys` is not mapped. `rhema.chat` exports
--- `chat_keys` and `panel_keys`.
local config = require('rhema.config')
local runs = require('rhema.runs')

local M = {}

local function chat()
  return require('rhema.chat')
end

--- The keys of the input buffer `buf`.
--- @param buf integer
function M.input_keys(buf)
  local keys = config.options.chat.keys
  local function map(modes, lhs, rhs, desc, opts)
    if lhs then
      local options = { buffer = buf, desc = 'Rhema chat: ' .. desc }
      vim.keymap.set(modes, lhs, rhs, vim.tbl_extend('force', options, opts or {}))
    end
  end
  map('n', keys.send, chat().send, 'send')
  map({ 'n', 'i' }, keys.send_insert, chat().send, 'send')
  map('n', keys.history_prev, chat().history_prev, 'previous message')
  map('n', keys.history_next, chat().history_next, 'next message')
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
    vim.keymap.set('n', keys.close, function()
      chat().close()
    end, { buffer = buf, desc = 'Rhema: close the chat' })
  end
  if keys.mode then
    vim.keymap.set('n', keys.mode, function()
      require('rhema.modes').pick()
    end, { buffer = buf, desc = "Rhema: pick the mode of the chat's prompts" })
  end
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
      chat().open()
      vim.cmd.startinsert({ bang = true })
    end, { buffer = buf, desc = 'Rhema: write in the chat' })
  end
  if keys.retry then
    vim.keymap.set('n', keys.retry, function()
      runs.retry(chat().source_buffer() or buf)
    end, { buffer = buf, desc = 'Rhema: retry the failed turn' })
  end
  M.chat_keys(buf)
end

return M
