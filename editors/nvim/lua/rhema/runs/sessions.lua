--- The sessions of the folder: pick one, open it, undo its last turn, compact it.
---
--- Contract: `sessions()` lists the stored sessions (`rhema.sessions`) in a
--- `vim.ui.select` and shows the one picked; `open_session()` shows a
--- session's stored conversation in its panel (made when none shows it) and
--- makes it current; `undo_turn()` reverts the current session's last turn
--- and says which files were reverted and which were left alone (changed
--- since); `compact()` summarises its older rounds now. `rhema.runs` exports
--- these under the same names.
local client = require('rhema.client')
local facts = require('rhema.facts')

local M = {}

local function runs()
  return require('rhema.runs')
end

local function notify(message, level)
  runs().notify(message, level)
end

local function command(...)
  runs().command(...)
end

local function display(path)
  return runs().display(path)
end


--- List the sessions, let the user pick one, and show its conversation.
--- @param bufnr integer
--- @param done fun(session: string|nil)|nil
function M.sessions(bufnr, done)
  command(bufnr, facts.commands.sessions, 'sessions', {}, function(list, c)
    if type(list) ~= 'table' or #list == 0 then
      notify('no sessions yet')
      return
    end
    vim.ui.select(list, {
      prompt = 'Rhema sessions',
      format_item = function(item)
        return ('%s · %d turn%s · %s%s'):format(
          item.title ~= '' and item.title or item.session,
          item.turns or 0,
          item.turns == 1 and '' or 's',
          require('rhema.render').when(item.updatedAt),
          item.running and ' · running' or ''
        )
      end,
    }, function(choice)
      if not choice then
        return
      end
      M.open_session(c, choice.session, done)
    end)
  end)
end

--- Show session `session` (its stored conversation) and make it current.
function M.open_session(c, session, done)
  client.execute(c, facts.commands.openSession, { session = session }, function(err, result)
    if err then
      notify('open session: ' .. (err.message or ''), vim.log.levels.ERROR)
      return
    end
    runs().last[facts.commands.openSession] = result
    local r = runs()
    local p = r.panels[session]
    if not p then
      p = require('rhema.panel').new(result.title or session, nil)
      r.bind(p, session)
    end
    p.title = result.title or p.title
    p:show_messages(result.messages)
    p:show()
    r.current = session
    r.current_panel = p
    if done then
      done(session)
    end
  end)
end

--- Revert the last turn of the current session.
--- @param bufnr integer
function M.undo_turn(bufnr)
  local current = runs().current
  if not current then
    notify('no session: nothing to undo', vim.log.levels.WARN)
    return
  end
  command(bufnr, facts.commands.undoTurn, 'undo turn', { session = current }, function(result)
    require('rhema.rewind').save(result.save)
    local names = function(uris)
      return table.concat(
        vim.tbl_map(function(uri)
          return display(vim.uri_to_fname(uri))
        end, uris or {}),
        ', '
      )
    end
    local message = ('reverted %d file(s)%s'):format(
      #(result.reverted or {}),
      #(result.reverted or {}) > 0 and ': ' .. names(result.reverted) or ''
    )
    if #(result.conflicts or {}) > 0 then
      notify(
        message .. '; changed since, left alone: ' .. names(result.conflicts),
        vim.log.levels.WARN
      )
    else
      notify(message)
    end
  end)
end

--- Summarise the older rounds of the current session now (`rhema.compact`);
--- its `compaction` event shows in the panel.
--- @param bufnr integer
function M.compact(bufnr)
  local current = runs().current
  if not current then
    notify('no session: nothing to compact', vim.log.levels.WARN)
    return
  end
  command(bufnr, facts.commands.compact, 'compact', { session = current }, function(result)
    if result.compacted then
      notify(('compacted: %d → %d tokens'):format(result.before, result.after))
    else
      notify('nothing to compact yet: only the latest round is there')
    end
  end)
end

return M
