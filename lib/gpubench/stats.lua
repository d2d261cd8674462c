-- gpubench.stats: summaries of timing samples, a bootstrap confidence interval
-- of the median, and a faster / slower / same comparison of two sample sets.
--
-- Why: the outside harnesses gpubench learned from reported one number per
-- cell (a mean, or a single run), so a positional artifact and a real
-- kernel difference looked alike (cera), and a gain that did not survive
-- cold weights was published from warm medians (AstrAI). Keeping every sample and reporting the spread
-- (p95/p99, rel_iqr) and a bootstrap interval makes a noisy cell visible, and
-- `compare` only says "faster" when the interval excludes "same".
--
-- Quantiles use linear interpolation between closest ranks ("type 7", the
-- default of R and NumPy): h = (n - 1) p + 1, q = x[floor h] + (h - floor h)
-- (x[floor h + 1] - x[floor h]).

local rng = require "gpubench.rng"

local stats = {}

-- Checks that samples is a non-empty list of finite numbers and returns a
-- sorted copy. A NaN or inf sample means a broken timer; averaging it in
-- would hide the breakage.
local function sorted_copy(samples, who)
  if type(samples) ~= "table" then
    error(("%s: samples must be a list of numbers, got %s"):format(who, type(samples)), 3)
  end
  local n = #samples
  if n == 0 then error(who .. ": no samples", 3) end
  local s = {}
  for i = 1, n do
    local v = samples[i]
    if type(v) ~= "number" or v ~= v or v == math.huge or v == -math.huge then
      error(("%s: sample %d is %s, not a finite number"):format(who, i, tostring(v)), 3)
    end
    s[i] = v
  end
  table.sort(s)
  return s
end

-- Type-7 quantile of an already sorted list.
local function quantile_sorted(s, p)
  local n = #s
  local h = (n - 1) * p + 1
  local lo = math.floor(h)
  if lo >= n then return s[n] end
  return s[lo] + (h - lo) * (s[lo + 1] - s[lo])
end

function stats.sorted(samples) return sorted_copy(samples, "stats.sorted") end

-- quantile(samples, p), p in [0, 1].
function stats.quantile(samples, p)
  if type(p) ~= "number" or p < 0 or p > 1 then
    error(("stats.quantile: p must be in [0, 1], got %s"):format(tostring(p)), 2)
  end
  return quantile_sorted(sorted_copy(samples, "stats.quantile"), p)
end

function stats.median(samples)
  return quantile_sorted(sorted_copy(samples, "stats.median"), 0.5)
end

-- summary(samples) -> {n, min, max, mean, median, p90, p95, p99, stdev, rel_iqr}
-- stdev is the sample standard deviation (divides by n - 1), nil when n = 1.
-- rel_iqr = (p75 - p25) / median, nil when the median is 0.
function stats.summary(samples)
  local s = sorted_copy(samples, "stats.summary")
  local n = #s
  local sum = 0
  for i = 1, n do sum = sum + s[i] end
  local mean = sum / n
  local stdev
  if n > 1 then
    local ss = 0
    for i = 1, n do
      local d = s[i] - mean
      ss = ss + d * d
    end
    stdev = math.sqrt(ss / (n - 1))
  end
  local median = quantile_sorted(s, 0.5)
  local rel_iqr
  if median ~= 0 then
    rel_iqr = (quantile_sorted(s, 0.75) - quantile_sorted(s, 0.25)) / median
  end
  return {
    n = n, min = s[1], max = s[n], mean = mean, median = median,
    p90 = quantile_sorted(s, 0.90), p95 = quantile_sorted(s, 0.95),
    p99 = quantile_sorted(s, 0.99), stdev = stdev, rel_iqr = rel_iqr,
  }
end

-- median_noise(samples) -> the relative noise of the median: the half-width
-- of its 95 % distribution-free confidence interval (between the order
-- statistics j and k with j, k = n/2 -/+ 0.98 sqrt(n), which needs n >= 6)
-- over the median; for fewer samples, the relative standard deviation of
-- the mean (stdev / mean / sqrt(n)), or math.huge for one sample. Cheap
-- (one sort), so a stopping rule can ask after every sample.
function stats.median_noise(samples)
  local s = sorted_copy(samples, "stats.median_noise")
  local n = #s
  local med = quantile_sorted(s, 0.5)
  if n >= 6 then
    local half = 0.98 * math.sqrt(n)
    local j = math.max(1, math.floor(n / 2 - half))
    local k = math.min(n, math.ceil(n / 2 + half + 1))
    if med == 0 then return 0 end
    return (s[k] - s[j]) / 2 / math.abs(med)
  end
  if n == 1 then return math.huge end
  local sum = 0
  for i = 1, n do sum = sum + s[i] end
  local mean = sum / n
  local ss = 0
  for i = 1, n do ss = ss + (s[i] - mean) ^ 2 end
  if mean == 0 then return 0 end
  return math.sqrt(ss / (n - 1)) / math.sqrt(n) / math.abs(mean)
