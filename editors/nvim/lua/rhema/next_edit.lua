--- Next-edit suggestions: the server's `textDocument/copilotInlineEdit`
--- (the request copilot-language-server's clients send), shown at its place.
---
--- Contract: after you leave Insert mode in a buffer the rhema client is attached to, the plugin asks for the
--- next edit of exactly the buffer's current version; an answer for another
--- version, or one that arrives after the buffer changed, is dropped. The edit
--- is shown as a diff at its place: the text it replaces highlighted
--- `RhemaNextEditOld`, the new text beside it `RhemaNextEditNew`. The key
--- (`inline.next_edit`, default `<M-;>`, Normal mode) jumps to it, and
--- pressed there applies it; a change to the buffer dismisses it.
local M = {}

local ns = vim.api.nvim_create_namespace('rhema.next_edit')
local METHOD = 'textDocument/copilotInlineEdit'

--- Per buffer: `{edit, version, encoding}` of the suggestion shown.
local shown = {}

local function current(bufnr)
  return bufnr == 0 and vim.api.nvim_get_current_buf() or bufnr
end

--- Dismiss the suggestion shown in `bufnr`.
--- @param bufnr integer
function M.clear(bufnr)
  bufnr = current(bufnr)
  shown[bufnr] = nil
  if vim.api.nvim_buf_is_valid(bufnr) then
    vim.api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
  end
end

--- The suggestion shown in `bufnr`, if any.
--- @param bufnr integer
--- @return table|nil
function M.shown(bufnr)
  return shown[current(bufnr)]
end

local function byte_col(bufnr, position, encoding)
  local line = vim.api.nvim_buf_get_lines(bufnr, position.line, position.line + 1, false)[1] or ''
  return vim.str_byteindex(line, encoding, position.character, false)
end

local function show(bufnr, edit, version, encoding)
  local range = edit.range
  local start_col = byte_col(bufnr, range.start, encoding)
  local end_col = byte_col(bufnr, range['end'], encoding)
  vim.api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
  vim.api.nvim_buf_set_extmark(bufnr, ns, range.start.line, start_col, {
    end_row = range['end'].line,
    end_col = end_col,
    hl_group = 'RhemaNextEditOld',
  })
  local new = vim.split(edit.text, '\n', { plain = true })
  vim.api.nvim_buf_set_extmark(bufnr, ns, range['end'].line, end_col, {
    virt_text = { { new[1], 'RhemaNextEditNew' } },
    virt_text_pos = 'inline',
    virt_lines = #new > 1 and vim.tbl_map(function(line)
      return { { line, 'RhemaNextEditNew' } }
    end, vim.list_slice(new, 2)) or nil,
  })
  shown[bufnr] = { edit = edit, version = version, encoding = encoding }
end

--- Ask for the next edit of the current buffer at the cursor.
function M.request()
  local bufnr = vim.api.nvim_get_current_buf()
  M.clear(bufnr)
  local client = vim.lsp.get_clients({ bufnr = bufnr, name = require('rhema.client').name })[1]
  local opts = require('rhema.config').options.inline
  if not client or not opts.enabled or vim.tbl_contains(opts.disabled_filetypes or {}, vim.bo[bufnr].filetype) then
    return
  end
  local version = vim.lsp.util.buf_versions[bufnr]
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  params.textDocument.version = version
  client:request(METHOD, params, function(err, result)
    if err or not result or not vim.api.nvim_buf_is_valid(bufnr) then
      return
    end
    if vim.lsp.util.buf_versions[bufnr] ~= version then
      return -- the buffer changed while the model answered
    end
    local edit = (result.edits or {})[1]
    if edit and edit.textDocument and edit.textDocument.version == version then
      show(bufnr, edit, version, client.offset_encoding)
    end
  end, bufnr)
end

--- Jump to the suggestion shown, or apply it when the cursor is already there.
--- @return boolean whether one was shown
function M.jump_or_accept()
  local bufnr = vim.api.nvim_get_current_buf()
  local entry = shown[bufnr]
  if not entry or vim.lsp.util.buf_versions[bufnr] ~= entry.version then
    M.clear(bufnr)
    return false
  end
  local start = entry.edit.range.start
  local col = byte_col(bufnr, start, entry.encoding)
  local cursor = vim.api.nvim_win_get_cursor(0)
  if cursor[1] - 1 ~= start.line or cursor[2] ~= col then
    vim.api.nvim_win_set_cursor(0, { start.line + 1, col })
    return true
  end
  M.clear(bufnr)
  vim.lsp.util.apply_text_edits({ { range = entry.edit.range, newText = entry.edit.text } }, bufnr, entry.encoding)
  return true
end

--- Define the highlights, the autocmds and the key.
--- @param opts table the `inline` options
function M.setup(opts)
  vim.api.nvim_set_hl(0, 'RhemaNextEditOld', { link = 'DiffDelete', default = true })
  vim.api.nvim_set_hl(0, 'RhemaNextEditNew', { link = 'DiffAdd', default = true })
  local group = vim.api.nvim_create_augroup('rhema.next_edit', { clear = true })
  if not opts.enabled or not opts.next_edit then
    return
  end
  -- After the user's own typing only: an edit the agent applies is not the user's.
  vim.api.nvim_create_autocmd('InsertLeave', { group = group, callback = M.request })
  vim.api.nvim_create_autocmd({ 'TextChanged', 'TextChangedI', 'BufLeave' }, {
    group = group,
    callback = function(args)
      M.clear(args.buf)
    end,
  })
  vim.keymap.set('n', opts.next_edit, function()
    if not M.jump_or_accept() then
      vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(opts.next_edit, true, false, true), 'n', false)
    end
  end, { desc = 'rhema: jump to the next-edit suggestion, or apply it' })
end

return M
