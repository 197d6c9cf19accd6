--- The review's view: its buffer in a tab of its own, and its keys.
---
--- Contract: the buffer (`rhema://review/N`, 'buftype' acwrite, diff) shows
--- the review's label, a help line, how many changes are accepted and when
--- it is declined unanswered, then each file's hunks, each headed `[x]`
--- (accepted, `RhemaReviewAccepted`) or `[ ]` (rejected,
--- `RhemaReviewRejected`). Its Normal-mode keys: `a`/`r` accept/reject the
--- change under the cursor, `A`/`R` every change, `<CR>` or `:w` apply the
--- accepted, `]]`/`[[` move between changes, `q` hides it (`:RhemaReview`
--- shows it again). The review tab always starts in Normal mode, also when
--- it opens while the user types, with the cursor on the first change.
local M = {}

local ns = vim.api.nvim_create_namespace('rhema.review')

local function review_module()
  return require('rhema.review')
end

local function display(uri)
  return require('rhema.runs').display(vim.uri_to_fname(uri))
end


local function help_line()
  return 'a accept · r reject · A accept all · R reject all · <CR> or :w apply the accepted'
    .. ' · ]] [[ next/previous · q later (:RhemaReview)'
end

function M.render(review)
  local buf = review.buf
  if not buf or not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  local accepted = #vim.tbl_filter(function(item)
    return item.accepted
  end, review.items)
  local lines = {
    'Rhema review: ' .. review.label,
    help_line(),
    ('%d of %d change(s) accepted · declined at %s if not answered'):format(
      accepted,
      #review.items,
      os.date('%H:%M:%S', review.declined_at)
    ),
  }
  review.item_at = {}
  local shown_uri = nil
  for index, item in ipairs(review.items) do
    if item.uri ~= shown_uri then
      shown_uri = item.uri
      local name = display(item.uri)
      vim.list_extend(lines, { '', '--- ' .. name, '+++ ' .. name .. ' (proposed)' })
    end
    local mark = item.accepted and '[x]' or '[ ]'
    table.insert(lines, ('@@ %s change %d · %s @@'):format(mark, index, item.header))
    review.item_at[#lines] = index
    for _, line in ipairs(item.lines) do
      table.insert(lines, line)
      review.item_at[#lines] = index
    end
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  for row, index in pairs(review.item_at) do
    if lines[row]:sub(1, 2) == '@@' then
      local group = review.items[index].accepted and 'RhemaReviewAccepted' or 'RhemaReviewRejected'
      vim.api.nvim_buf_set_extmark(buf, ns, row - 1, 0, { line_hl_group = group })
    end
  end
end

--- The item under the cursor in the review buffer.
function M.item_under_cursor(review)
  local row = vim.api.nvim_win_get_cursor(0)[1]
  return review.item_at and review.item_at[row]
end

--- The first line of item `index` in the buffer.
local function row_of(review, index)
  local best
  for row, at in pairs(review.item_at or {}) do
    if at == index and (best == nil or row < best) then
      best = row
    end
  end
  return best
end

local function jump(review, direction)
  local current = M.item_under_cursor(review) or 0
  local target = current + direction
  if direction < 0 and current == 0 then
    target = #review.items
  end
  local row = row_of(review, target)
  if row then
    vim.api.nvim_win_set_cursor(0, { row, 0 })
  end
end

local function define_highlights()
  vim.api.nvim_set_hl(0, 'RhemaReviewAccepted', { default = true, link = 'DiffAdd' })
  vim.api.nvim_set_hl(0, 'RhemaReviewRejected', { default = true, link = 'DiffDelete' })
end

function M.close_view(review)
  local buf = review.buf
  review.buf = nil
  if buf and vim.api.nvim_buf_is_valid(buf) then
    -- Wiping the buffer closes its windows (and so its tab).
    vim.api.nvim_buf_delete(buf, { force = true })
  end
end

function M.map_keys(review, buf)
  local function map(lhs, fn, desc)
    vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true, desc = 'Rhema review: ' .. desc })
  end
  map('a', function()
    local index = M.item_under_cursor(review)
    if index then
      review_module().set(review, index, true)
    end
  end, 'accept the change')
  map('r', function()
    local index = M.item_under_cursor(review)
    if index then
      review_module().set(review, index, false)
    end
  end, 'reject the change')
  map('A', function()
    review_module().set(review, nil, true)
  end, 'accept every change')
  map('R', function()
    review_module().set(review, nil, false)
  end, 'reject every change')
  map('<CR>', function()
    review_module().finish(review)
  end, 'apply the accepted changes')
  map(']]', function()
    jump(review, 1)
  end, 'next change')
  map('[[', function()
    jump(review, -1)
  end, 'previous change')
  map('q', function()
    review_module().hide()
  end, 'hide (:RhemaReview shows it again)')
  vim.api.nvim_create_autocmd('BufWriteCmd', {
    buffer = buf,
    callback = function()
      -- Not inside the write: finishing wipes this buffer.
      vim.schedule(function()
        review_module().finish(review)
      end)
    end,
  })
end

--- Show `review` in a tab of its own (or where it already is).
--- @param review rhema.Review
function M.show(review)
  define_highlights()
  if review.buf and vim.api.nvim_buf_is_valid(review.buf) then
    local win = vim.fn.win_findbuf(review.buf)[1]
    if win then
      vim.api.nvim_set_current_win(win)
      vim.cmd.stopinsert()
      return
    end
  else
    local buf = vim.api.nvim_create_buf(false, true)
    review.buf = buf
    vim.bo[buf].buftype = 'acwrite'
    vim.bo[buf].bufhidden = 'hide'
    vim.bo[buf].swapfile = false
    vim.api.nvim_buf_set_name(buf, ('rhema://review/%d'):format(review.id))
    vim.bo[buf].filetype = 'diff'
    M.map_keys(review, buf)
    M.render(review)
  end
  require('rhema.tabline').setup()
  vim.cmd('tab sbuffer ' .. review.buf)
  -- The review's keys are Normal-mode keys: a review that opens while the
  -- user types (a turn sent with <C-s> from the chat's input) starts there too.
  vim.cmd.stopinsert()
  vim.wo[0][0].foldenable = false
  local row = row_of(review, 1)
  if row then
    vim.api.nvim_win_set_cursor(0, { row, 0 })
  end
end

return M
