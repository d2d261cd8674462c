-- experiments/bandwidth.lua: device-memory bandwidth of a copy and of a pure
-- read, per buffer size, against the spec and the measured read ceiling.
--
--   gpubench experiments/bandwidth.lua
--   gpubench experiments/bandwidth.lua --sizes 64M,1G --kernels read --validate
--   ITERS=400 gpubench experiments/bandwidth.lua --csv bw.csv --json bw.jsonl
--
-- GB/s = (bytes read + bytes written) per launch / time per launch, 1 GB =
-- 1e9 bytes. A launch's time is timed by gpubench.bench (two-point, flush,
-- settle, runners: the footer names the method). The whole table runs twice
-- and only the second round is reported.

local gpu = require "gpu"
local options = require "gpubench.options"
local ceilings = require "gpubench.ceilings"
local cells = require "gpubench.cells"
local report = require "gpubench.report"
local validate = require "gpubench.validate"
local kernels = require "gpubench.kernels"
local bench = require "gpubench.bench"
local devices = require "gpubench.devices"

-- 1. Options, all checked before any device work (exit status 2 on a bad one).
local opts, meta = options.parse({
  name = "bandwidth",
  description = "Copy and pure-read bandwidth of device memory, per buffer size.",
  options = options.concat(options.device_options(), {
    { "sizes", type = "list", of = "bytes",
      check = function(v)
        for _, s in ipairs(v) do
          if s % 16 ~= 0 then return false, ("%d is not a multiple of 16 bytes"):format(s) end
        end
        return true
      end,
      help = "Buffer sizes (default 1M,16M,256M,1G; 1M,4M,16M on a CPU device)." },
    { "kernels", type = "list", of = "enum", choices = { "copy", "read" }, default = "copy,read",
      help = "Kernels to time." },
    { "iters", type = "int", default = 100, env = "ITERS", max = options.MAX_ITERS,
      help = "Launches n at the first timing point (the second runs 2n)." },
    { "clock", type = "enum", choices = { "device", "host" }, default = "device",
      help = "Time each submission with device timestamps or the host clock." },
    options.submit_option("stream"),
    { "peak_gbs", type = "float", env = "PEAK_GBS",
      help = "Spec bandwidth in GB/s (default: from the device info)." },
    { "read_gbs", type = "float", help = "Read ceiling in GB/s (default: measured once, cached)." },
    { "refresh_ceiling", type = "flag", help = "Re-measure the cached read ceiling." },
  }, options.table_options(), options.shard_options()),
}, arg)
if devices.dispatch(opts, meta) then return end -- --devices: one worker process per device, merged

-- 2. The device, the kernels, the ceilings and the buffers.
local dev = gpu.open { backend = opts.backend, index = opts.device }
local sizes = opts.sizes
  or (dev.device_type == "cpu" and { 1 << 20, 4 << 20, 16 << 20 } or { 1 << 20, 16 << 20, 256 << 20, 1 << 30 })
local max_size = 0
for _, s in ipairs(sizes) do max_size = math.max(max_size, s) end
if dev.max_buffer_bytes > 0 and max_size > dev.max_buffer_bytes then
  options.fail(("--sizes: %s exceeds the device's largest buffer (%s)")
    :format(report.format_bytes(max_size), report.format_bytes(dev.max_buffer_bytes)))
end

local ceil = ceilings.get(dev, { spec_gbs = opts.peak_gbs, read_gbs = opts.read_gbs,
                                 refresh = opts.refresh_ceiling })
local timing_opts = { clock = opts.clock, graph = opts.submit == "graph" }

local k = { copy = kernels.load(dev, "copy"), read = kernels.load(dev, "read") }
local GRID, BLOCK = kernels.grid(dev), 256
local SENTINEL = 0xA5A5A5A5 -- the read kernel stores only if its XOR fold equals this; zeros fold to 0

-- One pair of buffers of the largest size serves every cell: a cell of size
-- s works on the first s bytes, so no cell pays for an allocation.
local src <close> = dev:buffer(max_size)
local dst <close> = dev:buffer(max_size)
local out <close> = dev:buffer(GRID * BLOCK * 4)

