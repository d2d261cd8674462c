-- experiments/gemv_table.lua: GEMV bandwidth per weight format on the LFM2
-- projection shapes (cera's decode GEMV table), with checked kernels.
--
--   gpubench experiments/gemv_table.lua
--   ITERS=1000 gpubench experiments/gemv_table.lua --order reverse
--   M=14336 K=5120 gpubench experiments/gemv_table.lua --rotate --csv out.csv
--   gpubench experiments/gemv_table.lua --validate
--   gpubench experiments/gemv_table.lua --tokens 4     -- y[4,m] = x[4,k] . W^T per launch
--
-- cera's contract: two-point timing with the `noise` rule, the whole table
-- twice with only the second round reported, the f32 control kept, ITERS /
-- M / K / PEAK_GBS knobs that fail hard on a bad value. Beyond it: every
-- kernel matches the FP64 oracle on the table's own weights before it is
-- timed; --rotate cycles weight copies totalling >= 4x L2; cells that fit in
-- L2 say so; the footer names the peak and the measured read ceiling.
-- --tokens T (env T) times the kernels that multiply T rows of x by each
-- weight read once (prefill-like batches of decode); GB/s stays weight bytes
-- per time, and the table gains a T column only when T > 1.

local gpu = require "gpu"
local options = require "gpubench.options"
local ceilings = require "gpubench.ceilings"
local cells = require "gpubench.cells"
local report = require "gpubench.report"
local validate = require "gpubench.validate"
local bench = require "gpubench.bench"
local gemv = require "gpubench.gemv"
local gemv_bench = require "gpubench.gemv_bench"
local devices = require "gpubench.devices"

-- cera's kernel order (q4_k first, where its positional bug hid), then the 16-bit formats.
local KERNELS = { "q4_k", "q5_k", "q4_0", "q8_0", "f32", "q6_k", "f16", "bf16" }
local SHAPES = {
  { m = 2816, k = 1024, label = "ffn gate/up" },
  { m = 1024, k = 2816, label = "ffn down" },
  { m = 1024, k = 1024, label = "attn qkv/out" },
  { m = 65536, k = 1024, label = "lm head" },
}

local opts, meta = options.parse({
  name = "gemv_table",
  description = "Decode GEMV y = W x per weight format on the LFM2 shapes: ms, GB/s, % of peak.",
  options = options.concat(options.device_options(), {
    { "iters", type = "int", default = 200, env = "ITERS", max = options.MAX_ITERS,
      help = "Launches n at the first timing point (the second runs 2n)." },
    { "m", type = "int", env = "M", help = "Rows of one custom shape (default 2816 when only K is set)." },
    { "k", type = "int", env = "K", check = options.multiple_of(gemv.K_MULTIPLE, gemv.K_MULTIPLE_WHY),
      help = "Columns of one custom shape, a multiple of 256 (default 1024 when only M is set)." },
    { "peak_gbs", type = "float", env = "PEAK_GBS",
      help = "Bandwidth for the % peak column in GB/s (default: the device's spec bandwidth)." },
    { "kernels", type = "list", of = "enum", choices = KERNELS, default = table.concat(KERNELS, ","),
      help = "Formats to time, in table order." },
    { "tokens", type = "int", env = "T", default = 1, max = gemv.MAX_TOKENS,
      help = ("Rows of x (tokens) each launch multiplies by the weights, read once: 1..%d."):format(gemv.MAX_TOKENS) },
    options.rotate_option(),
    options.overlap_option(),
    { "clock", type = "enum", choices = { "device", "host" }, default = "device",
      help = "Time each submission with device timestamps or the host clock (cera's)." },
    options.submit_option("graph"),
    { "read_gbs", type = "float", help = "Read ceiling in GB/s (default: measured once, cached)." },
  }, options.measure_options(), options.table_options(), options.shard_options()),
}, arg)
if devices.dispatch(opts, meta) then return end -- --devices: one worker process per device, merged

local shapes = SHAPES
if opts.m or opts.k then shapes = { { m = opts.m or 2816, k = opts.k or 1024, label = "custom" } } end

local dev = gpu.open { backend = opts.backend, index = opts.device }
options.require_l2(dev, opts.rotate) -- before the ceiling, whose first measurement is device work
options.require_overlap(dev, opts.overlap)
if opts.overlap and opts.method == "cold" then
  options.fail("--overlap: --method cold times one call per sample, with nothing before it to overlap")
end
local ceil, peak -- measured after the cells are declared (--list-cells and --profile need neither)
local timing_opts = { clock = opts.clock, graph = opts.submit == "graph", method = opts.method, flush = opts.flush,
                      overlap = opts.overlap,
                      rule = options.rule_of(opts, meta) }

local table_cells = {} -- kernel-major, in cera's order
for _, fmt in ipairs(opts.kernels) do
  for _, s in ipairs(shapes) do
    table_cells[#table_cells + 1] = { label = fmt .. " " .. s.label, fmt = fmt, shape = s.label, m = s.m, k = s.k }
  end
end

-- Each cell is prepared (weights made, kernel checked) and armed once, before
-- any timing, and kept for both rounds and --validate.
local tb <close> = cells.table {
  cells = table_cells, iters = opts.iters, timing = timing_opts, monitor = dev,
  prepare = function(c)
    return gemv_bench.prepare_or_skip(dev, c.fmt, c.m, c.k, { rotate = opts.rotate, tokens = opts.tokens })
  end,
  ready = function() bench.ready(dev) end,
  measure = function(p, ctx)
    local row = gemv_bench.measure(p, ctx.iters, timing_opts, { peak_gbs = peak, read_gbs = ceil.read_gbs,
                                                               rotate = opts.rotate, l2_bytes = dev.l2_bytes })
    row.shape, row.tokens = ctx.cell.shape, opts.tokens
    return row
  end,
}
if tb:special(opts) then return end
ceil = ceilings.get(dev, { spec_gbs = opts.peak_gbs, read_gbs = opts.read_gbs })
peak = opts.peak_gbs or ceil.spec_gbs

-- T > 1 only: with one token the table keeps the single-vector columns.
local columns = {
  { key = "kernel", width = 6 }, { key = "shape", width = 12 },
  { key = "m", format = "%d", width = 6 }, { key = "k", format = "%d", width = 6 },
}
if opts.tokens > 1 then columns[#columns + 1] = { key = "tokens", title = "T", format = "%d", width = 2 } end
for _, c in ipairs {
    { key = "ms", format = "%.4f", width = 10 }, { key = "gbs", title = "GB/s", format = "%.1f", width = 9 },
    { key = "pct_peak", title = "% peak*", format = "%.1f", width = 8 },
    { key = "pct_read", title = "% read", format = "%.1f", width = 7 },
    { key = "fits", width = 8, align = "right" },
  } do columns[#columns + 1] = c end

local sink <close> = report.open {
  title = ("gemv_table on %s (%s, driver %s)%s%s"):format(dev.name, dev.backend, dev.driver_version,
    opts.tokens > 1 and (", T=%d tokens per launch"):format(opts.tokens) or "",
    (opts.rotate and ", weights rotated out of L2" or "") .. (opts.overlap and ", launches overlapped" or "")),
  columns = columns,
  csv = opts.csv, json = opts.json, markdown = opts.markdown,
  env = report.environment(dev, meta, { ceilings = ceil, shard = tb:shard_record() }),
}

local rows, ran = tb:run { order = opts.order, seed = opts.seed, rounds = opts.rounds, sink = sink }
sink:note(ceilings.note(ceil, peak, opts.peak_gbs and "PEAK_GBS"))
sink:note(bench.describe { iters = opts.iters, rotate = opts.rotate, clock = opts.clock, graph = timing_opts.graph,
                           overlap = opts.overlap,
                           method = opts.method, flush = opts.flush, rule = timing_opts.rule })
sink:note("* GB/s = weight bytes / time (1 GB = 1e9 B)" .. (opts.tokens > 1
  and (", the weights read once for all %d tokens (x and y not counted)"):format(opts.tokens) or ""))
sink:note(gemv_bench.check_note())
for _, note in ipairs(gemv_bench.variant_notes(dev.backend, tb.cells, opts.tokens, dev)) do sink:note(note) end
for _, note in ipairs(gemv_bench.device_notes(dev, tb.cells, opts.tokens)) do sink:note(note) end
sink:note(opts.rotate and "* fits: DRAM xN = launches cycle through N weight copies totalling >= 4x L2"
  or "* fits: L2 = weights + x + y fit in L2 (GB/s may exceed DRAM bandwidth); use --rotate for DRAM")
sink:note(("* table run %d times in %s order, only the last round reported"):format(opts.rounds, opts.order))
if opts.validate then
  validate.run { table = tb, first = rows, ran = ran, key = "ms", rounds = opts.rounds, format = "%.5f", sink = sink }
end
sink:close()
