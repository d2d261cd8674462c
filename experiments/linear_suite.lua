-- experiments/linear_suite.lua: ninfer's cold-cache Linear benchmark,
-- y[T,N] = x[T,K] . W[N,K]^T through the one public entry (gpubench.linear).
--
--   gpubench experiments/linear_suite.lua --qtype q4 --n 4096 --k 5120 --t 8
--   gpubench experiments/linear_suite.lua --qtype q4 --n 4096 --k 5120 --sweep 1:32:1 --csv q4.csv
--   gpubench experiments/linear_suite.lua --suite all --json all.jsonl
--   gpubench experiments/linear_suite.lua --suite qwen3_6_27b --list
--   ncu --profile-from-start off gpubench experiments/linear_suite.lua --qtype bf16 --n 14336 --k 5120 --t 1 --profile
--
-- ninfer's contract (docs/LINEAR.md has the call's): every point a public
-- call, no route forcing; cold L2 per sample; warm-up 3, 20 samples;
-- median/min/p95; model bytes weight + 2KT + 2NT. Beyond it: both backends,
-- every route checked against the FP64 reference before it is timed, the
-- clean flush, the stopping rule on request, every sample kept, a vendor
-- GEMM (cuBLASLt) on the same point timed by the same contract, and each
-- point timed a second time after its group (B/A, unsteady past 10 %).

local gpu = require "gpu"
local options = require "gpubench.options"
local ceilings = require "gpubench.ceilings"
local report = require "gpubench.report"
local linear = require "gpubench.linear"
local suites = require "gpubench.linear_suites"
local lb = require "gpubench.linear_bench"
local shard = require "gpubench.shard"
local devices = require "gpubench.devices"

local USAGE = [[
usage: gpubench experiments/linear_suite.lua
         --qtype Q --n N --k K (--t T | --sweep S:E:STEP) [--policy a16|a4]
       | --suite qwen3_6_27b|qwen3_6_35b_a3b|all|nvfp4
       [--list] [--profile] [--csv F] [--json F] [--markdown F] (--help for all options)]]

if #arg == 0 then
  io.stderr:write(USAGE, "\n")
  os.exit(2)
end

local opts, meta = options.parse({
  name = "linear_suite",
  description = "Cold-cache Linear y[T,N] = x[T,K] W[N,K]^T through the public entry: single points, T sweeps, model suites.",
  options = options.concat(options.device_options(), {
    { "qtype", type = "enum", choices = linear.qtypes, help = "Weight format of a single point or sweep." },
    { "policy", type = "enum", choices = linear.policies, default = "a16",
      help = "a16: bf16 activations; a4: FP4 activations (nvfp4 on sm_100 or later)." },
    { "n", type = "int", help = "Output features N." },
    { "k", type = "int", help = "Input features K (a multiple of 8)." },
    { "t", type = "int", max = linear.MAX_T, help = "Tokens T of a single point." },
    { "sweep", type = "string", argname = "<S:E:STEP>", help = "T from S to E in steps of STEP (adds delta_%)." },
    { "suite", type = "enum", choices = suites.names, help = "A curated suite (all = the two model suites' union)." },
    { "list", type = "flag", help = "Print the points with their weight and model bytes and exit (no device work)." },
    { "warmup", type = "int", min = 0, default = 3, help = "Untimed cold calls before the samples of a point." },
    { "samples", type = "int", help = "Samples per point (default 20, unless a stopping-rule option is given)." },
    { "max_noise", type = "float", help = "Stopping rule instead of a fixed count: sample until the median's noise is at most this %." },
    { "min_samples", type = "int", help = "Stopping rule: at least this many samples (default 20)." },
    { "max_time", type = "float", default = 2, help = "Stopping rule: at most this many seconds per point." },
    { "flush", type = "enum", choices = { "clean", "write" }, default = "clean",
      help = "The L2 flush before each sample: clean (read 2x L2) or write (a memset)." },
    { "vendor", type = "enum", choices = { "auto", "off" }, default = "auto",
      help = "auto: time cuBLASLt's bf16 GEMM on every point where it loads (CUDA); off: no vendor column." },
    { "check_rows", type = "int", min = 1, default = 256, help = "Rows of N the reference check covers at most." },
    { "retime", type = "enum", choices = { "on", "off" }, default = "on",
      help = "Time each point again after its group, in reverse order (B/A column); a row whose two medians differ by more than 10 % is marked unsteady." },
    { "read_gbs", type = "float", help = "Read ceiling in GB/s (default: measured once, cached)." },
    { "peak_gbs", type = "float", help = "Spec DRAM bandwidth in GB/s (default: the device's)." },
    { "profile", type = "flag", help = "One call of the single point between profiler start and stop (ncu --profile-from-start off)." },
    { "csv", type = "path", output = true, help = "Write a CSV file (- for standard output)." },
    { "json", type = "path", output = true, help = "Write JSON lines (- for standard output)." },
    { "markdown", type = "path", output = true, help = "Write a Markdown table at the end (- for standard output)." },
  }, options.shard_options()),
}, arg)

