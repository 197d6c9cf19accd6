--- The user commands, their ranges, the opt-in keymaps and the client-side
--- `rhema.editSelection` command the server's code action names.
---
--- Contract: a command given a range sends it as an LSP range in the
--- client's position encoding: charwise from the `'<`/`'>` marks when the
--- last visual selection covers exactly the command's lines (multibyte
--- characters whole), else whole lines. `:RhemaAsk`/`:RhemaStep` send the
--- current file buffer as `context` (with the range when there is one).
local client = require('rhema.client')
local runs = require('rhema.runs')

local M = {}

local function line_text(bufnr, row)
  return vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
end

--- An LSP position from a 0-based row and byte column.
local function position(bufnr, row, byte, encoding)
  local text = line_text(bufnr, row)
  byte = math.min(byte, #text)
  local character = byte
  if encoding ~= 'utf-8' then
    character = vim.str_utfindex(text, encoding, byte, false)
  end
  return { line = row, character = character }
end

--- The exclusive end just after line `row` (0-based) with its line break.
local function after_line(bufnr, row, encoding)
  if row + 1 < vim.api.nvim_buf_line_count(bufnr) then
    return { line = row + 1, character = 0 }
  end
  return position(bufnr, row, #line_text(bufnr, row), encoding)
end

--- The LSP range of lines `line1`..`line2` (1-based) of `bufnr`.
--- @param bufnr integer
--- @param line1 integer
--- @param line2 integer
--- @param encoding string
--- @return {start: table, end: table}
function M.selection_range(bufnr, line1, line2, encoding)
  local mode = vim.fn.visualmode()
  local first = vim.api.nvim_buf_get_mark(bufnr, '<')
  local last = vim.api.nvim_buf_get_mark(bufnr, '>')
  local charwise = mode == 'v' or mode == '\22'
  if charwise and first[1] == line1 and last[1] == line2 and first[1] > 0 then
    local start = position(bufnr, first[1] - 1, first[2], encoding)
    local text = line_text(bufnr, last[1] - 1)
    local finish
    if last[2] >= #text then
      finish = after_line(bufnr, last[1] - 1, encoding)
    else
      local byte = last[2]
      if vim.o.selection ~= 'exclusive' then
        byte = byte + vim.str_utf_end(text, byte + 1) + 1
      end
      finish = position(bufnr, last[1] - 1, byte, encoding)
    end
    return { start = start, ['end'] = finish }
  end
  return {
    start = { line = line1 - 1, character = 0 },
    ['end'] = after_line(bufnr, line2 - 1, encoding),
  }
end

--- The `context` of a command run in `bufnr`: the file, with the range if any.
local function context_of(bufnr, opts, encoding)
  if not client.is_file_buffer(bufnr) then
    return {}
  end
  local ref = { uri = vim.uri_from_bufnr(bufnr) }
  if opts.range and opts.range > 0 then
    ref.range = M.selection_range(bufnr, opts.line1, opts.line2, encoding)
  end
  return { ref }
end

local function with_text(given, prompt, fn)
  if given and given ~= '' then
    fn(given)
    return
  end
  vim.ui.input({ prompt = prompt }, function(input)
    if input and input ~= '' then
      fn(input)
    end
  end)
end

--- `:RhemaAsk` and `:RhemaStep`.
local function run(kind, opts)
  local bufnr = vim.api.nvim_get_current_buf()
  local function go(prompt)
    runs.run(kind, {
      prompt = prompt,
      context = function(c)
        return context_of(bufnr, opts, c.offset_encoding)
      end,
    }, bufnr)
  end
  if kind == 'step' and opts.args == '' and runs.current then
    go(nil)
  else
    with_text(opts.args, 'Rhema: ', go)
  end
end

--- `:RhemaEdit`.
local function edit(opts)
  local bufnr = vim.api.nvim_get_current_buf()
  if not client.is_file_buffer(bufnr) then
    runs.notify(':RhemaEdit works on a file buffer', vim.log.levels.WARN)
    return
  end
  local line1 = opts.range > 0 and opts.line1 or vim.fn.line('.')
  local line2 = opts.range > 0 and opts.line2 or line1
  -- The marks are read now: the instruction prompt may move them.
  local ranges = {}
  for _, encoding in ipairs({ 'utf-8', 'utf-16', 'utf-32' }) do
    ranges[encoding] = M.selection_range(bufnr, line1, line2, encoding)
  end
  with_text(opts.args, 'Rhema edit: ', function(instruction)
    runs.edit({
      uri = vim.uri_from_bufnr(bufnr),
      range = function(c)
        return ranges[c.offset_encoding] or ranges['utf-16']
      end,
      instruction = instruction,
    }, bufnr)
  end)
end

--- Define every user command.
function M.define()
  local command = vim.api.nvim_create_user_command
  command('RhemaAsk', function(opts)
    run('turn', opts)
  end, { nargs = '*', range = true, desc = 'Ask Rhema (the buffer and selection go along)' })
  command('RhemaStep', function(opts)
    run('step', opts)
  end, { nargs = '*', range = true, desc = 'One Rhema exchange (continues the session)' })
  command('RhemaRunPlan', function(opts)
    local mode = opts.args ~= '' and opts.args or 'edit'
    if mode ~= 'edit' and mode ~= 'agent' then
      runs.notify(':RhemaRunPlan runs the plan in edit or agent mode', vim.log.levels.WARN)
      return
    end
    if not runs.current then
      runs.notify('no plan to run: ask for one in plan mode first', vim.log.levels.WARN)
      return
    end
    runs.run('turn', { prompt = 'Carry out the plan.', mode = mode }, vim.api.nvim_get_current_buf())
  end, {
    nargs = '?',
    complete = function()
      return { 'edit', 'agent' }
    end,
    desc = "Run the session's plan (edit, or agent), ticking its steps",
  })
  command('RhemaMode', function(opts)
    local modes = require('rhema.modes')
    if opts.args == '' then
      modes.pick()
    else
      modes.set(opts.args)
    end
  end, {
    nargs = '?',
    complete = function()
      return require('rhema.facts').modes
    end,
    desc = "Pick the mode of the chat's prompts (ask, plan, edit, agent)",
  })
  command('RhemaKey', function(opts)
    require('rhema.keys').ask(opts.args)
  end, {
    nargs = 1,
    complete = function()
      -- The hosted presets' variables, as the server's status names them.
      local names = {}
      for _, status in pairs(require('rhema.first_run').statuses) do
        for _, preset in ipairs(type(status.setup) == 'table' and status.setup.presets or {}) do
          if type(preset.keyVar) == 'string' and not vim.tbl_contains(names, preset.keyVar) then
            table.insert(names, preset.keyVar)
          end
        end
      end
      return names
    end,
    desc = "Type a provider's API key: kept outside the workspace, given to the server",
  })
  command('RhemaEdit', edit, {
    nargs = '*',
    range = true,
    desc = 'Rewrite the selection with Rhema',
  })
  command('RhemaChat', function(opts)
    require('rhema.chat').open({ text = opts.args, selection = opts.range > 0 })
  end, {
    nargs = '*',
    range = true,
    desc = 'Open the Rhema chat ([range]: mention the selection; a message: send it)',
  })
  command('RhemaCancel', function()
    runs.cancel()
  end, { desc = 'Stop the running Rhema turn' })
  require('rhema.subagents').define()
  command('RhemaRetry', function()
    runs.retry(vim.api.nvim_get_current_buf())
  end, { desc = 'Run the failed Rhema turn again' })
  command('RhemaSessions', function()
    runs.sessions(vim.api.nvim_get_current_buf())
  end, { desc = 'Pick a Rhema session and show it' })
  command('RhemaNew', function(opts)
    runs.new_session()
    if opts.args ~= '' then
      run('turn', opts)
    end
  end, { nargs = '*', range = true, desc = 'Start a new Rhema session' })
  command('RhemaUndoTurn', function()
    runs.undo_turn(vim.api.nvim_get_current_buf())
  end, { desc = "Revert the last Rhema turn's file changes" })
  command('RhemaRewind', function(opts)
    local turn, what = opts.fargs[1], opts.fargs[2]
    if turn and not tonumber(turn) then
      turn, what = nil, turn
    end
    require('rhema.rewind').rewind(
      vim.api.nvim_get_current_buf(),
      turn and tonumber(turn) or nil,
      what,
      opts.bang
    )
  end, {
    nargs = '*',
    bang = true,
    desc = 'Rewind the Rhema session: [turn] [code|conversation|both]; ! overwrites changes',
  })
  command('RhemaReview', function()
    require('rhema.review').open()
  end, { desc = 'Show the Rhema review waiting for an answer' })
  command('RhemaDiff', function(opts)
    require('rhema.changes').diff(vim.api.nvim_get_current_buf(), opts.args)
  end, {
    nargs = '?',
    complete = 'file',
    desc = 'Diff a file against its checkpoint before the last Rhema turn that changed it',
  })
  command('RhemaCompact', function()
    runs.compact(vim.api.nvim_get_current_buf())
  end, { desc = "Summarise the Rhema session's older rounds now" })
  command('RhemaStatus', function()
    runs.status(vim.api.nvim_get_current_buf())
  end, { desc = 'Show the Rhema server and provider' })
  command('RhemaMcp', function()
    require('rhema.mcp').servers(vim.api.nvim_get_current_buf())
  end, { desc = "Show Rhema's MCP servers (pick one to restart it)" })
  command('RhemaMcpRestart', function(opts)
    require('rhema.mcp').restart(opts.args, vim.api.nvim_get_current_buf())
  end, {
    nargs = 1,
    complete = function()
      return require('rhema.mcp').names()
    end,
    desc = 'Restart one of Rhema\'s MCP servers',
  })
  command('RhemaPrompt', function(opts)
    require('rhema.mcp').prompt_command(opts)
  end, {
    nargs = '+',
    complete = function(lead, line)
      return require('rhema.mcp').complete_command(lead, line)
    end,
    desc = "Send an MCP server's prompt as a Rhema turn: {command} [arguments]",
  })
  require('rhema.worktrees').define()
end

--- The client-side command of the "Rhema: edit selection" code action.
function M.register_lsp_commands()
  vim.lsp.commands['rhema.editSelection'] = function(command, ctx)
    local target = (command.arguments or {})[1]
    if type(target) ~= 'table' or not target.uri or not target.range then
      runs.notify('rhema.editSelection needs {uri, range}', vim.log.levels.ERROR)
      return
    end
    with_text(nil, 'Rhema edit: ', function(instruction)
      runs.edit(
        { uri = target.uri, range = target.range, instruction = instruction },
        ctx and ctx.bufnr or vim.uri_to_bufnr(target.uri)
      )
    end)
  end
end

--- Install the opt-in key mappings.
--- @param keymaps boolean|table
--- @param defaults table<string,string>
function M.map(keymaps, defaults)
  if not keymaps then
    return
  end
  local keys = vim.tbl_extend('force', defaults, type(keymaps) == 'table' and keymaps or {})
  local set = vim.keymap.set
  if keys.ask then
    set('n', keys.ask, '<Cmd>RhemaAsk<CR>', { desc = 'Rhema: ask' })
    set('x', keys.ask, ':RhemaAsk<CR>', { desc = 'Rhema: ask about the selection' })
  end
  if keys.edit then
    set('x', keys.edit, ':RhemaEdit<CR>', { desc = 'Rhema: edit the selection' })
  end
  if keys.step then
    set('n', keys.step, '<Cmd>RhemaStep<CR>', { desc = 'Rhema: one step' })
  end
  if keys.cancel then
    set('n', keys.cancel, '<Cmd>RhemaCancel<CR>', { desc = 'Rhema: cancel' })
  end
  if keys.chat then
    set('n', keys.chat, '<Cmd>RhemaChat<CR>', { desc = 'Rhema: chat' })
    set('x', keys.chat, ':RhemaChat<CR>', { desc = 'Rhema: chat about the selection' })
  end
  if keys.sessions then
    set('n', keys.sessions, '<Cmd>RhemaSessions<CR>', { desc = 'Rhema: sessions' })
  end
end

return M
