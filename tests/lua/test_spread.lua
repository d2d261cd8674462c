-- gpubench.spread: per-cell spread across devices and the outlier rule, on
-- synthetic rows whose answers are known exactly.
local t = dofile("tests/lua/harness.lua")
local spread = require "gpubench.spread"

-- rows of `units` workers over `n` cells: cell c takes c ms, times factor[w].
local function rows_of(n, factors, o)
  o = o or {}
  local rows = {}
  for w, f in ipairs(factors) do
    for c = 1, n do
      if not (o.missing and o.missing[w] == c) then
        rows[#rows + 1] = { worker = w - 1, device = 0, device_name = "gpu", device_uuid = "u", cell_index = c,
                            label = "cell " .. c, ms = c * f,
                            status = (o.throttled and o.throttled[w] == c) and "throttled" or "ok" }
      end
    end
  end
  return rows
end

local function unit(r, i) return r.units[i] end

t.test("a planted slow device is the one flagged; per-cell spread is its factor", function()
  local r = spread.analyze({ { name = "x", rows = rows_of(5, { 1, 1, 1.3, 1 }) } })
  t.eq(r.key, "ms")
  t.eq(#r.cells, 5)
  for c, cell in ipairs(r.cells) do
    t.eq(cell.cell_index, c)
    t.near(cell.min, c, 1e-12); t.near(cell.max, 1.3 * c, 1e-12); t.near(cell.median, c, 1e-12)
    t.near(cell.spread, 1.3, 1e-12)
    t.eq(cell.slowest, "worker 2 device 0 (gpu)")
  end
  t.near(unit(r, 3).median_ratio, 1.3, 1e-12)
  t.eq(unit(r, 3).verdict, "slow")
  for _, i in ipairs { 1, 2, 4 } do
    t.near(unit(r, i).median_ratio, 1, 1e-12)
    t.eq(unit(r, i).verdict, "ok")
  end
  t.eq(#r.flagged, 1)
  t.eq(r.flagged[1].label, "worker 2 device 0 (gpu)")
  t.near(r.median_spread, 1.3, 1e-12)
end)

t.test("the threshold: 4 % off passes at 5 %, is flagged at 3 %; a fast device is flagged fast", function()
  local rows = rows_of(3, { 1, 1, 1.04, 0.9, 1 })
  t.eq(#spread.analyze({ { name = "x", rows = rows } }).flagged, 1, "only the fast one at 5 %")
  local r = spread.analyze({ { name = "x", rows = rows } }, { threshold = 0.03 })
  t.eq({ unit(r, 3).verdict, unit(r, 4).verdict, unit(r, 1).verdict }, { "slow", "fast", "ok" })
  t.near(unit(r, 4).median_ratio, 0.9, 1e-12)
end)

t.test("a throttled row flags its device whatever its times", function()
  local r = spread.analyze({ { name = "x", rows = rows_of(4, { 1, 1, 1 }, { throttled = { [2] = 3 } }) } })
  t.eq({ unit(r, 1).verdict, unit(r, 2).verdict, unit(r, 2).throttled }, { "ok", "throttled", 1 })
end)

t.test("two devices: the median is their mean, both are flagged past twice the threshold", function()
  local r = spread.analyze({ { name = "x", rows = rows_of(2, { 1, 1.2 }) } })
  t.near(unit(r, 1).median_ratio, 1 / 1.1, 1e-12)
  t.near(unit(r, 2).median_ratio, 1.2 / 1.1, 1e-12)
  t.eq({ unit(r, 1).verdict, unit(r, 2).verdict }, { "fast", "slow" })
  t.near(r.cells[1].spread, 1.2, 1e-12)
end)

t.test("cells not timed on every device are left out and counted", function()
  local r = spread.analyze({ { name = "x", rows = rows_of(4, { 1, 1, 1 }, { missing = { [2] = 3 } }) } })
  t.eq(#r.cells, 3)
  t.eq(r.excluded, 1)
  t.eq({ r.cells[1].cell_index, r.cells[2].cell_index, r.cells[3].cell_index }, { 1, 2, 4 })
  local noise = rows_of(2, { 1, 1 })
  noise[1].status, noise[1].ms = "noise", nil
  t.eq(spread.analyze({ { name = "x", rows = noise } }).excluded, 1, "a noise row has no time")
end)

t.test("one file per device: each file is a device, cells matched by cell_index; the time key is picked", function()
  local a, b = {}, {}
  for c = 1, 3 do
    a[c] = { device = 0, device_name = "A", cell_index = c, label = "c" .. c, median_us = 10 * c }
    b[c] = { device = 0, device_name = "A", cell_index = c, label = "c" .. c, median_us = 12 * c }
  end
  local r = spread.analyze({ { name = "a.jsonl", rows = a }, { name = "b.jsonl", rows = b } })
  t.eq(r.key, "median_us")
  t.eq({ unit(r, 1).label, unit(r, 2).label }, { "a.jsonl device 0 (A)", "b.jsonl device 0 (A)" })
  t.near(r.cells[2].spread, 1.2, 1e-12)
end)

t.test("one device, or no time: usage errors", function()
  local _, e = pcall(spread.analyze, { { name = "x", rows = rows_of(3, { 1 }) } })
  t.eq(e.gpubench_exit, 2)
  t.eq(t.error_text(e), "device_spread: the rows come from one device (worker 0 device 0 (gpu)): the spread needs "
    .. "the same cells on two or more (--devices LIST, or one file per device)")
  _, e = pcall(spread.analyze, { { name = "x", rows = { { worker = 0, label = "a" }, { worker = 1, label = "a" } } } })
  t.eq(t.error_text(e), "device_spread: no row has a time (ms, median_us, us_step, fused_us): name the column with --key")
  _, e = pcall(spread.analyze, { { name = "x", rows = rows_of(2, { 1, 1 }, { missing = { [1] = 1, [2] = 2 } }) } })
  t.eq(t.error_text(e), "device_spread: no cell has a ms on every device (2 cells, 2 devices)")
end)

t.run()
