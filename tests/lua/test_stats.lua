-- gpubench.stats against hand-computed values (type-7 quantiles, sample stdev).
local t = dofile("tests/lua/harness.lua")
local stats = require "gpubench.stats"

local EPS = 1e-12

t.test("summary of 1..10 (hand-computed)", function()
  -- Shuffled on purpose: summary must sort.
  local s = stats.summary { 7, 3, 10, 1, 5, 9, 2, 8, 4, 6 }
  t.eq(s.n, 10)
  t.eq(s.min, 1); t.eq(s.max, 10)
  t.near(s.mean, 5.5, EPS)
  t.near(s.median, 5.5, EPS)
  -- h = (n-1)p + 1: p90 -> h = 9.1 -> 9 + 0.1*(10-9)
  t.near(s.p90, 9.1, EPS)
  t.near(s.p95, 9.55, EPS)
  t.near(s.p99, 9.91, EPS)
  -- sum of squared deviations 82.5, divided by n-1 = 9
  t.near(s.stdev, math.sqrt(82.5 / 9), EPS)
  -- (p75 - p25) / median = (7.75 - 3.25) / 5.5
  t.near(s.rel_iqr, 4.5 / 5.5, EPS)
end)

t.test("summary with duplicates and an even count", function()
  local s = stats.summary { 3, 1, 4, 1, 5, 9, 2, 6 }
  -- sorted 1 1 2 3 4 5 6 9
  t.eq(s.n, 8)
  t.near(s.mean, 31 / 8, EPS)
  t.near(s.median, 3.5, EPS)          -- h = 4.5
  t.near(s.p90, 6.9, EPS)             -- h = 7.3: 6 + 0.3*3
  t.near(s.p95, 7.95, EPS)            -- h = 7.65
  t.near(s.p99, 8.79, EPS)            -- h = 7.93
  t.near(s.stdev, math.sqrt(52.875 / 7), EPS)
  t.near(s.rel_iqr, (5.25 - 1.75) / 3.5, EPS)
end)

t.test("single sample: every quantile is the sample, no stdev", function()
  local s = stats.summary { 2.5 }
  t.eq(s.n, 1)
  t.eq(s.min, 2.5); t.eq(s.max, 2.5); t.eq(s.median, 2.5); t.eq(s.p99, 2.5)
  t.eq(s.stdev, nil)
  t.eq(s.rel_iqr, 0.0)
end)

t.test("quantile endpoints and input left unsorted", function()
  local xs = { 4, 2, 8 }
  t.eq(stats.quantile(xs, 0), 2)
  t.eq(stats.quantile(xs, 1), 8)
  t.near(stats.quantile(xs, 0.25), 3, EPS) -- h = 1.5
  t.eq(xs, { 4, 2, 8 }, "the caller's list is not reordered")
  t.eq(stats.median { 1, 100, 3, 2 }, 2.5)
end)

t.test("bad samples are errors, not silent NaN", function()
  t.errors(function() stats.summary {} end, "no samples", true)
  t.errors(function() stats.summary { 1, 0 / 0 } end, "sample 2 is", true)
  t.errors(function() stats.summary { 1, math.huge } end, "not a finite number", true)
  t.errors(function() stats.summary "12" end, "must be a list", true)
  t.errors(function() stats.quantile({ 1 }, 1.5) end, "p must be in [0, 1]", true)
end)

t.test("median bootstrap CI of {1,2,3} is [1,3]", function()
  -- A resample's median is 1 when at least two of three draws are 1:
  -- P = 7/27 ~ 0.26, well above the 2.5 % tail, and likewise for 3.
  local lo, hi = stats.median_ci({ 1, 2, 3 }, { resamples = 2000, seed = 5 })
  t.eq(lo, 1); t.eq(hi, 3)
end)

t.test("median bootstrap CI of constant samples is a point", function()
  local lo, hi = stats.median_ci { 4, 4, 4, 4, 4 }
  t.eq(lo, 4); t.eq(hi, 4)
end)

t.test("median CI brackets the median and is reproducible", function()
  local xs = {}
  for i = 1, 41 do xs[i] = 10 + ((i * 37) % 41) / 41 end
  local lo, hi = stats.median_ci(xs, { seed = 9 })
  local m = stats.median(xs)
  t.truthy(lo <= m and m <= hi, ("%g <= %g <= %g"):format(lo, m, hi))
  t.truthy(lo > 10 and hi < 11)
  local lo2, hi2 = stats.median_ci(xs, { seed = 9 })
  t.eq(lo2, lo); t.eq(hi2, hi)
end)

t.test("compare: clearly faster, clearly slower, identical", function()
  local a, b = {}, {}
  for i = 1, 20 do
    a[i] = 1.0 + (i % 5) * 0.01
    b[i] = 2.0 + (i % 5) * 0.01
  end
  local c = stats.compare(a, b)
  t.eq(c.verdict, "faster")
  t.eq(c.confidence, 1.0)
  t.near(c.ratio, 1.02 / 2.02, EPS)
  t.truthy(c.hi < 1)
  local d = stats.compare(b, a)
  t.eq(d.verdict, "slower")
  t.eq(d.confidence, 1.0)
  local e = stats.compare(a, a)
  t.eq(e.verdict, "same")
  t.eq(e.ratio, 1.0)
end)

t.test("compare: a difference below the threshold is 'same'", function()
  local a, b = {}, {}
  for i = 1, 30 do
    a[i] = 1.000 + (i % 3) * 1e-4
    b[i] = 1.005 + (i % 3) * 1e-4
  end
  -- 0.5 % apart with tiny spread: significant, but under the 1 % default.
  local c = stats.compare(a, b)
  t.eq(c.verdict, "same")
  t.eq(c.p_faster, 1.0)
  t.eq(c.confidence, 1.0, "every resampled ratio is within 1 % of 1")
  local d = stats.compare(a, b, { threshold = 0.001 })
  t.eq(d.verdict, "faster")
end)

t.test("compare validates its options", function()
  t.errors(function() stats.compare({ 1 }, { 1 }, { level = 1 }) end, "level must be in (0, 1)", true)
  t.errors(function() stats.compare({ 1 }, { 1 }, { resamples = 0 }) end, "resamples must be a positive integer", true)
  t.errors(function() stats.compare({ 1 }, { 0 }) end, "positive median", true)
end)

t.run()
