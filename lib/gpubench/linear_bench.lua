-- gpubench.linear_bench: the fixture and metrics of the Linear benchmark
-- (experiments/linear_suite.lua): one weight allocation per (qtype, policy,
-- N, K) group with activations for its largest T, each point checked against
-- the FP64 reference and then timed cold through the public entry
-- (gpubench.linear), with a vendor GEMM timed by the same contract beside it.
--
-- Timing contract (ninfer's, section 6): allocation, initialisation and the
-- first call untimed; per sample an L2 flush completed before the start
-- timestamp; timestamps around exactly one call; `warmup` calls first, then
-- the samples (20, or the stopping rule); median, min and p95 reported and
-- every sample kept.

local bench = require "gpubench.bench"
local linear = require "gpubench.linear"
local stats = require "gpubench.stats"

local lb = {}

-- The host reference costs rows * K * T multiply-adds per check: the rows
-- checked shrink as K * T grows, never below this many.
lb.CHECK_MACS = 5e7
lb.MIN_CHECK_ROWS = 16

function lb.check_rows(n, k, t, max_rows)
  local rows = math.max(lb.MIN_CHECK_ROWS, math.floor(lb.CHECK_MACS / (k * t)))
  return math.min(n, max_rows or 256, rows)
end

-- The seeds of a group's data: a function of its shape, so a point's numbers
-- do not depend on which suite or order produced it.
local function seed_of(g)
  local h = 17
  for _, v in ipairs { #g.qtype, g.qtype:byte(1, -1) } do h = (h * 31 + v) % 2147483647 end
  return (h * 1000003 + g.n * 7919 + g.k) % 2147483647 + 1
end

-- prepare_group(dev, g, o) -> grp: weights and activations on the device,
-- plus the vendor baseline's when o.vendor is a vendor module.
function lb.prepare_group(dev, g, o)
  local spec = { qtype = g.qtype, policy = g.policy, n = g.n, k = g.k }
  local seed = seed_of(g)
  local w = linear.weights(dev, g.qtype, g.n, g.k, seed)
  local x, y = linear.activations(dev, g.k, g.n, g.t_max, seed + 1)
  spec.gscale = w.gscale
  local grp = { g = g, spec = spec, w = w, x = x, y = y, buffers = { w.buffer, x.buffer, y.buffer } }
  if o.vendor then grp.vendor = o.vendor.prepare(dev, grp) end
  return grp
end

local function cold_stats(res)
  local us = {}
  for i, ms in ipairs(res.samples) do us[i] = ms * 1000 end
  return {
    median_us = stats.median(us), min_us = res.summary.min * 1000, p95_us = stats.quantile(us, 0.95),
    samples_us = us, n_samples = res.n, noise = res.noise, converged = res.converged, fixed_us = res.fixed_ms * 1000,
  }
end

-- read_weights(dev, grp, o) -> µs: the pure-read kernel over the group's
-- weight buffer, timed as a point is (cold, o.flush, o.warmup, o.rule): what
-- reading those very bytes costs in this process, beside each point's time
-- (docs/results/h200-linear.md, "Clocks").
function lb.read_weights(dev, grp, o)
  local kernels = require "gpubench.kernels"
  local k <close> = kernels.load(dev, "read")
  local launch, out <close> = kernels.read_launch(dev, k, grp.w.buffer)
  local cell <close> = bench.cell(dev, { launches = { launch } })
  local res = cell:cold { rule = o.rule, flush = o.flush, warmup = o.warmup }
  return cold_stats(res).median_us
end

function lb.close_group(grp)
  if grp.vendor and grp.vendor.close then grp.vendor.close() end
  for _, b in ipairs(grp.buffers) do b:free() end
  grp.buffers = {}
end

local function bytes_of(p)
  local wb = linear.weight_bytes(p.qtype, p.n, p.k)
  return { weight = wb, x = 2 * p.k * p.t, y = 2 * p.n * p.t, model = linear.model_bytes(p.qtype, p.n, p.k, p.t) }
end

-- point_label(p) -> "role+role T=t": a point's row label.
function lb.point_label(p)
  return ("%s T=%d"):format(table.concat(p.labels, "+"), p.t)
end

-- describe(p) -> the point's row without timings: what --list prints.
function lb.describe(p)
  local b = bytes_of(p)
  return {
    label = table.concat(p.labels or {}, "+"), qtype = p.qtype, policy = p.policy, n = p.n, k = p.k, t = p.t,
    weight_bytes = b.weight, x_bytes = b.x, y_bytes = b.y, model_bytes = b.model,
    model_gb = b.model / 1e9, useful_flops = linear.flops(p.n, p.k, p.t),
  }
end


-- Metrics from a median time (ninfer's section 4 and 5; the read ceiling
-- measured on this device, the spec its datasheet bandwidth).
function lb.metrics(row, median_us, ceil)
  local s = median_us * 1e-6
  row.effective_gbs = row.model_bytes / s / 1e9
  row.dram_pct = ceil.spec_gbs and ceil.spec_gbs > 0 and 100 * row.effective_gbs / ceil.spec_gbs or nil
  row.read_pct = ceil.read_gbs and 100 * row.effective_gbs / ceil.read_gbs or nil
  row.useful_tflops = row.useful_flops / s / 1e12
  if row.dram_pct then
    row.memory_floor_us = row.model_bytes / (ceil.spec_gbs * 1e9) * 1e6
    row.memory_floor_pct = 100 * row.memory_floor_us / median_us
  end
  return row
end

-- The cold timing of one public call of point p (the contract's: o.flush, o.warmup, o.rule).
local function time_call(dev, grp, p, o)
  local launches = linear.launches(dev, grp.spec, grp.w, grp.x, grp.y, p.t, o.route)
  local cell <close> = bench.cell(dev, { launches = launches })
  return cell:cold { rule = o.rule, flush = o.flush, warmup = o.warmup }
end

-- A row whose timer's fixed cost (fixed_us: an empty kernel timed as its samples are,
-- inside every sample and not subtracted) is more than this share of its median is
-- fixed_bound: its READ_% says more about the timer than the kernel (docs/results/
-- h200-linear.md, "The Vulkan cold sample's fixed cost").
lb.FIXED_SHARE = 0.20

-- fixed_share(row) -> the row with fixed_share (fixed_us / median_us) and fixed_bound
-- where that passes FIXED_SHARE (nothing for a row without both).
function lb.fixed_share(row)
  if row.median_us and row.fixed_us and row.median_us > 0 then
    row.fixed_share = row.fixed_us / row.median_us
    row.fixed_bound = row.fixed_share > lb.FIXED_SHARE or nil
  end
  return row
end

-- A second timing of a point whose median differs from the first by more than this
-- fraction marks the row unsteady: the device changed between the two, not the kernel
-- (docs/results/h200-linear.md, "The Vulkan dot route": slow stretches of a Vulkan run).
lb.RETIME_TOLERANCE = 0.10

-- retime(dev, grp, p, o, row): times point p again, as measure did (no check: the same
-- buffers and route), and records it in its row: retime_us, retime_ratio (second /
-- first median) and unsteady where they differ by more than RETIME_TOLERANCE.
function lb.retime(dev, grp, p, o, row)
  if not row.median_us then return row end
  local us = cold_stats(time_call(dev, grp, p, o)).median_us
  row.retime_us, row.retime_ratio = us, us / row.median_us
  row.unsteady = math.abs(row.retime_ratio - 1) > lb.RETIME_TOLERANCE or nil
  return row
end

-- measure(dev, grp, p, o) -> row: the oracle check, then the cold timing of
-- one public call (and of the vendor GEMM), or the row of a point that failed.
-- o = {rule, flush, warmup, ceil, max_rows}
function lb.measure(dev, grp, p, o)
  local clock = require("gpu").clock
  local row = lb.describe(p)
  row.warmup = o.warmup
  local t0 = clock()
  local chk = linear.check(dev, grp.spec, grp.w, grp.x, grp.y, p.t,
    { max_rows = lb.check_rows(p.n, p.k, p.t, o.max_rows), route = o.route })
  row.route = chk.route
  row.check_rows, row.check_failures, row.check_worst = chk.rows, chk.failures, chk.worst
  if chk.failures > 0 then
    local f = chk.first
    row.status = "wrong"
    row.note = ("%d of %d outputs outside the bound, first t=%d n=%d: %.6g, reference %.6g, bound %.3g")
      :format(chk.failures, chk.rows * p.t, f.t, f.n, f.y, f.ref, f.bound)
    return row
  end
  local t1 = clock()
  row.check_s = t1 - t0 -- where a run's wall time goes: the check, our timing, the vendor's
  local res = time_call(dev, grp, p, o)
  row.time_s = clock() - t1
  local c = cold_stats(res)
  for k, v in pairs(c) do row[k] = v end
  row.spin_up_ms = res.spin_up and res.spin_up.ms or nil -- the SM clock brought up first (gpubench.clocks)
  row.status = res.converged == false and "not_converged" or "ok"
  lb.metrics(row, c.median_us, o.ceil)
  if grp.vendor then
    local t2 = clock()
    local ok, v = pcall(grp.vendor.measure, p, o)
    row.vendor_s = clock() - t2
    if ok then
      row.vendor_us, row.vendor_check = v.median_us, v.check
      if not v.median_us then
        row.vendor_note = ("outside the bound (%d outputs): not timed"):format(v.check.failures)
      end
      row.vendor_samples_us = v.samples_us
      row.vs_vendor = v.median_us and v.median_us / c.median_us or nil
      row.vendor_tflops = v.median_us and row.useful_flops / (v.median_us * 1e-6) / 1e12 or nil
    else
      row.vendor_note = tostring(v)
    end
  end
  return row
end

-- profile(dev, grp, p, o): one call between profiler start and stop.
function lb.profile(dev, grp, p, o)
  local chk = linear.check(dev, grp.spec, grp.w, grp.x, grp.y, p.t, { max_rows = lb.check_rows(p.n, p.k, p.t, o.max_rows) })
  if chk.failures > 0 then
    error(("linear_suite: the %s route fails the reference check (%d outputs): not profiled"):format(chk.route, chk.failures), 0)
  end
  local cell <close> = bench.cell(dev, { launches = linear.launches(dev, grp.spec, grp.w, grp.x, grp.y, p.t) })
  local name = ("linear %s %s %dx%d T=%d"):format(p.qtype, p.policy, p.n, p.k, p.t)
  cell:profile(name, { flush = o.flush })
  return name, chk.route
end

return lb
