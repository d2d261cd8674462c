-- gpubench.cells: runs a table of cells -- order, rounds, progress, output.
--
-- Why: seed 000's table printed each cell as it ran in a fixed order, so the
-- first kernel wore a ~3x positional penalty that was published as a kernel
-- defect. Here the whole table runs `rounds` times (default 2) in the chosen
-- order and only the last round reaches the report; the order and the
-- iteration scale are parameters, which is what --validate (a reversed run
-- at 5x the iterations) needs.

local order = require "gpubench.order"
local progress = require "gpubench.progress"

local cells = {}

-- label(cell, i): how a cell is named in messages and the validation table.
function cells.label(cell, i)
  if type(cell) == "table" then
    if cell.label ~= nil then return tostring(cell.label) end
    if cell.id ~= nil then return tostring(cell.id) end
  end
  return "cell " .. tostring(i)
end

-- run{cells =, measure =, order = "forward", seed = 1, rounds = 2, scale = 1,
--     sink = report sink | nil, progress = true | false | nil (auto)}
--   -> rows, ran
-- measure(cell, ctx) returns the cell's row (a table); ctx = {round =, last =,
-- scale =, index =}. Rows of the last round are added to the sink as each
-- finishes. rows[i] is the row of cells[i] (declaration order, whatever the
-- run order); ran lists the indices in the order the last round ran them.
-- opts.sequence: an explicit list of indices to run, overriding order.
function cells.run(o)
  if type(o) ~= "table" or type(o.cells) ~= "table" then
    error("cells.run: cells (a list) is required", 2)
  end
  if type(o.measure) ~= "function" then error("cells.run: measure must be a function", 2) end
  local rounds = o.rounds or 2
  local scale = o.scale or 1
  if math.tointeger(scale) == nil or scale < 1 then
    error(("cells.run: scale must be a positive integer, got %s"):format(tostring(scale)), 2)
  end
  local idx = {}
  for i = 1, #o.cells do idx[i] = i end
  local seq = o.sequence or order.apply(o.order or "forward", idx, o.seed)
  local bar = progress.new { total = #seq * (math.tointeger(rounds) or 1), enabled = o.progress }
  local rows, ran
  local ok, err = pcall(order.rounds, rounds, function(round, last)
    rows, ran = {}, {}
    for _, i in ipairs(seq) do
      local cell = o.cells[i]
      local row = o.measure(cell, { round = round, last = last, scale = scale, index = i })
      if type(row) ~= "table" then
        error(("cells.run: measure returned %s for %s, not a row table")
          :format(type(row), cells.label(cell, i)), 0)
      end
      rows[i] = row
      ran[#ran + 1] = i
      if last and o.sink then o.sink:add(row) end
      bar:step(cells.label(cell, i))
    end
  end)
  bar:finish() -- erase the progress line before any error message is printed
  if not ok then error(err, 0) end
  return rows, ran
end

return cells
