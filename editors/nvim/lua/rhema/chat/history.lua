--- The chat's prompt history: the prompts sent, kept on disk across restarts.
---
--- Contract: sent prompts are kept in `history` (oldest first, the newest
--- `chat.history` of them, also in `history_file()`; 0 keeps them in memory
--- only), recalled with `<C-p>`/`<C-n>` (and `<Up>`/`<Down>` on the first/last
--- line of the input). Recalling past the newest gives back the draft put
--- aside when recalling began. `rhema.chat` exports `history_file`,
--- `get_history`, `history_prev` and `history_next`.
local config = require('rhema.config')

local M = {}

--- Prompts sent, oldest first (loaded from `history_file()` on first use).
--- @type string[]|nil
M.history = nil
--- While recalling: the history index shown and the draft put aside.
--- @type {index: integer, draft: string[]}|nil
local recall = nil

--- Where the sent prompts are kept across restarts.
--- @return string
function M.history_file()
  return vim.fs.joinpath(vim.fn.stdpath('state'), 'rhema', 'chat_history.json')
end

--- The sent prompts, oldest first.
--- @return string[]
function M.get_history()
  if M.history then
    return M.history
  end
  M.history = {}
  local file = io.open(M.history_file(), 'r')
  if file then
    local ok, list = pcall(vim.json.decode, file:read('*a'))
    file:close()
    if ok and type(list) == 'table' then
      for _, item in ipairs(list) do
        if type(item) == 'string' then
          table.insert(M.history, item)
        end
      end
    end
  end
  return M.history
end

--- Remember a sent prompt: the newest `chat.history` are kept, on disk too
--- (0: kept in memory only, for this Neovim).
--- @param text string
function M.remember(text)
  local history = M.get_history()
  if history[#history] ~= text then
    table.insert(history, text)
  end
  local size = config.options.chat.history
  if size <= 0 then
    return
  end
  while #history > size do
    table.remove(history, 1)
  end
  local path = M.history_file()
  vim.fn.mkdir(vim.fs.dirname(path), 'p')
  local temp = path .. '.tmp'
  local file = io.open(temp, 'w')
  if file then
    file:write(vim.json.encode(history))
    file:close()
    os.rename(temp, path)
  end
end


--- Stop recalling (a prompt was sent, or the input is gone).
function M.reset()
  recall = nil
end

--- The input's lines after a recall `step` back (-1) or forward (1) from
--- `current` (the input's lines); nil when nothing changes.
--- @param step integer
--- @param current string[]
--- @return string[]|nil
function M.recall(step, current)
  local history = M.get_history()
  if #history == 0 then
    return nil
  end
  if recall == nil then
    if step > 0 then
      return nil
    end
    recall = { index = #history + 1, draft = current }
  end
  local index = math.max(1, math.min(#history + 1, recall.index + step))
  if index == recall.index then
    return nil
  end
  recall.index = index
  if index > #history then
    local draft = recall.draft
    recall = nil
    return draft
  end
  return vim.split(history[index], '\n', { plain = true })
end

return M
