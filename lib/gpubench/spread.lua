-- gpubench.spread: the same cells timed on several devices -- how far apart
-- the devices are per cell, and which device is off.
--
-- Why: one slow or throttled card in a fleet invalidates every comparison
-- made on it, and a per-cell number alone does not show it. So for every
-- cell that has a time on every device: its spread (slowest over fastest)
-- and each device's ratio to the cell's median across devices; for every
-- device the median of those ratios over the cells.
--
-- The outlier rule: a device is flagged `slow` (or `fast`) when its median
-- ratio is above 1 + threshold (below 1 - threshold), threshold 5 % unless
-- given, and `throttled` when any of its rows has that status (gpubench.clocks
-- saw the SM clock fall or a throttle reason during the cell). The median
-- across devices is the reference, so one slow card among several is the
-- one flagged; with two devices the median is their mean, a gap of more than
-- twice the threshold flags both, and a third device is what tells which is off.
--
--   local r = spread.analyze(sources, { key = "ms", threshold = 0.05 })
--   -- sources: { {name =, rows = {cell records}}, ... } (gpubench.merge.load's cells)
--   r.cells[i] = {key, label, n, min, median, max, spread, slowest}
--   r.units[j] = {label, cells, median_ratio, max_ratio, throttled, flags = {...}}

local stats = require "gpubench.stats"
local errors = require "gpubench.errors"

local spread = {}

spread.THRESHOLD = 0.05
-- The time a row is compared by, the first of these it has (per experiment:
-- bandwidth/gemv ms, linear median_us, moe us_step, swiglu fused_us).
spread.TIME_KEYS = { "ms", "median_us", "us_step", "fused_us" }
spread.RULE = "a device is slow (fast) when the median over cells of its time / the cell's median across devices "
  .. "is above 1 + threshold (below 1 - threshold); throttled when any of its rows is"

local USABLE = { ok = true, not_converged = true, throttled = true }

local function fail(fmt, ...) errors.usage("device_spread: " .. fmt:format(...)) end

-- The device a row was timed on, within its source: worker, then device index and uuid.
local function unit_key(src_index, r)
  return ("%d|%s|%s|%s"):format(src_index, tostring(r.worker), tostring(r.device), tostring(r.device_uuid))
end

local function unit_label(src, r, several)
  local parts = {}
  if several then parts[#parts + 1] = src.name end
  if r.worker ~= nil then parts[#parts + 1] = ("worker %s"):format(tostring(r.worker)) end
  parts[#parts + 1] = ("device %s"):format(r.device ~= nil and tostring(r.device) or "?")
  local text = table.concat(parts, " ")
  if r.device_name then text = text .. " (" .. tostring(r.device_name) .. ")" end
  return text
end

-- pick_key(sources) -> the first of TIME_KEYS that some row has as a number.
function spread.pick_key(sources)
  for _, k in ipairs(spread.TIME_KEYS) do
    for _, s in ipairs(sources) do
      for _, r in ipairs(s.rows) do if type(r[k]) == "number" then return k end end
    end
  end
  return nil
end

-- analyze(sources, {key =, threshold =}) -> {key, threshold, cells, units,
-- excluded, flagged}: see the header. Raises a usage error when fewer than
-- two devices or no common cell.
function spread.analyze(sources, o)
  o = o or {}
  local threshold = o.threshold or spread.THRESHOLD
  local key = o.key or spread.pick_key(sources)
  if not key then
    fail("no row has a time (%s): name the column with --key", table.concat(spread.TIME_KEYS, ", "))
  end
  local units, by_unit = {}, {}
  local cell_list, by_cell = {}, {}
  for si, src in ipairs(sources) do
    for _, r in ipairs(src.rows) do
      local uk = unit_key(si, r)
      local u = by_unit[uk]
      if not u then
        u = { label = unit_label(src, r, #sources > 1), times = {}, throttled = 0, rows = 0 }
        by_unit[uk] = u
        units[#units + 1] = u
      end
      u.rows = u.rows + 1
      if r.status == "throttled" then u.throttled = u.throttled + 1 end
      local ck = r.cell_index ~= nil and ("#" .. tostring(r.cell_index)) or ("label " .. tostring(r.label))
      if not by_cell[ck] then
        by_cell[ck] = { key = ck, label = r.label or ck, index = r.cell_index, order = #cell_list + 1 }
        cell_list[#cell_list + 1] = by_cell[ck]
      end
      local v = r[key]
      if type(v) == "number" and v > 0 and USABLE[r.status or "ok"] then
        if u.times[ck] then fail("%s has cell %s twice", u.label, by_cell[ck].label) end
        u.times[ck] = v
      end
    end
  end
  if #units < 2 then
    fail("the rows come from one device (%s): the spread needs the same cells on two or more "
      .. "(--devices LIST, or one file per device)", units[1] and units[1].label or "none")
  end
  table.sort(cell_list, function(a, b)
    if a.index and b.index then return a.index < b.index end
    return a.order < b.order
  end)
  local cells, excluded = {}, 0
  for _, c in ipairs(cell_list) do
    local values, on_all = {}, true
    for j, u in ipairs(units) do
      values[j] = u.times[c.key]
      if values[j] == nil then on_all = false end
    end
    if on_all then
      local med = stats.median(values)
      local lo, hi, slowest = math.huge, -math.huge, nil
      for j, v in ipairs(values) do
        if v < lo then lo = v end
        if v > hi then hi, slowest = v, units[j].label end
        local u = units[j]
        u.ratios = u.ratios or {}
        u.ratios[#u.ratios + 1] = v / med
      end
      cells[#cells + 1] = { key = c.key, label = c.label, cell_index = c.index, n = #values, min = lo, median = med,
                            max = hi, spread = hi / lo, slowest = slowest }
    else
      excluded = excluded + 1
    end
  end
  if #cells == 0 then fail("no cell has a %s on every device (%d cells, %d devices)", key, #cell_list, #units) end
  local flagged = {}
  for _, u in ipairs(units) do
    u.cells = #u.ratios
    u.median_ratio = stats.median(u.ratios)
    local mx = -math.huge
    for _, r in ipairs(u.ratios) do if r > mx then mx = r end end
    u.max_ratio = mx
    u.flags = {}
    if u.median_ratio > 1 + threshold then u.flags[#u.flags + 1] = "slow" end
    if u.median_ratio < 1 - threshold then u.flags[#u.flags + 1] = "fast" end
    if u.throttled > 0 then u.flags[#u.flags + 1] = "throttled" end
    u.verdict = #u.flags > 0 and table.concat(u.flags, ", ") or "ok"
    if #u.flags > 0 then flagged[#flagged + 1] = u end
    u.times, u.ratios = nil, nil
  end
  local spreads = {}
  for i, c in ipairs(cells) do spreads[i] = c.spread end
  return { key = key, threshold = threshold, cells = cells, units = units, excluded = excluded, flagged = flagged,
           median_spread = stats.median(spreads) }
end

return spread