-- Both kernels are checked before they are timed: a kernel that does less
-- work than claimed is fast, and its GB/s would look like a result.
do
  -- copy: random bytes must arrive unchanged.
  local n = math.min(max_size, 4 << 20)
  src:fill_random { dtype = "u8", seed = 1, n = n }
  dst:fill("\0")
  k.copy:launch(GRID, BLOCK, src, dst, n // 16)
  if dst:download(0, n) ~= src:download(0, n) then
    error("bandwidth: the copy kernel's output differs from its input", 0)
  end
  -- read: over all-zero data (whose fold is 0) with a nonzero sentinel it
  -- must write nothing -- a kernel that wrote would not measure pure reads.
  src:fill("\0")
  out:fill("\xff")
  k.read:launch(GRID, BLOCK, src, out, max_size // 16, SENTINEL)
  if out:download() ~= string.rep("\xff", out.size) then
    error("bandwidth: the read kernel wrote to its output: it is not a pure read", 0)
  end
end
src:fill("\0"); dst:fill("\0"); out:fill("\0")

-- 3. The table: one cell per kernel and size, each a bench cell of one launch.
local table_cells = {}
for _, name in ipairs(opts.kernels) do
  for _, size in ipairs(sizes) do
    table_cells[#table_cells + 1] = { label = name .. " " .. report.format_bytes(size), kernel = name, size = size }
  end
end

local function prepare(cell)
  local n16 = cell.size // 16
  local copy = cell.kernel == "copy"
  local launch = copy and { k.copy, GRID, BLOCK, src, dst, n16 } or { k.read, GRID, BLOCK, src, out, n16, SENTINEL }
  local c = bench.cell(dev, { launches = { launch }, working_set = copy and 2 * cell.size or cell.size })
  c.moved = copy and 2 * cell.size or cell.size -- read src (+ write dst)
  return c
end

local function measure(p, ctx)
  local d, iters = p:time(ctx.iters, timing_opts)
  local gbs = ceilings.gbs(p.moved, d.ms)
  return {
    kernel = ctx.cell.kernel, size = ctx.cell.size, bytes = p.moved, iters = iters,
    status = d.ms and "ok" or "noise", ms = d.ms, gbs = gbs,
    pct_spec = ceilings.pct(gbs, ceil.spec_gbs), pct_read = ceilings.pct(gbs, ceil.read_gbs),
    cache = ceilings.regime(p.working_set, dev.l2_bytes),
    t_n = d.t_n, t_2n = d.t_2n, samples = { d.t_n, d.t_2n }, repeats = d.repeats, runners = d.runners,
  }
end

local tb <close> = cells.table { cells = table_cells, prepare = prepare, measure = measure, iters = opts.iters,
                                 monitor = dev, timing = timing_opts, ready = function() bench.ready(dev) end }
if tb:special(opts) then return end

-- 4. Report: console, and CSV / JSON lines / Markdown when asked.
local sink <close> = report.open {
  title = ("bandwidth on %s (%s, %s)"):format(dev.name, dev.backend, dev.driver_version),
  columns = {
    { key = "kernel", width = 6 },
    { key = "size", format = report.format_bytes, align = "right", width = 9 },
    { key = "iters", format = "%d", width = 6 },
    { key = "ms", title = "time", unit = "ms", format = "%.5f", width = 10 },
    { key = "gbs", title = "GB/s", format = "%.1f", width = 9 },
    { key = "pct_spec", title = "% spec", format = "%.1f", width = 7 },
    { key = "pct_read", title = "% read", format = "%.1f", width = 7 },
    { key = "cache", title = "fits", align = "right", width = 4 },
  },
  csv = opts.csv, json = opts.json, markdown = opts.markdown,
  env = report.environment(dev, meta, { ceilings = ceil, shard = tb:shard_record() }),
}


local rows, ran = tb:run { order = opts.order, seed = opts.seed, rounds = opts.rounds, sink = sink }

sink:note(bench.describe { iters = opts.iters, clock = opts.clock, graph = timing_opts.graph })
sink:note("* GB/s = (bytes read + written) / time, 1 GB = 1e9 bytes; copy moves 2 x size, read 1 x size")
sink:note(ceilings.note(ceil, nil, opts.peak_gbs and "PEAK_GBS", "spec"))
sink:note("* fits: L2 when the working set is smaller than L2 (GB/s may exceed DRAM), DRAM otherwise, ? when L2 is unknown")

-- 5. --validate: the same table reversed at 5x the iterations, into the same files.
if opts.validate then
  validate.run { table = tb, first = rows, ran = ran, key = "ms", rounds = opts.rounds, format = "%.5f", sink = sink }
end
sink:close()
