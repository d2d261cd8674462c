-- gpubench.gemv_bench.prepare: a checked, timeable GEMV cell (on lavapipe in
-- CI: small shapes). The cell is verified against the FP64 oracle before it
-- is returned; rotation gives every launch its own weight copy; round_bytes
-- sizes the weight buffers for tools/placement_probe.lua.

local t = dofile("tests/lua/harness.lua")
local gemv = require "gpubench.gemv"
local gemv_bench = require "gpubench.gemv_bench"

local releasing = dofile("tests/lua/gemv_check.lua")(t).releasing -- frees the compiled kernels

local function weight_buffer(cell, i) return cell.launches[i][4] end -- kern, grid, block, w, x, y, m, k

t.test("prepare: one verified cell, its buffers freed by close", function()
  local dev = t.device("vulkan")
  releasing(dev, function()
    local cell <close> = gemv_bench.prepare(dev, "q4_0", 8, 64)
    t.eq(cell.check.ok, true)
    t.eq(cell.copies, 1)
    t.eq(#cell.launches, 1)
    t.eq(weight_buffer(cell, 1).size, gemv.buffer_bytes("q4_0", 8, 64))
    t.eq(cell.working_set, gemv.buffer_bytes("q4_0", 8, 64) + 4 * 64 + 4 * 8)
    cell:close()
    t.eq(#cell.buffers, 0, "close frees every buffer")
    cell:close() -- twice is harmless
  end)
end)

t.test("round_bytes: weight buffers rounded up, the cell still verified", function()
  local dev = t.device("vulkan")
  releasing(dev, function()
    local cell <close> = gemv_bench.prepare(dev, "q8_0", 5, 96, { round_bytes = 4096 })
    t.eq(cell.check.ok, true)
    t.eq(weight_buffer(cell, 1).size, 4096)
    local big <close> = gemv_bench.prepare(dev, "f16", 40, 128, { round_bytes = 4096 })
    t.eq(weight_buffer(big, 1).size, 12288) -- 10240 + 16 bytes rounded up
  end)
end)

t.test("rotate: one weight copy per launch, totalling >= 4 x the given L2", function()
  local dev = t.device("vulkan")
  releasing(dev, function()
    local bytes = gemv.buffer_bytes("q4_k", 4, 256)
    local cell <close> = gemv_bench.prepare(dev, "q4_k", 4, 256, { rotate = true, l2_bytes = 2 * bytes })
    t.truthy(cell.copies * bytes >= 4 * 2 * bytes, "copies cover 4 x L2")
    t.eq(#cell.launches, cell.copies)
    local seen = {}
    for i = 1, cell.copies do
      local w = weight_buffer(cell, i)
      t.truthy(not seen[w], "launch " .. i .. " has its own weight copy")
      seen[w] = true
    end
  end)
end)


-- A stand-in for dev that forwards every method and counts the calls by name.
local function counting(dev)
  local calls = setmetatable({}, { __index = function() return 0 end })
  local proxy = setmetatable({}, { __index = function(_, name)
    local v = dev[name]
    if type(v) ~= "function" then return v end
    return function(_, ...)
      calls[name] = calls[name] + 1
      return v(dev, ...)
    end
  end })
  return proxy, calls
end

t.test("ready: the flush buffer made and the device idle before a timed round", function()
  local dev = t.device("vulkan")
  local proxy, calls = counting(dev)
  gemv_bench.ready(proxy)
  t.eq({ calls.flush_l2, calls.sync }, { 1, 1 })
end)

-- Cell:time starts every timing from a flushed L2 (an H200's small
-- L2-resident cells otherwise ran up to 1.6x faster or slower depending on
-- what ran before them), then warms the cell with n untimed launches, and
-- keeps the median of REPEATS two-point timings.
-- Runs body(cell, calls) on a small verified cell that talks to the device
-- through a proxy counting the device calls by name.
local function with_counted_cell(body)
  local dev = t.device("vulkan")
  releasing(dev, function()
    local cell <close> = gemv_bench.prepare(dev, "q4_0", 8, 64)
    local proxy, calls = counting(dev)
    cell.dev = proxy
    local ok, err = pcall(body, cell, calls)
    cell.dev = dev
    if not ok then error(err, 0) end
  end)
end

t.test("time: L2 flushed once before the timing unless flush = false; a time in ms", function()
  with_counted_cell(function(cell, calls)
    local d, n = cell:time(4)
    t.eq(calls.flush_l2, 1, "one flush per timing")
    t.eq(n, 4)
    t.truthy(d.ms == nil or d.ms > 0, "a positive time or noise")
    t.eq(d.n, 4, "the two points are n and 2n launches")
    t.eq(#d.repeats, gemv_bench.REPEATS, "the fastest runner's REPEATS timings")
    t.eq(#d.runners, gemv_bench.RUNNERS, "every runner's median")
    if d.ms then
      for i, ms in ipairs(d.runners) do t.truthy(not ms or ms >= d.ms, "runner " .. i .. " is not faster") end
    end
    cell:time(4, { flush = false })
    t.eq(calls.flush_l2, 1, "flush = false skips it")
    local e = cell:time(4, { repeats = 2, runners = 3 })
    t.eq({ #e.repeats, #e.runners }, { 2, 3 })
  end)
end)

-- Each runner has its own timer and batches (graphs, command buffers), so no
-- single placement of those decides the cell.
t.test("time: RUNNERS runners, each with its own n and 2n batches", function()
  with_counted_cell(function(cell, calls)
    local R = gemv_bench.RUNNERS
    cell:time(4)
    t.eq({ calls.timer, calls.batch }, { R, 2 * R })
    cell:time(4, { runners = 2 })
    t.eq({ calls.timer, calls.batch }, { R + 2, 2 * R + 4 })
  end)
end)

-- Cell:arm builds the timing's runners and batches before the timed rounds
-- (in table order, whatever the rounds' order); Cell:time then submits those
-- and builds nothing. Another count re-arms; close frees them.
t.test("arm: every runner's n and 2n batches made up front, reused by time, freed by close", function()
  with_counted_cell(function(cell, calls)
    local R = gemv_bench.RUNNERS
    cell:arm(4)
    t.eq(calls.batch, 2 * R, "n and 2n per runner")
    local d = cell:time(4)
    t.eq(calls.batch, 2 * R, "time built no batch")
    t.eq(#d.runners, R)
    cell:arm(4)
    t.eq(calls.batch, 2 * R, "arming again for the same count is free")
    cell:time(4, { repeats = 1 })
    t.eq(calls.batch, 2 * R, "... also for another repeat count")
    cell:time(8) -- another count: runners of its own, freed after
    t.eq(calls.batch, 4 * R)
    cell:time(4, { graph = false }) -- other options: likewise
    t.eq(calls.batch, 6 * R)
    cell:time(4, { runners = 2 }) -- another runner count: likewise
    t.eq(calls.batch, 6 * R + 4)
    cell:arm(8)
    t.eq(calls.batch, 8 * R + 4, "re-armed for 8 and 16")
    local armed = cell.armed.runners
    t.eq(#armed, R)
    cell:close()
    for i, r in ipairs(armed) do t.eq(r.closed, true, "close frees armed runner " .. i) end
  end)
end)

t.run()
