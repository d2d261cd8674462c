-- tools/linear_replay.lua LABEL [SUITE]: whether a linear_suite point's time
-- depends on what ran before it in the process. Runs SUITE's (default all)
-- weight groups in order as linear_suite does (check, cold timing of every
-- point), up to and including the group of the point labelled LABEL (e.g.
-- "35b.output_head T=1"), printing that group's times; then times LABEL again
-- three ways: on the same buffers after the group's other points, in a fresh
-- group of the same shape, and the pure read of each group's weights.
-- Why: docs/results/h200-linear.md, "The Vulkan q6 heads inside --suite all".
--
--   BACKEND=vulkan gpubench tools/linear_replay.lua "35b.output_head T=1"
local gpu = require "gpu"
local ceilings = require "gpubench.ceilings"
local lb = require "gpubench.linear_bench"
local suites = require "gpubench.linear_suites"

local label, suite = arg[1], arg[2] or "all"
if not label then
  io.stderr:write("usage: [BACKEND=vulkan] gpubench tools/linear_replay.lua LABEL [SUITE]\n")
  os.exit(2)
end
local dev = gpu.open { backend = os.getenv("BACKEND") or "cuda" }
local points = suites.expand(suite, "a16")
local groups = suites.groups(points)
local po = { flush = "clean", warmup = 3, rule = { samples = 20 }, ceil = ceilings.get(dev) }

-- the clocks NVML reports right after each measurement (nothing where there is no NVML)
local clocks = require "gpubench.clocks"
local function line(what, us)
  local c = clocks.read(dev)
  print(("  %-58s %10.2f us%s"):format(what, us, c and ("   SM %d MHz, memory %d MHz, %.0f W"):format(c.sm_mhz or 0,
    c.memory_mhz or 0, c.power_w or 0) or ""))
end

print(("linear_replay %q on %s (%s), suite %s"):format(label, dev.name, dev.backend, suite))
for gi, g in ipairs(groups) do
  local target
  for _, p in ipairs(g.points) do if lb.point_label(p) == label then target = p end end
  local grp = lb.prepare_group(dev, g, po)
  local read_us = lb.read_weights(dev, grp, po)
  if target then
    line(("group %d, made: pure read of its weights"):format(gi), read_us)
    for i = 1, 3 do line(("group %d, made: %s, timing %d"):format(gi, label, i), lb.measure(dev, grp, target, po).median_us) end
  end
  for _, p in ipairs(g.points) do
    local row = lb.measure(dev, grp, p, po)
    if target then line(("group %d: %s"):format(gi, lb.point_label(p)), row.median_us or 0 / 0) end
  end
  if target then
    line("again, same buffers, after the group's points: " .. label, lb.measure(dev, grp, target, po).median_us)
    line("again, pure read of the same weights", lb.read_weights(dev, grp, po))
    lb.close_group(grp)
    local fresh = lb.prepare_group(dev, g, po)
    line("a fresh group of the same shape: pure read of its weights", lb.read_weights(dev, fresh, po))
    line("a fresh group of the same shape: " .. label, lb.measure(dev, fresh, target, po).median_us)
    lb.close_group(fresh)
    return
  end
  lb.close_group(grp)
end
io.stderr:write(("linear_replay: no point labelled %q in suite %s\n"):format(label, suite))
os.exit(2)
