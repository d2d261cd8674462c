-- gpubench.clocks: is the GPU running at full speed while a cell is timed?
--
-- Why: one throttled card (power cap, heat) makes every cell it timed look
-- like a kernel difference. On NVIDIA GPUs, whichever backend opened them,
-- dev:clocks() reads NVML (loaded at run time, never required): SM and
-- memory clocks, their maxima, temperature, power and the driver's throttle
-- reasons. cells.table reads them before and after each cell and flags the
-- cell "throttled" when the SM clock after it fell below 90 % of the
-- maximum or a throttle reason was set.

local clocks = {}

-- NVML's clocks event reasons that mean the clock was held down (idle,
-- application clocks, sync boost and display clocks are not throttling).
clocks.REASONS = {
  [0x4] = "sw_power_cap", [0x8] = "hw_slowdown", [0x20] = "sw_thermal",
  [0x40] = "hw_thermal", [0x80] = "hw_power_brake",
}
clocks.MIN_FRACTION = 0.9
-- spin_up's target, as a fraction of the maximum SM clock: the maximum itself,
-- since a spin that stops short of it leaves the next timings at the lower
-- clock (docs/results/h200-linear.md, "Clocks"; an A/B sets it with
-- gpubench -e 'require("gpubench.clocks").SPIN_FRACTION = 0.9' SCRIPT)
clocks.SPIN_FRACTION = 1
-- spin_up's default time limit, ms (what the experiments' notes quote)
clocks.SPIN_MAX_MS = 2000

-- read(dev) -> the clocks table, or nil and why (not an NVIDIA GPU, no NVML).
function clocks.read(dev)
  if type(dev) ~= "userdata" and type(dev) ~= "table" then return nil, "no device" end
  local ok, c, why = pcall(function() return dev:clocks() end)
  if not ok then return nil, tostring(c) end
  return c, why
end

-- reason_names(mask) -> the throttle reasons set in mask, as names (sorted).
function clocks.reason_names(mask)
  local out = {}
  for bit, name in pairs(clocks.REASONS) do
    if mask and mask & bit ~= 0 then out[#out + 1] = name end
  end
  table.sort(out)
  return out
end

-- judge(before, after) -> why (a string) when the cell ran throttled, else nil.
-- The SM clock is judged after the cell, while it is still busy (before it,
-- an idle GPU runs at idle clocks); a throttle reason counts either time.
function clocks.judge(before, after)
  local why = {}
  if after and (after.max_sm_mhz or 0) > 0 and after.sm_mhz < clocks.MIN_FRACTION * after.max_sm_mhz then
    why[#why + 1] = ("SM clock %d MHz after the cell, below %d %% of its maximum %d MHz")
      :format(after.sm_mhz, math.floor(100 * clocks.MIN_FRACTION), after.max_sm_mhz)
  end
  local reasons = {}
  for _, c in pairs { before or false, after or false } do
    for _, n in ipairs(clocks.reason_names(c and c.reasons)) do reasons[n] = true end
  end
  local names = {}
  for n in pairs(reasons) do names[#names + 1] = n end
  table.sort(names)
  if #names > 0 then why[#why + 1] = "throttle reason " .. table.concat(names, ", ") end
  if #why == 0 then return nil end
  return table.concat(why, "; ")
end

-- spin_up(dev [, opts]) -> nil where the SM clock is already at or above
-- SPIN_FRACTION of its maximum (or NVML is absent), else {from_mhz, to_mhz,
-- ms}: the device kept busy (the pure-read kernel, back to back) until NVML
-- reads the SM clock at or above that, or opts.max_ms (2000) passed. Why: a
-- CUDA context holds an NVIDIA GPU's SM clock up while idle, Vulkan lets it
-- fall within a moment of host work and climb back only under load, so a
-- short timing after a host-bound step ran at a fraction of the clock
-- (docs/results/h200-linear.md, "Clocks").
function clocks.spin_up(dev, opts)
  local c = clocks.read(dev)
  local target = clocks.SPIN_FRACTION
  if not c or (c.max_sm_mhz or 0) <= 0 or c.sm_mhz >= target * c.max_sm_mhz then return nil end
  local gpu, kernels = require "gpu", require "gpubench.kernels"
  -- 32 reads of 256 MiB in one submission: milliseconds of device work per host turn, since the driver
  -- raises the clock for a GPU kept busy, not for one busy a third of the time (the same doc). Made and
  -- freed here: nothing outlives the call.
  local bytes = math.min(256 << 20, dev.max_buffer_bytes or (256 << 20))
  local k <close> = kernels.load(dev, "read")
  local src <close> = dev:buffer(bytes)
  src:fill("\0")
  local launch, out <close> = kernels.read_launch(dev, k, src)
  local batch <close> = dev:batch { count = 32, graph = true, launch }
  local max_ms = (opts and opts.max_ms) or clocks.SPIN_MAX_MS
  local t0, now = gpu.clock(), c
  repeat
    batch:submit()
    dev:sync()
    now = clocks.read(dev) or now
  until now.sm_mhz >= target * now.max_sm_mhz or (gpu.clock() - t0) * 1e3 >= max_ms
  return { from_mhz = c.sm_mhz, to_mhz = now.sm_mhz, ms = (gpu.clock() - t0) * 1e3 }
end

-- monitor(dev) -> a function(measure) that reads the clocks around
-- measure() and returns its row, flagged "throttled" (row.throttle says
-- why) when judge() says so; row.clocks = {before, after}. Without clocks
-- (not an NVIDIA GPU) the row is returned as it is.
function clocks.monitor(dev)
  local first, why = clocks.read(dev)
  if not first then return function(measure) return measure() end, why end
  return function(measure)
    local before = clocks.read(dev)
    local row = measure()
    local after = clocks.read(dev)
    if type(row) == "table" then
      row.clocks = { before = before, after = after }
      local t = clocks.judge(before, after)
      if t then
        row.throttle = t
        if row.status == nil or row.status == "ok" then row.status = "throttled" end
      end
    end
    return row
  end
end

return clocks
