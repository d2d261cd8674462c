-- gpubench.bench (the cell-timing layer) and cells.table, on a fake device
-- with a synthetic clock: every launch costs LAUNCH_MS of device time, and
-- every submission a fixed SUBMIT_MS that the two-point timing must cancel.
-- The fake records what was asked of it (batches and their counts, flushes,
-- timers), so the policy -- flush, settle, runners, repeats, arming -- is
-- checked exactly. A small run on the Vulkan device (lavapipe in CI) checks
-- the same layer against real batches.

local t = dofile("tests/lua/harness.lua")
local bench = require "gpubench.bench"
local cells = require "gpubench.cells"

local LAUNCH_MS, SUBMIT_MS = 0.25, 3.0

-- A launch description of the fake: only its identity matters.
local function launch(name) return { name, 1, 1 } end

local function fake_device(l2)
  local log = { batches = {}, flushes = 0, syncs = 0, timers = 0, freed = 0, submitted = {} }
  local clock = 0
  local dev = { l2_bytes = l2 or 0, log = log }
  function dev:flush_l2() log.flushes = log.flushes + 1 end
  function dev:sync() log.syncs = log.syncs + 1 end
  function dev:timer()
    log.timers = log.timers + 1
    local tm = {}
    function tm:start() self.t0 = clock end
    function tm:stop() self.t1 = clock end
    function tm:ms() return self.t1 - self.t0 end
    function tm:free() log.freed = log.freed + 1 end
    return tm
  end
  function dev:batch(spec)
    local b = { count = spec.count, launches = #spec }
    log.batches[#log.batches + 1] = b
    function b:submit()
      clock = clock + SUBMIT_MS + LAUNCH_MS * spec.count
      log.submitted[#log.submitted + 1] = spec.count
    end
    function b:free() log.freed = log.freed + 1; self.freed = true end
    return b
  end
  return dev
end

t.test("time: ms per call for a call of several launches, the fixed cost cancelled", function()
  local dev = fake_device()
  local cell <close> = bench.cell(dev, { launches = { launch "gate", launch "up", launch "silu" } })
  t.eq(cell.per_call, 3)
  local d, n = cell:time(8, { settle_ms = 0 })
  t.eq(n, 8)
  t.near(d.ms, 3 * LAUNCH_MS, 1e-12, "three launches per call")
  t.eq(d.t_n, SUBMIT_MS + 8 * 3 * LAUNCH_MS)
  t.eq(#d.runners, bench.policy.runners)
  t.eq(#d.repeats, bench.policy.repeats)
  -- each runner built one batch of n calls and one of 2n, in launches
  t.eq(#dev.log.batches, 2 * bench.policy.runners)
  t.eq({ dev.log.batches[1].count, dev.log.batches[2].count }, { 24, 48 })
  t.eq(dev.log.batches[1].launches, 3)
end)

t.test("time: the L2 flushed once per timing, then settle_ms of untimed calls", function()
  local dev = fake_device()
  local cell <close> = bench.cell(dev, { launches = { launch "a" } })
  cell:arm(4)
  local before = #dev.log.submitted
  cell:time(4, { settle_ms = 10 })
  t.eq(dev.log.flushes, 1)
  -- settle: runs of n = 4 calls (4.0 ms each) until 10 ms are spent: 3 runs,
  -- then runners x repeats x (n, 2n)
  local expect = 3 + bench.policy.runners * bench.policy.repeats * 2
  t.eq(#dev.log.submitted - before, expect)
  cell:time(4, { flush = false, settle_ms = 0 })
  t.eq(dev.log.flushes, 1, "flush = false skips it")
end)

t.test("sets: consecutive calls rotate over buffer sets; n is at least the set count", function()
  local dev = fake_device(1000)
  local sets = {}
  for i = 1, 5 do sets[i] = { launch("w" .. i), launch("act" .. i) } end
  local cell <close> = bench.cell(dev, { sets = sets, set_bytes = 1000, rotation = { l2_bytes = 1000 } })
  t.eq({ cell.copies, cell.per_call, #cell.launches }, { 5, 2, 10 })
  t.eq(cell.working_set, 5000)
  local d, n = cell:time(2, { settle_ms = 0, runners = 1, repeats = 1 })
  t.eq(n, 5, "every set at least once per submission")
  t.near(d.ms, 2 * LAUNCH_MS, 1e-12)
  t.eq(dev.log.batches[1].count, 10)
end)

t.test("sets: a rotation inside L2 and uneven calls are refused", function()
  local dev = fake_device(1000)
  local sets = { { launch "a" }, { launch "b" } }
  t.errors(function() bench.cell(dev, { sets = sets, set_bytes = 1000, rotation = { l2_bytes = 1000 } }) end,
    "would fit in L2", true)
  t.errors(function() bench.cell(dev, { sets = sets, rotation = { l2_bytes = 1000 } }) end, "needs set_bytes", true)
  t.errors(function() bench.cell(dev, { sets = { { launch "a" }, { launch "b", launch "c" } } }) end,
    "sets[2] has 2 launches, sets[1] 1", true)
  t.errors(function() bench.cell(dev, { launches = {} }) end, "non-empty list", true)
  t.errors(function() bench.cell(dev, { launches = { launch "a" }, sets = sets }) end, "not both", true)
end)

t.test("rotation_sets: the fewest copies (at least 2) totalling 4 x L2", function()
  local made = {}
  local sets, copies = bench.rotation_sets(300, 1000, function(i) made[#made + 1] = i; return { launch(i) } end)
  t.eq(copies, 14) -- ceil(4000 / 300)
  t.eq(#sets, 14); t.eq(made[14], 14)
  t.eq(select(2, bench.rotation_sets(1 << 20, 1000, function(i) return { launch(i) } end)), 2)
  t.errors(function() bench.rotation_sets(1, 1 << 20, function() return {} end) end, "launches a batch", true)
end)

t.test("arm: batches made up front, reused by time, re-armed for another count, freed by close", function()
  local dev = fake_device()
  local cell = bench.cell(dev, { launches = { launch "a" } })
  local R = bench.policy.runners
  cell:arm(4)
  t.eq(#dev.log.batches, 2 * R)
  cell:time(4, { settle_ms = 0 })
  t.eq(#dev.log.batches, 2 * R, "time built no batch")
  cell:arm(4)
  t.eq(#dev.log.batches, 2 * R, "arming again for the same count is free")
  cell:time(8, { settle_ms = 0 }) -- another count: runners of its own, freed after
  t.eq(#dev.log.batches, 4 * R)
  cell:arm(8)
  t.eq(#dev.log.batches, 6 * R)
  local armed = cell.armed.runners
  cell:close()
  for i, r in ipairs(armed) do t.eq(r.closed, true, "close frees armed runner " .. i) end
  t.errors(function() cell:time(4) end, "used after close", true)
end)

t.test("point_ms: n lowered to fill about point_ms per point, one call probed once, never below the copies", function()
  local dev = fake_device()
  local cell <close> = bench.cell(dev, { launches = { launch "gate", launch "up", launch "silu" } })
  -- the probe: two single-call submissions of 3 launches, the second timed: SUBMIT_MS + 3 LAUNCH_MS
  local one = SUBMIT_MS + 3 * LAUNCH_MS
  local opts = { point_ms = 30, settle_ms = 0 }
  t.eq(cell:calls(100, opts), math.ceil(30 / one))
  t.eq(dev.log.submitted, { 3, 3 }, "the probe: one call, twice")
  t.eq(cell.probed, one)
  cell:arm(100, opts)
  local made = #dev.log.batches
  local d, n = cell:time(100, opts)
  t.eq(n, 8)
  t.eq(#dev.log.batches, made, "time reused the batches armed at the lowered n")
  t.near(d.ms, 3 * LAUNCH_MS, 1e-12)
  t.eq(d.t_n, SUBMIT_MS + 8 * 3 * LAUNCH_MS)
  t.eq(cell:calls(4, opts), 4, "iters calls within point_ms: unchanged")
  t.eq(cell:calls(100, {}), 100, "no point_ms: iters")
  t.eq(#dev.log.submitted, 2 + 2 * bench.policy.runners + 1 + 2 * bench.policy.runners * bench.policy.repeats,
    "probed once: the probe, the batches' first submissions, one settle run, the timings")
  -- a rotation: the probe runs one call per set (a runner refuses fewer) and divides
  local rdev = fake_device()
  local rot <close> = bench.cell(rdev, { sets = { { launch "a" }, { launch "b" }, { launch "c" } } })
  t.eq(rot:calls(100, { point_ms = 1e-3 }), 3, "at least one call per set")
  t.eq(rdev.log.submitted, { 3, 3 })
  t.eq(rot.probed, (SUBMIT_MS + 3 * LAUNCH_MS) / 3)
end)

t.test("buffers given to a cell are freed by close, once", function()
  local freed = 0
  local buf = { free = function() freed = freed + 1 end }
  local cell = bench.cell(fake_device(), { launches = { launch "a" }, buffers = { buf, buf } })
  cell:close(); cell:close()
  t.eq(freed, 2)
end)

t.test("ready: the flush buffer made and the device idle before a timed round", function()
  local dev = fake_device()
  bench.ready(dev)
  t.eq({ dev.log.flushes, dev.log.syncs }, { 1, 1 })
end)

t.test("describe: the footnote names the policy in effect", function()
  local text = bench.describe { iters = 200 }
  t.truthy(text:find("n = 200", 1, true), text)
  t.truthy(text:find(("fastest of %d runners"):format(bench.policy.runners), 1, true), text)
  t.truthy(text:find(("median of %d such"):format(bench.policy.repeats), 1, true), text)
  t.truthy(text:find(("%g ms of the cell's own"):format(bench.policy.settle_ms), 1, true), text)
  t.truthy(text:find("graph-replay", 1, true), text)
  local other = bench.describe { iters = 10, flush = false, runners = 2, graph = false, rotate = true }
  t.truthy(other:find("no L2 flush", 1, true), other)
  t.truthy(other:find("fastest of 2 runners", 1, true), other)
  t.truthy(other:find("stream submission", 1, true), other)
  t.truthy(other:find("at least the cell's copy count", 1, true), other)
  local capped = bench.describe { iters = 100, point_ms = 5 }
  t.truthy(capped:find("n = 100, fewer where n calls would take over 5 ms", 1, true), capped)
end)

-- cells.table: prepared once, armed per scale before the rounds, closed at the end.
t.test("cells.table: prepare once, arm per scale, measure with iters x scale, close at the end", function()
  local log = {}
  local function P(name)
    return { name = name,
             arm = function(self, iters) log[#log + 1] = ("arm %s %d"):format(self.name, iters) end,
             close = function(self) log[#log + 1] = "close " .. self.name end }
  end
  local list = { { label = "a" }, { label = "b" } }
  local tb = cells.table {
    cells = list, iters = 10,
    prepare = function(c) log[#log + 1] = "prepare " .. c.label; return P(c.label) end,
    ready = function() log[#log + 1] = "ready" end,
    measure = function(p, ctx)
      log[#log + 1] = ("measure %s r%d %d"):format(p.name, ctx.round, ctx.iters)
      return { name = p.name }
    end,
  }
  local rows, ran = tb:run { order = "reverse", rounds = 1 }
  t.eq(ran, { 2, 1 }); t.eq(rows[1].name, "a")
  tb:run { rounds = 1, scale = 5, sequence = { 1 } }
  tb:close(); tb:close()
  t.eq(log, {
    "prepare a", "prepare b", "arm a 10", "arm b 10", "ready", "measure b r1 10", "measure a r1 10",
    "arm a 50", "arm b 50", "ready", "measure a r1 50", "close a", "close b",
  })
  t.errors(function() tb:run {} end, "used after close", true)
end)

t.test("cells.table: a failing round still closes what was prepared (<close>)", function()
  local closed = 0
  local ok, err = pcall(function()
    local tb <close> = cells.table {
      cells = { {}, {} },
      prepare = function() return { close = function() closed = closed + 1 end } end,
      measure = function() error("boom", 0) end,
    }
    tb:run {}
  end)
  t.eq(ok, false); t.eq(err, "boom"); t.eq(closed, 2)
  t.errors(function() cells.table { cells = {}, measure = function() end, arm = 3 } end, "arm must be a function", true)
end)

t.test("progress: a row printed to the same terminal never follows the progress text", function()
  local progress = require "gpubench.progress"
  local s = t.text_sink()
  local bar = progress.new { total = 2, enabled = true, stream = s, clock = function() return 0 end }
  bar:step("first")
  bar:clear()
  s:write("ROW\n")
  local text = s:text()
  -- everything the bar drew is erased (\r, blanks, \r) before the row
  t.truthy(text:find("\r%s+\rROW\n$"), ("%q"):format(text))
end)

-- The same layer over real batches: a copy kernel, three launches per call.
t.test("on the Vulkan device: a three-launch call times, arms and closes", function()
  local dev = t.device("vulkan")
  local kernels = require "gpubench.kernels"
  local k <close> = kernels.load(dev, "copy")
  local a <close> = dev:buffer(1 << 16)
  local b <close> = dev:buffer(1 << 16)
  local l = { k, 16, 256, a, b, (1 << 16) // 16 }
  local cell <close> = bench.cell(dev, { launches = { l, l, l } })
  cell:arm(4, { runners = 2 })
  local d, n = cell:time(4, { runners = 2, repeats = 1, settle_ms = 1 })
  t.eq(n, 4)
  t.truthy(d.ms == nil or d.ms > 0, "a positive time or noise")
  t.eq(#d.runners, 2)
end)

-- A cold sample (flush, start timestamp, the batch, stop timestamp: on Vulkan one
-- submission since the timestamps ride with the batch, host/vulkan/launch.c,
-- vk_timed_batch_submit) times the batch: its copies are done when it returns, three
-- copies of 16 MiB take longer than one, one longer than an empty launch; and the timer
-- is a plain timer again afterwards.
t.test("on the Vulkan device: a cold sample times its batch between the timestamps", function()
  local dev = t.device("vulkan")
  local kernels = require "gpubench.kernels"
  local gpu = require "gpu"
  local copy <close> = kernels.load(dev, "copy")
  local empty <close> = kernels.load(dev, "empty")
  local n = 16 << 20
  local src <close> = dev:buffer(n)
  local dst <close> = dev:buffer(n)
  local out <close> = dev:buffer(16)
  src:upload(string.rep("gpubench", n // 8))
  dst:fill(0)
  local tm <close> = dev:timer()
  local function sample(count, l)
    local b <close> = dev:batch { count = count, graph = true, l }
    local best = math.huge
    for _ = 1, 3 do best = math.min(best, (b:cold_sample(tm, { flush = "none" }))) end
    return best
  end
  local e = sample(1, { empty, 1, 1, out, 0 })
  local c = { copy, 256, 256, src, dst, gpu.u32(n // 16) }
  local one, three = sample(1, c), sample(3, c)
  t.eq(dst:download(0, 64), string.rep("gpubench", 8), "the batch ran before cold_sample returned")
  t.truthy(one > e, ("one copy %.4f ms against an empty launch's %.4f"):format(one, e))
  t.truthy(three > 1.5 * one, ("three copies %.4f ms against one's %.4f"):format(three, one))
  tm:start()
  local b <close> = dev:batch { count = 1, graph = true, c }
  b:submit()
  tm:stop()
  t.truthy(tm:ms() > 0, "the timer still starts and stops on its own")
end)

t.run()
