-- gpubench.timing with a synthetic clock (both branches of the two-point rule,
-- the cold-sampling event order, the rotation check), plus tiny device runs
-- that count launches through a kernel that increments a buffer.
local t = dofile("tests/lua/harness.lua")
local timing = require "gpubench.timing"

-- A fake submission: fixed cost C plus T per launch; records every count.
local function clock(C, T, calls)
  return function(count)
    calls[#calls + 1] = count
    return C + T * count
  end
end

t.test("two_point resolves: (t(2n) - t(n)) / n", function()
  local calls = {}
  -- C = 1 ms, T = 1/128 ms, n = 128: t(n) = 2, t(2n) = 3 (exact in binary)
  local ms, d = timing.two_point(clock(1.0, 1 / 128, calls), 128)
  t.eq(ms, 1 / 128)
  t.eq(calls, { 128, 256 })
  t.eq(d.t_n, 2.0); t.eq(d.t_2n, 3.0); t.eq(d.n, 128); t.eq(d.ratio, 1.5)
  t.eq(d.ms, ms); t.eq(d.noise, false)
end)

t.test("two_point: t(2n) < 1.2 t(n) is noise, with both times", function()
  -- C = 1, T = 1/1024, n = 128: 1.125 -> 1.25 (ratio 1.11)
  local ms, why, d = timing.two_point(clock(1.0, 1 / 1024, {}), 128)
  t.eq(ms, nil); t.eq(why, "noise")
  t.eq(d.t_n, 1.125); t.eq(d.t_2n, 1.25)
  t.eq(d.ms, nil); t.eq(d.noise, true)
  t.eq(select(-1, timing.two_point(clock(1.0, 1 / 1024, {}), 128)).noise, true,
    "details are the last result")
end)

-- median_of over a scripted sequence of measurements (ms, or false = noise).
local function scripted(seq)
  local i = 0
  return function()
    i = i + 1
    local ms = seq[i]
    return { ms = ms or nil, noise = not ms, i = i }
  end
end

t.test("median_of: the median resolved measurement, every repeat kept", function()
  local d = timing.median_of(scripted { 5.0, 4.0, 4.6 }, 3)
  t.eq(d.ms, 4.6); t.eq(d.i, 3, "the median's own details")
  t.eq(d.repeats, { 5.0, 4.0, 4.6 })
  -- one outlier does not move it
  t.eq(timing.median_of(scripted { 4.0, 9.0, 4.2 }, 3).ms, 4.2)
  -- even count: the lower middle one
  t.eq(timing.median_of(scripted { 3.0, 1.0, 4.0, 2.0 }, 4).ms, 2.0)
  t.eq(timing.median_of(scripted { 7.0 }, 1).ms, 7.0)
end)

t.test("median_of: noise unless more than half resolved", function()
  local d = timing.median_of(scripted { 4.0, false, 4.4 }, 3)
  t.eq(d.ms, 4.0, "two of three resolved: the lower of the two")
  t.eq(d.repeats, { 4.0, false, 4.4 })
  d = timing.median_of(scripted { false, 4.0, false }, 3)
  t.eq(d.ms, nil); t.eq(d.noise, true); t.eq(d.i, 3, "the last noise details")
  t.eq(d.repeats, { false, 4.0, false })
  t.eq(timing.median_of(scripted { 4.0, false }, 2).noise, true, "one of two is not more than half")
  t.errors(function() timing.median_of(scripted { 1.0 }, 0) end,
    "timing.median_of: reps must be a positive integer, got 0", true)
  t.errors(function() timing.median_of(function() return 3 end, 1) end,
    "timing.median_of: measure returned number, not two_point details", true)
end)

t.test("two_point_median: one warm-up, then reps two-point timings, the median", function()
  local calls = {}
  local d = timing.two_point_median(clock(1.0, 1 / 128, calls), 128, 3, { warmup = 64 })
  t.eq(calls, { 64, 128, 256, 128, 256, 128, 256 })
  t.eq(d.ms, 1 / 128); t.eq(d.repeats, { 1 / 128, 1 / 128, 1 / 128 })
  calls = {}
  timing.two_point_median(clock(1.0, 1 / 128, calls), 128, 2)
  t.eq(calls, { 128, 256, 128, 256 }, "no warm-up unless asked")
end)

t.test("settle: untimed runs of n until their times reach ms, at least one", function()
  local counts = {}
  local function run(c) counts[#counts + 1] = c; return 7.0 end
  t.eq(timing.settle(run, 16, 50), 8, "8 x 7 ms >= 50 ms")
  t.eq(counts, { 16, 16, 16, 16, 16, 16, 16, 16 })
  t.eq(timing.settle(run, 4, 0), 1, "once at least")
  t.eq(timing.settle(run, 4, 14), 2, "exactly the target is enough")
  t.errors(function() timing.settle(run, 4, -1) end, "ms must be a finite number >= 0, got -1", true)
  t.errors(function() timing.settle(function() return -2 end, 4, 1) end, "run(4) returned -2, not a time in ms", true)
end)

t.test("fastest_of: the resolved runner with the smallest time, every runner's time kept", function()
  local a, b, c = { ms = 3.0, n = 1 }, { ms = 2.5, n = 2 }, { ms = 4.0, n = 3 }
  local d = timing.fastest_of({ a, b, c })
  t.eq(d.n, 2); t.eq(d.runners, { 3.0, 2.5, 4.0 })
  local noise = { noise = true, n = 9 }
  t.eq(timing.fastest_of({ noise, a, b }).ms, 2.5, "two of three resolved")
  local e = timing.fastest_of({ noise, a, { noise = true, n = 7 } })
  t.eq({ e.ms, e.n, e.runners }, { nil, 7, { false, 3.0, false } }, "noise unless more than half resolved")
  t.eq(timing.fastest_of({ a, noise }).ms, nil, "one of two is not more than half")
  t.errors(function() timing.fastest_of({}) end, "a non-empty list of two_point details is required", true)
  t.errors(function() timing.fastest_of({ a, 5 }) end, "runner 2's result is a number", true)
  t.errors(function() timing.fastest_of({ { ms = -1 } }) end, "runner 1 returned -1, not a time in ms", true)
end)

t.test("two_point: a non-positive difference is noise", function()
  local seq = { 2.0, 1.5 }
  local i = 0
  local ms, why, d = timing.two_point(function() i = i + 1; return seq[i] end, 10)
  t.eq(ms, nil); t.eq(why, "noise"); t.eq(d.t_2n, 1.5)
  local ms2, why2 = timing.two_point(function() return 1.0 end, 10)
  t.eq(ms2, nil); t.eq(why2, "noise")
end)

t.test("two_point: exactly 1.2x is resolvable (the rule is >=)", function()
  local seq = { 1.0, 1.2 }
  local i = 0
  local ms = timing.two_point(function() i = i + 1; return seq[i] end, 4)
  t.near(ms, 0.05, 1e-12)
  local seq2 = { 1.0, 1.1999 }
  local j = 0
  t.eq(timing.two_point(function() j = j + 1; return seq2[j] end, 4), nil)
end)

t.test("two_point: max_n doubles n until the difference resolves", function()
  local calls = {}
  -- C = 3, T = 1/128: n = 64 -> 3.5/4.0 (noise), n = 128 -> 4/5 (1.25x)
  local ms, d = timing.two_point(clock(3.0, 1 / 128, calls), 64, { max_n = 128 })
  t.eq(ms, 1 / 128)
  t.eq(calls, { 64, 128, 128, 256 })
  t.eq(d.n, 128); t.eq(#d.attempts, 2); t.eq(d.attempts[1].t_n, 3.5)
  local ms2, why = timing.two_point(clock(3.0, 1 / 128, {}), 64, { max_n = 100 })
  t.eq(ms2, nil); t.eq(why, "noise")
end)

t.test("two_point: warmup runs first, untimed", function()
  local calls = {}
  timing.two_point(clock(1.0, 1 / 128, calls), 128, { warmup = 2 })
  t.eq(calls, { 2, 128, 256 })
end)

t.test("two_point rejects bad n and bad clocks", function()
  local run = clock(1, 1, {})
  t.errors(function() timing.two_point(run, 0) end, "n must be a positive integer, got 0", true)
  t.errors(function() timing.two_point(run, 2.5) end, "n must be a positive integer", true)
  t.errors(function() timing.two_point(run, 0x80000000) end, "too large", true)
  t.errors(function() timing.two_point(function() return nil end, 8) end,
    "run(8) returned nil, not a time in ms", true)
  t.errors(function() timing.two_point(function() return 0 / 0 end, 8) end, "not a time in ms", true)
  t.errors(function() timing.two_point(run, 8, { min_ratio = 1 }) end, "min_ratio must be > 1", true)
end)

-- A fake timer and flush that log events; ms() returns successive values.
local function fake(log, values)
  local i = 0
  local timer = {
    start = function() log[#log + 1] = "start" end,
    stop = function() log[#log + 1] = "stop" end,
    ms = function() i = i + 1; return values[i] end,
  }
  return timer, function() log[#log + 1] = "flush" end, function() log[#log + 1] = "call" end
end

t.test("cold: warmups, then flush outside start/stop around one call", function()
  local log = {}
  local timer, flush, call = fake(log, { 4.0, 2.0, 3.0 })
  local samples, s = timing.cold(call, { timer = timer, flush = flush, ["repeat"] = 3 })
  t.eq(log, {
    "call", "call", "call",                       -- default warmup 3
    "flush", "start", "call", "stop",
    "flush", "start", "call", "stop",
    "flush", "start", "call", "stop",
  })
  t.eq(samples, { 4.0, 2.0, 3.0 }, "every sample kept, in order")
  t.eq(s.median, 3.0); t.eq(s.min, 2.0); t.eq(s.n, 3)
end)

t.test("cold defaults: warmup 3, repeat 20", function()
  local log, values = {}, {}
  for i = 1, 20 do values[i] = i end
  local timer, flush, call = fake(log, values)
  local samples = timing.cold(call, { timer = timer, flush = flush })
  t.eq(#samples, 20)
  local n = { call = 0, flush = 0, start = 0 }
  for _, e in ipairs(log) do n[e] = (n[e] or 0) + 1 end
  t.eq(n.call, 23); t.eq(n.flush, 20); t.eq(n.start, 20)
end)

t.test("samples: per divides, warmup 0 allowed, flush optional", function()
  local log = {}
  local timer, _, call = fake(log, { 8.0, 6.0 })
  local samples = timing.samples(call, { timer = timer, warmup = 0, ["repeat"] = 2, per = 4 })
  t.eq(samples, { 2.0, 1.5 })
  t.eq(log, { "start", "call", "stop", "start", "call", "stop" })
  t.errors(function() timing.cold(call, { timer = timer }) end, "an L2 flush", true)
  t.errors(function() timing.samples(call, { timer = timer, ["repeat"] = 0 }) end,
    "repeat must be a positive integer", true)
end)

t.test("rotation: copies reach 4x L2; a rotation that fits is an error", function()
  local MiB = 1 << 20
  t.eq(timing.rotation(10 * MiB, 60 * MiB), 24)
  t.eq(select(2, timing.rotation(10 * MiB, 60 * MiB)), 240 * MiB)
  t.eq(timing.rotation(1024 * MiB, 60 * MiB), 2, "at least two copies")
  t.truthy(timing.check_rotation(240 * MiB, 60 * MiB))
  t.errors(function() timing.check_rotation(240 * MiB - 1, 60 * MiB) end,
    "would fit in L2 (62914560 bytes): it needs at least 4x L2 = 251658240 bytes", true)
  t.errors(function() timing.check_rotation(240 * MiB, 0) end, "L2 size is unknown", true)
end)

t.test("runner refuses a rotation that fits in L2, before any device work", function()
  local MiB = 1 << 20
  local touched = false
  local dev = { l2_bytes = 60 * MiB, timer = function() touched = true end }
  local launches = {}
  for i = 1, 4 do launches[i] = { "kernel", 1, 64, "weights" .. i } end
  t.errors(function() timing.runner(dev, launches, { rotation = { copy_bytes = 32 * MiB } }) end,
    "rotation of 134217728 bytes would fit in L2 (62914560 bytes)", true)
  t.eq(touched, false, "no timer was created")
  local many = {}
  local max = timing.MAX_LAUNCHES
  for i = 1, max + 1 do many[i] = launches[1] end
  t.errors(function() timing.runner(dev, many) end,
    ("%d launches in one batch; at most %d"):format(max + 1, max), true)
end)

t.test("overlaps: not wanted, no declaring kernel, a device without it", function()
  local dev = { launch_overlap = true, name = "H", backend = "cuda", arch = "sm_90" }
  t.eq(timing.overlaps(dev, { { "k" } }, false), false, "not wanted")
  t.eq(timing.overlaps(dev, { { "k" } }, nil), false, "not wanted")
  -- launches whose kernel is no kernel object (or declares nothing) run plain
  t.eq(timing.overlaps(dev, { { "not a kernel", 1, 1 } }, true), false, "no declaring kernel: plain")
  local flat = { launch_overlap = false, name = "llvmpipe", backend = "vulkan", arch = "" }
  t.errors(function() timing.overlaps(flat, { { "k" } }, true) end,
    "launch overlap needs programmatic dependent launch (CUDA, sm_90 or later); llvmpipe (vulkan) has none", true)
  t.errors(function() timing.runner(flat, { { "k", 1, 1 } }, { overlap = true }) end,
    "timing.runner: launch overlap needs programmatic dependent launch", true)
end)

t.test("runner refuses a count that would skip part of a rotation", function()
  -- A fake device: records every batch it builds and every submit.
  local built = {}
  local dev = { l2_bytes = 1 << 20 }
  function dev:timer()
    return { start = function() end, stop = function() end, ms = function() return 1.0 end,
             free = function() end }
  end
  function dev:batch(spec)
    built[#built + 1] = spec.count
    return { submit = function() end, free = function() end }
  end
  function dev:sync() end
  local launches = {}
  for i = 1, 8 do launches[i] = { "kernel", 1, 64, "weights" .. i } end
  local r <close> = timing.runner(dev, launches)
  -- 4 launches per submission would read copies 1-4 only, never 5-8.
  t.errors(function() r:run(4) end,
    "4 launches per submission would run only 4 of the 8 launches it cycles through", true)
  t.eq(#built, 0, "no batch was built for the refused count")
  t.eq(r:run(8), 1.0)
  t.eq(r:run(12), 1.0)
  t.eq(built, { 8, 12 })
end)

-- ------------------------------------------------------------------ device

-- One workgroup of 64 invocations adds 1 to each of 64 uints: after k
-- launches every element equals k, so launch counts can be checked exactly.
local INC = [[
#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer B { uint data[]; };
void main() { data[gl_GlobalInvocationID.x] += 1u; }
]]

local function counter(dev)
  local buf = dev:buffer(64 * 4)
  buf:fill("\0")
  local k = dev:kernel { source = INC, entry = "main" }
  return buf, k
end

local function first_u32(buf)
  return string.unpack("<I4", buf:download(0, 4))
end

t.test("device runner: run(count) performs exactly count launches", function()
  local dev = t.device("vulkan")
  local buf <close>, k = counter(dev)
  do
    local r <close> = timing.runner(dev, { { k, 1, 64, buf } })
    local ms = r:run(3)            -- built: one untimed submit, then the timed one
    t.truthy(ms >= 0)
    t.eq(first_u32(buf), 6)
    r:run(3)                        -- cached batch: only the timed submit
    t.eq(first_u32(buf), 9)
    local per = timing.two_point(r:fn(), 2)
    -- counts 2 and 4: each batch built (one untimed submit) and timed once
    t.eq(first_u32(buf), 9 + 2 * 2 + 2 * 4)
    local d = select(-1, timing.two_point(r:fn(), 2))
    -- both batches cached now: only the timed submits
    t.eq(first_u32(buf), 21 + 2 + 4)
    t.truthy(per == nil or per > 0)
    t.truthy(d.t_n >= 0 and d.t_2n >= 0)
  end
  k:free()
end)

t.test("device runner: host clock and graph replay", function()
  local dev = t.device("vulkan")
  local buf <close>, k = counter(dev)
  do
    local r <close> = timing.runner(dev, { { k, 1, 64, buf } }, { clock = "host" })
    t.truthy(r:run(2) > 0, "a host-clocked submission takes time")
    t.eq(first_u32(buf), 4)
  end
  local samples, s = timing.graph_replay(dev, { { k, 1, 64, buf } }, { n = 4, warmup = 1, ["repeat"] = 2 })
  -- 4 at capture (untimed), 4 warmup, 2 x 4 timed
  t.eq(first_u32(buf), 4 + 4 + 4 + 8)
  t.eq(#samples, 2); t.eq(s.n, 2)
  k:free()
end)

t.test("device cold sampling: flush, one call per sample", function()
  local dev = t.device("vulkan")
  local buf <close>, k = counter(dev)
  local samples = timing.cold(function() k:launch(1, 64, buf) end,
    { device = dev, warmup = 1, ["repeat"] = 2 })
  t.eq(#samples, 2)
  t.eq(first_u32(buf), 3)
  t.errors(function() timing.runner(dev, { { k, 1, 64, buf } }, { clock = "wall" }) end,
    'clock must be "device" or "host"', true)
  k:free()
end)

t.run()
