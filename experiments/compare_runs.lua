-- experiments/compare_runs.lua: is run B faster, slower or the same as run A, cell by cell?
--
--   gpubench experiments/compare_runs.lua A.jsonl B.jsonl
--   gpubench experiments/compare_runs.lua A.jsonl B.jsonl --threshold 1
--   gpubench experiments/compare_runs.lua --first A.jsonl --second B.jsonl
--
-- Reads two JSON-lines outputs (--json) of any experiment, matches their cells
-- (by label, whatever order each run used) and decides each from its samples
-- (gpubench.compare): SAME, FASTER or SLOWER by a bootstrap interval of the
-- ratio of medians, with a geometric-mean summary. For a forward against a
-- reversed table (cera's positional artifacts), two ITERS, two builds. Exit
-- status 1 when a cell is significantly slower in B by more than --threshold
-- (or, in files without samples, slower by more than it).

local compare = require "gpubench.compare"
local options = require "gpubench.options"
local report = require "gpubench.report"

local opts = options.parse({
  name = "compare_runs",
  description = "Cell-by-cell comparison of two JSON-lines outputs of one experiment, from their samples.",
  arguments = {
    { "files", args = "0-2", argname = "<run.jsonl>", help = "The two runs, A then B (or --first, --second)." },
  },
  options = {
    { "first", type = "path", argname = "<a.jsonl>", help = "Run A (--json output)." },
    { "second", type = "path", argname = "<b.jsonl>", help = "Run B." },
    { "threshold", type = "float", default = 2, min = 0,
      help = "A cell is FASTER or SLOWER only when its ratio differs from 1 by more than this %." },
    { "level", type = "float", default = 0.95, help = "Confidence level of the intervals, in (0, 1).",
      check = function(v) return v > 0 and v < 1, "must be in (0, 1)" end },
    { "key", type = "string", default = "ms",
      help = "The metric compared where a file has no samples (a column of the rows)." },
    { "match", type = "string", default = "kernel,shape,m,k",
      help = "Row fields that identify a cell when the rows carry no label." },
  },
}, arg)

local files = opts.files or {}
if opts.first and opts.second and #files == 0 then files = { opts.first, opts.second } end
if #files ~= 2 or ((opts.first or opts.second) and #opts.files > 0) then
  options.fail("compare_runs: two runs are needed: A.jsonl B.jsonl (or --first A --second B)")
end

local fields = {}
for f in opts.match:gmatch("[^,]+") do fields[#fields + 1] = f end

local function load(path)
  local ok, run = pcall(compare.load, path)
  if not ok then options.fail("compare_runs: " .. tostring(run):gsub("^.-compare: ", "")) end
  return run
end
local a, b = load(files[1]), load(files[2])
local rows, s = compare.runs(a, b, { threshold = opts.threshold / 100, level = opts.level,
                                     key = opts.key, match = fields })
-- Cells in one run only are named: a cell that vanished (a failed build, a
-- different --kernels) must not pass unnoticed.
for _, id in ipairs(s.only_a) do io.stderr:write(("compare_runs: cell %s is only in %s\n"):format(id, a.path)) end
for _, id in ipairs(s.only_b) do io.stderr:write(("compare_runs: cell %s is only in %s\n"):format(id, b.path)) end

for _, r in ipairs(rows) do
  r.interval = r.lo and ("%.3f..%.3f"):format(r.lo, r.hi) or ""
end
io.stdout:write(("A: %s\nB: %s\ncells matched by %s; B / A medians, %g %% interval\n\n")
  :format(a.path, b.path, s.by, 100 * opts.level))
io.stdout:write(report.table_text({
  { key = "cell", width = 28 },
  { key = "a", title = "A", format = "%.5f", width = 11 },
  { key = "b", title = "B", format = "%.5f", width = 11 },
  { key = "ratio", title = "B/A", format = "%.4f", width = 7 },
  { key = "interval", width = 13 },
  { key = "verdict", width = 7 },
  { key = "basis", width = 14 },
}, rows))
print(("%d cells compared: %d same, %d faster, %d slower%s%s; geometric mean B/A %s (threshold %g %%)")
  :format(s.compared, s.same, s.faster, s.slower,
    s.moved > 0 and (", %d moved (no samples)"):format(s.moved) or "",
    s.no_data > 0 and (", %d without data"):format(s.no_data) or "",
    s.geomean and ("%.4f"):format(s.geomean) or "n/a", opts.threshold))
-- A cell without samples that moved the slower way fails too: nothing shows it is noise.
if s.slower > 0 or s.moved_slower > 0 then os.exit(1) end
