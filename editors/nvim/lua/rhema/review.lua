--- Review mode: the agent's edits shown as a diff, applied change by change.
---
--- Contract: with `review: true` the server sends each edit as a
--- `workspace/applyEdit` whose changes carry change annotations, one of them
--- `needsConfirmation: true` (see docs/protocol.md, "Review mode"). `handle`
--- (called by the client's applyEdit handler, inside the coroutine Neovim
--- runs a server request in) opens a review instead of applying: a scratch
--- buffer in a tab of its own with one unified-diff hunk per change (each
--- `TextEdit`, and each file create, rename or delete). A change whose
--- annotation does not need confirmation starts accepted, one that does
--- starts rejected; a no-op (creating a folder that exists, with
--- `ignoreIfExists`) is left out, as VS Code's preview does. The user accepts
--- (`a`) or rejects (`r`) a change, or all (`A`/`R`), and finishes with
--- `<CR>` or `:w`: exactly the accepted changes are applied, through the
--- client's ordinary apply (one undo step per buffer), and the request is
--- answered `{applied = true}`, or `{applied = false, failureReason}` when
--- nothing was accepted. The server reads from the documents which changes
--- landed and tells the model which were declined, as the user's choice.
--- The review tab always starts in Normal mode, also when it opens while
--- the user types. `q` hides the review; `:RhemaReview` shows it again. A review not
--- finished within `approvalTimeout` seconds (the server's setting, default
--- 120) is declined whole, as an unanswered confirmation is. Reviews of
--- edits that arrive while one is open wait in line.
local M = {}

local ns = vim.api.nvim_create_namespace('rhema.review')

--- Lines of unchanged text shown around a change.
M.CONTEXT = 2

--- @class rhema.ReviewItem
--- @field kind "text"|"create"|"rename"|"delete"
--- @field uri string
--- @field accepted boolean
--- @field header string what the hunk header says (after the mark)
--- @field lines string[] the hunk's diff lines
--- @field edit table|nil the TextEdit (kind "text")
--- @field attached table[] edits to a file this review creates (kind "create")

--- @class rhema.Review
--- @field id integer
--- @field label string
--- @field edit table the WorkspaceEdit as the server sent it
--- @field client_id integer
--- @field encoding string
--- @field items rhema.ReviewItem[]
--- @field declined_at integer os.time() when it is declined unanswered
--- @field answer fun(result: table)
--- @field done boolean
--- @field buf integer|nil
--- @field item_at table<integer, integer> buffer line (1-based) → item index

--- Reviews waiting for an answer, the one on screen first.
--- @type rhema.Review[]
M.pending = {}
--- The last answer given (a test and statusline hook).
M.last = nil
local serial = 0

local function timeout_seconds()
  local settings = require('rhema.config').options.settings or {}
  local value = tonumber(settings.approvalTimeout)
  if value == nil or value < 1 then
    return 120
  end
  return value
end

local function is_confirm(edit, annotation_id)
  local annotations = edit.changeAnnotations or {}
  local annotation = annotation_id and annotations[annotation_id]
  return type(annotation) == 'table' and annotation.needsConfirmation == true
end

--- Whether `edit` asks for a review: it carries an annotation that needs
--- confirmation.
--- @param edit table
--- @return boolean
function M.wants_review(edit)
  for _, annotation in pairs(edit.changeAnnotations or {}) do
    if type(annotation) == 'table' and annotation.needsConfirmation == true then
      return true
    end
  end
  return false
end

local function display(uri)
  return require('rhema.runs').display(vim.uri_to_fname(uri))
end

--- The lines of the document at `uri` (its buffer, loaded if need be).
local function document_lines(uri)
  local bufnr = vim.uri_to_bufnr(uri)
  vim.fn.bufload(bufnr)
  return vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
end

