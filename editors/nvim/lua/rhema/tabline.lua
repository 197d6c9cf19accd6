--- Readable tab labels while Rhema's tabs are open.
---
--- Contract: Neovim's own tab labels shorten every path part to its first
--- letter, so Rhema's buffers (`rhema://review/2`, `rhema://chat`) read as
--- "r//r/2". `setup()`, called when Rhema opens a tab of its own (a review,
--- `:RhemaDiff`), sets 'tabline' to `render()`, but only while 'tabline' is
--- empty: a tabline the user (or a plugin) set is left alone. `render()`
--- draws what Neovim's default draws (the window count, the name, `+` when
--- modified, each label clickable) with Rhema's buffers named in words
--- (`label_of`): "Rhema review 2", "Rhema chat", "hello.py before turn 3".
local M = {}

--- The words for a Rhema buffer's name, or nil for any other buffer.
--- @param name string
--- @return string|nil
function M.label_of(name)
  if name == 'rhema://chat' then
    return 'Rhema chat'
  end
  local review = name:match('^rhema://review/(%d+)$')
  if review then
    return 'Rhema review ' .. review
  end
  local turn, path = name:match('^rhema://before%-turn%-(%d+)/(.+)$')
  if turn then
    return ('%s before turn %s'):format(path, turn)
  end
  if name:match('^rhema://%d+/') then
    return 'Rhema'
  end
  return nil
end

--- The 'tabline' string (see the contract).
--- @return string
function M.render()
  local parts = {}
  local current = vim.api.nvim_get_current_tabpage()
  for number, tab in ipairs(vim.api.nvim_list_tabpages()) do
    local buf = vim.api.nvim_win_get_buf(vim.api.nvim_tabpage_get_win(tab))
    local name = vim.api.nvim_buf_get_name(buf)
    local label = M.label_of(name)
      or (name == '' and '[No Name]' or vim.fn.pathshorten(vim.fn.fnamemodify(name, ':~:.')))
    local windows = #vim.api.nvim_tabpage_list_wins(tab)
    if windows > 1 then
      label = windows .. ' ' .. label
    end
    if vim.bo[buf].modified then
      label = label .. ' +'
    end
    local group = tab == current and '%#TabLineSel#' or '%#TabLine#'
    table.insert(parts, ('%s%%%dT %s '):format(group, number, (label:gsub('%%', '%%%%'))))
  end
  return table.concat(parts) .. '%#TabLineFill#%T'
end

--- Use `render()` for 'tabline' unless one is set.
function M.setup()
  if vim.o.tabline == '' then
    vim.o.tabline = "%!v:lua.require'rhema.tabline'.render()"
  end
end

return M
