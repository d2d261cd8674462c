-- tools/plot.lua: a line plot of one field against another from an
-- experiment's --json output, through gnuplot.
--
--   gpubench tools/plot.lua moe.jsonl --x m --y us_per_step --by variant -o moe.svg
--   gpubench tools/plot.lua table.jsonl --x kernel --y gbs --by shape -o table.png
--
-- One line per value of --by (fields joined by commas), points sorted by x; a
-- non-numeric x is plotted as categories. Cells whose y is null (skipped,
-- failed) are left out and counted on stderr.

local options = require "gpubench.options"
local plot = require "gpubench.plot"
local report = require "gpubench.report"

local opts = options.parse({
  name = "plot",
  description = "Plot a field of an experiment's JSON-lines cells against another (gnuplot).",
  arguments = { { "file", args = "?", argname = "<run.jsonl>", help = "The run (a --json output)." } },
  options = {
    { "x", type = "string", help = "The field on the x axis (required)." },
    { "y", type = "string", help = "The field on the y axis (required)." },
    { "by", type = "string", help = "Fields whose values name one line each, comma-separated." },
    { "output", short = "-o", type = "path", argname = "<out.svg|out.png>", help = "The image to write (required)." },
    { "title", type = "string", help = "The title (default: Y against X)." },
    { "logx", type = "flag", help = "A log2 x axis." },
    { "logy", type = "flag", help = "A log10 y axis." },
  },
}, arg)

if not opts.file then options.fail("plot: a --json output to plot is required (see --help)") end
for _, k in ipairs({ "x", "y", "output" }) do
  if not opts[k] then options.fail(("plot: --%s is required (see --help)"):format(k)) end
end
if not opts.output:match("%.svg$") and not opts.output:match("%.png$") then
  options.fail(("plot: -o must name a .svg or .png file, got %s"):format(opts.output))
end
local fh = io.open(opts.file, "rb")
if not fh then options.fail(("plot: cannot read %s"):format(opts.file)) end
fh:close()

local ok, recs = pcall(report.read_jsonl, opts.file)
if not ok then options.fail("plot: " .. tostring(recs):gsub("^.-report: ", "")) end
local rows = {}
for _, r in ipairs(recs) do if r.type == "cell" then rows[#rows + 1] = r end end
if #rows == 0 then options.fail(("plot: %s holds no cells"):format(opts.file)) end

local by = {}
for f in (opts.by or ""):gmatch("[^,]+") do by[#by + 1] = f end
local oks, s = pcall(plot.series, rows, { x = opts.x, y = opts.y, by = by })
if not oks then options.fail(tostring(s)) end
if s.skipped > 0 then
  io.stderr:write(("plot: %d of %d cells have no number in %s and are left out\n"):format(s.skipped, #rows, opts.y))
end
plot.render(s, { output = opts.output, x = opts.x, y = opts.y, title = opts.title,
                 logx = opts.logx, logy = opts.logy })
print(("plot: %s (%d lines, %d points)"):format(opts.output, #s.lines, #rows - s.skipped))
