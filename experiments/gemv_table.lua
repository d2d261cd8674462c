-- experiments/gemv_table.lua: GEMV bandwidth per weight format on the LFM2
-- projection shapes (seed 000's decode GEMV table), with checked kernels.
--
--   gpubench experiments/gemv_table.lua
--   ITERS=1000 gpubench experiments/gemv_table.lua --order reverse
--   M=14336 K=5120 gpubench experiments/gemv_table.lua --rotate --csv out.csv
--   gpubench experiments/gemv_table.lua --validate
--
-- The seed's contract: two-point timing ((t(2n) - t(n)) / n, one submission
-- per point) with the `noise` rule, the whole table twice and only the second
-- round reported, the f32 control kept in the table, ITERS / M / K / PEAK_GBS
-- knobs with a hard error on a bad value. Beyond it: every kernel checked
-- against the FP64 oracle on the table's own random weights before it is
-- timed; --rotate cycles weight copies totalling >= 4x L2 so DRAM is
-- measured; cells whose weights fit in L2 say so; the footer names the peak
-- used and the measured read ceiling.

local gpu = require "gpu"
local options = require "gpubench.options"
local ceilings = require "gpubench.ceilings"
local cells = require "gpubench.cells"
local report = require "gpubench.report"
local validate = require "gpubench.validate"
local gemv = require "gpubench.gemv"
local gemv_bench = require "gpubench.gemv_bench"

-- The seed's kernel order (q4_k first, where its positional bug hid), then
-- the 16-bit formats.
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
    { "k", type = "int", env = "K",
      check = function(v)
        if v % 256 ~= 0 then return false, "must be a multiple of 256 (the q4_k/q5_k/q6_k super-block)" end
        return true
      end,
      help = "Columns of one custom shape, a multiple of 256 (default 1024 when only M is set)." },
    { "peak_gbs", type = "float", env = "PEAK_GBS",
      help = "Bandwidth for the % peak column in GB/s (default: the device's spec bandwidth)." },
    { "kernels", type = "list", of = "enum", choices = KERNELS, default = table.concat(KERNELS, ","),
      help = "Formats to time, in table order." },
    { "rotate", type = "flag",
      help = "Cycle weight copies totalling >= 4x L2 so every launch reads DRAM." },
    { "clock", type = "enum", choices = { "device", "host" }, default = "device",
      help = "Time each submission with device timestamps or the host clock (the seed's)." },
    { "submit", type = "enum", choices = { "graph", "stream" }, default = "graph",
      help = "graph: each timing point is one replay of the n launches (CUDA graph, pre-recorded "
        .. "Vulkan command buffer); stream: n launches queued one by one from the host, which "
        .. "measures the host, not the kernel, once a launch is shorter than queueing it." },
    { "read_gbs", type = "float", help = "Read ceiling in GB/s (default: measured once, cached)." },
  }, options.table_options()),
}, arg)

local shapes = SHAPES
if opts.m or opts.k then
  shapes = { { m = opts.m or 2816, k = opts.k or 1024, label = "custom" } }
end

local dev = gpu.open { backend = opts.backend, index = opts.device }
-- Checked before the ceiling, whose first measurement is device work.
if opts.rotate and not (dev.l2_bytes > 0) then
  options.fail(("--rotate: the L2 size of %s is unknown, so a rotation cannot be checked to exceed it")
    :format(dev.name))
end
local ceil = ceilings.get(dev, { spec_gbs = opts.peak_gbs, read_gbs = opts.read_gbs })
local peak = opts.peak_gbs or ceil.spec_gbs

-- One cell per kernel and shape, in the seed's order (kernel-major).
local table_cells = {}
for _, fmt in ipairs(opts.kernels) do
  for _, s in ipairs(shapes) do
    table_cells[#table_cells + 1] = { label = ("%s %s"):format(fmt, s.label), fmt = fmt,
                                      shape = s.label, m = s.m, k = s.k }
  end
end

-- A cell's buffers are made and checked once, before any timing, and kept
-- for both rounds and --validate: no cell's number includes an allocation,
-- and no cell runs on weights the oracle has not seen.
local prepared = {}
local function prepare(cell)
  local p = prepared[cell]
  if not p then
    local need = gemv.buffer_bytes(cell.fmt, cell.m, cell.k)
    if dev.max_buffer_bytes > 0 and need > dev.max_buffer_bytes then
      p = { skip = ("%d-byte weights exceed the device's largest buffer"):format(need) }
    else
      p = gemv_bench.prepare(dev, cell.fmt, cell.m, cell.k, { rotate = opts.rotate })
    end
    prepared[cell] = p
  end
  return p
end

