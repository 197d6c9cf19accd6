--- Work-done progress of the rhema server, for statuslines.
---
--- Contract: an `LspProgress` autocmd keeps the latest message of every
--- running rhema progress token (begin/report set it, end removes it) and
--- redraws the statusline; `text()` is "Rhema: <message>" for the newest
--- running one, or "" when nothing runs.
local M = {}

--- Messages of the running progress tokens, and the order they began in.
M.active = {}
local order = {}

local function forget(token)
  M.active[token] = nil
  for index, candidate in ipairs(order) do
    if candidate == token then
      table.remove(order, index)
      return
    end
  end
end

--- Handle one `LspProgress` autocmd.
--- @param args table the autocmd's arguments
function M.on_progress(args)
  local data = args.data or {}
  local client = data.client_id and vim.lsp.get_client_by_id(data.client_id)
  if not client or client.name ~= 'rhema' then
    return
  end
  local params = data.params or {}
  local value = params.value or {}
  local token = tostring(params.token)
  if value.kind == 'end' then
    forget(token)
  elseif value.kind == 'begin' or value.kind == 'report' then
    if M.active[token] == nil then
      table.insert(order, token)
    end
    M.active[token] = value.message or M.active[token] or value.title or ''
  end
  vim.cmd('redrawstatus')
end

--- The statusline text: what the newest running turn is doing, or "".
--- @return string
function M.text()
  local token = order[#order]
  if token == nil then
    return ''
  end
  local message = M.active[token]
  return message ~= '' and ('Rhema: ' .. message) or 'Rhema'
end

--- Install the autocmd.
function M.setup()
  local group = vim.api.nvim_create_augroup('rhema.progress', { clear = true })
  vim.api.nvim_create_autocmd('LspProgress', { group = group, callback = M.on_progress })
end

return M
