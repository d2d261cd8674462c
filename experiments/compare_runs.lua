-- experiments/compare_runs.lua: do two runs of a table agree, cell by cell?
--
--   gpubench experiments/compare_runs.lua --first forward.jsonl --second reverse.jsonl
--   gpubench experiments/compare_runs.lua --first a.jsonl --second b.jsonl --key gbs --threshold 5
--
-- Reads two JSON-lines outputs of an experiment (--json), matches their cells
-- by label (kernel and shape, whatever order each run used) and prints each
-- cell's ratio, flagging those that differ by more than the threshold. It is
-- the offline form of --validate, for runs made separately: a forward and a
-- reversed table (cera's check for positional artifacts), two ITERS, two
-- builds. Exit status 1 when a resolvable cell moved, so scripts can gate on it.

local options = require "gpubench.options"
local report = require "gpubench.report"
local validate = require "gpubench.validate"

local opts = options.parse({
  name = "compare_runs",
  description = "Cell-by-cell agreement of two JSON-lines outputs of one experiment.",
  options = {
    { "first", type = "path", argname = "<first.jsonl>", help = "The first run (--json output)." },
    { "second", type = "path", argname = "<second.jsonl>", help = "The second run." },
    { "key", type = "string", default = "ms", help = "The metric compared (a column of the rows)." },
    { "threshold", type = "float", default = 5, help = "Flag cells that differ by more than this %." },
    { "match", type = "string", default = "kernel,shape,m,k",
      help = "Row fields that identify a cell in both runs." },
  },
}, arg)
if not opts.first or not opts.second then
  options.fail("compare_runs: --first and --second (two --json outputs) are required")
end

local fields = {}
for f in opts.match:gmatch("[^,]+") do fields[#fields + 1] = f end

local function cells_of(path)
  local f = io.open(path, "rb")
  if not f then options.fail(("compare_runs: cannot read %s"):format(path)) end
  f:close()
  local rows, by_id, order = {}, {}, {}
  for _, rec in ipairs(report.read_jsonl(path)) do
    if rec.type == "cell" then
      local parts = {}
      for i, name in ipairs(fields) do
        local v = rec[name] -- JSON numbers decode as floats: show 1024, not 1024.0
        parts[i] = tostring(math.type(v) == "float" and math.tointeger(v) or v)
      end
      local id = table.concat(parts, " ")
      if by_id[id] then options.fail(("compare_runs: %s holds cell %s twice"):format(path, id)) end
      by_id[id] = rec
      order[#order + 1] = id
      rows[#rows + 1] = rec
    end
  end
  if #rows == 0 then options.fail(("compare_runs: %s holds no cells"):format(path)) end
  return by_id, order
end

local a, order = cells_of(opts.first)
local b, order_b = cells_of(opts.second)
local first, second, labels = {}, {}, {}
for _, id in ipairs(order) do
  if b[id] then
    first[#first + 1], second[#second + 1], labels[#labels + 1] = a[id], b[id], id
  else
    io.stderr:write(("compare_runs: cell %s is only in %s\n"):format(id, opts.first))
  end
end
-- Unmatched cells of either run are named: a cell that vanished from one run
-- (a failed build, a different --kernels) must not pass unnoticed.
for _, id in ipairs(order_b) do
  if not a[id] then
    io.stderr:write(("compare_runs: cell %s is only in %s\n"):format(id, opts.second))
  end
end

local results, moved = validate.compare(first, second, opts.key, opts.threshold / 100)
local rows, worst = {}, 0
for i, r in ipairs(results) do
  rows[i] = { cell = labels[i], first = r.first, second = r.second, ratio = r.ratio or "noise",
              status = r.status }
  if r.ratio then worst = math.max(worst, math.abs(r.ratio - 1)) end
end
io.stdout:write(report.table_text({
  { key = "cell", width = 28 },
  { key = "first", title = "first " .. opts.key, format = "%.5f", width = 12 },
  { key = "second", title = "second " .. opts.key, format = "%.5f", width = 12 },
  { key = "ratio", format = "%.3f", width = 7 },
  { key = "status", width = 6 },
}, rows))
print(("%d cells compared; %d moved more than %g %%; largest difference among resolvable cells %.1f %%")
  :format(#results, moved, opts.threshold, 100 * worst))
if moved > 0 then os.exit(1) end
