--- Worktree sessions: sessions that run in their own git worktree, on
--- branch `rhema/<session>`, leaving the checkout as it is.
---
--- `:RhemaAskWorktree {prompt}` starts one (`rhema.turn` with `worktree =
--- true`; the buffer is not sent along: the turn works on the worktree's
--- files). `:RhemaWorktrees` lists them (`rhema.sessions`, those with a
--- `worktree`: title, branch, running or done, the files changed) and opens
--- the one picked in a review tab: one unified diff per file
--- (`rhema.worktreeDiff`: the text the worktree started from against its
--- text now). In that tab `a` applies the changes to the checkout
--- (`rhema.worktreeApply`: a three-way merge on the server; a file the user
--- changed too that conflicts is named and nothing is written, the user's
--- edits are never overwritten), `d` discards the worktree and its branch
--- (`rhema.worktreeDiscard`), `q` closes the tab. Files applied that are open
--- in a buffer are read again (`:checktime`).
local M = {}

local client = require('rhema.client')
local facts = require('rhema.facts')

--- The last answer of each command (a test hook).
M.last = {}

local function notify(message, level)
  vim.notify('rhema: ' .. message, level or vim.log.levels.INFO)
end

local function text(value)
  return (value == nil or value == vim.NIL) and '' or value
end

--- The review's lines: a header, then each file's unified diff.
--- @param result table rhema.worktreeDiff's answer
--- @return string[]
function M.diff_lines(result)
  local lines = {
    ('Worktree %s → %s'):format(result.branch, result.checkout),
    'a: apply to the checkout   d: discard the worktree   q: close',
    '',
  }
  if #result.files == 0 then
    table.insert(lines, '(no changes)')
  end
  for _, file in ipairs(result.files) do
    local before, after = text(file.before), text(file.after)
    table.insert(lines, ('diff --rhema a/%s b/%s'):format(file.path, file.path))
    table.insert(lines, file.before == vim.NIL and '--- /dev/null' or ('--- a/' .. file.path))
    table.insert(lines, file.after == vim.NIL and '+++ /dev/null' or ('+++ b/' .. file.path))
    local diff = vim.diff(before, after, { result_type = 'unified', ctxlen = 2 })
    for _, line in ipairs(vim.split(diff --[[@as string]], '\n', { plain = true })) do
      if line ~= '' then
        table.insert(lines, line)
      end
    end
  end
  return lines
end

--- Apply session `session`'s worktree to the checkout; `done(result)` after.
function M.apply(c, session, done)
  client.execute(c, facts.commands.worktreeApply, { session = session }, function(err, result)
    if err then
      notify('apply: ' .. (err.message or ''), vim.log.levels.ERROR)
      return
    end
    M.last.apply = result
    if #result.conflicts > 0 then
      notify(
        ('not applied: %d file(s) conflict with your changes, nothing written: %s'):format(
          #result.conflicts,
          table.concat(result.conflicts, ', ')
        ),
        vim.log.levels.WARN
      )
    else
      vim.cmd('checktime')
      notify(('applied %d file(s) from %s'):format(#result.applied, result.branch))
    end
    if done then
      done(result)
    end
  end)
end

--- Discard session `session`'s worktree and branch; `done(result)` after.
function M.discard(c, session, done)
  client.execute(c, facts.commands.worktreeDiscard, { session = session }, function(err, result)
    if err then
      notify('discard: ' .. (err.message or ''), vim.log.levels.ERROR)
      return
    end
    M.last.discard = result
    notify(('discarded the worktree and branch %s'):format(result.branch))
    if done then
      done(result)
    end
  end)
end

--- Open the review tab of session `session`'s worktree.
function M.review(c, session)
  client.execute(c, facts.commands.worktreeDiff, { session = session }, function(err, result)
    if err then
      notify('worktree diff: ' .. (err.message or ''), vim.log.levels.ERROR)
      return
    end
    M.last.diff = result
    vim.cmd('tabnew')
    local buf = vim.api.nvim_get_current_buf()
    vim.bo[buf].buftype = 'nofile'
    vim.bo[buf].bufhidden = 'wipe'
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, M.diff_lines(result))
    vim.bo[buf].modifiable = false
    vim.bo[buf].filetype = 'diff'
    pcall(vim.api.nvim_buf_set_name, buf, 'rhema://worktree/' .. session)
    M.buf = buf
    local function close()
      if vim.api.nvim_buf_is_valid(buf) then
        vim.api.nvim_buf_delete(buf, { force = true })
      end
    end
    local function map(key, fn, desc)
      vim.keymap.set('n', key, fn, { buffer = buf, nowait = true, desc = desc })
    end
    map('a', function()
      M.apply(c, session, function(applied)
        if #applied.conflicts == 0 then
          close()
        end
      end)
    end, 'Rhema: apply the worktree to the checkout')
    map('d', function()
      M.discard(c, session, close)
    end, 'Rhema: discard the worktree')
    map('q', close, 'Rhema: close the worktree review')
  end)
end

local function describe(item)
  local tree = item.worktree
  local files = #tree.changed
  return ('%s · %s · %s · %d file%s changed'):format(
    item.title ~= '' and item.title or item.session,
    tree.branch,
    item.running and 'running' or 'done',
    files,
    files == 1 and '' or 's'
  )
end

--- `:RhemaWorktrees`: pick a worktree session, review it.
function M.list(bufnr)
  client.with_client(bufnr, function(c, message)
    if not c then
      notify(message or 'no server', vim.log.levels.ERROR)
      return
    end
    client.execute(c, facts.commands.sessions, {}, function(err, sessions)
      if err then
        notify('sessions: ' .. (err.message or ''), vim.log.levels.ERROR)
        return
      end
      local trees = vim.tbl_filter(function(item)
        return type(item.worktree) == 'table'
      end, sessions or {})
      if #trees == 0 then
        notify('no worktree sessions (start one with :RhemaAskWorktree)')
        return
      end
      vim.ui.select(trees, { prompt = 'Rhema worktrees', format_item = describe }, function(choice)
        if choice then
          M.review(c, choice.session)
        end
      end)
    end)
  end)
end

--- `:RhemaAskWorktree {prompt}`: a new session in its own worktree.
function M.ask(bufnr, prompt)
  client.with_client(bufnr, function(c, message)
    if not c then
      notify(message or 'no server', vim.log.levels.ERROR)
      return
    end
    local args = { prompt = prompt, worktree = true }
    client.execute(c, facts.commands.turn, args, function(err, result)
      if err then
        notify('worktree turn: ' .. (err.message or ''), vim.log.levels.ERROR)
        return
      end
      M.last.turn = result
      local tree = type(result.worktree) == 'table' and result.worktree or nil
      if tree then
        notify(('%s: %d file(s) changed; :RhemaWorktrees to review'):format(tree.branch, #tree.changed))
      end
    end)
  end)
end

--- Define `:RhemaWorktrees` and `:RhemaAskWorktree`.
function M.define()
  vim.api.nvim_create_user_command('RhemaWorktrees', function()
    M.list(vim.api.nvim_get_current_buf())
  end, { desc = 'Pick a Rhema worktree session: review, apply or discard it' })
  vim.api.nvim_create_user_command('RhemaAskWorktree', function(opts)
    if opts.args == '' then
      notify(':RhemaAskWorktree needs a prompt', vim.log.levels.WARN)
      return
    end
    M.ask(vim.api.nvim_get_current_buf(), opts.args)
  end, { nargs = '+', desc = 'Ask Rhema in a new session in its own git worktree' })
end

return M