-- ---------------------------------------------------------------- the points

local function parse_sweep(s)
  local a, b, c = s:match("^(%d+):(%d+):(%d+)$")
  a, b, c = tonumber(a), tonumber(b), tonumber(c)
  if not a or a < 1 or b < a or c < 1 or b > linear.MAX_T then
    options.fail(("linear_suite: --sweep %s must be S:E:STEP with 1 <= S <= E <= %d and STEP >= 1"):format(s, linear.MAX_T))
  end
  local ts = {}
  for t = a, b, c do ts[#ts + 1] = t end
  return ts
end

local points, mode
if opts.suite then
  for _, k in ipairs { "qtype", "n", "k", "t", "sweep" } do
    if opts[k] then options.fail(("linear_suite: --suite runs its own points: drop --%s"):format(k)) end
  end
  if opts.suite ~= "nvfp4" and meta.source.policy == "flag" and opts.policy ~= "a16" then
    options.fail(("linear_suite: the model suites use policy a16 (--policy %s applies to --suite nvfp4 only)"):format(opts.policy))
  end
  points, mode = suites.expand(opts.suite, opts.policy), "suite"
else
  local missing = {}
  for _, k in ipairs { "qtype", "n", "k" } do if not opts[k] then missing[#missing + 1] = "--" .. k end end
  if #missing > 0 then options.fail(("linear_suite: %s required (or --suite)\n%s"):format(table.concat(missing, ", "), USAGE)) end
  if (opts.t == nil) == (opts.sweep == nil) then
    options.fail("linear_suite: give one of --t T (a single point) or --sweep S:E:STEP")
  end
  local ts = opts.sweep and parse_sweep(opts.sweep) or { opts.t }
  points, mode = {}, opts.sweep and "sweep" or "single"
  for _, t in ipairs(ts) do
    local msg = linear.shape_error(opts.qtype, opts.policy, opts.n, opts.k, t)
    if msg then options.fail("linear_suite: " .. msg) end
    points[#points + 1] = { qtype = opts.qtype, policy = opts.policy, n = opts.n, k = opts.k, t = t,
                            labels = { ("%s.%dx%d"):format(opts.qtype, opts.n, opts.k) } }
  end
end
-- --shard: the points are the table's cells, dealt by gpubench.shard's rule
local total = #points
do
  local picked, at = shard.deal(points, opts.shard)
  for i, p in ipairs(picked) do p.cell_index = at[i] end
  points = picked
end
if opts.profile and #points == 0 then options.fail(("linear_suite: --profile: shard %s holds no point"):format(opts.shard)) end
if opts.profile and mode ~= "single" then
  options.fail("linear_suite: --profile takes exactly one point (--qtype, --n, --k, --t), not a " .. mode)
end


if opts.list then
  local rows, wsum = {}, 0
  for _, p in ipairs(points) do
    local r = lb.describe(p)
    r.index, r.label = p.cell_index, table.concat(p.labels, "+")
    rows[#rows + 1] = r
  end
  io.stdout:write(report.table_text({
    { key = "index", title = "#", format = "%d", width = 3 },
    { key = "label", width = 34 }, { key = "qtype", width = 5 }, { key = "policy", width = 6 },
    { key = "n", title = "N", format = "%d", width = 6 }, { key = "k", title = "K", format = "%d", width = 6 },
    { key = "t", title = "T", format = "%d", width = 5 },
    { key = "weight_bytes", format = "%d", width = 12 }, { key = "model_bytes", format = "%d", width = 12 },
  }, rows))
  local groups = suites.groups(points)
  for _, g in ipairs(groups) do wsum = wsum + linear.weight_bytes(g.qtype, g.n, g.k) end
  print(("%d points in %d weight groups (%.3f GB of weights)"):format(#points, #groups, wsum / 1e9))
  return
end

-- ---------------------------------------------------------------- the device

if devices.dispatch(opts, meta) then return end -- --devices: one worker process per device, merged
local dev = gpu.open { backend = opts.backend, index = opts.device }
local perr = points[1] and linear.policy_error(dev, points[1].qtype, points[1].policy)
if perr then options.fail("linear_suite: " .. perr) end

local rule
if opts.max_noise or opts.min_samples or meta.source.max_time == "flag" then
  if opts.samples then options.fail("linear_suite: --samples is a fixed count: drop the stopping-rule options") end
  rule = { max_noise = (opts.max_noise or 0.5) / 100, min_samples = opts.min_samples or 20, max_time = opts.max_time }
else
  rule = { samples = opts.samples or 20 }
end

local vendor
if opts.vendor == "auto" and dev.backend == "cuda" then
  local ok, v = pcall(require, "gpubench.linear_vendor")
  if ok then
    local avail, why = v.available(dev)
    if avail then vendor = v else io.stderr:write(("linear_suite: no vendor column: %s\n"):format(why)) end
  else
    io.stderr:write(("linear_suite: no vendor column: %s\n"):format(v))
  end
end

local groups = suites.groups(points)
local po = { flush = opts.flush, warmup = opts.warmup, rule = rule, max_rows = opts.check_rows }

if opts.profile then
  local grp = lb.prepare_group(dev, groups[1], {})
  local name, route = lb.profile(dev, grp, groups[1].points[1], po)
  print(("linear_suite: profiled one call (%s route) in the range \"%s\""):format(route, name))
  lb.close_group(grp)
  return
end

local ceil = ceilings.get(dev, { spec_gbs = opts.peak_gbs, read_gbs = opts.read_gbs })
po.ceil = ceil
po.vendor = vendor

local header = ("gpu=%s dram_spec=%s sustained_read=%.1f GB/s cache=cold"):format(dev.name,
  (ceil.spec_gbs or 0) > 0 and ("%.0f GB/s"):format(ceil.spec_gbs) or "unknown", ceil.read_gbs or 0)
local columns = {
  { key = "label", width = 30 }, { key = "qtype", width = 5 }, { key = "policy", width = 6 },
  { key = "n", title = "N", format = "%d", width = 6 }, { key = "k", title = "K", format = "%d", width = 6 },
  { key = "t", title = "T", format = "%d", width = 5 },
  { key = "median_us", format = "%.2f", width = 10 }, { key = "min_us", format = "%.2f", width = 9 },
  { key = "p95_us", format = "%.2f", width = 9 }, { key = "model_gb", title = "model_GB", format = "%.4f", width = 9 },
  { key = "effective_gbs", title = "effective_GB/s", format = "%.1f", width = 9 },
  { key = "dram_pct", title = "DRAM_%", format = "%.1f", width = 7 },
  { key = "read_pct", title = "READ_%", format = "%.1f", width = 7 },
  { key = "useful_tflops", title = "useful_TFLOP/s", format = "%.2f", width = 9 },
  { key = "memory_floor_pct", format = "%.1f", width = 7 },
}
if mode == "sweep" then columns[#columns + 1] = { key = "delta_pct", title = "delta_%", format = "%+.1f", width = 7 } end
if opts.retime == "on" then
  columns[#columns + 1] = { key = "retime_ratio", title = "B/A", format = "%.2f", width = 5 }
  columns[#columns + 1] = { key = "unsteady", width = 8 }
end
if vendor then
  columns[#columns + 1] = { key = "vendor_us", format = "%.2f", width = 9 }
  columns[#columns + 1] = { key = "vs_vendor", title = "vendor/ours", format = "%.2f", width = 6 }
end

-- The console is standard error when a file goes to standard output.
local console = (opts.csv == "-" or opts.json == "-" or opts.markdown == "-") and io.stderr or io.stdout
console:write(header, "\n")
local sink <close> = report.open {
  title = ("linear_suite on %s (%s, driver %s)"):format(dev.name, dev.backend, dev.driver_version),
  columns = columns, csv = opts.csv, json = opts.json, markdown = opts.markdown,
  csv_extra = { "weight_bytes", "x_bytes", "y_bytes", "model_bytes", "useful_flops", "warmup", "n_samples", "noise",
                "fixed_us", "fixed_share", "fixed_bound", "memory_floor_us", "route", "check_rows", "check_failures", "check_worst",
                "vendor_tflops", "vendor_note", "note", "prepare_s", "check_s", "time_s", "vendor_s",
                "weights_read_us", "spin_up_ms", "retime_us" },
  env = report.environment(dev, meta, { ceilings = ceil, header = header, vendor = vendor and vendor.describe(dev) or nil,
                                        shard = shard.record(opts.shard, total) }),
}

local started = gpu.clock()
local prev
-- NVML's clocks around each point's measurement: "throttled" where the SM clock after it was below 90 % of its
-- maximum (gpubench.clocks; nothing where there is no NVML)
local clocks = require "gpubench.clocks"
local watch = clocks.monitor(dev)
local spent = { prepare_s = 0, check_s = 0, time_s = 0, vendor_s = 0 }
for _, g in ipairs(groups) do
  local t0 = gpu.clock()
  local grp = lb.prepare_group(dev, g, po)
  local prepare_s = gpu.clock() - t0
  spent.prepare_s = spent.prepare_s + prepare_s
  local read_us = lb.read_weights(dev, grp, po)
  local rows = {}
  for i, p in ipairs(g.points) do
    local row = watch(function() return lb.measure(dev, grp, p, po) end)
    if i == 1 then row.prepare_s = prepare_s end
    row.weights_read_us = read_us
    lb.fixed_share(row)
    for k in pairs(spent) do if k ~= "prepare_s" then spent[k] = spent[k] + (row[k] or 0) end end
    row.label = lb.point_label(p)
    row.cell_index, row.shard = p.cell_index, opts.shard and shard.text(shard.of(opts.shard)) or nil
    -- delta_% against the previous T of the sweep, which a shard may not hold
    if mode == "sweep" and prev and prev.cell_index == p.cell_index - 1 and prev.median_us and row.median_us then
      row.delta_pct = 100 * (row.median_us / prev.median_us - 1)
    end
    prev = row
    rows[i] = row
  end
  -- B: the group's points again, in reverse order (A B B A over the run)
  if opts.retime == "on" then
    for i = #g.points, 1, -1 do
      local t1 = gpu.clock()
      lb.retime(dev, grp, g.points[i], po, rows[i])
      spent.time_s = spent.time_s + (gpu.clock() - t1)
    end
  end
  for _, row in ipairs(rows) do sink:add(row) end
  lb.close_group(grp)
end
sink:note(("* %d points, %d weight groups; cold: per sample a %s L2 flush completed before the start timestamp, "
  .. "timestamps around one public call; %d warm-up calls, %s"):format(#points, #groups, opts.flush, opts.warmup,
  rule.samples and ("%d samples"):format(rule.samples)
    or ("samples until the median's noise <= %.2g %% (at least %d, at most %g s)"):format(100 * rule.max_noise,
      rule.min_samples, rule.max_time)))
sink:note("* model bytes = weight bytes + 2KT + 2NT; useful FLOPs = 2NKT; DRAM_% against the spec, READ_% against "
  .. "the measured read ceiling; memory_floor_pct = (model bytes / spec) / median")
sink:note("* every point checked against the FP64 reference before it is timed (docs/LINEAR.md, Accuracy)")
local spun, spun_ms = 0, 0
for _, r in ipairs(sink.rows or {}) do
  if r.spin_up_ms then spun, spun_ms = spun + 1, math.max(spun_ms, r.spin_up_ms) end
end
local _, no_clocks = clocks.read(dev)
sink:note(no_clocks and ("* clocks: not read (%s), so not brought up before the timings"):format((no_clocks:gsub(" %[.-%]$", "")))
  or ("* clocks: before each timing the device is kept busy until NVML reads its SM clock at %s, where it had "
  .. "fallen (Vulkan lets it fall while the host works; docs/results/h200-linear.md, \"Clocks\"), for at most %.0f ms: "
  .. "%d of these points needed it, up to %.0f ms"):format(clocks.SPIN_FRACTION >= 1 and "its maximum"
    or (">= %d %% of its maximum"):format(math.floor(100 * clocks.SPIN_FRACTION + 0.5)), clocks.SPIN_MAX_MS,
    spun, spun_ms))
if opts.retime == "on" then
  local bad = {}
  for _, r in ipairs(sink.rows or {}) do if r.unsteady then bad[#bad + 1] = r.label end end
  sink:note(("* B/A: each point timed again after its group, in reverse order; the reported times are the first "
    .. "(A). %d of %d rows differ by more than %d %% and are marked unsteady (the device changed between the two "
    .. "timings, not the kernel: time them again)%s"):format(#bad, #(sink.rows or {}),
    math.floor(100 * lb.RETIME_TOLERANCE + 0.5), #bad > 0 and (": " .. table.concat(bad, ", ")) or ""))
end
sink:note("* weights_read_us (CSV, JSON): the pure-read kernel over each group's weight buffer, timed as its points "
  .. "are, before them: what reading those very bytes costs in this process")
do
  local bound, fixed = {}, nil
  for _, r in ipairs(sink.rows or {}) do
    fixed = fixed or r.fixed_us
    if r.fixed_bound then bound[#bound + 1] = r.label end
  end
  if fixed then
    sink:note(("* fixed cost: an empty kernel timed as these samples are takes %.2f us (the timer's residual, inside "
      .. "every sample, not subtracted); it is over %d %% of the median at %d of %d rows (fixed_bound: their READ_%% "
      .. "says more about the timer than the kernel)%s"):format(fixed, math.floor(100 * lb.FIXED_SHARE + 0.5), #bound,
      #(sink.rows or {}), #bound > 0 and (": " .. table.concat(bound, ", ")) or ""))
  end
end
if vendor then sink:note("* vendor: " .. vendor.note(dev)) end
sink:note(("* wall time of the run %.1f s: weights made and uploaded %.1f s, reference checks %.1f s, "
  .. "our timings %.1f s, the vendor's %.1f s"):format(gpu.clock() - started, spent.prepare_s, spent.check_s,
  spent.time_s, spent.vendor_s))
sink:close()
