-- tools/fixed_cost_probe.lua: what a cold sample's fixed cost is made of. An
-- empty kernel timed as linear_suite times its points (batch:cold_sample, the
-- median of SAMPLES samples, default 20), in variants that each take one part
-- away or add one more:
--
--   default           clean flush, held stream, one launch (bench.fixed_cost's sample)
--   flush=none        no L2 flush before the start timestamp
--   hold=false        the flush and the timestamps queued without the hold
--   launches=2, 4     2 or 4 empty launches in the batch: the slope is the cost of one
--                     more launch with its barrier (Vulkan) inside the interval
--   direct=1, 2       no batch: dev:flush_l2() (waits), then t:start(), 1 or 2 plain
--                     launches and t:stop(). On Vulkan all three are recorded into one
--                     command buffer (no command-buffer boundary inside the interval,
--                     unlike a batch's cold sample); on CUDA the host's launch calls
--                     fall inside it, so there it is an upper bound
--
-- Why: the Vulkan fixed cost was several times CUDA's on the H200, and
-- the pure read of a point's bytes minus it matched CUDA's (docs/results/
-- h200-linear.md, "The Vulkan cold sample's fixed cost"). Its cold samples were
-- then three queue submissions; they are one now. If the fixed cost stays, the
-- slope over launches says whether each barrier and dispatch is what costs.
--
--   gpubench tools/fixed_cost_probe.lua            # BACKEND=cuda|vulkan (default: the first device)
local gpu = require "gpu"
local kernels = require "gpubench.kernels"
local stats = require "gpubench.stats"

local backend = os.getenv("BACKEND")
local dev = gpu.open(backend and { backend = backend } or {})
local samples = math.tointeger(tonumber(os.getenv("SAMPLES") or "20"))
  or error("SAMPLES must be an integer", 0)
local k <close> = kernels.load(dev, "empty")
local out <close> = dev:buffer(16)
local t <close> = dev:timer()

-- 3 warm-up samples (as bench.fixed_cost), then `samples` of sample() in us: prints and returns the median.
local function measure(name, sample)
  for _ = 1, 3 do sample() end
  local us = {}
  for i = 1, samples do us[i] = sample() end
  table.sort(us)
  print(("%-16s %8.2f us median  %8.2f min  %8.2f max"):format(name, stats.median(us), us[1], us[#us]))
  return stats.median(us)
end

local function probe(name, count, opts)
  local b <close> = dev:batch { count = count, graph = true, { k, 1, 1, out, 0 } }
  return measure(name, function() return 1000 * b:cold_sample(t, opts) end)
end

print(("fixed cost of a cold sample on %s (%s), median of %d samples"):format(dev.name, dev.backend, samples))
probe("default", 1, {})
probe("flush=none", 1, { flush = "none" })
probe("hold=false", 1, { hold = false })
local one = probe("launches=1", 1, {})
local two = probe("launches=2", 2, {})
local four = probe("launches=4", 4, {})
print(("one more launch inside the interval: %.2f us (2 - 1), %.2f us ((4 - 1) / 3)"):format(two - one,
  (four - one) / 3))

local function direct(name, count)
  return measure(name, function()
    dev:flush_l2()
    t:start()
    for _ = 1, count do k:launch(1, 1, out, 0) end
    t:stop()
    return 1000 * t:ms()
  end)
end
local d1 = direct("direct=1", 1)
local d2 = direct("direct=2", 2)
print(("a batch's cold sample over plain launches in one recording: %+.2f us; one more plain launch: %.2f us"):format(
  one - d1, d2 - d1))
