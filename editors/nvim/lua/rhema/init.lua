--- rhema.nvim: an AI coding agent in Neovim, through the rhema language server.
---
--- Contract: `setup(opts)` is the one entry point (see |rhema-setup|): it
--- merges the options, defines the highlight groups and user commands,
--- registers the client-side LSP command, the progress autocmd and the
--- opt-in keymaps, and enables the `rhema` LSP config. The functions below
--- are what the commands call, usable from Lua too.
local config = require('rhema.config')

local M = {}

M.did_setup = false

--- Configure and start the plugin.
--- @param opts table|nil see |rhema-options|
function M.setup(opts)
  local options = config.apply(opts)
  local panel = require('rhema.panel')
  local runs = require('rhema.runs')
  local commands = require('rhema.commands')
  panel.define_highlights()
  commands.define()
  commands.register_lsp_commands()
  commands.map(options.keymaps, config.default_keymaps)
  require('rhema.progress').setup()
  require('rhema.chat').setup()
  require('rhema.inline').setup(options.inline)
  require('rhema.next_edit').setup(options.inline)
  require('rhema.client').setup(options, function(params)
    runs.on_event(params)
  end)
  local group = vim.api.nvim_create_augroup('rhema.highlights', { clear = true })
  vim.api.nvim_create_autocmd('ColorScheme', { group = group, callback = panel.define_highlights })
  M.did_setup = true
end

--- Ask in the current session (a new one when there is none).
--- @param prompt string
--- @param context table[]|nil `{uri, range?}` references
function M.ask(prompt, context)
  require('rhema.runs').run(
    'turn',
    { prompt = prompt, context = context },
    vim.api.nvim_get_current_buf()
  )
end

--- One exchange: with a prompt it starts a turn, without one it continues.
--- @param prompt string|nil
function M.step(prompt)
  require('rhema.runs').run('step', { prompt = prompt }, vim.api.nvim_get_current_buf())
end

--- Rewrite `range` of `uri` following `instruction`.
--- @param uri string
--- @param range table LSP range in the client's position encoding
--- @param instruction string
--- @param done fun(result: table)|nil
function M.edit(uri, range, instruction, done)
  require('rhema.runs').edit(
    { uri = uri, range = range, instruction = instruction },
    vim.uri_to_bufnr(uri),
    done
  )
end

--- Open (or focus) the chat; with `text`, send it.
--- @param text string|nil
function M.chat(text)
  require('rhema.chat').open({ text = text })
end

--- Stop what runs.
function M.cancel()
  require('rhema.runs').cancel()
end

--- Run the current session's failed turn again.
function M.retry()
  require('rhema.runs').retry(vim.api.nvim_get_current_buf())
end

--- Pick a stored session and show it.
function M.sessions()
  require('rhema.runs').sessions(vim.api.nvim_get_current_buf())
end

--- Forget the current session; the next ask starts a new one.
function M.new()
  require('rhema.runs').new_session()
end

--- Revert the file changes of the current session's last turn.
function M.undo_turn()
  require('rhema.runs').undo_turn(vim.api.nvim_get_current_buf())
end

--- Whether a request of the plugin is still running.
--- @return boolean
function M.is_running()
  return require('rhema.runs').is_running()
end

--- The current session id, or nil.
--- @return string|nil
function M.session()
  return require('rhema.runs').current
end

--- The buffer of the panel of `session` (default: the current one), or nil.
--- @param session string|nil
--- @return integer|nil
function M.panel_buffer(session)
  local runs = require('rhema.runs')
  local panel = session and runs.panels[session] or runs.current_panel
  return panel and panel.buf or nil
end

--- Statusline text: what the running turn is doing ("Rhema: thinking"), and
--- the current session's context fill ("ctx 12.0k/200.0k 6%"), or "".
--- @return string
function M.status()
  local text = require('rhema.progress').text()
  local p = require('rhema.runs').current_panel
  local fill = p and p:fill_text() or ''
  if fill == '' then
    return text
  end
  return text == '' and ('Rhema ' .. fill) or (text .. ' · ' .. fill)
end

return M
