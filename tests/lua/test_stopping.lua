-- The stopping rule (timing.sample_until, timing.two_point_until) on a
-- synthetic clock: it converges once the median's noise reaches the target,
-- gives up at the time cap and says so, and takes a fixed count when asked;
-- stats.median_noise against order statistics worked out by hand.
local t = dofile("tests/lua/harness.lua")
local timing = require "gpubench.timing"
local stats = require "gpubench.stats"
local options = require "gpubench.options"
local rng = require "gpubench.rng"

-- A clock that advances `step` seconds per reading.
local function fake_clock(step)
  local now = 0
  return function() now = now + step; return now end
end

t.test("median_noise: the order-statistic interval's half-width over the median", function()
  -- n = 9: j = floor(4.5 - 2.94) = 1, k = ceil(4.5 + 2.94 + 1) = 9
  t.near(stats.median_noise { 1, 2, 3, 4, 5, 6, 7, 8, 9 }, (9 - 1) / 2 / 5, 1e-12)
  -- n = 100 values 1..100: j = floor(50 - 9.8) = 40, k = ceil(50 + 9.8 + 1) = 61
  local s = {}
  for i = 1, 100 do s[i] = 101 - i end -- any order
  t.near(stats.median_noise(s), (61 - 40) / 2 / 50.5, 1e-12)
  t.eq(stats.median_noise { 7, 7, 7, 7, 7, 7, 7 }, 0)
  -- fewer than 6: the relative standard deviation of the mean
  t.near(stats.median_noise { 1, 3 }, math.sqrt(2) / math.sqrt(2) / 2, 1e-12)
  t.eq(stats.median_noise { 5 }, math.huge)
  t.errors(function() stats.median_noise {} end, "no samples", true)
end)

t.test("sample_until converges once the median's noise is under the target", function()
  local g = rng.new(7)
  -- samples 100 +/- 0.1 % uniform: the noise falls under 0.5 % well before the cap
  local samples, info = timing.sample_until(function() return 100 * (1 + 0.002 * (g:float() - 0.5)) end,
    { max_noise = 0.005, min_samples = 20, max_time = 1000 }, fake_clock(0.001))
  t.eq(info.converged, true)
  t.eq(#samples, 20, "at the minimum: the noise was already low")
  t.eq(info.n, 20)
  t.truthy(info.noise <= 0.005, tostring(info.noise))
end)

t.test("sample_until gives up at the time cap and says so", function()
  local g = rng.new(3)
  -- 50 % spread never reaches 0.1 % noise; the clock advances 0.1 s per reading
  local samples, info = timing.sample_until(function() return 1 + g:float() end,
    { max_noise = 0.001, min_samples = 5, max_time = 2.0 }, fake_clock(0.1))
  t.eq(info.converged, false)
  t.truthy(#samples >= 5 and #samples <= 20, tostring(#samples))
  t.truthy(info.noise > 0.001 and info.noise < math.huge)
  t.truthy(info.elapsed >= 2.0)
end)

t.test("sample_until with samples = N takes exactly N", function()
  local n = 0
  local samples, info = timing.sample_until(function() n = n + 1; return n end, { samples = 7 }, fake_clock(100))
  t.eq(#samples, 7); t.eq(info.fixed, true); t.eq(info.converged, true)
  t.errors(function() timing.sample_until(function() return 0 / 0 end, { samples = 1 }, fake_clock(1)) end,
    "not a finite number", true)
  t.errors(function() timing.rule { max_noise = 0 } end, "max_noise must be a positive number", true)
end)

t.test("two_point_until: repeats until the median of the resolved timings is stable", function()
  -- a run with fixed cost 1 ms and 1/128 ms per launch, jittered: t(2n) - t(n) = n / 128 +/- jitter
  local g = rng.new(11)
  local function run(count) return 1.0 + count / 128 * (1 + 0.001 * (g:float() - 0.5)) end
  local d = timing.two_point_until(run, 128, { max_noise = 0.002, min_samples = 3, max_time = 100 },
    { clock = fake_clock(0.01) })
  t.eq(d.converged, true)
  t.truthy(d.count >= 3)
  t.near(d.ms, 1 / 128, 1e-5)
  t.eq(#d.points, d.count, "every timing's two points kept")
  -- a run that never resolves: every timing noise, the cap ends it
  local d2 = timing.two_point_until(function() return 5.0 end, 4, { max_noise = 0.01, min_samples = 3, max_time = 1 },
    { clock = fake_clock(0.25) })
  t.eq(d2.ms, nil); t.eq(d2.noise, math.huge); t.eq(d2.converged, false)
end)

t.test("rule_of: the rule for cold cells always, for two-point only when asked", function()
  local decls = options.measure_options()
  local function parse(argv) return options.parse({ name = "x", options = decls }, argv, { env = {} }) end
  local o, m = parse {}
  t.eq(options.rule_of(o, m), nil, "two-point keeps its fixed repeats by default")
  o, m = parse { "--method", "cold" }
  t.eq(options.rule_of(o, m), { max_noise = 0.005, max_time = 2, min_samples = 20 })
  o, m = parse { "--max-noise", "1" }
  t.eq(options.rule_of(o, m), { max_noise = 0.01, max_time = 2, min_samples = 3 })
  o, m = parse { "--method", "cold", "--samples", "20" }
  t.eq(options.rule_of(o, m).samples, 20)
end)

t.run()
