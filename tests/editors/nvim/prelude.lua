-- Loaded before every test script: the plugin set up against the real server,
-- and small helpers. The script's body runs once the editor has started; what
-- it puts in T.result is written as JSON to $RHEMA_TEST_OUT, then Neovim quits.
local T = { result = {} }
_G.T = T

local spec = vim.json.decode(os.getenv('RHEMA_TEST_SPEC'))
T.workspace = spec.workspace

--- Wait until `cond()` holds; fail the test (with `what`) otherwise.
function T.wait(what, cond, ms)
  if not vim.wait(ms or 30000, cond, 10) then
    error('timed out waiting for ' .. what, 2)
  end
end

function T.lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

--- Wait until the plugin has no request in flight.
function T.idle(what)
  T.wait(what or 'the run to finish', function()
    return not require('rhema').is_running()
  end)
end

--- Wait until a rhema client is attached to the current buffer and initialized.
function T.attached()
  T.wait('the rhema client to attach', function()
    local c = vim.lsp.get_clients({ name = 'rhema', bufnr = 0 })[1]
    return c ~= nil and c.initialized == true
  end)
  return vim.lsp.get_clients({ name = 'rhema', bufnr = 0 })[1]
end

--- The panel of the current session, flushed.
function T.panel_lines()
  local runs = require('rhema.runs')
  local panel = runs.current_panel
  assert(panel, 'no panel')
  panel:flush()
  return T.lines(panel.buf)
end

--- Wait until the panel shows a line containing `needle` (plain text).
function T.wait_panel_text(what, needle)
  T.wait(what, function()
    local buf = require('rhema').panel_buffer()
    for _, line in ipairs(buf and T.lines(buf) or {}) do
      if line:find(needle, 1, true) then
        return true
      end
    end
    return false
  end)
end

--- Wait for the review after the one numbered `handled`, shown in the
--- current window; return it.
function T.next_review(handled)
  local review = require('rhema.review')
  T.wait('a review', function()
    local current = review.current()
    return current ~= nil and current.id > handled and current.buf ~= nil
      and vim.api.nvim_get_current_buf() == current.buf
  end)
  return review.current()
end

--- Send a command synchronously (for checks the test makes itself).
function T.command(name, args)
  local c = vim.lsp.get_clients({ name = 'rhema' })[1]
  local response = c:request_sync(
    'workspace/executeCommand',
    { command = name, arguments = { args or vim.empty_dict() } },
    20000
  )
  assert(response and not response.err, vim.inspect(response))
  return response.result
end

--- Keep what the screen shows now, as text, in the test artifacts
--- (`test-artifacts/nvim/<name>.txt`): the headless grid is the screen a
--- terminal would show.
function T.screenshot(name)
  vim.cmd('redraw!')
  local rows = {}
  for row = 1, vim.o.lines do
    local cells = {}
    for col = 1, vim.o.columns do
      table.insert(cells, vim.fn.screenstring(row, col))
    end
    table.insert(rows, (table.concat(cells):gsub('%s+$', '')))
  end
  local dir = os.getenv('RHEMA_TEST_ARTIFACTS')
  vim.fn.mkdir(dir, 'p')
  local file = assert(io.open(dir .. '/' .. name .. '.txt', 'w'))
  file:write(table.concat(rows, '\n') .. '\n')
  file:close()
end

--- Record the messages the plugin shows.
T.messages = {}
vim.notify = function(message, level)
  table.insert(T.messages, { message = message, level = level })
end

local function finish(ok, err)
  if not ok then
    T.result.error = err
  end
  T.result.messages = T.messages
  local file = assert(io.open(os.getenv('RHEMA_TEST_OUT'), 'w'))
  file:write(vim.json.encode(T.result))
  file:close()
  vim.cmd('qa!')
end

--- Run the test body once the editor is up.
function T.run(body)
  vim.schedule(function()
    local ok, err = xpcall(body, debug.traceback)
    -- Stop the server cleanly so its process does not outlive the test.
    for _, c in ipairs(vim.lsp.get_clients()) do
      c:stop()
    end
    vim.wait(5000, function()
      return #vim.lsp.get_clients() == 0
    end, 20)
    finish(ok, err)
  end)
end

if spec.setup and spec.setup ~= vim.NIL then
  require('rhema').setup(spec.setup)
end
