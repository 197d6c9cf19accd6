--- Retrying a failed turn (`:RhemaRetry`, `R` in a panel).
---
--- Contract: a run that fails keeps what it asked in its panel (`offer`),
--- and `retry()` asks it again: the failed turn is taken out of the
--- conversation (`rhema.rewind`, the conversation only: the files stay as
--- they are) and the same prompt and context are sent in the same session.
--- A retry is offered only where it can help (see Panel:offer_retry).
--- `rhema.runs` exports `retry`.
local facts = require('rhema.facts')

local M = {}

local function runs()
  return require('rhema.runs')
end


--- Keep what a failed run asked, so `:RhemaRetry` asks it again.
function M.offer(request, result)
  local p = request.panel
  if not request.again then
    return
  end
  p.retry = vim.tbl_extend('force', request.again, {
    session = result and result.session or nil,
    turn = result and result.turn or nil,
  })
  p:offer_retry(require('rhema.config').options.chat.keys.retry or true)
end

--- Run the current session's failed turn again (`:RhemaRetry`): the failed
--- attempt is taken out of the conversation (`rhema.rewind` of the
--- conversation only: the files stay as they are), and the same prompt and
--- context are sent again.
--- @param bufnr integer
function M.retry(bufnr)
  local r = runs()
  local p = r.current_panel
  local again = p and p.retry
  if not again then
    r.notify('nothing to retry: the last turn did not fail', vim.log.levels.WARN)
    return
  end
  if r.is_running() then
    r.notify('a turn is running: <C-c> or :RhemaCancel stops it', vim.log.levels.WARN)
    return
  end
  p.retry = nil
  local function go()
    r.run(again.kind, { prompt = again.prompt, context = again.context, mode = again.mode }, bufnr)
  end
  if again.session and again.turn and again.prompt then
    local args = { session = again.session, turn = again.turn, what = 'conversation' }
    r.command(bufnr, facts.commands.rewind, 'retry', args, go)
  else
    go()
  end
end

return M
