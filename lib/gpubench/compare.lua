-- gpubench.compare: two runs of one experiment, cell by cell, decided from
-- their samples (experiments/compare_runs.lua is its command line).
--
--   local compare = require "gpubench.compare"
--   local a = compare.load("a.jsonl")                 --> {cells = {...}, order = {...}, path = }
--   local rows, summary = compare.runs(a, compare.load("b.jsonl"), {threshold = 0.02})
--
-- A cell is identified by its row's `label` when both files' rows carry one,
-- else by the `match` fields. Its per-call samples come from the row itself:
-- a cold row's `samples`; a two-point row's `timings` (every runner's every
-- (n, t_n, t_2n), one per-call figure (t_2n - t_n) / n each). The verdict is
-- stats.compare's bootstrap interval of the ratio of medians (B over A):
-- FASTER or SLOWER only when the whole interval is on one side of 1 and the
-- ratio is beyond the threshold, else SAME. A cell without enough samples in
-- either file falls back to the ratio of one metric (`key`), marked "ratio".

local report = require "gpubench.report"
local stats = require "gpubench.stats"

local compare = {}

-- Fewer samples than this cannot support an interval: the cell is compared by ratio.
compare.MIN_SAMPLES = 3

local function per_call_of_timings(timings)
  local out = {}
  for _, runner in ipairs(timings) do
    if type(runner) ~= "table" then return nil end
    for _, p in ipairs(runner) do
      if type(p) ~= "table" or type(p.n) ~= "number" or type(p.t_n) ~= "number"
         or type(p.t_2n) ~= "number" or p.n <= 0 then
        return nil
      end
      out[#out + 1] = (p.t_2n - p.t_n) / p.n
    end
  end
  return out
end

local function numbers(list)
  if type(list) ~= "table" then return nil end
  for _, v in ipairs(list) do
    if type(v) ~= "number" or v ~= v then return nil end
  end
  return list
end

-- The per-call samples of one row, and where they came from; nil when it has none.
function compare.samples_of(row)
  if type(row.timings) == "table" then
    local s = per_call_of_timings(row.timings)
    if s and #s > 0 then return s, "timings" end
  end
  -- A two-point row's `samples` are its (t_n, t_2n) pair, not per-call times.
  if row.timings == nil and row.t_n == nil then
    local s = numbers(row.samples)
    if s and #s > 0 then return s, "samples" end
  end
  return nil
end

local function key_text(v)
  if math.type(v) == "float" and math.tointeger(v) then v = math.tointeger(v) end -- JSON gives 1024.0
  return tostring(v)
end

-- load(path [, {match = {"kernel", ...}}]) -> run
-- Reads a JSON-lines output's cell records. Raises an error naming the file
-- for an unreadable file, one without cells, or a cell that appears twice.
function compare.load(path, o)
  local f = io.open(path, "rb")
  if not f then error(("compare: cannot read %s"):format(path), 2) end
  f:close()
  local ok, recs = pcall(report.read_jsonl, path)
  if not ok then error(("compare: %s"):format(tostring(recs):gsub("^.-report: ", "")), 2) end
  local run = { path = path, rows = {}, environment = nil }
  for _, rec in ipairs(recs) do
    if rec.type == "cell" then
      run.rows[#run.rows + 1] = rec
    elseif rec.type == "environment" then
      run.environment = rec
    end
  end
  if #run.rows == 0 then error(("compare: %s holds no cells"):format(path), 2) end
  return run
end

local function has_labels(run)
  for _, r in ipairs(run.rows) do
    if type(r.label) ~= "string" then return false end
  end
  return true
end

local function index(run, fields, by_label)
  local by_id, order = {}, {}
  for _, rec in ipairs(run.rows) do
    local id
    if by_label then
      id = rec.label
    else
      local parts = {}
      for i, name in ipairs(fields) do parts[i] = key_text(rec[name]) end
      id = table.concat(parts, " ")
    end
    if by_id[id] then error(("compare: %s holds cell %s twice"):format(run.path, id), 3) end
    by_id[id] = rec
    order[#order + 1] = id
  end
  return by_id, order
end

local function positive(v) return type(v) == "number" and v > 0 and v < math.huge end

local function one_cell(id, ra, rb, o)
  local row = { cell = id }
  local sa = compare.samples_of(ra)
  local sb = compare.samples_of(rb)
  if sa and sb and #sa >= compare.MIN_SAMPLES and #sb >= compare.MIN_SAMPLES
     and stats.median(sa) > 0 and stats.median(sb) > 0 then
    local c = stats.compare(sb, sa, { threshold = o.threshold, level = o.level, seed = 1 })
    row.a, row.b = stats.median(sa), stats.median(sb)
    row.ratio, row.lo, row.hi = c.ratio, c.lo, c.hi
    row.verdict = c.verdict:upper()
    row.basis = ("%d/%d samples"):format(#sa, #sb)
  elseif positive(ra[o.key]) and positive(rb[o.key]) then
    row.a, row.b = ra[o.key], rb[o.key]
    row.ratio = row.b / row.a
    -- Without samples there is no interval: a difference beyond the threshold
    -- is reported but cannot be called significant.
    row.verdict = math.abs(row.ratio - 1) > o.threshold and "MOVED" or "SAME"
    row.basis = "ratio of " .. o.key
  else
    row.verdict = "NO DATA"
    row.basis = ("%s: %s / %s"):format(o.key, tostring(ra.status or ra[o.key]), tostring(rb.status or rb[o.key]))
  end
  return row
end

-- runs(a, b [, {threshold = 0.02, level = 0.95, key = "ms", match = {...}}])
--   -> rows, summary
-- rows: one per cell present in both, in a's order: cell, a, b (medians or
-- the key's values), ratio (b / a), lo, hi (the interval, when sampled),
-- verdict (FASTER, SLOWER, SAME, MOVED, NO DATA), basis.
-- summary: compared, faster, slower, same, moved (moved_slower: B the slower), no_data, geomean (of the
-- ratios), only_a, only_b (cell ids), by (label or the match fields).
function compare.runs(a, b, o)
  o = o or {}
  o.threshold = o.threshold or 0.02
  o.key = o.key or "ms"
  local fields = o.match or { "kernel", "shape", "m", "k" }
  local by_label = has_labels(a) and has_labels(b)
  local ia, order_a = index(a, fields, by_label)
  local ib, order_b = index(b, fields, by_label)
  local rows = {}
  local s = { compared = 0, faster = 0, slower = 0, same = 0, moved = 0, moved_slower = 0, no_data = 0,
              only_a = {}, only_b = {}, by = by_label and "label" or table.concat(fields, ",") }
  local logsum, nlog = 0, 0
  for _, id in ipairs(order_a) do
    if ib[id] then
      local row = one_cell(id, ia[id], ib[id], o)
      rows[#rows + 1] = row
      s.compared = s.compared + 1
      local k = row.verdict == "NO DATA" and "no_data" or row.verdict:lower()
      s[k] = s[k] + 1
      if k == "moved" and row.ratio > 1 then s.moved_slower = s.moved_slower + 1 end
      if row.ratio then logsum, nlog = logsum + math.log(row.ratio), nlog + 1 end
    else
      s.only_a[#s.only_a + 1] = id
    end
  end
  for _, id in ipairs(order_b) do
    if not ia[id] then s.only_b[#s.only_b + 1] = id end
  end
  s.geomean = nlog > 0 and math.exp(logsum / nlog) or nil
  return rows, s
end

return compare
