--- The plugin's options: defaults, and the merge of what `setup()` is given.
---
--- Contract: `config.options` always holds a complete option table; `apply()`
--- replaces it with the defaults deep-merged with the user's table and
--- returns it. Nothing else in the plugin keeps its own defaults; the
--- server's settings and their defaults are `rhema.facts` (generated), and a
--- name in `settings` the server does not know is warned of.
local facts = require('rhema.facts')

local M = {}

--- @class rhema.PanelOptions
--- @field position "right"|"left"|"top"|"bottom" where the panel split opens
--- @field size integer width (left/right) or height (top/bottom) of the split
--- @field fold_thinking boolean reasoning blocks start folded
--- @field flush_ms integer how long stream deltas are batched before a redraw
--- @field follow boolean keep the panel scrolled to the end while it streams
--- @field treesitter boolean highlight the Markdown with treesitter when its parsers load

--- @class rhema.ChatOptions
--- @field height integer lines of the chat's input window
--- @field history integer sent prompts kept, across restarts too (0: this Neovim only)
--- @field keys table<string, string|boolean> the chat's buffer-local keys (`false`: unmapped)

--- @class rhema.InlineOptions
--- @field enabled boolean ghost text from the server's inline completion as you type
--- @field accept string|false the Insert-mode key that accepts the suggestion shown
--- @field disabled_filetypes string[] filetypes with no ghost text
--- @field next_edit string|false the Normal-mode key that jumps to the next-edit suggestion, then applies it

--- @class rhema.Options
--- @field cmd string[] the server command (stdio)
--- @field cmd_env table<string,string>|nil extra environment for the server
--- @field root_markers string[] files or folders that mark a workspace root
--- @field settings table the `rhema` settings (initializationOptions and workspace/configuration)
--- @field panel rhema.PanelOptions
--- @field chat rhema.ChatOptions
--- @field inline rhema.InlineOptions
--- @field keymaps boolean|table<string,string|false> opt-in key mappings
M.defaults = {
  cmd = { 'rhema-lsp' },
  cmd_env = nil,
  root_markers = { '.git', 'pyproject.toml', 'package.json', 'Cargo.toml', 'go.mod', '.rhema' },
  settings = {},
  panel = {
    position = 'right',
    size = 80,
    fold_thinking = true,
    flush_ms = 40,
    follow = true,
    treesitter = true,
  },
  chat = {
    height = 6,
    history = 100,
    keys = {
      send = '<CR>',
      send_insert = '<C-s>',
      history_prev = '<C-p>',
      history_next = '<C-n>',
      arrows = true,
      stop = '<C-c>',
      close = 'q',
      goto_file = 'gf',
      input = 'i',
      retry = 'R',
      mode = 'gm',
    },
  },
  inline = {
    enabled = true,
    accept = '<M-l>',
    next_edit = '<M-;>',
    disabled_filetypes = {},
  },
  keymaps = false,
}

--- The mappings `keymaps = true` installs; a table overrides them one by one.
M.default_keymaps = {
  ask = '<leader>ra',
  edit = '<leader>re',
  step = '<leader>rn',
  cancel = '<leader>rc',
  sessions = '<leader>rs',
  chat = '<leader>rr',
}

--- @type rhema.Options
M.options = vim.deepcopy(M.defaults)

--- Merge `opts` over the defaults and make the result current.
--- @param opts table|nil
--- @return rhema.Options
function M.apply(opts)
  opts = opts or {}
  vim.validate('opts', opts, 'table')
  local merged = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts)
  if type(merged.cmd) == 'string' then
    merged.cmd = { merged.cmd }
  end
  -- Lists replace, they do not merge index by index.
  if opts.cmd then
    merged.cmd = type(opts.cmd) == 'string' and { opts.cmd } or vim.deepcopy(opts.cmd)
  end
  if opts.root_markers then
    merged.root_markers = vim.deepcopy(opts.root_markers)
  end
  for name in pairs(type(merged.settings) == 'table' and merged.settings or {}) do
    if facts.settings[name] == nil then
      vim.notify(
        ('rhema: settings.%s is not a setting of the server; it is ignored'):format(tostring(name)),
        vim.log.levels.WARN
      )
    end
  end
  local positions = { right = true, left = true, top = true, bottom = true }
  if not positions[merged.panel.position] then
    vim.notify(
      ('rhema: panel.position %q is not one of right, left, top, bottom; using right'):format(
        tostring(merged.panel.position)
      ),
      vim.log.levels.WARN
    )
    merged.panel.position = 'right'
  end
  M.options = merged
  return merged
end

return M
