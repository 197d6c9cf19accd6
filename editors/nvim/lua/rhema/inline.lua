--- Inline completion as ghost text: the server's LSP 3.18
--- `textDocument/inlineCompletion`, shown with extmarks (Neovim 0.11 has no
--- built-in inline completion; 0.12's `vim.lsp.inline_completion` speaks the
--- same request with no plugin).
---
--- Contract: while typing in Insert mode in a buffer the rhema client is
--- attached to, each change asks the server (the request before is cancelled:
--- `$/cancelRequest`, so the server's debounce keeps it from the model); the
--- answer is shown only if the buffer and the cursor are still where it was
--- asked (the first line inline after the cursor, the others as virtual lines
--- below, highlighted `RhemaGhost`). The accept key (`inline.accept`, default
--- `<M-l>`) inserts it; any other key goes on as usual and a change clears it.
--- `inline.enabled = false` or a filetype in `inline.disabled_filetypes`
--- turns it off.
local M = {}

local ns = vim.api.nvim_create_namespace('rhema.inline')
local METHOD = 'textDocument/inlineCompletion'

--- Per buffer: the request in flight `{client, id}` and the suggestion shown
--- `{row, col, text, replace_to}`.
local state = {}

local function options()
  return require('rhema.config').options.inline
end

local function client_for(bufnr)
  return vim.lsp.get_clients({ bufnr = bufnr, name = require('rhema.client').name })[1]
end

--- Clear the suggestion shown in `bufnr` (and cancel its request).
--- @param bufnr integer
function M.clear(bufnr)
  bufnr = bufnr == 0 and vim.api.nvim_get_current_buf() or bufnr
  local entry = state[bufnr]
  if entry and entry.pending then
    pcall(entry.pending.client.cancel_request, entry.pending.client, entry.pending.id)
  end
  state[bufnr] = nil
  if vim.api.nvim_buf_is_valid(bufnr) then
    vim.api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
  end
end

--- The suggestion shown in `bufnr`, if any.
--- @param bufnr integer
--- @return table|nil
function M.shown(bufnr)
  bufnr = bufnr == 0 and vim.api.nvim_get_current_buf() or bufnr
  local entry = state[bufnr]
  return entry and entry.shown or nil
end

local function enabled(bufnr)
  local opts = options()
  return opts.enabled and not vim.tbl_contains(opts.disabled_filetypes or {}, vim.bo[bufnr].filetype)
end

local function show(bufnr, row, col, item, encoding)
  local text = type(item.insertText) == 'table' and item.insertText.value or item.insertText
  if type(text) ~= 'string' or text == '' then
    return
  end
  local replace_to
  local range = item.range
  if range and (range['end'].line ~= range.start.line or range['end'].character ~= range.start.character) then
    local line = vim.api.nvim_buf_get_lines(bufnr, range['end'].line, range['end'].line + 1, false)[1] or ''
    replace_to = vim.str_byteindex(line, encoding, range['end'].character, false)
  end
  local lines = vim.split(text, '\n', { plain = true })
  local virt_lines = {}
  for i = 2, #lines do
    virt_lines[#virt_lines + 1] = { { lines[i], 'RhemaGhost' } }
  end
  vim.api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
  vim.api.nvim_buf_set_extmark(bufnr, ns, row, col, {
    virt_text = { { lines[1], 'RhemaGhost' } },
    virt_text_pos = 'inline',
    virt_lines = #virt_lines > 0 and virt_lines or nil,
  })
  state[bufnr] = { shown = { row = row, col = col, text = text, replace_to = replace_to } }
end

--- Ask the server for a suggestion at the cursor of the current buffer.
function M.request()
  local bufnr = vim.api.nvim_get_current_buf()
  M.clear(bufnr)
  local client = client_for(bufnr)
  if not client or not enabled(bufnr) then
    return
  end
  local cursor = vim.api.nvim_win_get_cursor(0)
  local row, col = cursor[1] - 1, cursor[2]
  local tick = vim.api.nvim_buf_get_changedtick(bufnr)
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  params.context = { triggerKind = 2 }
  local id
  local ok, sent = client:request(METHOD, params, function(err, result)
    local entry = state[bufnr]
    if entry and entry.pending and entry.pending.id == id then
      state[bufnr] = nil
    end
    if err or not result or not vim.api.nvim_buf_is_valid(bufnr) then
      return
    end
    local now = vim.api.nvim_win_get_cursor(0)
    if vim.api.nvim_buf_get_changedtick(bufnr) ~= tick or now[1] - 1 ~= row or now[2] ~= col then
      return -- stale: the buffer or the cursor moved on
    end
    local items = result.items or result
    if items[1] then
      show(bufnr, row, col, items[1], client.offset_encoding)
    end
  end, bufnr)
  if ok then
    id = sent
    state[bufnr] = { pending = { client = client, id = id } }
  end
end

--- Insert the suggestion shown in the current buffer; false when none is.
--- @return boolean
function M.accept()
  local bufnr = vim.api.nvim_get_current_buf()
  local shown = M.shown(bufnr)
  if not shown then
    return false
  end
  M.clear(bufnr)
  local lines = vim.split(shown.text, '\n', { plain = true })
  local to = shown.replace_to or shown.col
  vim.api.nvim_buf_set_text(bufnr, shown.row, shown.col, shown.row, to, lines)
  local last = shown.row + #lines
  local col = (#lines == 1 and shown.col or 0) + #lines[#lines]
  vim.api.nvim_win_set_cursor(0, { last, col })
  return true
end

--- Define the highlight, the autocmds and the accept key.
--- @param opts table the `inline` options
function M.setup(opts)
  vim.api.nvim_set_hl(0, 'RhemaGhost', { link = 'Comment', default = true })
  local group = vim.api.nvim_create_augroup('rhema.inline', { clear = true })
  if not opts.enabled then
    return
  end
  vim.api.nvim_create_autocmd('TextChangedI', { group = group, callback = M.request })
  vim.api.nvim_create_autocmd({ 'InsertLeave', 'BufLeave' }, {
    group = group,
    callback = function(args)
      M.clear(args.buf)
    end,
  })
  vim.api.nvim_create_autocmd('CursorMovedI', {
    group = group,
    callback = function(args)
      local shown = M.shown(args.buf)
      local cursor = vim.api.nvim_win_get_cursor(0)
      if shown and (cursor[1] - 1 ~= shown.row or cursor[2] ~= shown.col) then
        M.clear(args.buf)
      end
    end,
  })
  if opts.accept then
    vim.keymap.set('i', opts.accept, function()
      if not M.accept() then
        local key = vim.api.nvim_replace_termcodes(opts.accept, true, false, true)
        vim.api.nvim_feedkeys(key, 'n', false)
      end
    end, { desc = 'rhema: accept the inline suggestion' })
  end
end

return M
