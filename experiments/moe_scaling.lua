-- experiments/moe_scaling.lua: the mixture-of-experts Q4_K GEMV of one decode
-- step, m = 1 ... 64 tokens, four ways (docs/kernels/moe.md):
--
--   per_token      the top_k experts of one token per dispatch, m dispatches
--   batched        one dispatch over all m * top_k pairs (ferrum's kernel)
--   grouped        pairs grouped by expert on the device, inside the step:
--                  each selected expert's weights read once for all its tokens
--   fused_gate_up  batched gate and up, silu(gate) * up in the epilogue
--
--   gpubench experiments/moe_scaling.lua                       # qwen3, gate/up, cold and l2
--   gpubench experiments/moe_scaling.lua --config mixtral_8x7b --projection both --json moe.jsonl
--   gpubench experiments/moe_scaling.lua --routing zipf --zipf-s 1.2 --m 8,64 --regime cold
--   gpubench experiments/moe_scaling.lua --list                # the cells, no device work
--   gpubench experiments/moe_scaling.lua --plot moe.svg        # us per step against m per variant
--
-- ferrum's microbenchmark timed encode + commit + wait per iteration on the
-- wall clock over 8 experts that stayed in cache. Here a step (all of a
-- variant's dispatches) is a bench cell: two-point timed graph replays (or
-- --method cold), every variant checked against the FP64 reference and
-- batched against per_token bit for bit first; the cold regime rotates stack
-- copies so the experts a step reads come from DRAM, the l2 regime repeats
-- one step and says so; llama.cpp's MUL_MAT_ID figures stand beside the l2
-- rows of its geometry, labelled as a peer measured elsewhere.

local gpu = require "gpu"
local options = require "gpubench.options"
local ceilings = require "gpubench.ceilings"
local cells = require "gpubench.cells"
local report = require "gpubench.report"
local validate = require "gpubench.validate"
local bench = require "gpubench.bench"
local moe = require "gpubench.moe"
local mb = require "gpubench.moe_bench"
local shard = require "gpubench.shard"
local devices = require "gpubench.devices"

local opts, meta = options.parse({
  name = "moe_scaling",
  description = "Q4_K mixture-of-experts GEMV per decode step: per_token, batched, grouped by expert and fused "
    .. "gate/up, against m, cold and L2-resident.",
  options = options.concat(options.device_options(), {
    { "config", type = "enum", choices = moe.CONFIG_NAMES, default = "qwen3_30b_a3b",
      help = "Model geometry: qwen3_30b_a3b (128 experts, top-8, gate/up 768x2048, down 2048x768), mixtral_8x7b "
        .. "(8, top-2, 14336x4096, 4096x14336), ferrum_subset (8, top-8, 768x2048, 2048x768)." },
    { "m", type = "list", of = "int", default = "1,2,4,8,16,32,64", help = "Tokens per step." },
    { "routing", type = "enum", choices = moe.ROUTINGS, default = "uniform",
      help = "uniform: seeded, top_k distinct experts per token; zipf: distinct, weighted 1/rank^s; modulo: "
        .. "ferrum's id = pair % experts." },
    { "zipf_s", type = "float", default = 1.0, help = "The exponent s of --routing zipf." },
    { "routing_seed", type = "int", min = 0, default = 1, help = "Seed of the uniform and zipf routings." },
    { "projection", type = "enum", choices = { "gate_up", "down", "both" }, default = "gate_up",
      help = "The expert projection(s) to time (fused_gate_up runs for gate_up only)." },
    { "regime", type = "enum", choices = { "cold", "l2", "both" }, default = "both",
      help = "cold: steps rotate over stack copies whose selected experts total >= 4x L2 (--method cold: each "
        .. "sampled step follows an L2 flush instead); l2: one copy, the same step repeated (--method cold: no flush)." },
    { "variants", type = "list", of = "enum", choices = moe.VARIANTS, default = table.concat(moe.VARIANTS, ","),
      help = "Variants to time, in table order." },
    { "iters", type = "int", default = 100, env = "ITERS", max = options.MAX_ITERS,
      help = "Steps n at the first timing point (the second runs 2n)." },
    { "point_ms", type = "float", min = 0, default = 5,
      help = "Fewer steps than --iters where that many would take longer than this many ms per timing point "
        .. "(one step timed first; 0: always --iters). The n of each row is in its iters field." },
    { "read_gbs", type = "float", help = "Read ceiling in GB/s (default: measured once, cached)." },
    { "list", type = "flag", help = "Print the cells with their pairs, dispatches, experts and bytes and exit "
      .. "(no device work; the dispatches of --backend, or of each backend when it is not given)." },
    { "grouped_geometry", type = "string", argname = "<NAME=V,...>",
      help = "Defines of the grouped kernel instead of its defaults (CUDA: GWARPS, GSTAGES, GTOK, GPACK; Vulkan: "
        .. "gpubench.moe_vulkan's grouped defines); recorded in the environment." },
    { "pairs_geometry", type = "string", argname = "<NAME=V,...>",
      help = "Defines of the per_token / batched kernel instead of its defaults (CUDA: ROWS, WARPS, STAGES, PARTS; "
        .. "Vulkan: MOE_T, MOE_NR, MOE_IDOT, MOE_XB); recorded in the environment." },
    { "fused_geometry", type = "string", argname = "<NAME=V,...>",
      help = "Defines of the fused_gate_up kernel instead of its defaults (CUDA: ROWS, WARPS, STAGES, PARTS; "
        .. "Vulkan: MOE_T, MOE_NR, MOE_IDOT, MOE_XB); recorded in the environment." },
    { "plot", type = "path", output = true,
      help = "Also write a plot of us per step against m, one line per variant (.svg or .png, gnuplot)." },
  }, options.measure_options(), options.table_options(), options.shard_options()),
}, arg)

-- ---------------------------------------------------------------- checks before any device work

local cfg = moe.CONFIGS[opts.config]
local seen = {}
for _, m in ipairs(opts.m) do
  if seen[m] then options.fail(("--m=%s lists m=%d twice"):format(meta.raw.m or "", m)) end
  seen[m] = true
  if m * cfg.top_k > 65535 then
    options.fail(("--m=%d: %d pairs of %s are more than a launch's 65535 rows of blocks"):format(m, m * cfg.top_k,
      opts.config))
  end
end
if meta.source.zipf_s ~= "default" and opts.routing ~= "zipf" then
  options.fail(("--zipf-s applies to --routing zipf, not %s"):format(opts.routing))
end
if opts.routing ~= "modulo" and cfg.top_k > cfg.experts then
  options.fail(("--routing %s picks %d distinct experts of %d"):format(opts.routing, cfg.top_k, cfg.experts))
end
if opts.plot then
  local plot = require "gpubench.plot"
  if not (opts.plot:match("%.svg$") or opts.plot:match("%.png$")) then
    options.fail(("--plot=%s must name a .svg or .png file"):format(opts.plot))
  end
  if not plot.have_gnuplot() then options.fail("--plot needs gnuplot (Debian: apt-get install gnuplot-nox)") end
end

local projections = opts.projection == "both" and { "gate_up", "down" } or { opts.projection }
local regimes = opts.regime == "both" and { "cold", "l2" } or { opts.regime }
local function plan(backend)
  return mb.plan { config = opts.config, ms = opts.m, routing = opts.routing, zipf_s = opts.zipf_s,
                   routing_seed = opts.routing_seed, projections = projections, regimes = regimes,
                   variants = opts.variants, backend = backend }
end

if opts.list then
  local list = plan(opts.backend)
  if #list == 0 then options.fail("no cells: fused_gate_up is the only variant and runs for gate_up only") end
  list = shard.deal(list, opts.shard) -- --shard: this shard's cells only
  local rows = {}
  for i, c in ipairs(list) do
    rows[i] = { cell = c.label, pairs = c.pairs, dispatches = mb.dispatch_text(c), unique = c.unique,
                unique_bytes = c.unique_bytes }
  end
  io.stdout:write(("moe_scaling cells: %s (%d experts, top-%d), %s routing\n"):format(opts.config, cfg.experts,
    cfg.top_k, opts.routing))
  io.stdout:write(report.table_text({
    { key = "cell" }, { key = "pairs", format = "%d" }, { key = "dispatches", title = "dispatches/step" },
    { key = "unique", title = "unique experts", format = "%d" },
    { key = "unique_bytes", title = "unique-expert bytes", format = report.format_bytes },
  }, rows))
  return
end

-- ---------------------------------------------------------------- the device

if devices.dispatch(opts, meta) then return end -- --devices: one worker process per device, merged
local dev = gpu.open { backend = opts.backend, index = opts.device }
local cold_method = opts.method == "cold"
-- the two-point cold regime rotates copies against L2's size; --method cold flushes it instead
options.require_l2(dev, opts.regime ~= "l2" and not cold_method, "--regime cold")
local list = plan(dev.backend)
if #list == 0 then options.fail("no cells: fused_gate_up is the only variant and runs for gate_up only") end
-- --grouped-geometry, --pairs-geometry, --fused-geometry: the backend's table with another kernel
-- (the variants each kernel runs, for the notes)
local GEOMETRY_KERNELS = { { "grouped", "grouped" }, { "pairs", "per_token and batched" }, { "fused", "fused_gate_up" } }
local specs, geometries = nil, {}
for _, gk in ipairs(GEOMETRY_KERNELS) do
  local kernel = gk[1]
  local given, flag = opts[kernel .. "_geometry"], ("--%s-geometry"):format(kernel)
  if given then
    local changes, why = options.parse_defines(given)
    if not changes then options.fail(("%s=%s: %s"):format(flag, given, why)) end
    local S = require("gpubench.moe_" .. dev.backend)
    local ok, v = pcall(S.variant, kernel, changes)
    if not ok then options.fail(("%s=%s: %s"):format(flag, given, (tostring(v):gsub("^[^:]*:%d+: ", "")))) end
    specs = specs or {} -- a kernel not given runs the backend's pick per step
    specs[kernel], geometries[kernel] = v, v.defines
  end
end
local timing_opts = { method = opts.method, flush = opts.flush, rule = options.rule_of(opts, meta),
                      point_ms = opts.point_ms > 0 and opts.point_ms or nil }
local fixture <close> = mb.fixture(dev, { l2_bytes = dev.l2_bytes, copies = function(c)
  return cold_method and 1 or mb.copies(c.unique_bytes, dev.l2_bytes)
end })
local ceil -- measured after the cells are declared (--list-cells and --profile need it not)

local tb <close> = cells.table {
  cells = list, iters = opts.iters, timing = timing_opts, monitor = dev,
  prepare = function(c) return fixture:prepare(c, list, specs) end,
  ready = function() bench.ready(dev) end,
  measure = function(p, ctx)
    local c = ctx.cell
    local o = { read_gbs = ceil.read_gbs, l2_bytes = dev.l2_bytes, flushed = cold_method }
    if p.skip then return mb.row(c, p, {}, o) end
    -- each JSON row names the kernel defines its step ran (a rule's pick differs per m)
    o.defines = options.format_defines(moe.spec(dev, c.variant, c.shape, c.m, specs).defines)
    if cold_method then
      -- l2: no flush, the warm-up and earlier samples left the step's weights where they fit
      local s = p:cold { flush = c.regime == "l2" and "none" or timing_opts.flush, rule = timing_opts.rule }
      local row = mb.row(c, p, { ms = s.ms }, o)
      row.status = s.converged and "ok" or "not_converged"
      row.samples, row.summary, row.fixed_us = s.samples, s.summary, s.fixed_ms * 1e3
      return row
    end
    local d, n = p:time(ctx.iters, timing_opts)
    local row = mb.row(c, p, d, o)
    if d.converged == false and row.status == "ok" then row.status = "not_converged" end
    row.iters, row.t_n, row.t_2n, row.samples = n, d.t_n, d.t_2n, { d.t_n, d.t_2n }
    row.repeats, row.runners, row.timings = d.repeats, d.runners, d.timings
    return row
  end,
}
if tb:special(opts) then return end
ceil = ceilings.get(dev, { read_gbs = opts.read_gbs })

local columns = {
  { key = "variant", width = 13 },
}
if #projections > 1 then columns[#columns + 1] = { key = "projection", width = 8 } end
for _, c in ipairs {
  { key = "m", format = "%d", width = 3 }, { key = "pairs", format = "%d", width = 5 },
  { key = "dispatches", title = "disp", format = "%d", width = 4 }, { key = "unique", title = "uniq", format = "%d", width = 4 },
  { key = "us_step", title = "us/step", format = "%.2f", width = 8 }, { key = "us_pair", title = "us/pair", format = "%.3f", width = 7 },
  { key = "scaling_vs_m1", title = "scale/m1", format = "%.3f", width = 8 },
  { key = "unique_bytes", title = "unique B", format = report.format_bytes, width = 9 },
  { key = "gbs", title = "GB/s", format = "%.0f", width = 6 }, { key = "pct_read", title = "% read", format = "%.1f", width = 6 },
  { key = "floor_us", title = "floor us", format = "%.2f", width = 8 }, { key = "x_floor", title = "x floor", format = "%.2f", width = 7 },
  { key = "vs_peer", title = "x peer", format = "%.2f", width = 6 }, { key = "fits", title = "regime", width = 11 },
} do columns[#columns + 1] = c end

local sink <close> = report.open {
  title = ("moe_scaling: %s (%d experts, top-%d), %s routing%s, on %s (%s, driver %s)"):format(opts.config,
    cfg.experts, cfg.top_k, opts.routing, opts.routing == "zipf" and (" s=" .. opts.zipf_s) or "", dev.name,
    dev.backend, dev.driver_version),
  columns = columns, csv = opts.csv, json = opts.json, markdown = opts.markdown,
  env = report.environment(dev, meta, { ceilings = ceil, shard = tb:shard_record(), grouped_geometry = geometries.grouped,
                                        pairs_geometry = geometries.pairs, fused_geometry = geometries.fused }),
}
local scaled = mb.scaling_sink(sink)
local rows, ran = tb:run { order = opts.order, seed = opts.seed, rounds = opts.rounds, sink = scaled }
scaled:finish()
-- a skipped row says why (the same reason once, with how many rows it skipped)
local why_order, why_count = {}, {}
for _, r in ipairs(rows or {}) do
  if r.status == "skipped" and r.note then
    if not why_count[r.note] then why_order[#why_order + 1] = r.note; why_count[r.note] = 0 end
    why_count[r.note] = why_count[r.note] + 1
  end
end
for _, why in ipairs(why_order) do sink:note(("* skipped (%d rows): %s"):format(why_count[why], why)) end
local peers = mb.peer_rows(tb.cells) -- the shard's cells: each shard adds the peers of its own rows
for _, r in ipairs(peers) do sink:add(r) end

sink:note(ceilings.note(ceil, nil, nil, "spec"))
sink:note(bench.describe { iters = opts.iters, rotate = opts.regime ~= "l2", method = opts.method, flush = opts.flush,
                           rule = timing_opts.rule, point_ms = timing_opts.point_ms })
if cold_method and opts.regime ~= "cold" then sink:note("* l2 cells: the same timing without the flush") end
sink:note("* a step is one call: every dispatch of the variant for m tokens (disp); grouped's blocks find their "
  .. "expert's pairs in ids themselves, inside its one dispatch")
sink:note("* unique B = the selected experts' weights once per stack (fused_gate_up: gate and up); GB/s and % read "
  .. "over them; floor us = unique B / the read ceiling; x floor = us/step over it")
sink:note("* scale/m1 = us/pair at m over us/pair at m=1 of the same variant and regime")
local rounded = {}
-- the kernel spec each step of each variant ran (a --*-geometry's, else the backend's pick per step and device)
local ran_specs = {}
local grouped_as_pairs = false
for _, c in ipairs(list) do
  local kernel = moe.kernel_of(c.variant, c.m, specs)
  if c.variant == "grouped" and kernel == "pairs" then grouped_as_pairs = true end
  local k = ran_specs[kernel] or { ms = {}, seen = {} }
  ran_specs[kernel] = k
  local at = c.projection .. " " .. c.m
  if not k.seen[at] then
    k.seen[at] = true
    k.ms[#k.ms + 1] = { m = c.m, projection = c.projection, spec = moe.spec(dev, c.variant, c.shape, c.m, specs) }
  end
end
for _, gk in ipairs(GEOMETRY_KERNELS) do
  local B
  for _, e in ipairs(ran_specs[gk[1]] and ran_specs[gk[1]].ms or {}) do B = B or e.spec.x_rounding end
  if B then rounded[#rounded + 1] = ("; %s: plus what x rounded to int16 per %d values moves"):format(gk[2], B) end
end
if grouped_as_pairs then
  sink:note("* grouped at m = 1 runs batched's step (the pairs kernel): one token's top_k experts are distinct, "
    .. "so each pair is its expert's group and there is nothing to group")
end
sink:note(("* every variant matched the FP64 reference (|y - y_ref| <= %g sum|w x|; fused: the SwiGLU bound%s) and "
  .. "batched matched per_token bit for bit, on these weights and ids, before timing"):format(mb.TOL,
  table.concat(rounded)))
sink:note(cold_method and "* regime: cold (flush) = each sampled step after an L2 flush; l2 = the same step sampled "
  .. "without a flush (L2 / DRAM: whether that step's bytes fit in L2)"
  or ("* regime: cold xN = N copies of the stacks, the experts a step reads totalling >= 4x L2 over a rotation; "
  .. "l2 = one copy, the same step repeated (L2 / DRAM: whether that step's bytes fit in L2)"))
if #peers > 0 then
  sink:note("* llama.cpp*: its MUL_MAT_ID with q4_K weights, measured on an H200 outside gpubench (issue 15), perf "
    .. "mode (the same ids every call: its experts stay in L2), same geometry; not measured by this run; x peer = "
    .. "our us/step over it")
end
for _, gk in ipairs(GEOMETRY_KERNELS) do
  if geometries[gk[1]] then
    sink:note(("* %s kernel geometry (--%s-geometry): %s"):format(gk[2], gk[1],
      options.format_defines(geometries[gk[1]], " ")))
  end
end
-- the defines each step ran where no --*-geometry was given: the backend's table and its rules per step and
-- device (gpubench.moe_<backend>), m values with the same spec listed together
for _, gk in ipairs(GEOMETRY_KERNELS) do
  local k = ran_specs[gk[1]]
  if k and not geometries[gk[1]] then
    for _, proj in ipairs(projections) do
      local groups, order = {}, {}
      for _, e in ipairs(k.ms) do
        if e.projection == proj then
          if not groups[e.spec] then groups[e.spec], order[#order + 1] = {}, e.spec end
          table.insert(groups[e.spec], e.m)
        end
      end
      local parts = {}
      for _, sp in ipairs(order) do
        parts[#parts + 1] = ("m=%s: %s"):format(table.concat(groups[sp], ","), options.format_defines(sp.defines, " "))
      end
      if #parts > 0 then
        sink:note(("* %s kernel per step%s (the %s table and its rules, docs/kernels/moe.md): %s"):format(gk[2],
          #projections > 1 and ", " .. proj or "", dev.backend, table.concat(parts, "; ")))
      end
    end
  end
end
sink:note(("* table run %d times in %s order, only the last round reported"):format(opts.rounds, opts.order))
if opts.validate then
  validate.run { table = tb, first = rows, ran = ran, key = "us_step", rounds = opts.rounds, format = "%.3f", sink = sink }
end
sink:close()

if opts.plot then
  local plot = require "gpubench.plot"
  local all = {}
  for _, r in ipairs(sink.rows) do all[#all + 1] = r end
  local by = { "variant" }
  if #projections > 1 then by[#by + 1] = "projection" end
  by[#by + 1] = "regime"
  local s = plot.series(all, { x = "m", y = "us_step", by = by })
  plot.render(s, { output = opts.plot, x = "m", y = "us_step", logx = true, logy = true,
                   title = ("MoE Q4_K step time, %s, %s"):format(opts.config, dev.name), ylabel = "us per step" })
  io.stderr:write(("moe_scaling: plot %s (%d lines)\n"):format(opts.plot, #s.lines))
end
