--- Markdown highlighting of the panels and the chat's input.
---
--- Contract: `attach(buf)` highlights a markdown buffer with treesitter's
--- `markdown` and `markdown_inline` parsers when both load (Neovim 0.10 and
--- later bundle them; `panel.treesitter = false` keeps Vim's syntax instead):
--- headings, emphasis, inline code, links, tables, and every fenced code block
--- in its own language, through the parsers' injections, wherever a parser for
--- that language is installed. `fences(buf, lines)` (called with the lines a
--- panel writes) gives a fence whose language has no treesitter parser, but a
--- Vim syntax file, a syntax region in that language, so ```python answers are
--- highlighted on a bare Neovim too. Without treesitter the buffer keeps Vim's
--- markdown syntax, with the same fence regions, minus `markdownError`, which
--- paints every `_` inside a word (snake_case names, environment variables)
--- red. Nothing here changes a buffer's text.
local M = {}

--- Per buffer: whether treesitter highlights it, and the fence languages seen.
--- @type table<integer, {treesitter: boolean, fences: table<string, boolean>}>
M.state = {}

--- Whether the treesitter markdown parsers load.
--- @return boolean
function M.treesitter_available()
  for _, lang in ipairs({ 'markdown', 'markdown_inline' }) do
    local ok, loaded = pcall(vim.treesitter.language.add, lang)
    if not ok or not loaded then
      return false
    end
  end
  return true
end

--- Whether treesitter has a parser for the fence language `name`.
local function has_parser(name)
  for _, lang in ipairs({ name, vim.treesitter.language.get_lang(name) }) do
    local ok, loaded = pcall(vim.treesitter.language.add, lang)
    if ok and loaded then
      return true
    end
  end
  return false
end

--- The Vim syntax of the fence language `name` (`python` for `py`), or nil.
local function syntax_of(name)
  for _, candidate in ipairs({ name, vim.filetype.match({ filename = 'fence.' .. name }) }) do
    if #vim.api.nvim_get_runtime_file('syntax/' .. candidate .. '.vim', false) > 0 then
      return candidate
    end
  end
  return nil
end

--- A syntax region of `syntax` for the fences that say `name`.
local function add_region(buf, name, syntax)
  vim.api.nvim_buf_call(buf, function()
    local cluster = '@rhemaFence_' .. syntax
    local saved = vim.b.current_syntax
    vim.b.current_syntax = nil
    vim.cmd(('silent! syntax include %s syntax/%s.vim'):format(cluster, syntax))
    vim.b.current_syntax = saved
    vim.cmd(
      (
        [[syntax region rhemaFence_%s matchgroup=rhemaFenceDelimiter ]]
        .. [[start="^\s*\z(```\+\|\~\~\~\+\)\s*%s\>.*$" end="^\s*\z1\ze\s*$" keepend contains=%s]]
      ):format(name, name, cluster)
    )
  end)
end

--- Give the fenced code blocks that open in `lines` their language's
--- highlighting where treesitter cannot.
--- @param buf integer
--- @param lines string[]
function M.fences(buf, lines)
  local state = M.state[buf]
  if not state then
    return
  end
  for _, line in ipairs(lines) do
    local name = line:match('^%s*```+%s*([%w_]+)') or line:match('^%s*~~~+%s*([%w_]+)')
    if name and not state.fences[name] then
      state.fences[name] = true
      if not (state.treesitter and has_parser(name)) then
        local syntax = syntax_of(name)
        if syntax then
          add_region(buf, name, syntax)
        end
      end
    end
  end
end

--- Highlight `buf` (its 'filetype' already markdown).
--- @param buf integer
function M.attach(buf)
  local state = { treesitter = false, fences = {} }
  M.state[buf] = state
  if vim.treesitter.highlighter.active[buf] then
    -- Another plugin's FileType autocmd started it already.
    state.treesitter = true
  elseif require('rhema.config').options.panel.treesitter and M.treesitter_available() then
    state.treesitter = pcall(vim.treesitter.start, buf, 'markdown')
  end
  if not state.treesitter then
    vim.api.nvim_buf_call(buf, function()
      vim.cmd('silent! syntax clear markdownError')
    end)
  end
  vim.api.nvim_create_autocmd('BufWipeout', {
    buffer = buf,
    once = true,
    callback = function()
      M.state[buf] = nil
    end,
  })
end

return M
