--- The language client: started through `vim.lsp.config`/`vim.lsp.enable`,
--- attached to every file buffer, and the one way the plugin talks to the server.
---
--- Contract: `setup(opts, on_event)` registers the `rhema` config (root from
--- `root_markers`, else the cwd; settings as `initializationOptions` and as
--- the `rhema` section Neovim serves on `workspace/configuration`) and enables
--- it. Buffers without a filetype (which never fire `FileType`) are attached
--- too. `with_client(bufnr, fn)` calls `fn(client)` once a client is
--- initialized, starting one when none runs. `execute(client, name, args,
--- handler, bufnr)` sends `workspace/executeCommand` with one argument object
--- through `client:request` and returns the request id, so the request can be
--- cancelled. Workspace edits are applied with an undo break before each
--- buffer they touch: one undo step per edit; an edit asking for confirmation
--- (review mode; the client advertises change annotations) goes through
--- rhema.review first.
local config = require('rhema.config')

local M = {}

M.name = 'rhema'

--- The workspace root of `bufnr`: the nearest root marker, else the cwd.
--- @param bufnr integer
--- @return string
function M.root(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name ~= '' and vim.bo[bufnr].buftype == '' then
    local found = vim.fs.root(bufnr, config.options.root_markers)
    if found then
      return found
    end
  end
  return vim.fn.getcwd()
end

local function is_file_buffer(bufnr)
  return vim.api.nvim_buf_is_valid(bufnr)
    and vim.api.nvim_buf_is_loaded(bufnr)
    and vim.bo[bufnr].buftype == ''
    and vim.api.nvim_buf_get_name(bufnr) ~= ''
end
M.is_file_buffer = is_file_buffer

--- Close the undo block of `bufnr`, so the next change is its own undo step.
--- @param bufnr integer
local function break_undo(bufnr)
  vim.api.nvim_buf_call(bufnr, function()
    vim.cmd('let &g:undolevels = &g:undolevels')
  end)
end

local function buffers_of(edit)
  local uris = {}
  for uri in pairs(edit.changes or {}) do
    table.insert(uris, uri)
  end
  for _, change in ipairs(edit.documentChanges or {}) do
    if change.textDocument then
      table.insert(uris, change.textDocument.uri)
    end
  end
  return uris
end

--- Apply `edit` as one undo step per buffer, unsaved; the applyEdit answer.
--- @param edit table a WorkspaceEdit
--- @param offset_encoding string
--- @return {applied: boolean, failureReason: string|nil}
function M.apply(edit, offset_encoding)
  -- A file the edit creates is not loaded before it exists: its buffer would
  -- be a new file's, which `:write` then refuses to overwrite (E13).
  local created = {}
  for _, change in ipairs(edit.documentChanges or {}) do
    if change.kind == 'create' then
      created[vim.uri_to_fname(change.uri)] = true
    end
  end
  for _, uri in ipairs(buffers_of(edit)) do
    if not created[vim.uri_to_fname(uri)] then
      local bufnr = vim.uri_to_bufnr(uri)
      vim.fn.bufload(bufnr)
      break_undo(bufnr)
    end
  end
  local ok, failure = pcall(vim.lsp.util.apply_workspace_edit, edit, offset_encoding)
  for _, uri in ipairs(buffers_of(edit)) do
    local bufnr = vim.uri_to_bufnr(uri)
    if ok and created[vim.uri_to_fname(uri)] and vim.api.nvim_buf_is_loaded(bufnr) then
      -- The new file's buffer started as one empty line, which the inserted
      -- text pushed to the end: drop it, so the buffer holds exactly the text.
      local count = vim.api.nvim_buf_line_count(bufnr)
      local last = vim.api.nvim_buf_get_lines(bufnr, count - 1, count, false)[1]
      if count > 1 and last == '' then
        vim.api.nvim_buf_set_lines(bufnr, count - 1, count, false, {})
      end
    end
    break_undo(bufnr)
  end
  if not ok then
    return { applied = false, failureReason = tostring(failure) }
  end
  return { applied = true }
end

--- `workspace/applyEdit`: an edit whose change annotations ask for
--- confirmation (review mode) opens a review (rhema.review) and is answered
--- once the user is done; any other applies at once.
local function apply_edit(_, params, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if not client then
    return { applied = false, failureReason = 'the rhema client has stopped' }
  end
  local edit = params.edit or {}
  local review = require('rhema.review')
  if review.wants_review(edit) then
    return review.handle(params, client)
  end
  return M.apply(edit, client.offset_encoding)
end

--- What the client can do beyond Neovim's defaults: change annotations
--- (review mode's per-change confirmation).
--- @return table
function M.capabilities()
  return vim.tbl_deep_extend('force', vim.lsp.protocol.make_client_capabilities(), {
    workspace = { workspaceEdit = { changeAnnotationSupport = { groupsOnLabel = false } } },
  })
end

local function attach_without_filetype(bufnr)
  if not is_file_buffer(bufnr) or vim.bo[bufnr].filetype ~= '' then
    return
  end
  if #vim.lsp.get_clients({ bufnr = bufnr, name = M.name }) > 0 then
    return
  end
  local resolved = vim.deepcopy(vim.lsp.config[M.name])
  resolved.name = M.name
  resolved.root_dir = M.root(bufnr)
  vim.lsp.start(resolved, { bufnr = bufnr })
end

--- The `initializationOptions`: the settings, and what this client can show
--- (it renders `rhema/event`, implements `rhema.editSelection`, answers
--- `rhema/language` from the other attached clients: rhema.language, and
--- `rhema/askText`: rhema.mcp).
--- @param settings table
--- @return table
function M.init_options(settings)
  local options = vim.deepcopy(settings)
  options.clientCapabilities = { events = true, editSelection = true, language = true, askText = true }
  return options
end

--- The server's extra environment: the keys kept by `:RhemaKey` (rhema.keys),
--- `cmd_env` over them.
--- @param cmd_env table|nil
--- @return table|nil
function M.server_env(cmd_env)
  local env = vim.tbl_extend('force', require('rhema.keys').env(), cmd_env or {})
  return next(env) and env or nil
end

--- A key was kept: the next server starts with it.
function M.use_keys()
  vim.lsp.config(M.name, { cmd_env = M.server_env(config.options.cmd_env) })
end

--- Register and enable the client.
--- @param opts rhema.Options
--- @param on_event fun(params: table, client_id: integer)
function M.setup(opts, on_event)
  vim.lsp.config(M.name, {
    cmd = opts.cmd,
    cmd_env = M.server_env(opts.cmd_env),
    root_dir = function(bufnr, on_dir)
      on_dir(M.root(bufnr))
    end,
    init_options = M.init_options(opts.settings),
    capabilities = M.capabilities(),
    settings = { rhema = vim.deepcopy(opts.settings) },
    handlers = {
      ['rhema/event'] = function(_, params, ctx)
        on_event(params, ctx.client_id)
      end,
      ['workspace/applyEdit'] = apply_edit,
      ['rhema/language'] = function(err, params, ctx)
        return require('rhema.language').handle(err, params, ctx)
      end,
      ['rhema/askText'] = function(err, params, ctx)
        return require('rhema.mcp').ask_text(err, params, ctx)
      end,
    },
    on_exit = function(_, _, client_id)
      vim.schedule(function()
        require('rhema.review').decline_all('the rhema client stopped', client_id)
      end)
    end,
  })
  vim.lsp.enable(M.name)
  require('rhema.language').track()
  local group = vim.api.nvim_create_augroup('rhema.attach', { clear = true })
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile' }, {
    group = group,
    callback = function(args)
      vim.schedule(function()
        attach_without_filetype(args.buf)
      end)
    end,
  })
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    attach_without_filetype(bufnr)
  end
end

--- The rhema client for `bufnr`: attached to it, else one whose root holds
--- the cwd, else any.
--- @param bufnr integer|nil
--- @return vim.lsp.Client|nil
function M.get(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local attached = vim.lsp.get_clients({ bufnr = bufnr, name = M.name })
  if attached[1] then
    return attached[1]
  end
  local all = vim.lsp.get_clients({ name = M.name })
  local cwd = vim.fn.getcwd()
  for _, client in ipairs(all) do
    if client.root_dir and vim.startswith(cwd, client.root_dir) then
      return client
    end
  end
  return all[1]
end

--- Start a client for `bufnr` (attached when it is a file buffer).
--- @param bufnr integer
--- @return integer|nil client id
function M.start(bufnr)
  local resolved = vim.deepcopy(vim.lsp.config[M.name])
  if not resolved or not resolved.cmd then
    return nil
  end
  resolved.name = M.name
  resolved.root_dir = M.root(bufnr)
  return vim.lsp.start(resolved, { bufnr = bufnr, attach = is_file_buffer(bufnr) })
end

--- Call `fn(client)` once a rhema client is initialized (starting one if
--- needed); `fn(nil, message)` when none can be.
--- @param bufnr integer|nil
--- @param fn fun(client: vim.lsp.Client|nil, message: string|nil)
--- @param timeout_ms integer|nil
function M.with_client(bufnr, fn, timeout_ms)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local client = M.get(bufnr)
  if not client then
    local id = M.start(bufnr)
    client = id and vim.lsp.get_client_by_id(id) or nil
  end
  if not client then
    fn(nil, ('the server %q could not be started'):format(table.concat(config.options.cmd, ' ')))
    return
  end
  if client.initialized then
    fn(client)
    return
  end
  local deadline = vim.uv.now() + (timeout_ms or 20000)
  local function poll()
    if client.initialized then
      fn(client)
    elseif client:is_stopped() or vim.uv.now() > deadline then
      fn(nil, 'the rhema server did not start (see :checkhealth rhema and :LspLog)')
    else
      vim.defer_fn(poll, 20)
    end
  end
  poll()
end

--- Send `workspace/executeCommand {command = name, arguments = {args}}`.
--- @param client vim.lsp.Client
--- @param name string
--- @param args table
--- @param handler fun(err: table|nil, result: any)
--- @param bufnr integer|nil
--- @return integer|nil request id
function M.execute(client, name, args, handler, bufnr)
  if next(args) == nil then
    args = vim.empty_dict() -- `{}` would be sent as a JSON array
  end
  local params = { command = name, arguments = { args } }
  local ok, id = client:request('workspace/executeCommand', params, function(err, result)
    handler(err, result)
  end, bufnr)
  if not ok then
    handler({ message = 'the rhema server is not running' }, nil)
    return nil
  end
  return id
end

return M
