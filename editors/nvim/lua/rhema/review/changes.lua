--- The changes of a review: a WorkspaceEdit as diff hunks, and back.
---
--- Contract: one item per change (each `TextEdit`, and each file create,
--- rename or delete), in the order the edit lists them, as a unified-diff
--- hunk with `CONTEXT` lines of unchanged text around a text change (the
--- edit's own unchanged first and last lines shown as context), at most
--- `DELETED_LINES` lines of a file to delete, and a file this edit creates
--- with the text edits to it as one item. A change whose annotation does not
--- need confirmation starts accepted, one that does starts rejected; a no-op
--- (creating a folder that exists, with `ignoreIfExists`) is left out, as VS
--- Code's preview does. `accepted_edit` is the WorkspaceEdit of exactly the
--- accepted changes. `rhema.review` exports `wants_review`, `accepted_edit`,
--- `CONTEXT` and `DELETED_LINES`.
local M = {}

--- Lines of unchanged text shown around a change.
M.CONTEXT = 2


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
function M.items_of(edit, encoding)
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

return M
