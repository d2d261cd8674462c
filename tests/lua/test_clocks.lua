-- gpubench.clocks: the throttle verdict from NVML readings (synthetic ones
-- here), and cells.table flagging a throttled cell without touching its numbers.
local t = dofile("tests/lua/harness.lua")
local clocks = require "gpubench.clocks"
local cells = require "gpubench.cells"

local function reading(sm, reasons) return { sm_mhz = sm, max_sm_mhz = 1980, reasons = reasons or 0 } end

t.test("judge: the SM clock after the cell against 90 % of the maximum, and throttle reasons", function()
  t.eq(clocks.judge(reading(345), reading(1980)), nil, "idle before, full speed after: fine")
  t.eq(clocks.judge(reading(1980), reading(1782)), nil, "exactly 90 %")
  t.eq(clocks.judge(reading(1980), reading(1700)),
    "SM clock 1700 MHz after the cell, below 90 % of its maximum 1980 MHz")
  t.eq(clocks.judge(reading(1980, 0x4), reading(1980)), "throttle reason sw_power_cap")
  t.eq(clocks.judge(reading(1980, 0x1 | 0x2), reading(1980, 0x10)), nil, "idle, app clocks, sync boost are not throttling")
  t.eq(clocks.judge(nil, reading(1000, 0x40 | 0x8)),
    "SM clock 1000 MHz after the cell, below 90 % of its maximum 1980 MHz; throttle reason hw_slowdown, hw_thermal")
  t.eq(clocks.reason_names(0x80 | 0x20), { "hw_power_brake", "sw_thermal" })
end)

-- A device whose clocks() returns scripted readings.
local function fake_dev(seq)
  local i = 0
  return { clocks = function() i = i + 1; return seq[i] or seq[#seq] end }
end

t.test("cells.table with a monitor: a throttled cell keeps its numbers, flagged, with both readings", function()
  -- monitor() reads once to see whether clocks exist, then before/after each cell
  local dev = fake_dev { reading(1980), reading(1980), reading(1980), reading(1980), reading(1500) }
  local rows = cells.run { cells = { { label = "a" }, { label = "b" } }, rounds = 1, monitor = dev,
                           measure = function(c) return { name = c.label, ms = 1.5 } end }
  t.eq({ rows[1].status, rows[1].ms }, { nil, 1.5 })
  t.eq({ rows[2].status, rows[2].ms }, { "throttled", 1.5 })
  t.truthy(rows[2].throttle:find("1500 MHz", 1, true), rows[2].throttle)
  t.eq(rows[2].clocks.after.sm_mhz, 1500)
  -- a device without clocks: rows untouched
  local plain = { clocks = function() return nil, "not an NVIDIA GPU" end }
  local r = cells.run { cells = { {} }, rounds = 1, monitor = plain, measure = function() return { ms = 1 } end }
  t.eq(r[1].clocks, nil)
end)

-- The Vulkan device with scripted clocks() readings: its other methods act on the device itself.
local function scripted(dev, seq)
  local i, w = 0, {}
  w.reads = function() return i end
  return setmetatable(w, { __index = function(_, k)
    if k == "clocks" then return function() i = i + 1; return seq[i] or seq[#seq] end end
    local v = dev[k]
    if type(v) == "function" then return function(_, ...) return v(dev, ...) end end
    return v
  end })
end

t.test("spin_up: busy until the SM clock reads its maximum (SPIN_FRACTION), nothing where it already does", function()
  local dev = t.device("vulkan")
  t.eq(clocks.SPIN_FRACTION, 1, "the maximum itself")
  t.eq(clocks.spin_up(scripted(dev, { reading(1980) })), nil, "already at the maximum")
  local w = scripted(dev, { reading(345), reading(600), reading(1425), reading(1980) })
  collectgarbage()
  local before = require("gpu").live()
  local s = clocks.spin_up(w, { max_ms = 1e7 }) -- lavapipe reads slowly: no time limit in the way
  collectgarbage()
  t.eq({ s.from_mhz, s.to_mhz, w.reads() }, { 345, 1980, 4 }, "one reading per busy batch until the clock is up")
  t.eq(require("gpu").live(), before, "its kernel, buffers and batch freed before it returns (w still alive)")
  t.truthy(s.ms > 0, "its time")
  local to_max = scripted(dev, { reading(1782), reading(1890), reading(1980) })
  local m = clocks.spin_up(to_max, { max_ms = 1e7 })
  t.eq({ m.from_mhz, m.to_mhz, to_max.reads() }, { 1782, 1980, 3 }, "past 90 % (1782 MHz) on to the maximum")
  clocks.SPIN_FRACTION = clocks.MIN_FRACTION -- an A/B's lower target
  local at90 = scripted(dev, { reading(1782), reading(1980) })
  t.eq({ clocks.spin_up(at90), at90.reads() }, { nil, 1 }, "SPIN_FRACTION = 0.9: 1782 MHz is enough")
  clocks.SPIN_FRACTION = 1
  local stuck = scripted(dev, { reading(600) })
  local g = clocks.spin_up(stuck, { max_ms = 30 })
  t.truthy(g.to_mhz == 600 and g.ms >= 30, "gives up after max_ms, saying where the clock stayed")
  t.eq(clocks.spin_up({ clocks = function() return nil, "not an NVIDIA GPU" end }), nil, "no NVML: nothing")
end)

t.test("on the Vulkan device: clocks on an NVIDIA GPU, else none and why (lavapipe)", function()
  local dev = t.device("vulkan")
  local c, why = clocks.read(dev)
  if dev.vendor_id == 0x10de then
    t.truthy(c and c.sm_mhz > 0 and c.max_sm_mhz >= c.sm_mhz, tostring(why))
    t.eq(c.source, "NVML")
  else
    t.eq(c, nil)
    t.truthy(why:find("not an NVIDIA GPU", 1, true), why)
  end
end)

t.run()
