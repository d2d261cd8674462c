-- gpubench.bench: the cell-timing layer every experiment times through.
--
-- A bench cell is what one table cell times: a logical call made of one or
-- more launches (several kernels, several buffers), optionally rotated over
-- distinct buffer sets so that consecutive calls read different memory. The
-- cell carries the policy that makes its number independent of the cells
-- around it (docs/results/h200-gemv.md, "Order dependence", has the evidence):
--   flush    each timing starts from a flushed L2, so no cell inherits the
--            state the one before it left;
--   settle   then settle_ms of the cell's own untimed calls;
--   runners  `runners` runners, each with its own graphs or command buffers:
--            a runner's time is the median of `repeats` two-point timings,
--            the cell's the fastest runner's (where a batch lands can only
--            slow it down);
--   arm      every batch is built before the first timed round, in table
--            order, so no timed round allocates.
-- bench.policy holds the defaults; bench.describe() writes the footnote a
-- table prints about them.
--
--   local cell <close> = bench.cell(dev, { launches = { {k, grid, block, a, b, n} } })
--   local cell <close> = bench.cell(dev, { sets = sets, set_bytes = bytes, rotation = { l2_bytes = l2 } })
--   cell:arm(iters)            -- before the rounds
--   local d, n = cell:time(iters)   -- d.ms per call (nil when "noise")

local timing = require "gpubench.timing"

local bench = {}