local function byte_of(line, character, encoding)
  if encoding == 'utf-8' then
    return math.min(character, #line)
  end
  local ok, byte = pcall(vim.str_byteindex, line, encoding, character, false)
  return ok and byte or #line
end

--- The diff lines of one TextEdit on `lines`, and the 1-based first and last
--- line it changes.
local function text_hunk(lines, text_edit, encoding)
  local s, e = text_edit.range.start, text_edit.range['end']
  local first, last = s.line, e.line -- 0-based
  local block = {}
  for row = first, last do
    table.insert(block, lines[row + 1] or '')
  end
  local start_byte = byte_of(block[1], s.character, encoding)
  local end_offset = byte_of(block[#block], e.character, encoding)
  for row = 1, #block - 1 do
    end_offset = end_offset + #block[row] + 1
  end
  local old = table.concat(block, '\n')
  local new = old:sub(1, start_byte)
    .. text_edit.newText:gsub('\r\n', '\n')
    .. old:sub(end_offset + 1)
  local old_lines = vim.split(old, '\n', { plain = true })
  local new_lines = vim.split(new, '\n', { plain = true })
  -- The edit's own first and last lines may be unchanged (an edit that ends
  -- at the start of a line): show them as context.
  local head = 0
  while head < #old_lines and head < #new_lines and old_lines[head + 1] == new_lines[head + 1] do
    head = head + 1
  end
  local tail = 0
  while
    tail < #old_lines - head
    and tail < #new_lines - head
    and old_lines[#old_lines - tail] == new_lines[#new_lines - tail]
  do
    tail = tail + 1
  end
  local out = {}
  local from = first + head -- 0-based first changed line
  local to = first + #old_lines - tail - 1 -- 0-based last changed line (may be < from)
  for row = math.max(0, from - M.CONTEXT), from - 1 do
    table.insert(out, ' ' .. (lines[row + 1] or ''))
  end
  for index = head + 1, #old_lines - tail do
    table.insert(out, '-' .. old_lines[index])
  end
  for index = head + 1, #new_lines - tail do
    table.insert(out, '+' .. new_lines[index])
  end
  for row = math.max(from, to + 1), math.min(#lines - 1, to + M.CONTEXT) do
    table.insert(out, ' ' .. lines[row + 1])
  end
  local where
  if to <= from then
    where = ('line %d'):format(from + 1)
  else
    where = ('lines %d-%d'):format(from + 1, to + 1)
  end
  return out, where
end

--- At most this many lines of a file to delete are shown.
M.DELETED_LINES = 200

--- The lines a file delete removes, as `-` lines (none for a folder).
local function deleted_lines(uri)
  local path = vim.uri_to_fname(uri)
  local bufnr = vim.fn.bufnr(path)
  local lines
  if bufnr ~= -1 and vim.api.nvim_buf_is_loaded(bufnr) then
    lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  elseif vim.fn.filereadable(path) == 1 then
    lines = vim.fn.readfile(path, '', M.DELETED_LINES + 1)
  else
    return {}
  end
  local out = {}
  for index, line in ipairs(lines) do
    if index > M.DELETED_LINES then
      table.insert(out, '-…')
      break
    end
    table.insert(out, '-' .. line)
  end
  return out
end

--- The review's changes, in the order the edit lists them.
local function items_of(edit, encoding)
  local items = {}
  local created = {} -- uri → the create item of a file this edit creates
  local function add_text(uri, text_edits, document)
    local lines = document_lines(uri)
    for _, text_edit in ipairs(text_edits) do
      local lines_out, where = text_hunk(lines, text_edit, encoding)
      table.insert(items, {
        kind = 'text',
        uri = uri,
        edit = text_edit,
        document = document,
        accepted = not is_confirm(edit, text_edit.annotationId),
        header = where,
        lines = lines_out,
      })
    end
  end
  for _, change in ipairs(edit.documentChanges or {}) do
    local kind = change.kind
    if kind == 'create' then
      local path = vim.uri_to_fname(change.uri)
      local options = change.options or {}
      local noop = options.ignoreIfExists and not options.overwrite and vim.uv.fs_stat(path) ~= nil
      if not noop then
        local item = {
          kind = 'create',
          uri = change.uri,
          change = change,
          attached = {},
          accepted = not is_confirm(edit, change.annotationId),
          header = 'create ' .. display(change.uri),
          lines = {},
        }
        created[change.uri] = item
        table.insert(items, item)
      end
    elseif kind == 'rename' then
      table.insert(items, {
        kind = 'rename',
        uri = change.oldUri,
        change = change,
        accepted = not is_confirm(edit, change.annotationId),
        header = ('rename %s → %s'):format(display(change.oldUri), display(change.newUri)),
        lines = {},
      })
    elseif kind == 'delete' then
      table.insert(items, {
        kind = 'delete',
        uri = change.uri,
        change = change,
        accepted = not is_confirm(edit, change.annotationId),
        header = 'delete ' .. display(change.uri),
        lines = deleted_lines(change.uri),
      })
    elseif change.textDocument then
      local uri = change.textDocument.uri
      local item = created[uri]
      if item then
        for _, text_edit in ipairs(change.edits) do
          table.insert(item.attached, text_edit)
          for _, line in ipairs(vim.split(text_edit.newText, '\n', { plain = true })) do
            table.insert(item.lines, '+' .. line)
          end
        end
        if item.lines[#item.lines] == '+' then
          table.remove(item.lines)
        end
      else
        add_text(uri, change.edits, change.textDocument)
      end
    end
  end
  local uris = vim.tbl_keys(edit.changes or {})
  table.sort(uris)
  for _, uri in ipairs(uris) do
    add_text(uri, edit.changes[uri], nil)
  end
  return items
end

--- The WorkspaceEdit of the accepted changes only (nil when there are none).
--- @param review rhema.Review
--- @return table|nil
function M.accepted_edit(review)
  local keep = {} -- a change or TextEdit table → accepted
  local any = false
  for _, item in ipairs(review.items) do
    if item.kind == 'text' then
      keep[item.edit] = item.accepted
    else
      keep[item.change] = item.accepted
      for _, text_edit in ipairs(item.attached or {}) do
        keep[text_edit] = item.accepted
      end
    end
    any = any or item.accepted
  end
  if not any then
    return nil
  end
  local edit = { changeAnnotations = review.edit.changeAnnotations }
  if review.edit.documentChanges then
    edit.documentChanges = {}
    for _, change in ipairs(review.edit.documentChanges) do
      if change.textDocument then
        local edits = vim.tbl_filter(function(text_edit)
          return keep[text_edit] == true
        end, change.edits)
        if #edits > 0 then
          table.insert(edit.documentChanges, { textDocument = change.textDocument, edits = edits })
        end
      elseif keep[change] then
        table.insert(edit.documentChanges, change)
      end
    end
  end
  if review.edit.changes then
    edit.changes = {}
    for uri, edits in pairs(review.edit.changes) do
      local kept = vim.tbl_filter(function(text_edit)
        return keep[text_edit] == true
      end, edits)
      if #kept > 0 then
        edit.changes[uri] = kept
      end
    end
  end
  return edit
end

-- Rendering -----------------------------------------------------------------

local function help_line()
  return 'a accept · r reject · A accept all · R reject all · <CR> or :w apply the accepted'
    .. ' · ]] [[ next/previous · q later (:RhemaReview)'
end

local function render(review)
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
local function item_under_cursor(review)
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

--- Accept (`true`) or reject (`false`) change `index` (`nil`: every change).
--- @param review rhema.Review
--- @param index integer|nil
--- @param accepted boolean
function M.set(review, index, accepted)
  for at, item in ipairs(review.items) do
    if index == nil or at == index then
      item.accepted = accepted
    end
  end
  render(review)
end

local function jump(review, direction)
  local current = item_under_cursor(review) or 0
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

local function close_view(review)
  local buf = review.buf
  review.buf = nil
  if buf and vim.api.nvim_buf_is_valid(buf) then
    -- Wiping the buffer closes its windows (and so its tab).
    vim.api.nvim_buf_delete(buf, { force = true })
  end
end

local show

--- Answer `review` with `result` and show the next one waiting.
local function settle(review, result)
  if review.done then
    return
  end
  review.done = true
  if review.timer then
    review.timer:stop()
    review.timer:close()
    review.timer = nil
  end
  for index, candidate in ipairs(M.pending) do
    if candidate == review then
      table.remove(M.pending, index)
      break
    end
  end
  close_view(review)
  M.last = { id = review.id, label = review.label, result = result }
  review.answer(result)
  if M.pending[1] then
    show(M.pending[1])
  end
end

--- Apply the accepted changes of `review` and answer the server.
--- @param review rhema.Review
function M.finish(review)
  if review.done then
    return
  end
  local edit = M.accepted_edit(review)
  local result
  if edit == nil then
    result = { applied = false, failureReason = 'the user declined every change in review' }
  else
    local client = vim.lsp.get_client_by_id(review.client_id)
    if not client then
      result = { applied = false, failureReason = 'the rhema client has stopped' }
    else
      result = require('rhema.client').apply(edit, client.offset_encoding)
    end
  end
  local declined = #vim.tbl_filter(function(item)
    return not item.accepted
  end, review.items)
  require('rhema.runs').notify(
    ('review: applied %d of %d change(s)'):format(#review.items - declined, #review.items)
  )
  settle(review, result)
end

--- Decline `review` whole (nothing applied), saying `why`.
--- @param review rhema.Review
--- @param why string
function M.decline(review, why)
  settle(review, { applied = false, failureReason = why })
end

--- Decline every pending review (the run was cancelled), or those of
--- client `client_id`.
--- @param why string
--- @param client_id integer|nil
function M.decline_all(why, client_id)
  for _, review in ipairs(vim.list_slice(M.pending)) do
    if client_id == nil or review.client_id == client_id then
      M.decline(review, why)
    end
  end
end

local function map_keys(review, buf)
  local function map(lhs, fn, desc)
    vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true, desc = 'Rhema review: ' .. desc })
  end
  map('a', function()
    local index = item_under_cursor(review)
    if index then
      M.set(review, index, true)
    end
  end, 'accept the change')
  map('r', function()
    local index = item_under_cursor(review)
    if index then
      M.set(review, index, false)
    end
  end, 'reject the change')
  map('A', function()
    M.set(review, nil, true)
  end, 'accept every change')
  map('R', function()
    M.set(review, nil, false)
  end, 'reject every change')
  map('<CR>', function()
    M.finish(review)
  end, 'apply the accepted changes')
  map(']]', function()
    jump(review, 1)
  end, 'next change')
  map('[[', function()
    jump(review, -1)
  end, 'previous change')
  map('q', function()
    M.hide()
  end, 'hide (:RhemaReview shows it again)')
  vim.api.nvim_create_autocmd('BufWriteCmd', {
    buffer = buf,
    callback = function()
      -- Not inside the write: finishing wipes this buffer.
      vim.schedule(function()
        M.finish(review)
      end)
    end,
  })
end

--- Show `review` in a tab of its own (or where it already is).
--- @param review rhema.Review
show = function(review)
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
    map_keys(review, buf)
    render(review)
  end
  require('rhema.tabline').setup()
  vim.cmd('tab sbuffer ' .. review.buf)
  -- The review's keys are Normal-mode keys: a review that opens while the
  -- user types (a turn sent with <C-s> from the chat's input) starts there too.
  vim.cmd.stopinsert()
  vim.wo.foldenable = false
  local row = row_of(review, 1)
  if row then
    vim.api.nvim_win_set_cursor(0, { row, 0 })
  end
end

--- Hide the review on screen; it stays pending (`:RhemaReview`).
function M.hide()
  local review = M.pending[1]
  if not review or not review.buf then
    return
  end
  for _, win in ipairs(vim.fn.win_findbuf(review.buf)) do
    if #vim.api.nvim_list_wins() > 1 then
      vim.api.nvim_win_close(win, true)
    else
      vim.api.nvim_win_call(win, function()
        vim.cmd('enew')
      end)
    end
  end
end

--- `:RhemaReview`: show the pending review again.
function M.open()
  local review = M.pending[1]
  if not review then
    require('rhema.runs').notify('no review is waiting')
    return
  end
  show(review)
end

--- The review on screen (or next), or nil.
--- @return rhema.Review|nil
function M.current()
  return M.pending[1]
end

--- Review `params.edit` (a `workspace/applyEdit` from client `client_id`)
--- and return the answer. Runs inside the coroutine of the server request:
--- it yields until the user finishes or the review times out.
--- @param params table
--- @param client vim.lsp.Client
--- @return table
function M.handle(params, client)
  local co, main = coroutine.running()
  if co == nil or main then
    return { applied = false, failureReason = 'review needs a coroutine (Neovim 0.11)' }
  end
  serial = serial + 1
  local seconds = timeout_seconds()
  local ok, items = pcall(items_of, params.edit, client.offset_encoding)
  if not ok then
    return { applied = false, failureReason = 'review: ' .. tostring(items) }
  end
  local answered = nil
  local review = {
    id = serial,
    label = params.label or 'rhema edit',
    edit = params.edit,
    client_id = client.id,
    encoding = client.offset_encoding,
    items = items,
    declined_at = os.time() + seconds,
    done = false,
  }
  review.answer = function(result)
    answered = result
    if coroutine.status(co) == 'suspended' then
      local resumed, err = coroutine.resume(co, result)
      if not resumed then
        vim.notify('rhema: review: ' .. tostring(err), vim.log.levels.ERROR)
      end
    end
  end
  if #items == 0 then
    return { applied = true }
  end
  review.timer = vim.uv.new_timer()
  review.timer:start(
    seconds * 1000,
    0,
    vim.schedule_wrap(function()
      if not review.done then
        require('rhema.runs').notify(
          ('review of %s not answered in %d s: declined'):format(review.label, seconds),
          vim.log.levels.WARN
        )
        M.decline(review, ('no answer in review within %d s: declined'):format(seconds))
      end
    end)
  )
  table.insert(M.pending, review)
  if #M.pending == 1 then
    show(review)
  end
  if answered then
    return answered
  end
  return coroutine.yield()
end

return M
