-- tools/placement_probe.lua [FMT M K]: does where a GEMV's buffers are
-- allocated change how fast an L2-resident cell runs? Times the same cell
-- (default f16 2816 x 1024, the CUDA cells that move between forward and
-- reversed gemv_table runs) allocated first, then after some large buffers,
-- then once more after those are freed, each timed like gemv_table (graph
-- replay, two-point, n = 200), twice in alternation.
local gpu = require "gpu"
local gemv_bench = require "gpubench.gemv_bench"
local dev = gpu.open { backend = os.getenv("BACKEND") or "cuda" }
local fmt, m, k = arg[1] or "f16", tonumber(arg[2] or 2816), tonumber(arg[3] or 1024)
-- WARM_MIB=N: allocate and free N MiB before any cell (does a large
-- allocation made and released first change where the cells land?)
if os.getenv("WARM_MIB") then dev:buffer(tonumber(os.getenv("WARM_MIB")) << 20):free() end
local cells, names = {}, {}
-- each placement twice: the weight buffer as gemv_table sizes it, and
-- rounded up to a multiple of 2 MiB
local function add(name)
  cells[#cells + 1] = gemv_bench.prepare(dev, fmt, m, k); names[#names + 1] = name
  cells[#cells + 1] = gemv_bench.prepare(dev, fmt, m, k, { round_bytes = 2 << 20 })
  names[#names + 1] = name .. ", 2 MiB"
end
add("allocated first")
local big = {}
for i = 1, 4 do big[i] = dev:buffer(64 << 20) end
add("after 4 x 64 MiB")
local more = tonumber(os.getenv("BIG_MIB") or 300)
for i = 5, 8 do big[i] = dev:buffer(more << 20) end
add(("after 4 x %d MiB more"):format(more))
for _, b in ipairs(big) do b:free() end
add("after freeing them")
for round = 1, 2 do
  for i, c in ipairs(cells) do
    -- no flush: the probe looks at the state earlier work leaves (gpubench.bench)
    local t = c:time(200, { flush = false }).ms
    print(("round %d  %-32s %s"):format(round, names[i], t and ("%.5f ms"):format(t) or "noise"))
  end
end
for _, c in ipairs(cells) do c:close() end
