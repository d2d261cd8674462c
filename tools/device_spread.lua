-- tools/device_spread.lua: the same cells on several devices -- per-cell
-- spread (slowest over fastest) and the devices that are off.
--
--   gpubench experiments/gemv_table.lua --devices all --json node.jsonl
--   gpubench tools/device_spread.lua node.jsonl
--   gpubench tools/device_spread.lua gpu0.jsonl gpu1.jsonl gpu2.jsonl --threshold 3 --json spread.jsonl
--
-- Input: one file of a --devices run (its rows carry worker and device), or
-- one file per device of the same table (each its own device; merged files
-- of tools/merge_results.lua too). The rule (gpubench.spread): a device is
-- slow (fast) when the median over the cells of its time over the cell's
-- median across devices is above 1 + threshold (below 1 - threshold), and
-- throttled when any of its rows is. Exit status 1 when a device is flagged,
-- 2 on bad input.

local options = require "gpubench.options"
local merge = require "gpubench.merge"
local report = require "gpubench.report"
local spread = require "gpubench.spread"

local opts = options.parse({
  name = "device_spread",
  description = "Per-cell spread across devices of the same cells, and outlier devices.",
  options = {
    { "key", type = "string", help = "The time column compared (default: the first of "
      .. table.concat(spread.TIME_KEYS, ", ") .. " the rows have)." },
    { "threshold", type = "float", default = 5, help = "A device is slow or fast when its median ratio to the "
      .. "per-cell median is off 1 by more than this %." },
    { "json", type = "path", output = true, help = "Also write the spread as JSON lines (- for standard output)." },
  },
  arguments = { { "files", args = "+", argname = "<run.jsonl>", help = "A --devices run, or one run per device." } },
}, arg)

local files, sources = {}, {}
for i, path in ipairs(opts.files) do
  local f = merge.load(path, { shard_optional = true })
  local rows = {} -- a file from before cell_index has every row in extras: its cells are matched by label
  for _, list in ipairs { f.cells, f.extras } do
    for _, r in ipairs(list) do merge.device_fields(r, f.env.device); rows[#rows + 1] = r end
  end
  files[i], sources[i] = f, { name = f.name, rows = rows }
end
merge.same_run(files) -- one experiment, one set of options: else the cells are not the same cells

local r = spread.analyze(sources, { key = opts.key, threshold = opts.threshold / 100 })
local out = opts.json == "-" and io.stderr or io.stdout
local ratio = function(v) return ("%.3f"):format(v) end
for _, c in ipairs(r.cells) do c.spread_pct = 100 * (c.spread - 1) end
out:write(("%s per cell across %d devices (%d cells%s)\n"):format(r.key, #r.units, #r.cells,
  r.excluded > 0 and (", %d not on every device left out"):format(r.excluded) or ""))
out:write(report.table_text({
  { key = "label", title = "cell" },
  { key = "n", title = "devices", format = "%d" },
  { key = "min", format = "%.5g" }, { key = "median", format = "%.5g" }, { key = "max", format = "%.5g" },
  { key = "spread", title = "max/min", format = ratio },
  { key = "slowest", title = "slowest", align = "left" },
}, r.cells))
out:write("\n")
out:write(report.table_text({
  { key = "label", title = "device" },
  { key = "cells", format = "%d" },
  { key = "median_ratio", title = "median ratio", format = ratio },
  { key = "max_ratio", title = "worst ratio", format = ratio },
  { key = "throttled", title = "throttled rows", format = "%d" },
  { key = "verdict", align = "left" },
}, r.units))
out:write(("\nmedian spread %.3f; rule: %s, threshold %g %%\n"):format(r.median_spread, spread.RULE, opts.threshold))
for _, u in ipairs(r.flagged) do out:write(("OUTLIER: %s: %s (median ratio %.3f)\n"):format(u.label, u.verdict,
  u.median_ratio)) end
out:flush()

if opts.json then
  local lines = { report.encode { type = "spread", key = r.key, threshold = r.threshold, rule = spread.RULE,
                                  devices = #r.units, cells = #r.cells, excluded = r.excluded,
                                  median_spread = r.median_spread } .. "\n" }
  for _, c in ipairs(r.cells) do
    lines[#lines + 1] = report.encode { type = "spread_cell", label = c.label, cell_index = c.cell_index, n = c.n,
      min = c.min, median = c.median, max = c.max, spread = c.spread, slowest = c.slowest } .. "\n"
  end
  for _, u in ipairs(r.units) do
    lines[#lines + 1] = report.encode { type = "spread_device", device = u.label, cells = u.cells,
      median_ratio = u.median_ratio, max_ratio = u.max_ratio, throttled = u.throttled, verdict = u.verdict } .. "\n"
  end
  require("gpubench.report_files").whole(opts.json, table.concat(lines))
end
if #r.flagged > 0 then os.exit(1) end
