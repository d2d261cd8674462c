-- gpubench.timing: the measurement methods, as functions over Lua callbacks.
--
-- Why each exists (the outside benchmarks' mistakes, docs/DESIGN.md):
--   two_point  - one blocking submit+wait per measurement costs a fixed round
--                trip; timing run(n) and dividing by n reports T + C/n, so
--                cheap cells look slow and the table depends on ITERS (cera's
--                wgpu_gemv_bench). t(2n) - t(n) cancels C; a difference too
--                small to resolve is "noise", never a number (cera once
--                printed many times its device's peak: docs/DESIGN.md).
--   cold       - a tight loop re-reads warm weights from L2 (AstrAI's SwiGLU
--                benchmark reported more than its DRAM bandwidth); flush L2 outside
--                the timed region and time exactly one call per sample
--                (ninfer's linear_bench contract).
--   rotation   - the alternative to flushing: cycle weight copies totalling at
--                least 4x L2, and refuse a rotation that would fit in L2.
--   graph      - capture n calls once and time replays, so launch overhead is
--                not charged to the kernel (AstrAI's CUDA Graph mode).
--
-- The pure functions (two_point, samples, cold, check_rotation) take callbacks
-- so they can be tested with a synthetic clock; the runner helpers bind them
-- to a device (batches, timers, L2 flush).

local stats = require "gpubench.stats"

local timing = {}

local MAX_COUNT = 0xFFFFFFFF -- launch counts travel as u32

local function check_count(v, what, who)
  if math.tointeger(v) == nil or v < 1 then
    error(("%s: %s must be a positive integer, got %s"):format(who, what, tostring(v)), 3)
  end
  return math.tointeger(v)
end

local function check_ms(v, what)
  if type(v) ~= "number" or v ~= v or v == math.huge or v == -math.huge or v < 0 then
    error(("%s returned %s, not a time in ms"):format(what, tostring(v)), 3)
  end
  return v
end

-- two_point(run, n [, opts]) -> ms_per_launch, details
--                             | nil, "noise", details
-- run(count) performs `count` launches in one submission and returns the
-- elapsed ms. The result is (t(2n) - t(n)) / n. It is "noise" when
-- t(2n) < min_ratio * t(n) (min_ratio 1.2: doubling the work must lengthen the
-- run by at least 20 %, i.e. n launches are at least ~1/4 of the fixed cost)
-- or when the difference is not positive. The test is on the ratio, not on
-- GB/s against a peak, because an L2-resident cell may legitimately beat DRAM
-- peak while "doubling the work did not lengthen the run" is always nonsense.
-- opts.warmup: launches of one untimed run(warmup) first (default none).
-- opts.max_n: on noise, retry with 2n, 4n, ... while the count stays <= max_n.
-- details = {n, t_n, t_2n, ratio, ms (nil when noise), noise (boolean),
-- attempts = {{n, t_n, t_2n}, ...}}; it is always the last result, so
-- `local d = select(-1, timing.two_point(run, n))` gets it either way.
function timing.two_point(run, n, opts)
  opts = opts or {}
  if type(run) ~= "function" then error("timing.two_point: run must be a function", 2) end
  n = check_count(n, "n", "timing.two_point")
  local min_ratio = opts.min_ratio or 1.2
  if type(min_ratio) ~= "number" or not (min_ratio > 1) then
    error(("timing.two_point: min_ratio must be > 1, got %s"):format(tostring(min_ratio)), 2)
  end
  local max_n = opts.max_n and check_count(opts.max_n, "max_n", "timing.two_point") or n
  if opts.warmup then
    check_ms(run(check_count(opts.warmup, "warmup", "timing.two_point")), "run(warmup)")
  end
  local attempts = {}
  while true do
    if 2 * n > MAX_COUNT then
      error(("timing.two_point: n = %d is too large: the second point runs 2n launches"):format(n), 2)
    end
    local t_n = check_ms(run(n), ("run(%d)"):format(n))
    local t_2n = check_ms(run(2 * n), ("run(%d)"):format(2 * n))
    attempts[#attempts + 1] = { n = n, t_n = t_n, t_2n = t_2n }
    local details = {
      n = n, t_n = t_n, t_2n = t_2n,
      ratio = t_n > 0 and t_2n / t_n or nil,
      attempts = attempts,
    }
    local diff = t_2n - t_n
    if diff > 0 and t_2n >= min_ratio * t_n then
      details.ms, details.noise = diff / n, false
      return details.ms, details
    end
    if 2 * n > max_n then
      details.noise = true
      return nil, "noise", details
    end
    n = 2 * n
  end
end

-- The noise rule median_of and fastest_of share. ds: two_point details
-- (d.ms nil when "noise"); label(i) names the i-th in an error. Returns
-- choose(resolved ones) when more than half resolved, else the last noise
-- one; either with d[field] = every one's ms in order (false for noise).
local function by_majority(ds, label, choose, field)
  local resolved, all, last_noise = {}, {}, nil
  for i, d in ipairs(ds) do
    if d.ms then
      check_ms(d.ms, label(i))
      resolved[#resolved + 1] = d
    else
      last_noise = d
    end
    all[i] = d.ms or false
  end
  local d = 2 * #resolved > #ds and choose(resolved) or last_noise
  d[field] = all
  return d
end

-- median_of(measure, reps) -> details
-- Runs measure() reps times; each returns a two_point details table (d.ms nil
-- when "noise"). Returns the details of the median resolved measurement (the
-- lower of the two middle ones for an even count), with d.repeats = every
-- measurement's ms in order (false for noise). Noise unless more than half
-- resolved: then the last noise details, with repeats; d.points = every
-- measurement's {n, t_n, t_2n}. Why: single two-point
-- timings of few-microsecond kernels move between runs of a table enough to
-- make forward and reversed tables disagree by chance; a median of three
-- does not follow one outlier (docs/results/h200-gemv.md, "Order dependence").
function timing.median_of(measure, reps)
  if type(measure) ~= "function" then error("timing.median_of: measure must be a function", 2) end
  reps = check_count(reps, "reps", "timing.median_of")
  local ds = {}
  for i = 1, reps do
    local d = measure()
    if type(d) ~= "table" then
      error(("timing.median_of: measure returned %s, not two_point details"):format(type(d)), 2)
    end
    ds[i] = d
  end
  local points = {}
  for i, d in ipairs(ds) do points[i] = { n = d.n, t_n = d.t_n, t_2n = d.t_2n } end
  local d = by_majority(ds, function() return "measure()" end, function(resolved)
    table.sort(resolved, function(a, b) return a.ms < b.ms end)
    return resolved[(#resolved + 1) // 2]
  end, "repeats")
  d.points = points -- every measurement's two times, in order
  return d
end

-- settle(run, n, ms) -> runs
-- run(n), untimed, until the times it returns add up to at least ms (once at
-- least); returns how many runs that took. Why by time: a count of launches
-- is microseconds for a small cell, and the state an earlier cell leaves can
-- outlast that by tens of milliseconds, L2 flush or not
-- (docs/results/h200-gemv.md, "Order dependence").
function timing.settle(run, n, ms)
  if type(run) ~= "function" then error("timing.settle: run must be a function", 2) end
  n = check_count(n, "n", "timing.settle")
  if type(ms) ~= "number" or ms ~= ms or ms < 0 or ms == math.huge then
    error(("timing.settle: ms must be a finite number >= 0, got %s"):format(tostring(ms)), 2)
  end
  local spent, runs = 0, 0
  repeat
    spent = spent + check_ms(run(n), ("run(%d)"):format(n))
    runs = runs + 1
  until spent >= ms
  return runs
end

-- fastest_of(ds) -> details
-- ds: one details table per runner (two_point_median's, d.ms nil when
-- "noise"), the same launches through batches built apart. Returns the
-- resolved one with the smallest ms, with d.runners = every runner's ms in
-- order (false for noise). Noise unless more than half resolved: then the
-- last noise details, with runners. Why the fastest: where a runner's batches
-- land only ever slows it (on the Vulkan driver runners of one small cell fall
-- into two classes, each the same run after run: docs/results/h200-gemv.md),
-- while the noise of a single timing, either way, is what the median within a
-- runner is for.
function timing.fastest_of(ds)
  if type(ds) ~= "table" or #ds == 0 then
    error("timing.fastest_of: a non-empty list of two_point details is required", 2)
  end
  for i, d in ipairs(ds) do
    if type(d) ~= "table" then
      error(("timing.fastest_of: runner %d's result is a %s, not two_point details"):format(i, type(d)), 2)
    end
  end
  return by_majority(ds, function(i) return "runner " .. i end, function(resolved)
    local best = resolved[1]
    for _, d in ipairs(resolved) do if d.ms < best.ms then best = d end end
    return best
  end, "runners")
end

-- two_point_median(run, n, reps [, opts]) -> details
-- One untimed run(opts.warmup) if given, then reps two-point timings at n,
-- one after the other (opts.min_ratio as two_point); the median as
-- median_of returns it.
function timing.two_point_median(run, n, reps, opts)
  local warmup = opts and opts.warmup
  local min_ratio = opts and opts.min_ratio
  return timing.median_of(function()
    local d = select(-1, timing.two_point(run, n, { warmup = warmup, min_ratio = min_ratio }))
    warmup = nil -- once: the repeats follow each other
    return d
  end, reps)
end

-- The stopping rule's defaults (an experiment's --max-noise, --min-samples,
-- --max-time, --samples): sample until the median's relative noise
-- (stats.median_noise) is at most max_noise, with at least min_samples and
-- at most max_time seconds per cell; samples = N takes exactly N instead.
timing.RULE = { max_noise = 0.005, min_samples = 20, max_time = 2.0, max_samples = 100000 }

-- rule(opts) -> a checked rule: opts' fields over timing.RULE's.
function timing.rule(opts)
  opts = opts or {}
  local r = {}
  for k, v in pairs(timing.RULE) do r[k] = opts[k] == nil and v or opts[k] end
  r.samples = opts.samples
  if r.samples ~= nil then check_count(r.samples, "samples", "timing.rule") end
  check_count(r.min_samples, "min_samples", "timing.rule")
  check_count(r.max_samples, "max_samples", "timing.rule")
  if type(r.max_noise) ~= "number" or not (r.max_noise > 0) then
    error(("timing.rule: max_noise must be a positive number, got %s"):format(tostring(r.max_noise)), 2)
  end
  if type(r.max_time) ~= "number" or not (r.max_time > 0) then
    error(("timing.rule: max_time must be a positive number of seconds, got %s"):format(tostring(r.max_time)), 2)
  end
  return r
end

-- sample_until(sample, rule [, clock]) -> samples, info
-- Calls sample() (each returns one finite number) until the rule is met:
-- with rule.samples, exactly that many; else until at least min_samples
-- and the median's noise is at most max_noise, or until max_time seconds
-- (clock(), default gpu.clock) or max_samples have passed -- then
-- info.converged is false. info = {n, noise, converged, elapsed, rule}.
function timing.sample_until(sample, rule, clock)
  if type(sample) ~= "function" then error("timing.sample_until: sample must be a function", 2) end
  rule = timing.rule(rule)
  clock = clock or require("gpu").clock
  local t0 = clock()
  local out = {}
  local function take()
    local v = sample()
    if type(v) ~= "number" or v ~= v or v == math.huge or v == -math.huge then
      error(("timing.sample_until: sample() returned %s, not a finite number"):format(tostring(v)), 3)
    end
    out[#out + 1] = v
  end
  if rule.samples then
    for _ = 1, rule.samples do take() end
    local stats = require "gpubench.stats"
    return out, { n = #out, noise = stats.median_noise(out), converged = true, fixed = true,
                  elapsed = clock() - t0, rule = rule }
  end
  local stats = require "gpubench.stats"
  local noise = math.huge
  while true do
    take()
    local n = #out
    if n >= rule.min_samples then
      noise = stats.median_noise(out)
      if noise <= rule.max_noise then
        return out, { n = n, noise = noise, converged = true, elapsed = clock() - t0, rule = rule }
      end
    end
    if clock() - t0 >= rule.max_time or n >= rule.max_samples then
      if n < rule.min_samples then noise = stats.median_noise(out) end
      return out, { n = n, noise = noise, converged = false, elapsed = clock() - t0, rule = rule }
    end
  end
end

-- two_point_until(run, n, rule [, opts]) -> details
-- Two-point timings at n, one after the other, until the stopping rule is
-- met over the resolved ones (their median's noise, at least min_samples
-- of them; a "noise" timing counts against the time cap only), then the
-- median as median_of returns it, with d.converged, d.noise and d.count.
-- rule.samples = N times exactly N, as two_point_median does.
function timing.two_point_until(run, n, rule, opts)
  rule = timing.rule(rule)
  if rule.samples then
    local d = timing.two_point_median(run, n, rule.samples, opts)
    d.converged, d.count = true, rule.samples
    return d
  end
  local stats = require "gpubench.stats"
  local clock = (opts and opts.clock) or require("gpu").clock
  local t0 = clock()
  local ds, ms = {}, {}
  local noise, converged = math.huge, false
  repeat
    local d = select(-1, timing.two_point(run, n, { min_ratio = opts and opts.min_ratio,
                                                     warmup = #ds == 0 and opts and opts.warmup or nil }))
    ds[#ds + 1] = d
    if d.ms then ms[#ms + 1] = d.ms end
    if #ms >= rule.min_samples then
      noise = stats.median_noise(ms)
      converged = noise <= rule.max_noise
    end
  until converged or clock() - t0 >= rule.max_time or #ds >= rule.max_samples
  local i = 0
  local d = timing.median_of(function() i = i + 1; return ds[i] end, #ds)
  if #ms > 0 and #ms < rule.min_samples then noise = stats.median_noise(ms) end
  d.converged, d.noise, d.count = converged, noise, #ds
  return d
end

-- Validates the sampling options shared by samples() and cold().
local function sample_opts(opts, who, default_warmup, default_repeat)
  local warmup = opts.warmup
  if warmup == nil then warmup = default_warmup end
  if math.tointeger(warmup) == nil or warmup < 0 then
    error(("%s: warmup must be an integer >= 0, got %s"):format(who, tostring(warmup)), 3)
  end
  local rep = check_count(opts["repeat"] or default_repeat, "repeat", who)
  local per = opts.per or 1
  if type(per) ~= "number" or not (per > 0) then
    error(("%s: per must be a positive number, got %s"):format(who, tostring(per)), 3)
  end
  local timer = opts.timer
  if type(timer) ~= "table" and type(timer) ~= "userdata" then
    error(("%s: a timer (start/stop/ms) is required"):format(who), 3)
  end
  return warmup, rep, per, timer
end

-- samples(call, opts) -> samples, summary
-- Runs call() `warmup` times untimed, then `repeat` times, each between
-- timer:start() and timer:stop(); opts.flush() (if any) runs before each
-- start, so its cost is never inside the timed region. Every sample is kept
-- (ms per call, divided by opts.per).
function timing.samples(call, opts)
  opts = opts or {}
  if type(call) ~= "function" then error("timing.samples: call must be a function", 2) end
  local warmup, rep, per, timer = sample_opts(opts, "timing.samples", 0, 20)
  local flush = opts.flush
  for _ = 1, warmup do call() end
  local out = {}
  for i = 1, rep do
    if flush then flush() end
    timer:start()
    call()
    timer:stop()
    out[i] = check_ms(timer:ms(), "timer:ms()") / per
  end
  return out, stats.summary(out)
end

-- cold(call, opts) -> samples, summary
-- Cold-cache sampling (ninfer's contract): warmup calls (default 3), then
-- per sample (default 20) an L2 flush that completes before the start
-- timestamp, and device timestamps around exactly one call.
-- opts.device: a gpu device; supplies flush (dev:flush_l2) and a timer
-- (created and freed here) unless opts.flush / opts.timer are given.
function timing.cold(call, opts)
  opts = opts or {}
  local dev = opts.device
  local flush, timer = opts.flush, opts.timer
  local own_timer
  if dev then
    flush = flush or function() dev:flush_l2() end
    if not timer then own_timer = dev:timer(); timer = own_timer end
  end
  if type(flush) ~= "function" then
    if own_timer then own_timer:free() end
    error("timing.cold: an L2 flush (opts.flush or opts.device) is required", 2)
  end
  local o = {
    warmup = opts.warmup == nil and 3 or opts.warmup,
    ["repeat"] = opts["repeat"] or 20,
    per = opts.per, timer = timer, flush = flush,
  }
  local ok, samples, summary = pcall(timing.samples, call, o)
  if own_timer then own_timer:free() end
  if not ok then error(samples, 0) end
  return samples, summary
end

-- check_rotation(total_bytes, l2_bytes [, factor = 4])
-- Errors unless the rotated copies total at least factor x L2: a rotation
-- that fits in L2 measures L2 bandwidth while claiming to be cold.
function timing.check_rotation(total_bytes, l2_bytes, factor)
  factor = factor or 4
  if math.tointeger(l2_bytes) == nil or l2_bytes <= 0 then
    error("timing.check_rotation: the device's L2 size is unknown (0); "
      .. "pass l2_bytes explicitly to check that the rotation exceeds L2", 2)
  end
  if total_bytes < factor * l2_bytes then
    error(("rotation of %d bytes would fit in L2 (%d bytes): it needs at least %gx L2 = %d bytes")
      :format(total_bytes, l2_bytes, factor, math.ceil(factor * l2_bytes)), 2)
  end
  return true
end

-- rotation(copy_bytes, l2_bytes [, factor = 4]) -> copies, total_bytes
-- The number of weight copies (at least 2) whose total reaches factor x L2.
function timing.rotation(copy_bytes, l2_bytes, factor)
  factor = factor or 4
  check_count(copy_bytes, "copy_bytes", "timing.rotation")
  if math.tointeger(l2_bytes) == nil or l2_bytes <= 0 then
    error("timing.rotation: the device's L2 size is unknown (0); pass l2_bytes explicitly", 2)
  end
  local copies = math.max(2, math.ceil(factor * l2_bytes / copy_bytes))
  timing.check_rotation(copies * copy_bytes, l2_bytes, factor)
  return copies, copies * copy_bytes
end

-- ------------------------------------------------------------ device runners

-- Most launches one batch cycles through (GB_MAX_LAUNCHES in host/core/backend.h).
local has_gpu, gpu_module = pcall(require, "gpu")
timing.MAX_LAUNCHES = has_gpu and gpu_module.max_launches or 4096

local Runner = {}
Runner.__index = Runner

-- runner(dev, launches [, opts]) -> runner with runner:run(count), runner:close()
-- launches: a list of {kernel, grid, block, args...}; run(count) performs
-- `count` launches cycling through the list in ONE submission (a gpu batch,
-- built once per count and submitted once untimed when built, so pipeline
-- creation and first touch are never timed) and returns the elapsed ms.
-- opts.graph: replay a CUDA graph / pre-recorded command buffer.
-- opts.clock: "device" (timestamps around the submission, default) or "host"
-- (gpu.clock around submit + sync, cera's wall-clock method).
-- opts.rotation = {copy_bytes =, l2_bytes =}: checks the launches rotate
-- through at least 4x L2 (one copy per launch).
-- run(count) and batch(count) refuse count < #launches: each submission starts
-- at the first launch, so the tail of the list would never run.
-- no_overlap(dev) -> why dev cannot overlap launches, or nil when it can.
function timing.no_overlap(dev)
  if dev.launch_overlap then return nil end
  return ("launch overlap needs programmatic dependent launch (CUDA, sm_90 or later); %s (%s%s) has none")
    :format(tostring(dev.name), tostring(dev.backend), (dev.arch or "") ~= "" and (" " .. dev.arch) or "")
end

-- overlaps(dev, launches, want) -> whether a batch of launches asks for
-- launch overlap: want, and some launch's kernel declares it (k.overlap), so
-- its launches may start while the launch before them finishes
-- (docs/LUA_API.md, "Batches"); launches of none of them run plain. Wanting
-- it on a device without it is an error.
function timing.overlaps(dev, launches, want)
  if not want then return false end
  local why = timing.no_overlap(dev)
  if why then error(why, 0) end
  for _, l in ipairs(launches) do
    if type(l[1]) == "userdata" and l[1].overlap == true then return true end
  end
  return false
end

function timing.runner(dev, launches, opts)
  opts = opts or {}
  if type(launches) ~= "table" or #launches == 0 then
    error("timing.runner: a non-empty list of launches {kernel, grid, block, args...} is required", 2)
  end
  if #launches > timing.MAX_LAUNCHES then
    error(("timing.runner: %d launches in one batch; at most %d (use larger copies)")
      :format(#launches, timing.MAX_LAUNCHES), 2)
  end
  local clock = opts.clock or "device"
  if clock ~= "device" and clock ~= "host" then
    error(("timing.runner: clock must be \"device\" or \"host\", got %q"):format(tostring(clock)), 2)
  end
  if opts.rotation then
    local r = opts.rotation
    timing.check_rotation(#launches * r.copy_bytes, r.l2_bytes or dev.l2_bytes)
  end
  local ok, overlap = pcall(timing.overlaps, dev, launches, opts.overlap)
  if not ok then error("timing.runner: " .. overlap, 2) end
  local self = setmetatable({
    dev = dev, launches = launches, graph = opts.graph and true or false, overlap = overlap,
    clock = clock, batches = {}, order = {},
  }, Runner)
  if clock == "device" then self.timer = dev:timer() end
  return self
end

function Runner:batch(count)
  local b = self.batches[count]
  if b then return b end
  -- Every submission starts at the first launch, so a count below the list's
  -- length never runs the rest: a rotation over N weight copies timed with
  -- n < N launches cycles through only n copies, which may fit in L2 while
  -- the cell claims DRAM. Refuse it rather than measure something else.
  if count < #self.launches then
    error(("timing runner: %d launches per submission would run only %d of the %d launches it "
      .. "cycles through (a rotation needs at least one launch per copy); use a count >= %d")
      :format(count, count, #self.launches, #self.launches), 3)
  end
  local spec = { count = count, graph = self.graph, overlap = self.overlap }
  for i, l in ipairs(self.launches) do spec[i] = l end
  b = self.dev:batch(spec)
  self.batches[count] = b
  self.order[#self.order + 1] = count
  b:submit()
  self.dev:sync()
  return b
end

function Runner:run(count)
  if self.closed then error("timing runner used after close", 2) end
  count = check_count(count, "count", "runner:run")
  if count > MAX_COUNT then error(("runner:run: count %d exceeds 2^32 - 1"):format(count), 2) end
  local b = self:batch(count)
  if self.clock == "device" then
    self.timer:start()
    b:submit()
    self.timer:stop()
    return self.timer:ms()
  end
  local gpu = require "gpu"
  self.dev:sync()
  local t0 = gpu.clock()
  b:submit()
  self.dev:sync()
  return (gpu.clock() - t0) * 1e3
end

-- A run function for two_point: function(count) return runner:run(count) end.
function Runner:fn()
  return function(count) return self:run(count) end
end

function Runner:close()
  if self.closed then return end
  self.closed = true
  for _, count in ipairs(self.order) do self.batches[count]:free() end
  self.batches = {}
  if self.timer then self.timer:free() end
end
Runner.__close = Runner.close

-- graph_replay(dev, launches, opts) -> samples, summary
-- Captures opts.n calls (default 100) once as a graph and times replays with
-- device timestamps; samples are ms per call. opts.cold = true flushes L2
-- before each replay (outside the timed region). warmup 3, repeat 20.
function timing.graph_replay(dev, launches, opts)
  opts = opts or {}
  local n = check_count(opts.n or 100, "n", "timing.graph_replay")
  local r <close> = timing.runner(dev, launches, { graph = true })
  local b = r:batch(n)
  return timing.samples(function() b:submit() end, {
    warmup = opts.warmup == nil and 3 or opts.warmup,
    ["repeat"] = opts["repeat"] or 20,
    per = n, timer = r.timer,
    flush = opts.cold and function() dev:flush_l2() end or nil,
  })
end

return timing
