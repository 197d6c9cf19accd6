--- The files a turn changed: the quickfix list, and `:RhemaDiff`.
---
--- Contract: `after_turn(client, session, turn)` (called when a `rhema.turn`
--- or `rhema.step` answers) asks `rhema.changes` for that turn and, when it
--- changed files, makes a new quickfix list titled `Rhema: turn N` (its
--- context `{rhema = {session, turn}}`; the next step of the same turn
--- replaces it) with one entry per file: its first changed line (the
--- checkpoint's pre-image from `rhema.checkpointContent` against the buffer,
--- else the disk) and what happened (`modified +3 -1`, `created`,
--- `deleted`). It does not open the quickfix window. `diff(bufnr, path)`
--- (`:RhemaDiff [path]`) opens the pre-image of the last turn of the current
--- session that changed the file (`path`, else the quickfix entry under the
--- cursor in the quickfix window, else the current buffer's file) in a tab
--- of its own: a scratch buffer on the left, diffed against the file's buffer
--- as it is (unsaved changes included: the buffer is never reloaded), the two
--- panes sharing the width. The cursor lands in the scratch, on its first
--- change (rhema.diff_view: the folds say what they hold); `dp` there, or
--- `:diffget` in the file, rejects a hunk (takes it back to the checkpoint's
--- text); `q` in the scratch closes the tab, and closing the scratch window
--- ends the diff.
local facts = require('rhema.facts')
local M = {}

--- The last quickfix items made, and their turn (a test hook).
M.last = nil

local function notify(message, level)
  require('rhema.runs').notify(message, level)
end

local function text_of(path)
  local bufnr = vim.fn.bufnr(path)
  if bufnr ~= -1 and vim.api.nvim_buf_is_loaded(bufnr) then
    local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
    return table.concat(lines, '\n') .. (#lines > 0 and '\n' or '')
  end
  if vim.fn.filereadable(path) == 1 then
    local file = io.open(path, 'rb')
    if file then
      local text = file:read('*a')
      file:close()
      return text
    end
  end
  return nil
end

--- The first changed line (1-based) of `after` against `before`, and the
--- counts of added and removed lines.
--- @param before string
--- @param after string
--- @return integer line, integer added, integer removed
function M.first_change(before, after)
  local hunks = vim.diff(before, after, { result_type = 'indices' })
  ---@cast hunks integer[][]
  if #hunks == 0 then
    return 1, 0, 0
  end
  local added, removed = 0, 0
  for _, hunk in ipairs(hunks) do
    removed = removed + hunk[2]
    added = added + hunk[4]
  end
  return math.max(1, hunks[1][3]), added, removed
end

local function quickfix_item(file, before)
  local path = vim.uri_to_fname(file.uri)
  local after = text_of(path)
  local item = { filename = path, lnum = 1, col = 1 }
  if file.status == 'deleted' or after == nil then
    item.text = 'deleted'
  elseif before == nil then
    item.text = ('created (%d lines)'):format(select(2, after:gsub('\n', '')))
  else
    local line, added, removed = M.first_change(before, after)
    item.lnum = line
    item.text = ('%s +%d -%d'):format(file.status or 'modified', added, removed)
  end
  if file.state and file.state ~= 'asLeft' then
    item.text = item.text .. ' (' .. file.state .. ')'
  end
  return item
end

--- Fill the quickfix list with the files `turn` of `session` changed.
--- @param c vim.lsp.Client
--- @param session string
--- @param turn integer
--- @param done fun(items: table[])|nil
function M.after_turn(c, session, turn, done)
  local client = require('rhema.client')
  client.execute(c, facts.commands.changes, { session = session, turn = turn }, function(err, result)
    if err or type(result) ~= 'table' then
      return
    end
    local files = {}
    for _, entry in ipairs(result.turns or {}) do
      if entry.turn == turn then
        vim.list_extend(files, entry.files or {})
      end
    end
    if #files == 0 then
      return
    end
    local items, waiting = {}, #files
    local function one_done()
      waiting = waiting - 1
      if waiting > 0 then
        return
      end
      local title = ('Rhema: turn %d'):format(turn)
      -- A new list per turn (`:colder` goes back); the same turn again (its
      -- next step) replaces its list.
      local context = vim.fn.getqflist({ context = 1 }).context
      local same = type(context) == 'table'
        and type(context.rhema) == 'table'
        and context.rhema.session == session
        and context.rhema.turn == turn
      vim.fn.setqflist({}, same and 'r' or ' ', {
        title = title,
        items = items,
        context = { rhema = { session = session, turn = turn } },
      })
      M.last = { session = session, turn = turn, items = items }
      if done then
        done(items)
      end
    end
    for index, file in ipairs(files) do
      if file.before == nil or file.before == vim.NIL then
        items[index] = quickfix_item(file, nil)
        one_done()
      else
        client.execute(c, facts.commands.checkpointContent, { uri = file.before }, function(e, content)
          local before = (not e and type(content) == 'table') and content.text or ''
          items[index] = quickfix_item(file, before)
          one_done()
        end)
      end
    end
  end)
end

--- The file `:RhemaDiff` means: `path`, else the quickfix entry under the
--- cursor in the quickfix window, else the current buffer's file.
local function target_path(bufnr, path)
  if path and path ~= '' then
    return vim.fn.fnamemodify(path, ':p')
  end
  if vim.bo[bufnr].buftype == 'quickfix' then
    local list = vim.fn.getqflist()
    local entry = list[vim.fn.line('.')]
    if entry and entry.bufnr > 0 then
      return vim.api.nvim_buf_get_name(entry.bufnr)
    end
    return nil
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  return name ~= '' and name or nil
end

local function same_path(a, b)
  return vim.fs.normalize(vim.fn.fnamemodify(a, ':p'))
    == vim.fs.normalize(vim.fn.fnamemodify(b, ':p'))
end

--- The buffer of `path`, loaded, without reloading it when it is (its
--- unsaved changes are what the diff shows).
local function file_buffer(path)
  local bufnr = vim.fn.bufadd(path)
  if not vim.api.nvim_buf_is_loaded(bufnr) then
    vim.fn.bufload(bufnr)
  end
  vim.bo[bufnr].buflisted = true
  return bufnr
end

--- Open the diff of `path`'s checkpoint pre-image against its buffer, in a
--- tab of its own: the two panes share the editor's whole width.
local function open_diff(path, turn, text, title)
  local file_buf = file_buffer(path)
  require('rhema.tabline').setup()
  vim.cmd('tab sbuffer ' .. file_buf)
  local file_win = vim.api.nvim_get_current_win()
  local buf = vim.api.nvim_create_buf(false, true)
  local lines = vim.split(text, '\n', { plain = true })
  if lines[#lines] == '' then
    table.remove(lines)
  end
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  vim.bo[buf].modifiable = false
  local name = ('rhema://before-turn-%d/%s'):format(turn, require('rhema.runs').display(path))
  pcall(vim.api.nvim_buf_set_name, buf, name)
  vim.bo[buf].filetype = vim.bo[file_buf].filetype
  vim.cmd('leftabove vertical split')
  vim.api.nvim_win_set_buf(0, buf)
  vim.cmd('diffthis')
  vim.api.nvim_set_current_win(file_win)
  vim.cmd('diffthis')
  vim.cmd('wincmd =')
  local before_label = require('rhema.diff_view').before_label(turn, title)
  local file_label = require('rhema.runs').display(path) .. ' now'
  local before_win = vim.fn.win_findbuf(buf)[1]
  require('rhema.diff_view').setup(before_win, file_win, { before = before_label, file = file_label })
  local tab = vim.api.nvim_get_current_tabpage()
  -- `q` in the checkpoint closes the diff's tab.
  vim.keymap.set('n', 'q', function()
    if #vim.api.nvim_list_tabpages() > 1 and vim.api.nvim_tabpage_is_valid(tab) then
      vim.cmd.tabclose(vim.api.nvim_tabpage_get_number(tab))
    else
      vim.cmd.close()
    end
  end, { buffer = buf, nowait = true, desc = 'Rhema: close the diff' })
  -- Closing the checkpoint's window (which wipes it) ends the diff.
  vim.api.nvim_create_autocmd('BufWipeout', {
    buffer = buf,
    once = true,
    callback = function()
      if vim.api.nvim_win_is_valid(file_win) then
        vim.api.nvim_win_call(file_win, function()
          vim.cmd('diffoff')
        end)
      end
    end,
  })
  M.last_diff = { path = path, turn = turn, before = buf, file = file_buf, tab = tab }
end

--- `:RhemaDiff [path]`.
--- @param bufnr integer
--- @param path string|nil
function M.diff(bufnr, path)
  local runs = require('rhema.runs')
  local session = runs.current
  if not session then
    notify('no session: open one with :RhemaSessions first', vim.log.levels.WARN)
    return
  end
  local wanted = target_path(bufnr, path)
  if not wanted then
    notify(
      ':RhemaDiff: which file? (a file buffer, a quickfix entry or a path)',
      vim.log.levels.WARN
    )
    return
  end
  runs.command(bufnr, facts.commands.changes, 'changes', { session = session }, function(result, c)
    local found, turn, title = nil, nil, nil
    for _, entry in ipairs(result.turns or {}) do
      for _, file in ipairs(entry.files or {}) do
        if same_path(vim.uri_to_fname(file.uri), wanted) and (turn == nil or entry.turn > turn) then
          found, turn, title = file, entry.turn, entry.title
        end
      end
    end
    if not found then
      notify(
        ('%s: no turn of this session changed it'):format(runs.display(wanted)),
        vim.log.levels.WARN
      )
      return
    end
    if found.before == nil or found.before == vim.NIL then
      open_diff(vim.uri_to_fname(found.uri), turn, '', title)
      return
    end
    require('rhema.client').execute(
      c,
      facts.commands.checkpointContent,
      { uri = found.before },
      function(err, content)
        if err or type(content) ~= 'table' then
          notify('checkpoint: ' .. ((err and err.message) or 'no content'), vim.log.levels.ERROR)
          return
        end
        open_diff(vim.uri_to_fname(found.uri), turn, content.text, title)
      end
    )
  end)
end

return M
