-- rhema.nvim is configured by require("rhema").setup(); nothing starts before it.
if vim.g.loaded_rhema then
  return
end
vim.g.loaded_rhema = true

if vim.fn.has('nvim-0.11') == 0 then
  vim.notify('rhema.nvim needs Neovim 0.11 or later', vim.log.levels.ERROR)
end
