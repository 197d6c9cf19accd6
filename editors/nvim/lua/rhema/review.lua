--- Review mode: the agent's edits shown as a diff, applied change by change.
---
--- Contract: with `review: true` the server sends each edit as a
--- `workspace/applyEdit` whose changes carry change annotations, one of them
--- `needsConfirmation: true` (see docs/protocol.md, "Review mode"). `handle`
--- (called by the client's applyEdit handler, inside the coroutine Neovim
--- runs a server request in) opens a review instead of applying: a scratch
--- buffer in a tab of its own (rhema.review.view) with one unified-diff hunk
--- per change (rhema.review.changes). The user accepts (`a`) or rejects
--- (`r`) a change, or all (`A`/`R`), and finishes with `<CR>` or `:w`:
--- exactly the accepted changes are applied, through the client's ordinary
--- apply (one undo step per buffer), and the request is answered
--- `{applied = true}`, or `{applied = false, failureReason}` when nothing was
--- accepted. The server reads from the documents which changes landed and
--- tells the model which were declined, as the user's choice. `q` hides the
--- review; `:RhemaReview` shows it again. A review not finished within
--- `approvalTimeout` seconds (the server's setting, default 120) is declined
--- whole, as an unanswered confirmation is. Reviews of edits that arrive
--- while one is open wait in line.
local changes = require('rhema.review.changes')
local view = require('rhema.review.view')

local M = {}

M.CONTEXT = changes.CONTEXT
M.DELETED_LINES = changes.DELETED_LINES
M.wants_review = changes.wants_review
M.accepted_edit = changes.accepted_edit

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
  view.render(review)
end

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
  view.close_view(review)
  M.last = { id = review.id, label = review.label, result = result }
  review.answer(result)
  if M.pending[1] then
    view.show(M.pending[1])
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
  view.show(review)
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
  local ok, items = pcall(changes.items_of, params.edit, client.offset_encoding)
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
    view.show(review)
  end
  if answered then
    return answered
  end
  return coroutine.yield()
end

return M
