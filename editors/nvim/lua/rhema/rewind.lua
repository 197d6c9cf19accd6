--- Rewind: a session's files and/or conversation back to before a turn.
---
--- `:RhemaRewind [turn] [code|conversation|both]` runs `rhema.rewind` for the
--- current session; without a turn it offers the session's turns (with the
--- files each changed) through `vim.ui.select`, then what to take back. The
--- server restores the files through `workspace/applyEdit`; the buffers it
--- lists in `save` were clean before the turn and are written again, so a
--- rewind leaves them unmodified. Files changed since the turn are left alone
--- and named in a warning; `:RhemaRewind! N` forces them. After a rewind
--- that took back the conversation the session's panel is drawn again from
--- the store (the turns taken back gone), with the rewind's message under
--- it; the quickfix list of a turn taken back drops the files restored.
local facts = require('rhema.facts')
local M = {}

local WHAT = { 'both', 'code', 'conversation' }

--- Write the buffers a rewind restored to their clean text.
--- @param uris string[]|nil
function M.save(uris)
  for _, uri in ipairs(uris or {}) do
    local buf = vim.uri_to_bufnr(uri)
    if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].modified then
      vim.api.nvim_buf_call(buf, function()
        vim.cmd('silent noautocmd write')
      end)
    end
  end
end

--- The quickfix list of a turn of `session` the rewind took back: without
--- the files it restored (the list stays, its title says so).
--- @param session string
--- @param result table
function M.drop_restored(session, result)
  local list = vim.fn.getqflist({ context = 1, items = 1, title = 1 })
  local context = type(list.context) == 'table' and list.context.rhema or nil
  if type(context) ~= 'table' or context.session ~= session or context.turn < result.turn then
    return
  end
  local restored = {}
  for _, uri in ipairs(result.restored or {}) do
    restored[vim.uri_to_fname(uri)] = true
  end
  local kept = {}
  for _, item in ipairs(list.items) do
    if not restored[vim.api.nvim_buf_get_name(item.bufnr)] then
      table.insert(kept, item)
    end
  end
  if #kept == #list.items then
    return
  end
  vim.fn.setqflist({}, 'r', {
    items = kept,
    title = ('%s (rewound: %d file(s) restored)'):format(list.title, #list.items - #kept),
  })
end

--- The message a rewind result gives.
--- @param result table
--- @return string message, integer level
function M.describe(result)
  local runs = require('rhema.runs')
  local parts = { ('rewound to before turn %d'):format(result.turn) }
  if result.what ~= 'conversation' then
    table.insert(parts, ('%d file(s) restored'):format(#result.restored))
  end
  if result.what ~= 'code' then
    table.insert(parts, ('turn %d and after taken out of the conversation'):format(result.turn))
  end
  local level = vim.log.levels.INFO
  for _, conflict in ipairs(result.conflicts or {}) do
    table.insert(
      parts,
      ('%s: %s'):format(runs.display(vim.uri_to_fname(conflict.uri)), conflict.reason)
    )
    level = vim.log.levels.WARN
  end
  return table.concat(parts, '; '), level
end

local function run(bufnr, session, turn, what, force)
  local runs = require('rhema.runs')
  local args = { session = session, turn = turn, what = what, force = force }
  runs.command(bufnr, facts.commands.rewind, 'rewind', args, function(result, c)
    M.save(result.save)
    M.drop_restored(session, result)
    local message, level = M.describe(result)
    runs.notify(message, level)
    if result.what == 'code' then
      return
    end
    runs.open_session(c, session, function()
      local p = runs.current_panel
      if p then
        p:add({ kind = 'notice', text = '↶ ' .. message })
        p:flush()
      end
    end)
  end)
end

--- `:RhemaRewind[!] [turn] [what]`.
--- @param bufnr integer
--- @param turn integer|nil
--- @param what string|nil
--- @param force boolean
function M.rewind(bufnr, turn, what, force)
  local runs = require('rhema.runs')
  local session = runs.current
  if not session then
    runs.notify('no session: open one with :RhemaSessions first', vim.log.levels.WARN)
    return
  end
  if what and not vim.tbl_contains(WHAT, what) then
    runs.notify('what to rewind: code, conversation or both, not ' .. what, vim.log.levels.ERROR)
    return
  end
  if turn then
    run(bufnr, session, turn, what or 'both', force)
    return
  end
  runs.command(bufnr, facts.commands.changes, 'changes', { session = session }, function(changes)
    local turns = vim.fn.reverse(vim.deepcopy(changes.turns or {}))
    vim.ui.select(turns, {
      prompt = 'Rewind to before which turn?',
      format_item = function(item)
        local files = vim.tbl_map(function(file)
          return file.path
        end, item.files)
        local line = ('Turn %d: %s [%s]'):format(item.turn, item.title, table.concat(files, ', '))
        if item.interrupted == true then
          line = line .. ' (interrupted: the server stopped mid-turn)'
        end
        return line
      end,
    }, function(choice)
      if not choice then
        return
      end
      if what then
        run(bufnr, session, choice.turn, what, force)
        return
      end
      vim.ui.select(WHAT, { prompt = 'Take back what?' }, function(picked)
        if picked then
          run(bufnr, session, choice.turn, picked, force)
        end
      end)
    end)
  end)
end

return M