-- The defaults of Cell:time and Cell:arm, overridable per call.
bench.policy = {
  flush = true,     -- flush L2 before each timing (true: the clean flush; or "clean", "write")
  settle_ms = 50,   -- then this many ms of the cell's own untimed calls
  runners = 5,      -- runners per cell, each with its own batches
  repeats = 3,      -- two-point timings per runner (its median kept)
  graph = true,     -- submit through a graph / pre-recorded command buffer
  overlap = false,  -- let launches overlap the one before (timing.runner's overlap)
  clock = "device", -- "device" timestamps or "host" wall clock around each submission
  min_ratio = 1.2,  -- t(2n) < min_ratio t(n) is "noise"
  point_ms = nil,   -- when set, n is lowered so that a point's n calls take about this many ms (Cell:calls)
}

local function option(opts, name)
  local v = opts[name]
  if v == nil then v = bench.policy[name] end
  return v
end

local Cell = {}
Cell.__index = Cell

local function check_launch_list(list, what)
  if type(list) ~= "table" or #list == 0 then
    error(("bench.cell: %s must be a non-empty list of launches {kernel, grid, block, args...}"):format(what), 3)
  end
  for i, l in ipairs(list) do
    if type(l) ~= "table" then
      error(("bench.cell: %s[%d] is a %s, not a launch {kernel, grid, block, args...}"):format(what, i, type(l)), 3)
    end
  end
end

-- Flattens calls (each a list of launches, all of one length) into the list
-- a runner cycles through; returns it and the launches per call.
local function flatten(sets, what)
  check_launch_list(sets, what)
  local per_call = nil
  local flat = {}
  for i, set in ipairs(sets) do
    check_launch_list(set, ("%s[%d]"):format(what, i))
    if per_call and #set ~= per_call then
      error(("bench.cell: %s[%d] has %d launches, %s[1] %d: every call must launch the same kernels")
        :format(what, i, #set, what, per_call), 3)
    end
    per_call = #set
    for _, l in ipairs(set) do flat[#flat + 1] = l end
  end
  if #flat > timing.MAX_LAUNCHES then
    error(("bench.cell: %d calls of %d launches are %d launches, more than the %d a batch can cycle "
      .. "through (use larger sets)"):format(#sets, per_call, #flat, timing.MAX_LAUNCHES), 3)
  end
  return flat, per_call
end

-- cell(dev, spec) -> cell
-- spec.launches: the launches of one call (a single set), or
-- spec.sets: a list of calls, each a list of launches over its own buffers;
--   consecutive calls cycle through the sets.
-- spec.set_bytes and spec.rotation = {l2_bytes =, factor = 4}: refuse sets
--   that do not total factor x L2 (a rotation that fits in L2 measures L2).
-- spec.buffers: buffers the cell owns, freed by close.
-- spec.working_set: bytes resident between calls (default #sets x set_bytes).
function bench.cell(dev, spec)
  if type(spec) ~= "table" then error("bench.cell: a spec table is required", 2) end
  local sets = spec.sets
  if spec.launches then
    if sets then error("bench.cell: give launches (one call) or sets (rotated calls), not both", 2) end
    sets = { spec.launches }
  end
  local flat, per_call = flatten(sets, spec.launches and "launches" or "sets")
  if spec.rotation then
    local r = spec.rotation
    if math.tointeger(spec.set_bytes) == nil or spec.set_bytes < 1 then
      error("bench.cell: a rotation needs set_bytes, the bytes one set occupies", 2)
    end
    timing.check_rotation(#sets * spec.set_bytes, r.l2_bytes or dev.l2_bytes, r.factor)
  end
  return setmetatable({
    dev = dev, launches = flat, per_call = per_call, copies = #sets,
    set_bytes = spec.set_bytes, buffers = spec.buffers or {},
    working_set = spec.working_set or (spec.set_bytes and #sets * spec.set_bytes),
  }, Cell)
end

local function runner_key(n, count, opts)
  return ("%d|%d|%s|%s|%s"):format(n, count, tostring(option(opts, "clock")), tostring(option(opts, "graph")),
    tostring(option(opts, "overlap")))
end

-- The options of a runner (timing.runner) under opts and the policy.
local function runner_opts(opts)
  return { clock = option(opts, "clock"), graph = option(opts, "graph"), overlap = option(opts, "overlap") }
end

local function close_all(rs)
  for _, r in ipairs(rs) do r:close() end
end

-- Runners over `launches`, made into rs, so a failure part-way leaves the ones made to close.
local function add_runners(rs, dev, launches, count, opts)
  for i = 1, count do
    rs[i] = timing.runner(dev, launches, runner_opts(opts))
  end
end

-- A run(calls) function over a runner: calls x per_call launches, one submission.
local function per_call_fn(r, per_call)
  local run = r:fn()
  if per_call == 1 then return run end
  return function(calls) return run(calls * per_call) end
end

-- probe_ms(opts) -> ms of one call: one call per set, timed on a runner of
-- its own (making the batch ran them once, untimed), over the set count;
-- once per cell, then kept.
function Cell:probe_ms(opts)
  if not self.probed then
    local r = timing.runner(self.dev, self.launches, runner_opts(opts))
    local ok, ms = pcall(function() return per_call_fn(r, self.per_call)(self.copies) / self.copies end)
    r:close()
    if not ok then error(ms, 0) end
    self.probed = ms
  end
  return self.probed
end

-- The calls a timing at `iters` performs: at least one per set, since every
-- submission starts at the first set and fewer calls would rotate through
-- only some of them (perhaps inside L2). With opts.point_ms, fewer than
-- iters where iters calls would take longer than that (one call timed by
-- probe_ms): a slow cell's points still last point_ms, far above the
-- timestamps' resolution, without spending iters of its calls on each.
function Cell:calls(iters, opts)
  opts = opts or {}
  local point_ms = option(opts, "point_ms")
  if point_ms then
    local one = self:probe_ms(opts)
    if one > 0 and iters * one > point_ms then iters = math.max(1, math.ceil(point_ms / one)) end
  end
  return math.max(iters, self.copies)
end

-- time(iters [, opts]) -> details, n
-- Two-point timing per call with n = calls(iters), through opts.runners
-- runners, after the flush and the settle (see the header; every option
-- defaults to bench.policy). opts.launches or opts.sets time other launches
-- of the same shape instead of the cell's own (not armed). Returns the
-- fastest runner's details: d.ms per call (nil when "noise"), d.t_n, d.t_2n,
-- d.repeats (its timings), d.runners (every runner's median); and n.
function Cell:time(iters, opts)
  opts = opts or {}
  if self.closed then error("bench: cell used after close", 2) end
  local n = self:calls(iters, opts)
  local count = option(opts, "runners")
  local reps = option(opts, "repeats")
  local launches, per_call = self.launches, self.per_call
  local other = opts.launches or opts.sets
  if other then
    launches, per_call = flatten(opts.sets or opts.launches, "opts.sets")
    if opts.launches then per_call = 1 end
  end
  local armed = not other and self.armed and self.armed.key == runner_key(n, count, opts)
  local rs = armed and self.armed.runners or {}
  local ok, d = pcall(function()
    if not armed then add_runners(rs, self.dev, launches, count, opts) end
    local spun = require("gpubench.clocks").spin_up(self.dev) -- the SM clock up first (gpubench.clocks)
    local flush = option(opts, "flush")
    if flush then self.dev:flush_l2(flush == true and "clean" or flush) end
    -- warmed once, by the first runner: the runners follow each other
    timing.settle(per_call_fn(rs[1], per_call), n, option(opts, "settle_ms"))
    local ds = {}
    for i, r in ipairs(rs) do
      local run, o = per_call_fn(r, per_call), { min_ratio = option(opts, "min_ratio"), clock = opts.host_clock }
      if opts.rule then -- the stopping rule over each runner's repeats
        ds[i] = timing.two_point_until(run, n, opts.rule, o)
      else
        ds[i] = timing.two_point_median(run, n, reps, o)
      end
    end
    local d = timing.fastest_of(ds)
    if opts.rule then
      d.converged = true
      for _, x in ipairs(ds) do d.converged = d.converged and x.converged end
    end
    -- every runner's every timing, both points: the raw material of the result
    d.timings = {}
    for i, x in ipairs(ds) do d.timings[i] = x.points end
    d.spin_up = spun
    return d
  end)
  if not armed then close_all(rs) end
  if not ok then error(d, 0) end
  return d, n
end

-- arm(iters [, opts]): makes now what time(iters, opts) will submit -- its
-- runners and their batches of n and 2n calls, each submitted once -- and
-- keeps them until close or an arm for another count.
function Cell:arm(iters, opts)
  opts = opts or {}
  if self.closed then error("bench: cell used after close", 2) end
  if opts.method == "cold" then return self:arm_cold() end
  local n = self:calls(iters, opts)
  local count = option(opts, "runners")
  local key = runner_key(n, count, opts)
  if self.armed and self.armed.key == key then return end
  if self.armed then close_all(self.armed.runners); self.armed = nil end
  local rs = {}
  local ok, err = pcall(function()
    add_runners(rs, self.dev, self.launches, count, opts)
    for _, r in ipairs(rs) do r:batch(n * self.per_call); r:batch(2 * n * self.per_call) end
  end)
  if not ok then close_all(rs); error(err, 0) end
  self.armed = { key = key, runners = rs }
end

function Cell:close()
  if self.closed then return end
  self.closed = true
  if self.armed then close_all(self.armed.runners); self.armed = nil end
  if self.cold_batch then self.cold_batch:free(); self.cold_timer:free(); self.cold_batch = nil end
  for _, b in ipairs(self.buffers) do b:free() end
  self.buffers = {}
end
Cell.__close = Cell.close

-- ------------------------------------------------------------ cold sampling

-- The batch and timer a cold sample submits: one call (the first set).
function Cell:arm_cold()
  if self.closed then error("bench: cell used after close", 2) end
  if self.cold_batch then return end
  local spec = { count = self.per_call, graph = true }
  for i = 1, self.per_call do spec[i] = self.launches[i] end
  self.cold_batch = self.dev:batch(spec)
  self.cold_timer = self.dev:timer()
  self.cold_batch:submit()
  self.dev:sync()
end

-- Times one call per sample, cold: per sample (batch:cold_sample) the L2
-- flush (opts.flush: "clean", the default, or "write"), the start
-- timestamp, the call and the stop timestamp are queued behind a held
-- stream, so that nothing but device work lies between the timestamps.
-- The SM clock is brought up first where it fell (clocks.spin_up), then
-- opts.warmup (3) calls; then samples by the stopping rule
-- (opts.rule, timing.rule's fields). Returns
-- {ms = median, samples, summary (stats.summary), n, noise, converged,
--  held, flush, fixed_ms, fixed_samples, spin_up}: fixed_ms is the timer's
-- residual, the median of an empty kernel timed the same way
-- (bench.fixed_cost); spin_up what clocks.spin_up did (nil: nothing).
function Cell:cold(opts)
  opts = opts or {}
  local stats = require "gpubench.stats"
  self:arm_cold()
  local flush = opts.flush or "clean"
  local hold = opts.hold ~= false
  local spun = require("gpubench.clocks").spin_up(self.dev) -- the SM clock up first (gpubench.clocks)
  for _ = 1, opts.warmup or 3 do self.cold_batch:cold_sample(self.cold_timer, { flush = flush, hold = hold }) end
  local held = false
  local samples, info = timing.sample_until(function()
    local ms, h = self.cold_batch:cold_sample(self.cold_timer, { flush = flush, hold = hold })
    held = h
    return ms
  end, opts.rule, opts.clock)
  local fixed = bench.fixed_cost(self.dev, opts)
  return {
    ms = stats.median(samples), samples = samples, summary = stats.summary(samples), n = info.n,
    noise = info.noise, converged = info.converged, held = held, flush = flush,
    fixed_ms = fixed.ms, fixed_samples = fixed.samples, spin_up = spun,
  }
end

-- profile(name [, opts]): one call of the cell between profiler start and
-- stop, for `ncu --profile-from-start off`: warmed up and flushed (opts.flush,
-- "clean") first, so the profiler sees exactly one cold call, inside a
-- profiler range (an NVTX range on CUDA, a debug label on Vulkan) named
-- after the cell.
function Cell:profile(name, opts)
  opts = opts or {}
  self:arm_cold()
  for _ = 1, 3 do self.cold_batch:submit() end
  -- flushed as a cold sample is (after the warm-up calls' flushes, whose
  -- first ones also settle the flush buffer itself: host/core/flush.c)
  for _ = 1, 4 do self.dev:flush_l2(opts.flush or "clean") end
  self.dev:profiler_start(name)
  local ok, err = pcall(function()
    self.cold_batch:submit()
    self.dev:sync()
  end)
  self.dev:profiler_stop()
  if not ok then error(err, 0) end
end

-- fixed_cost(dev [, opts]) -> {ms, samples}: an empty kernel timed as a
-- cold sample is (flush, hold, timestamps around one launch), the median of
-- 20 samples, once per device, flush kind and hold; what a cold cell's time
-- contains besides its call.
local fixed_cache = setmetatable({}, { __mode = "k" })
function bench.fixed_cost(dev, opts)
  opts = opts or {}
  local key = ("%s|%s"):format(opts.flush or "clean", tostring(opts.hold ~= false))
  local per_dev = fixed_cache[dev]
  if not per_dev then per_dev = {}; fixed_cache[dev] = per_dev end
  if per_dev[key] then return per_dev[key] end
  local kernels = require "gpubench.kernels"
  local stats = require "gpubench.stats"
  local k <close> = kernels.load(dev, "empty")
  local out <close> = dev:buffer(16)
  local b <close> = dev:batch { count = 1, graph = true, { k, 1, 1, out, 0 } }
  local t <close> = dev:timer()
  local o = { flush = opts.flush or "clean", hold = opts.hold ~= false }
  for _ = 1, 3 do b:cold_sample(t, o) end
  local samples = {}
  for i = 1, 20 do samples[i] = b:cold_sample(t, o) end
  local r = { ms = stats.median(samples), samples = samples }
  per_dev[key] = r
  return r
end

-- rotation_sets(set_bytes, l2_bytes, make_set [, factor = 4]) -> sets, copies
-- The calls of a rotation: make_set(i) for i = 1..copies, copies the
-- smallest count (at least 2) whose sets total factor x L2. Refuses a
-- rotation that needs more launches than a batch can cycle through.
function bench.rotation_sets(set_bytes, l2_bytes, make_set, factor, launches_per_set)
  local copies = timing.rotation(set_bytes, l2_bytes, factor)
  local per = launches_per_set or 1
  if copies * per > timing.MAX_LAUNCHES then
    error(("bench: rotating %d-byte sets through %g x L2 needs %d copies, more than the %d launches a "
      .. "batch can cycle through"):format(set_bytes, factor or 4, copies, timing.MAX_LAUNCHES), 2)
  end
  local sets = {}
  for i = 1, copies do sets[i] = make_set(i) end
  return sets, copies
end

-- ready(dev): call once every cell is armed, before the first timed round:
-- allocates what a timing uses (the L2-flush buffer, made on first use) and
-- waits for the device, so that no allocation falls inside a timed round
-- (allocations during a round have slowed the next cells on Vulkan).
function bench.ready(dev)
  dev:flush_l2()
  dev:sync()
end

-- describe([opts]) -> the footnote naming the method: what a cell's time
-- is, with the policy values in effect (opts overrides as in Cell:time).
-- opts.iters (the n of the table) and opts.rotate (n raised to the copy count).
function bench.describe(opts)
  opts = opts or {}
  local parts = {}
  parts[#parts + 1] = ("time per call = (t(2n) - t(n)) / n%s"):format(
    opts.iters and (" with n = %d%s%s"):format(opts.iters, option(opts, "point_ms")
      and (", fewer where n calls would take over %g ms (one call timed first; each row's iters is its n)")
        :format(option(opts, "point_ms")) or "",
      opts.rotate and " (at least the cell's copy count)" or "") or "")
  parts[#parts + 1] = ("%s clock, one %s submission per point%s"):format(option(opts, "clock"),
    option(opts, "graph") and "graph-replay" or "stream", option(opts, "overlap")
      and ", each launch of a kernel that declares launch overlap free to start while the one before it finishes"
      or "")
  if opts.method == "cold" then
    local rule = opts.rule or {}
    return "* " .. table.concat({
      ("time per call = one call between device timestamps, after a %s L2 flush (%s), all queued behind a held stream")
        :format(opts.flush or "clean", (opts.flush or "clean") == "clean" and "a read pass over 2x L2: only clean lines left"
          or "a memset of 2x L2: dirty lines left"),
      rule.samples and ("%d samples after 3 warm-up calls, the median reported"):format(rule.samples)
        or ("after 3 warm-up calls, samples until the median's relative noise is <= %g %% (at least %d, at most %g s; "
          .. "\"not_converged\" otherwise), the median reported"):format(100 * (rule.max_noise or timing.RULE.max_noise),
          rule.min_samples or timing.RULE.min_samples, rule.max_time or timing.RULE.max_time),
      "fixed: the same timing of an empty kernel (the timer's residual, not subtracted)",
    }, "; ")
  end
  if option(opts, "flush") then
    local f = option(opts, "flush")
    parts[#parts + 1] = ("after a%s L2 flush and %g ms of the cell's own untimed calls")
      :format(f == "write" and " write" or " clean", option(opts, "settle_ms"))
  else
    parts[#parts + 1] = ("after %g ms of the cell's own untimed calls (no L2 flush)"):format(option(opts, "settle_ms"))
  end
  local rule = opts.rule
  parts[#parts + 1] = ("a cell's time is the fastest of %d runners (each its own graphs or command buffers), "
    .. "a runner's the median of %s such timings"):format(option(opts, "runners"),
      rule and not rule.samples and ("as many as its median's noise needs (<= %g %%, at least %d, at most %g s)")
        :format(100 * rule.max_noise, rule.min_samples, rule.max_time)
      or tostring(rule and rule.samples or option(opts, "repeats")))
  parts[#parts + 1] = ("\"noise\": t(2n) < %g t(n) in half of them or more, raise the iterations")
    :format(option(opts, "min_ratio"))
  return "* " .. table.concat(parts, "; ")
end

return bench
