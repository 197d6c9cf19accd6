--- The windows of `:RhemaDiff`: their options, their folds' labels, the cursor.
---
--- Contract: `setup(before_win, file_win, label)` (called once both windows
--- are in diff mode) gives both windows the editor's own window options
--- back: a tab opened from the chat or a panel would otherwise inherit the
--- panel window's (its reasoning foldtext "> reasoning (7 lines)", its
--- conceal, its wrap). The folds of unchanged text read what they hold and
--- where: `··· 6 unchanged lines · before turn 3: <the turn's prompt> ···`
--- in the checkpoint, `··· 6 unchanged lines · <file> now ···` in the file.
--- The cursor lands in the checkpoint, on its first change: there `q`
--- closes the diff's tab (never starts recording a macro) and `dp` puts a
--- hunk of the checkpoint back into the file.
local M = {}

--- The window options a panel or the chat's input sets, reset in the diff.
local inherited = {
  'foldtext',
  'foldexpr',
  'foldlevel',
  'conceallevel',
  'concealcursor',
  'wrap',
  'linebreak',
  'breakindent',
  'breakindentopt',
  'number',
  'relativenumber',
  'signcolumn',
  'winfixwidth',
  'winfixheight',
  'winbar',
}

--- What a closed fold of unchanged lines shows (foldtext of the diff's windows).
--- @return string
function M.foldtext()
  local count = vim.v.foldend - vim.v.foldstart + 1
  local lines = require('rhema.render').plural(count, 'unchanged line')
  local label = vim.w.rhema_diff_label
  return ('··· %s%s ···'):format(lines, label and (' · ' .. label) or '')
end

local function reset(win, label)
  for _, name in ipairs(inherited) do
    local value = vim.api.nvim_get_option_value(name, { scope = 'global' })
    vim.api.nvim_set_option_value(name, value, { win = win, scope = 'local' })
  end
  vim.wo[win][0].foldtext = "v:lua.require'rhema.diff_view'.foldtext()"
  vim.w[win].rhema_diff_label = label
end

--- The label of the checkpoint's folds: its turn and that turn's prompt.
--- @param turn integer
--- @param title string|nil the turn's title (its prompt)
--- @return string
function M.before_label(turn, title)
  local label = ('before turn %d'):format(turn)
  if type(title) == 'string' and title ~= '' then
    local first = title:match('^[^\n]*')
    if vim.fn.strchars(first) > 50 then
      first = vim.fn.strcharpart(first, 0, 49) .. '…'
    end
    label = label .. ': ' .. first
  end
  return label
end

--- Set up the diff's two windows and put the cursor on the checkpoint's first change.
--- @param before_win integer the checkpoint's window
--- @param file_win integer the file's window
--- @param labels {before: string, file: string}
function M.setup(before_win, file_win, labels)
  reset(before_win, labels.before)
  reset(file_win, labels.file)
  vim.api.nvim_set_current_win(before_win)
  vim.api.nvim_win_set_cursor(before_win, { 1, 0 })
  if vim.fn.diff_hlID(1, 1) == 0 then
    pcall(vim.cmd, 'normal! ]c')
  end
end

return M
