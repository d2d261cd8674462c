-- Copy bandwidth per buffer size: the minimal experiment of docs/WRITING_EXPERIMENTS.md.
local gpu, gb = require "gpu", require "gpubench"
local opts, meta = gb.options.parse({
  name = "copy_table", description = "Copy bandwidth per buffer size.",
  options = gb.options.concat(gb.options.device_options(), {
    { "sizes", type = "list", of = "bytes", default = "1M,4M", check = gb.options.multiple_of(16, "16-byte loads") },
    { "iters", type = "int", default = 20, env = "ITERS", max = gb.options.MAX_ITERS, help = "Calls n at t(n)." },
  }, gb.options.table_options(), gb.options.shard_options()),
}, arg)
if gb.devices.dispatch(opts, meta) then return end -- --devices: one worker process per device, merged
local dev = gpu.open { backend = opts.backend, index = opts.device }
local ceil = gb.ceilings.get(dev)
local copy, grid = gb.kernels.load(dev, "copy"), gb.kernels.grid(dev)
local list = {}
for _, size in ipairs(opts.sizes) do list[#list + 1] = { label = "copy " .. size, size = size } end
local tb <close> = gb.cells.table { cells = list, iters = opts.iters, monitor = dev, -- flags a throttled GPU
  ready = function() gb.bench.ready(dev) end,
  prepare = function(c) -- buffers made and the kernel checked once, before any timing
    local src, dst = dev:buffer(c.size), dev:buffer(c.size)
    src:fill_random { dtype = "u8", seed = 1 }
    local launch = { copy, grid, 256, src, dst, c.size // 16 }
    copy:launch(table.unpack(launch, 2))
    if dst:download() ~= src:download() then error("the copy kernel's output differs from its input", 0) end
    return gb.bench.cell(dev, { launches = { launch }, buffers = { src, dst }, working_set = 2 * c.size })
  end,
  measure = function(p, ctx)
    local d, n = p:time(ctx.iters)
    local gbs = gb.ceilings.gbs(2 * ctx.cell.size, d.ms)
    return { size = ctx.cell.size, iters = n, status = d.ms and "ok" or "noise", ms = d.ms, gbs = gbs,
             samples = { d.t_n, d.t_2n }, repeats = d.repeats, runners = d.runners,
             pct_read = gb.ceilings.pct(gbs, ceil.read_gbs), fits = gb.ceilings.regime(p.working_set, dev.l2_bytes) }
  end }
tb:shard(opts.shard) -- --shard I/N: only the cells at positions p with p mod N = I
local sink <close> = gb.report.open { title = "copy_table on " .. dev.name,
  env = gb.report.environment(dev, meta, { shard = tb:shard_record() }),
  csv = opts.csv, json = opts.json, markdown = opts.markdown, columns = {
    { key = "size", format = gb.report.format_bytes }, { key = "ms", format = "%.5f" },
    { key = "gbs", title = "GB/s", format = "%.1f" }, { key = "pct_read", title = "% read", format = "%.1f" },
    { key = "fits" } } }
local rows, ran = tb:run { order = opts.order, seed = opts.seed, rounds = opts.rounds, sink = sink }
sink:note(gb.bench.describe { iters = opts.iters }); sink:note(gb.ceilings.note(ceil, nil, nil, "spec"))
if opts.validate then gb.validate.run { table = tb, first = rows, ran = ran, key = "ms", sink = sink } end
sink:close()