end

local function check_level(level, who)
  if type(level) ~= "number" or not (level > 0 and level < 1) then
    error(("%s: level must be in (0, 1), got %s"):format(who, tostring(level)), 3)
  end
end

local function check_resamples(r, who)
  if math.tointeger(r) == nil or r < 1 then
    error(("%s: resamples must be a positive integer, got %s"):format(who, tostring(r)), 3)
  end
end

-- Median of a resample (with replacement) of the sorted list s, drawn with g.
local function resampled_median(s, g, scratch)
  local n = #s
  for i = 1, n do scratch[i] = s[g:int(n)] end
  table.sort(scratch)
  return quantile_sorted(scratch, 0.5)
end

-- median_ci(samples [, {level = 0.95, resamples = 2000, seed = 1}]) -> lo, hi
-- Percentile bootstrap: the level/2 tails of the medians of `resamples`
-- resamples. Seeded, so the same samples give the same interval.
function stats.median_ci(samples, opts)
  opts = opts or {}
  local level, resamples = opts.level or 0.95, opts.resamples or 2000
  check_level(level, "stats.median_ci")
  check_resamples(resamples, "stats.median_ci")
  local s = sorted_copy(samples, "stats.median_ci")
  local g = rng.new(opts.seed or 1)
  local meds, scratch = {}, {}
  for r = 1, resamples do meds[r] = resampled_median(s, g, scratch) end
  table.sort(meds)
  return quantile_sorted(meds, (1 - level) / 2), quantile_sorted(meds, (1 + level) / 2)
end

-- compare(a, b [, opts]) -> {verdict, ratio, lo, hi, confidence, p_faster, p_slower}
-- Is `a` faster than `b`? Samples are times (lower is faster). ratio is
-- median(a) / median(b); lo..hi its bootstrap interval at `level` (0.95).
--   "faster": the whole interval is below 1 and a is at least `threshold`
--             (default 0.01, i.e. 1 %) faster;
--   "slower": the mirror image;
--   "same":   otherwise.
-- confidence is the bootstrap probability of the verdict: P(ratio* < 1) for
-- faster, P(ratio* > 1) for slower, P(|ratio* - 1| <= threshold) for same.
function stats.compare(a, b, opts)
  opts = opts or {}
  local level, resamples = opts.level or 0.95, opts.resamples or 2000
  local threshold = opts.threshold or 0.01
  check_level(level, "stats.compare")
  check_resamples(resamples, "stats.compare")
  if type(threshold) ~= "number" or threshold < 0 or threshold ~= threshold then
    error(("stats.compare: threshold must be a number >= 0, got %s"):format(tostring(threshold)), 2)
  end
  local sa = sorted_copy(a, "stats.compare")
  local sb = sorted_copy(b, "stats.compare")
  local mb = quantile_sorted(sb, 0.5)
  if mb <= 0 or sa[1] < 0 or sb[1] < 0 then
    error("stats.compare: samples must be non-negative times with a positive median", 2)
  end
  local ratio = quantile_sorted(sa, 0.5) / mb
  local g = rng.new(opts.seed or 1)
  local ratios, sca, scb = {}, {}, {}
  local below, above, within = 0, 0, 0
  for r = 1, resamples do
    local mbr = resampled_median(sb, g, scb)
    local x = mbr > 0 and resampled_median(sa, g, sca) / mbr or math.huge
    ratios[r] = x
    if x < 1 then below = below + 1 elseif x > 1 then above = above + 1 end
    if math.abs(x - 1) <= threshold then within = within + 1 end
  end
  table.sort(ratios)
  local lo = quantile_sorted(ratios, (1 - level) / 2)
  local hi = quantile_sorted(ratios, (1 + level) / 2)
  local p_faster, p_slower = below / resamples, above / resamples
  local verdict, confidence
  if hi < 1 and 1 - ratio >= threshold then
    verdict, confidence = "faster", p_faster
  elseif lo > 1 and ratio - 1 >= threshold then
    verdict, confidence = "slower", p_slower
  else
    verdict, confidence = "same", within / resamples
  end
  return {
    verdict = verdict, ratio = ratio, lo = lo, hi = hi, level = level,
    confidence = confidence, p_faster = p_faster, p_slower = p_slower,
    threshold = threshold,
  }
end

return stats
