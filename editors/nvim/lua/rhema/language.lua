--- Answers `rhema/language` (docs/protocol.md, "The editor's language
--- servers") from the other LSP clients attached to the document's buffer,
--- never rhema itself.
---
--- Rules: an LSP method goes to each other client that supports it, in turn,
--- through `client:request`; the first answer without an error wins
--- (`source = "nvim: <client name>"`); none attached is `null`. Positions are
--- converted between that client's `offset_encoding` and rhema's, both ways.
--- `diagnostics` reads `vim.diagnostic.get` (every namespace but rhema's)
--- at once when another client's `DiagnosticChanged` came since the buffer
--- reached the asked version (each is remembered with the buffer's version
--- then: `M.track`), else once one comes (settled for a moment), else when
--- `waitMs` is spent (`complete` says whether the buffer reached the version
--- at all). The handler runs in
--- the coroutine Neovim 0.11 gives a server request, and yields while it
--- waits.
local M = {}

local SETTLE_MS = 250

--- Each buffer's version when another client's diagnostics last changed.
--- @type table<integer, integer>
local reported = {}

local function rhema_name()
  return require('rhema.client').name
end

--- @param bufnr integer|nil
--- @param method string|nil
--- @return vim.lsp.Client[]
local function others(bufnr, method)
  local found = {}
  for _, client in ipairs(vim.lsp.get_clients(bufnr and { bufnr = bufnr } or {})) do
    if client.name ~= rhema_name() and (method == nil or client:supports_method(method, bufnr)) then
      table.insert(found, client)
    end
  end
  return found
end

--- The loaded buffer of `uri`, without creating one.
local function loaded_buffer(uri)
  local bufnr = vim.fn.bufnr(vim.uri_to_fname(uri))
  if bufnr ~= -1 and vim.api.nvim_buf_is_loaded(bufnr) then
    return bufnr
  end
  return nil
end

-- Position conversion ------------------------------------------------------

--- A reader of `uri`'s lines (the buffer's, else the file's), remembered per answer.
local function line_reader()
  local cache = {}
  return function(uri, row)
    if cache[uri] == nil then
      local bufnr = loaded_buffer(uri)
      if bufnr then
        cache[uri] = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
      else
        local ok, lines = pcall(vim.fn.readfile, vim.uri_to_fname(uri))
        cache[uri] = ok and lines or {}
      end
    end
    return cache[uri][row + 1] or ''
  end
end

local function convert_position(position, uri, line_of, from, to)
  if type(position) ~= 'table' or type(position.line) ~= 'number' or type(position.character) ~= 'number' then
    return
  end
  local line = line_of(uri, position.line)
  local ok, byte = pcall(vim.str_byteindex, line, from, position.character, false)
  if not ok then
    return
  end
  local ok2, index = pcall(vim.str_utfindex, line, to, byte, false)
  if ok2 then
    position.character = index
  end
end

local RANGES = { range = true, selectionRange = true, targetRange = true, targetSelectionRange = true }

--- Convert every position in `value` (LSP JSON, in place) from `from` to `to`.
local function convert(value, uri, line_of, from, to)
  if type(value) ~= 'table' then
    return
  end
  if type(value.uri) == 'string' then
    uri = value.uri
  end
  if type(value.textDocument) == 'table' and type(value.textDocument.uri) == 'string' then
    uri = value.textDocument.uri
  end
  local target = type(value.targetUri) == 'string' and value.targetUri or uri
  for key, inner in pairs(value) do
    if RANGES[key] and type(inner) == 'table' then
      local where = (key == 'targetRange' or key == 'targetSelectionRange') and target or uri
      convert_position(inner.start, where, line_of, from, to)
      convert_position(inner['end'], where, line_of, from, to)
    elseif key == 'position' then
      convert_position(inner, uri, line_of, from, to)
    elseif key == 'changes' and type(inner) == 'table' then
      for changed, edits in pairs(inner) do
        convert(edits, changed, line_of, from, to)
      end
    else
      convert(inner, uri, line_of, from, to)
    end
  end
end

local function converted(value, uri, from, to)
  if from ~= to and type(value) == 'table' then
    value = vim.deepcopy(value)
    convert(value, uri, line_reader(), from, to)
  end
  return value
end

-- Answers ------------------------------------------------------------------

local function rhema_encoding()
  local client = vim.lsp.get_clients({ name = rhema_name() })[1]
  return client and client.offset_encoding or 'utf-16'
end

--- `client:request` from the handler's coroutine: `err, result`.
local function request(client, method, params, bufnr)
  local co = coroutine.running()
  local answered, err, result = false, nil, nil
  local ok = client:request(method, params, function(e, r)
    answered, err, result = true, e, r
    if coroutine.status(co) == 'suspended' then
      coroutine.resume(co)
    end
  end, bufnr)
  if not ok then
    return { message = client.name .. ' is not running' }, nil
  end
  if not answered then
    coroutine.yield()
  end
  return err, result
end

local function lsp_answer(method, params)
  local uri = params.textDocument and params.textDocument.uri
  local bufnr = nil
  if uri then
    bufnr = loaded_buffer(uri)
    if not bufnr then
      return vim.NIL
    end
  end
  local clients = others(bufnr, method)
  if #clients == 0 then
    return vim.NIL
  end
  local ours = rhema_encoding()
  local failures = {}
  for _, client in ipairs(clients) do
    local theirs = client.offset_encoding or 'utf-16'
    local err, result = request(client, method, converted(params, uri, ours, theirs), bufnr)
    if not err then
      local answer = result == nil and vim.NIL or converted(result, uri, theirs, ours)
      return { result = answer, source = 'nvim: ' .. client.name }
    end
    table.insert(failures, ('%s: %s'):format(client.name, err.message or vim.inspect(err)))
  end
  return nil, vim.lsp.rpc.rpc_response_error(vim.lsp.protocol.ErrorCodes.RequestFailed, table.concat(failures, '; '))
end

--- Rhema's own diagnostic namespaces (never part of an answer).
local function rhema_namespaces()
  local mine = {}
  for _, client in ipairs(vim.lsp.get_clients({ name = rhema_name() })) do
    mine[vim.lsp.diagnostic.get_namespace(client.id, false)] = true
    mine[vim.lsp.diagnostic.get_namespace(client.id, true)] = true
  end
  return mine
end

--- Whether a `DiagnosticChanged` is another client's (its items, or a clear).
local function theirs(args)
  local changed = args.data and args.data.diagnostics or {}
  if #changed == 0 then
    return true
  end
  local mine = rhema_namespaces()
  for _, item in ipairs(changed) do
    if not mine[item.namespace] then
      return true
    end
  end
  return false
end

--- Remember, for every buffer, the version its diagnostics last changed at
--- (called once by `rhema.client.setup`).
function M.track()
  local group = vim.api.nvim_create_augroup('rhema.language', { clear = true })
  vim.api.nvim_create_autocmd('DiagnosticChanged', {
    group = group,
    callback = function(args)
      if theirs(args) then
        reported[args.buf] = vim.lsp.util.buf_versions[args.buf]
      end
    end,
  })
  vim.api.nvim_create_autocmd('BufUnload', {
    group = group,
    callback = function(args)
      reported[args.buf] = nil
    end,
  })
end

--- The buffer's diagnostics as LSP `Diagnostic`s in rhema's encoding.
local function current(bufnr, uri)
  local mine = rhema_namespaces()
  local encoding = rhema_encoding()
  local line_of = line_reader()
  local function at(row, col)
    local line = line_of(uri, row)
    local ok, index = pcall(vim.str_utfindex, line, encoding, math.min(col, #line), false)
    return { line = row, character = ok and index or col }
  end
  local out = {}
  for _, item in ipairs(vim.diagnostic.get(bufnr)) do
    if not mine[item.namespace] then
      local diagnostic = {
        range = { start = at(item.lnum, item.col), ['end'] = at(item.end_lnum or item.lnum, item.end_col or item.col) },
        message = item.message,
        severity = item.severity,
      }
      if item.source then
        diagnostic.source = item.source
      end
      if item.code ~= nil then
        diagnostic.code = item.code
      end
      table.insert(out, diagnostic)
    end
  end
  return out
end

local function diagnostics_answer(params)
  local uri, version, wait_ms = params.uri, params.version, params.waitMs
  if type(uri) ~= 'string' or type(wait_ms) ~= 'number' then
    return nil, vim.lsp.rpc.rpc_response_error(vim.lsp.protocol.ErrorCodes.InvalidParams, 'diagnostics needs {uri, version, waitMs}')
  end
  local bufnr = loaded_buffer(uri)
  local clients = bufnr and others(bufnr, nil) or {}
  if #clients == 0 then
    return vim.NIL
  end
  local names = {}
  for _, client in ipairs(clients) do
    table.insert(names, client.name)
  end
  local function answer(complete)
    return { diagnostics = current(bufnr, uri), source = 'nvim: ' .. table.concat(names, ', '), complete = complete }
  end
  local function at_version()
    return version == vim.NIL or version == nil or (vim.lsp.util.buf_versions[bufnr] or 0) >= version
  end
  if version == vim.NIL or version == nil or (reported[bufnr] or -1) >= version then
    return answer(true)
  end
  local co = coroutine.running()
  local result = nil
  local deadline, settle = vim.uv.new_timer(), vim.uv.new_timer()
  local autocmd
  local function finish(complete)
    if result ~= nil then
      return
    end
    result = answer(complete)
    deadline:stop()
    deadline:close()
    settle:stop()
    settle:close()
    pcall(vim.api.nvim_del_autocmd, autocmd)
    if coroutine.status(co) == 'suspended' then
      coroutine.resume(co)
    end
  end
  autocmd = vim.api.nvim_create_autocmd('DiagnosticChanged', {
    buffer = bufnr,
    callback = function(args)
      if theirs(args) and at_version() then
        settle:stop()
        settle:start(SETTLE_MS, 0, vim.schedule_wrap(function()
          finish(true)
        end))
      end
    end,
  })
  -- The wait spent with the buffer at the version: its diagnostics did not change (settled).
  deadline:start(math.max(0, wait_ms), 0, vim.schedule_wrap(function()
    finish(at_version())
  end))
  if result == nil then
    coroutine.yield()
  end
  return result
end

--- The `rhema/language` handler (`handlers['rhema/language']`).
function M.handle(_, params, _)
  local co, main = coroutine.running()
  if co == nil or main then
    return nil, vim.lsp.rpc.rpc_response_error(vim.lsp.protocol.ErrorCodes.InternalError, 'rhema/language needs a coroutine (Neovim 0.11)')
  end
  if type(params) ~= 'table' or type(params.params) ~= 'table' then
    return nil, vim.lsp.rpc.rpc_response_error(vim.lsp.protocol.ErrorCodes.InvalidParams, 'rhema/language needs {method, params}')
  end
  if params.method == 'diagnostics' then
    return diagnostics_answer(params.params)
  end
  return lsp_answer(params.method, params.params)
end

return M
