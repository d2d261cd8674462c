-- gpubench.validate: --validate, a check of the instrument rather than of
-- the result.
--
-- Why: cera's wgpu_gemv_bench three times reported kernel differences that were
-- its own. Two checks catch those defects: permuting the kernel order (a
-- positional artifact moves with the position) and changing the iteration
-- count (an unsubtracted fixed cost, T + C/ITERS, moves with ITERS). Neither
-- was found by reading the code; both were found by running them. So
-- --validate reruns the table in reversed order at 5x the iterations and
-- prints each cell's ratio between the two runs, flagging every cell that
-- moved more than 3 %. A real kernel difference survives both.

local cells = require "gpubench.cells"
local report = require "gpubench.report"

local validate = {}

validate.SCALE = 5
validate.THRESHOLD = 0.03

-- compare(first, second, key [, threshold]) -> results, moved
-- first/second: rows indexed alike; key: the metric compared (a time).
-- results[i] = {index, first, second, ratio = second / first,
--               status = "ok" | "moved" | "noise"}; moved counts "moved".
-- A cell that is not a positive finite number in either run is "noise": it
-- cannot be validated, and saying "ok" would hide that (inf / inf is NaN,
-- which no threshold test flags).
function validate.compare(first, second, key, threshold)
  threshold = threshold or validate.THRESHOLD
  if type(key) ~= "string" then error("validate.compare: key must be a string", 2) end
  local out, moved = {}, 0
  local n = math.max(#first, #second)
  for i = 1, n do
    local a = first[i] and first[i][key]
    local b = second[i] and second[i][key]
    local r = { index = i, first = a, second = b }
    if type(a) == "number" and type(b) == "number" and a > 0 and b > 0
       and a < math.huge and b < math.huge then
      r.ratio = b / a
      if math.abs(r.ratio - 1) > threshold then
        r.status = "moved"
        moved = moved + 1
      else
        r.status = "ok"
      end
    else
      r.status = "noise"
    end
    out[i] = r
  end
  return out, moved
end

-- run{table = cells.table | cells =, measure =, first = rows, ran = order of
--     the first run, key =, rounds = 2, scale = 5, threshold = 0.03,
--     sink = the run's report sink | nil, console = io.stdout | false,
--     format = "%.4f", label = function(cell, i)} -> results, moved
-- Reruns the table in the reverse of the first run's order (`ran`, as
-- cells.run returns it) at `scale` x the iterations (measure sees ctx.scale;
-- a cells.table is re-armed for them and keeps its prepared cells), compares
-- `key` cell by cell and prints the validation table.
function validate.run(o)
  if type(o) ~= "table" or type(o.first) ~= "table" or (type(o.cells) ~= "table" and type(o.table) ~= "table") then
    error("validate.run: a table (or cells and measure) and the first run's rows (first) are required", 2)
  end
  local list = o.table and o.table.cells or o.cells
  local ran = o.ran
  if not ran then
    ran = {}
    for i = 1, #list do ran[i] = i end
  end
  local seq = {}
  for i = #ran, 1, -1 do seq[#seq + 1] = ran[i] end
  local scale = o.scale or validate.SCALE
  local threshold = o.threshold or validate.THRESHOLD
  local run = { sequence = seq, rounds = o.rounds or 2, scale = scale, progress = o.progress }
  local second
  if o.table then
    second = o.table:run(run)
  else
    run.cells, run.measure = o.cells, o.measure
    second = cells.run(run)
  end
  local results, moved = validate.compare(o.first, second, o.key, threshold)
  local label = o.label or cells.label
  for i, r in ipairs(results) do r.label = label(list[i], i) end
  local fmt = o.format or "%.4f"
  local columns = {
    { key = "label", title = "cell" },
    { key = "first", title = "first " .. o.key, format = fmt },
    { key = "second", title = ("reversed, %dx %s"):format(scale, o.key), format = fmt },
    { key = "ratio", title = "ratio", format = "%.3f" },
    { key = "status", title = "status" },
  }
  local rows = {}
  for i, r in ipairs(results) do
    local num = function(v) return type(v) == "number" and v or nil end
    rows[i] = { label = r.label, first = num(r.first), second = num(r.second), ratio = r.ratio,
                status = r.status == "moved" and "MOVED" or r.status }
  end
  local text = table.concat {
    ("\nvalidation: reversed order, %dx iterations; cells moving more than %g %% are flagged\n")
      :format(scale, threshold * 100),
    report.table_text(columns, rows),
    moved > 0 and ("%d cell(s) moved more than %g %%: the harness, not the kernel, may be "
      .. "what differs (position in the table, or a fixed cost not cancelled)\n"):format(moved, threshold * 100)
      or ("no cell moved more than %g %%\n"):format(threshold * 100),
  }
  -- With the run's report sink, the comparison is printed under its table and
  -- kept in its files; otherwise printed on the console.
  if o.sink then
    o.sink:section("validation", columns, rows, o.console ~= false and text or nil)
  else
    local console = o.console == nil and io.stdout or o.console
    if console then
      console:write(text)
      console:flush()
    end
  end
  return results, moved
end

return validate