local function measure(cell, ctx)
  local p = prepare(cell)
  local row = { kernel = cell.fmt, shape = cell.shape, m = cell.m, k = cell.k }
  if p.skip then
    row.ms, row.gbs, row.pct_peak, row.note = "n/a", "n/a", "n/a", p.skip
    return row
  end
  -- n is raised to the cell's copy count (gemv_bench Cell:time), and the
  -- row's iters says so.
  local d, iters = p:time(opts.iters * ctx.scale, { clock = opts.clock, graph = opts.submit == "graph" })
  local gbs = ceilings.gbs(p.weight_bytes, d.ms)
  row.ms = d.ms or "noise"
  row.gbs = gbs or "noise"
  -- "noise" when the time did not resolve; "n/a" when the ceiling is unknown.
  row.pct_peak = d.ms and (ceilings.pct(gbs, peak) or "n/a") or "noise"
  row.pct_read = d.ms and (ceilings.pct(gbs, ceil.read_gbs) or "n/a") or "noise"
  row.fits = opts.rotate and ("DRAM x" .. p.copies) or ceilings.regime(p.working_set, dev.l2_bytes)
  row.weight_bytes, row.iters, row.copies = p.weight_bytes, iters, p.copies
  row.t_n, row.t_2n, row.samples = d.t_n, d.t_2n, { d.t_n, d.t_2n } -- the median repeat's points
  row.repeats, row.runners = d.repeats, d.runners
  row.max_rel_err = p.check.worst_rel
  return row
end

local sink <close> = report.open {
  title = ("gemv_table on %s (%s, driver %s)%s"):format(dev.name, dev.backend, dev.driver_version,
    opts.rotate and ", weights rotated out of L2" or ""),
  columns = {
    { key = "kernel", width = 6 },
    { key = "shape", width = 12 },
    { key = "m", format = "%d", width = 6 },
    { key = "k", format = "%d", width = 6 },
    { key = "ms", format = "%.4f", width = 10 },
    { key = "gbs", title = "GB/s", format = "%.1f", width = 9 },
    { key = "pct_peak", title = "% peak*", format = "%.1f", width = 8 },
    { key = "pct_read", title = "% read", format = "%.1f", width = 7 },
    { key = "fits", width = 8, align = "right" },
  },
  csv = opts.csv, json = opts.json, markdown = opts.markdown,
  env = report.environment(dev, meta, { ceilings = ceil }),
}

local ok, err = pcall(function()
  -- Every cell's buffers are made (and checked) before the first timed round.
  -- Measured on the H200 with Vulkan: when round 1 also allocated, the first
  -- ~4 cells of round 2 ran 2-4x slow (a third round was clean), whatever
  -- the kernel: the driver was still busy with the allocations.
  -- ... nor the timings' graphs and command buffers (Cell:arm), made here in
  -- table order whatever the order of the rounds (and again for --validate's
  -- rounds at validate.SCALE x the iterations, below).
  local function arm_all(iters)
    for _, cell in ipairs(table_cells) do
      local p = prepare(cell)
      if not p.skip then p:arm(iters, { clock = opts.clock, graph = opts.submit == "graph" }) end
    end
  end
  arm_all(opts.iters)
  gemv_bench.ready(dev) -- and what the timing itself allocates
  local rows, ran = cells.run {
    cells = table_cells, measure = measure, order = opts.order, seed = opts.seed,
    rounds = opts.rounds, sink = sink,
  }
  sink:note(("* %% peak: of %s; %% read: of %.1f GB/s, the pure-read ceiling (%s)")
    :format(peak and ("%.1f GB/s (%s)"):format(peak, opts.peak_gbs and "PEAK_GBS" or ceil.spec_source)
              or "an unknown peak (set PEAK_GBS)",
            ceil.read_gbs, ceil.read_source))
  sink:note(("* ms per launch = (t(2n) - t(n)) / n with n = ITERS = %d%s, %s clock, one %s submission per point, "
    .. "after an L2 flush and %g ms of the cell's own untimed launches; a cell's time is the fastest of %d runners "
    .. "(each its own graphs or command buffers), a runner's the median of %d such timings; \"noise\": t(2n) < 1.2 t(n) "
    .. "in half of them or more, raise ITERS"):format(opts.iters,
      opts.rotate and " (at least the cell's copy count)" or "", opts.clock,
      opts.submit == "graph" and "graph-replay" or "stream", gemv_bench.SETTLE_MS, gemv_bench.RUNNERS,
      gemv_bench.REPEATS))
  sink:note("* GB/s = weight bytes / time (1 GB = 1e9 B); every kernel matched the FP64 oracle "
    .. ("(per row |y - y_ref| <= %g sum|w x|) on these weights before timing"):format(gemv_bench.TOL))
  -- the table says which kernel each number is
  for _, cell in ipairs(table_cells) do
    local changed = gemv.shape_variant(dev.backend, cell.fmt, cell.m, cell.k)
    if changed then
      sink:note(("* %s: the kernel with %s, the variant this shape measured faster with (gemv_%s.for_shape)")
        :format(cell.label, changed, dev.backend))
    end
  end
  sink:note(opts.rotate and "* fits: DRAM xN = launches cycle through N weight copies totalling >= 4x L2"
    or "* fits: L2 = weights + x + y fit in L2 (GB/s may exceed DRAM bandwidth); use --rotate for DRAM")
  sink:note(("* table run %d times in %s order, only the last round reported"):format(opts.rounds, opts.order))
  sink:close()
  if opts.validate then
    arm_all(opts.iters * validate.SCALE)
    gemv_bench.ready(dev)
    validate.run { cells = table_cells, measure = measure, first = rows, ran = ran, key = "ms",
                   rounds = opts.rounds, format = "%.5f" }
  end
end)
for _, p in pairs(prepared) do
  if p.close then p:close() end
end
gemv.release(dev)
if not ok then error(err, 0) end
