--- Markdown tables in the panel, drawn as aligned boxes (as render-markdown does).
---
--- Contract: `decorate(buf, start, lines)` (called with the lines a panel
--- writes from 0-based row `start` on) finds the pipe tables in `lines` (a
--- row with a `|`, then a delimiter row `|---|:--:|` with as many cells,
--- then the rows with a `|` up to the first without; never inside a fenced
--- code block, never in a `> ` quote) and draws each with extmarks only: the
--- buffer keeps the Markdown (copying a table copies Markdown). Every pipe is
--- concealed as `│`, every cell is padded to its column's width (left,
--- right or centred as its delimiter cell says) with one space on each side,
--- the delimiter row reads `├───┼───┤`, and a `┌───┬───┐` line above and a
--- `└───┴───┘` line below close the box. A column's width is what the screen shows of its
--- widest cell: with treesitter the Markdown markers in a cell (backticks,
--- `**`, `*`, `~~`, a link's brackets and address) are concealed, so they
--- are not counted. The pipes and the delimiter row show as typed only on the
--- line under the cursor ('concealcursor' empty), like every other marker.
--- Everything from `start` on is drawn anew on each call.
local M = {}

local ns = vim.api.nvim_create_namespace('rhema.tables')

--- Highlight groups, defined `default` so a colorscheme can override them.
function M.define_highlights()
  vim.api.nvim_set_hl(0, 'RhemaTableBorder', { default = true, link = 'Comment' })
end

--- The cells of a table row: `{from, to}` byte ranges (1-based, inclusive;
--- `to < from` for an empty cell) between the pipes, and the pipes' columns.
--- A pipe escaped with `\` or inside a code span separates nothing.
--- @param line string
--- @return {[1]: integer, [2]: integer}[] cells
--- @return integer[] pipes
function M.split_row(line)
  local pipes = {}
  local index, code = 1, nil
  while index <= #line do
    local char = line:sub(index, index)
    if char == '\\' then
      index = index + 1
    elseif char == '`' then
      local run = line:match('^`+', index)
      if code == nil then
        code = run
      elseif code == run then
        code = nil
      end
      index = index + #run - 1
    elseif char == '|' and code == nil then
      table.insert(pipes, index)
    end
    index = index + 1
  end
  local cells = {}
  local first_content = line:find('%S') or (#line + 1)
  local last_content = #line - #line:match('%s*$')
  local bounds = {}
  if pipes[1] ~= first_content then
    table.insert(bounds, first_content - 1)
  end
  vim.list_extend(bounds, pipes)
  if pipes[#pipes] ~= last_content then
    table.insert(bounds, last_content + 1)
  end
  for position = 1, #bounds - 1 do
    table.insert(cells, { bounds[position] + 1, bounds[position + 1] - 1 })
  end
  return cells, pipes
end

local delimiter_cell = '^%s*(:?)%-+(:?)%s*$'

--- The alignment of each column from a delimiter row (nil: not one).
--- @param line string
--- @return string[]|nil
local function alignments(line)
  if not line:find('|', 1, true) or not line:find('-', 1, true) or line:find('[^%s|:%-]') then
    return nil
  end
  local cells = M.split_row(line)
  local out = {}
  for _, cell in ipairs(cells) do
    local left, right = line:sub(cell[1], cell[2]):match(delimiter_cell)
    if left == nil then
      return nil
    end
    local align = right ~= '' and 'right' or 'left'
    table.insert(out, (left ~= '' and right ~= '') and 'center' or align)
  end
  return #out > 0 and out or nil
end

--- What the screen shows of a cell's text when the Markdown markers are concealed.
--- @param text string
--- @param concealed boolean
--- @return integer
local function shown_width(text, concealed)
  if concealed then
    text = text
      :gsub('(`+)(.-)%1', '%2')
      :gsub('%[([^%]]*)%]%b()', '%1')
      :gsub('%*%*(.-)%*%*', '%1')
      :gsub('~~(.-)~~', '%1')
      :gsub('%*(%S.-)%*', '%1')
      :gsub('&[%a]+;', ' ')
  end
  return vim.fn.strdisplaywidth(text)
end

local function row_of_table(line)
  return line:find('|', 1, true) ~= nil and not line:match('^%s*>')
end

--- The tables in `lines`: `{first, delimiter, last}` (1-based indexes into `lines`).
--- @param lines string[]
--- @return {[1]: integer, [2]: integer, [3]: integer, aligns: string[]}[]
function M.find(lines)
  local found = {}
  local fence = nil
  local index = 1
  while index <= #lines do
    local line = lines[index]
    local marker = line:match('^%s*(```+)') or line:match('^%s*(~~~+)')
    if marker then
      if fence == nil then
        fence = marker
      elseif marker:sub(1, 1) == fence:sub(1, 1) and #marker >= #fence then
        fence = nil
      end
    elseif fence == nil and row_of_table(line) and lines[index + 1] then
      local aligns = alignments(lines[index + 1])
      -- As GitHub's: the header has as many cells as the delimiter row.
      if aligns and #M.split_row(line) == #aligns then
        local last = index + 1
        while lines[last + 1] and row_of_table(lines[last + 1]) do
          last = last + 1
        end
        table.insert(found, { index, index + 1, last, aligns = aligns })
        index = last
      end
    end
    index = index + 1
  end
  return found
end

local function border(widths, left, middle, right)
  local parts = {}
  for _, width in ipairs(widths) do
    table.insert(parts, ('─'):rep(width + 2))
  end
  return left .. table.concat(parts, middle) .. right
end

--- Draw one table: `rows` are its lines (header, delimiter, body), from buffer row `first`.
local function draw(buf, first, rows, aligns, concealed)
  local parsed, widths = {}, {}
  for position, line in ipairs(rows) do
    if position ~= 2 then
      local cells = M.split_row(line)
      parsed[position] = cells
      for column, cell in ipairs(cells) do
        local text = vim.trim(line:sub(cell[1], cell[2]))
        cell.width = shown_width(text, concealed)
        widths[column] = math.max(widths[column] or 1, cell.width)
      end
    end
  end
  for column = 1, #aligns do
    widths[column] = widths[column] or 1
  end
  local indent = rows[1]:match('^%s*')
  local function mark(row, col, opts)
    opts.priority = 300
    pcall(vim.api.nvim_buf_set_extmark, buf, ns, row, col, opts)
  end
  local function text(row, col, chunk)
    mark(row, col, { virt_text = { { chunk, 'RhemaTableBorder' } }, virt_text_pos = 'inline' })
  end
  local function pad(row, col, count)
    if count > 0 then
      mark(row, col, { virt_text = { { (' '):rep(count) } }, virt_text_pos = 'inline' })
    end
  end
  local top = { { indent .. border(widths, '┌', '┬', '┐'), 'RhemaTableBorder' } }
  mark(first, 0, { virt_lines = { top }, virt_lines_above = true })
  local bottom = { { indent .. border(widths, '└', '┴', '┘'), 'RhemaTableBorder' } }
  mark(first + #rows - 1, 0, { virt_lines = { bottom } })
  for position, line in ipairs(rows) do
    local row = first + position - 1
    if position == 2 then
      local start = #indent
      mark(row, start, { end_col = #line, conceal = '' })
      text(row, start, border(widths, '├', '┼', '┤'))
    else
      local cells, pipes = M.split_row(line)
      local piped = {}
      for _, col in ipairs(pipes) do
        piped[col] = true
        mark(row, col - 1, { end_col = col, conceal = '│', hl_group = 'RhemaTableBorder' })
      end
      for column, cell in ipairs(cells) do
        local from, to = cell[1], cell[2]
        if not piped[from - 1] then
          text(row, from - 1, '│')
        end
        local content = line:sub(from, to)
        local lead = #content:match('^%s*')
        local trail = lead == #content and 0 or #content:match('%s*$')
        if lead > 0 then
          mark(row, from - 1, { end_col = from - 1 + lead, conceal = '' })
        end
        if trail > 0 then
          mark(row, to - trail, { end_col = to, conceal = '' })
        end
        local spare = (widths[column] or 1) - (parsed[position][column].width or 0)
        local left = aligns[column] == 'right' and spare
          or (aligns[column] == 'center' and math.floor(spare / 2) or 0)
        pad(row, from - 1 + lead, 1 + left)
        pad(row, to - trail, spare - left + 1)
        if column == #cells and not piped[to + 1] then
          text(row, to, '│')
        end
      end
      -- A row short of cells gets empty ones, so its right edge lines up.
      local last_col = #line
      for column = #cells + 1, #widths do
        text(row, last_col, (' '):rep(widths[column] + 2) .. '│')
      end
    end
  end
end

--- Draw the tables of `lines`, written from 0-based buffer row `start` on.
--- @param buf integer
--- @param start integer
--- @param lines string[]
function M.decorate(buf, start, lines)
  if not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  vim.api.nvim_buf_clear_namespace(buf, ns, start, -1)
  local state = require('rhema.markdown').state[buf]
  local concealed = state ~= nil and state.treesitter
  for _, found in ipairs(M.find(lines)) do
    local rows = vim.list_slice(lines, found[1], found[3])
    draw(buf, start + found[1] - 1, rows, found.aligns, concealed)
  end
end

--- The namespace of the tables' extmarks (a test hook).
M.ns = ns

return M
