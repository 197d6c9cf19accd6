--- The chat's mode: the mode the chat's prompts run in, and the plan hint.
---
--- Contract: `current()` is the mode picked with `:RhemaMode` (or the chat's
--- `chat.keys.mode` key, a `vim.ui.select` of the server's modes,
--- `rhema.facts`), else `settings.mode`, else the server's default. A pick
--- stands while `settings.mode` stays what it was when it was made: a later
--- change of the setting (a new `setup()`) wins, the latest change wins. The
--- chat's winbar shows `current()` and `chat.send()` sends it as the turn's
--- `mode`; `of_run(mode)` is the mode a run asked with `mode` runs in (for
--- the panel's hint: a turn in plan mode that leaves a plan ends with how to
--- run it, `:RhemaRunPlan`).
local config = require('rhema.config')
local facts = require('rhema.facts')

local M = {}

--- The pick: its mode, and `settings.mode` when it was made.
--- @type {mode: string, setting: string|nil}|nil
M.chosen = nil

--- The mode the settings give (`settings.mode`, else the server's default).
--- @return string
local function setting()
  local mode = config.options.settings.mode
  if type(mode) == 'string' then
    return mode
  end
  return facts.settings.mode
end

--- The mode the chat's next prompt runs in.
--- @return string
function M.current()
  return M.chosen_mode() or setting()
end

--- The pick, while it stands (nil: the settings decide).
--- @return string|nil
function M.chosen_mode()
  if M.chosen and M.chosen.setting == config.options.settings.mode then
    return M.chosen.mode
  end
  return nil
end

--- The mode a run asked with `mode` (nil: the settings') runs in.
--- @param mode string|nil
--- @return string
function M.of_run(mode)
  return mode or setting()
end

--- Whether `mode` is one of the server's modes.
--- @param mode string
--- @return boolean
function M.valid(mode)
  return vim.tbl_contains(facts.modes, mode)
end

--- Pick `mode` for the chat's prompts; a mode the server does not have is refused.
--- @param mode string
--- @return boolean
function M.set(mode)
  if not M.valid(mode) then
    vim.notify(
      ('rhema: %q is not a mode; the modes are %s'):format(mode, table.concat(facts.modes, ', ')),
      vim.log.levels.WARN
    )
    return false
  end
  M.chosen = { mode = mode, setting = config.options.settings.mode }
  vim.cmd.redrawstatus({ bang = true })
  vim.notify(("rhema: the chat's prompts run in %s mode"):format(mode), vim.log.levels.INFO)
  return true
end

--- Pick the mode from a list of the server's modes.
function M.pick()
  local now = M.current()
  vim.ui.select(facts.modes, {
    prompt = 'Rhema mode',
    format_item = function(mode)
      return mode == now and (mode .. ' (current)') or mode
    end,
  }, function(choice)
    if choice then
      M.set(choice)
    end
  end)
end

--- The lines after a plan turn: how to run its plan.
--- @return string
function M.plan_hint()
  return 'Run this plan: :RhemaRunPlan (edit mode) or :RhemaRunPlan agent'
end

return M
