-- tools/read_at_size.lua [MB...]: the pure-read kernel's GB/s over buffers of
-- the given sizes (default 10 20 41 80 160 1024 MB), rotated out of L2 as
-- gemv_table --rotate rotates weights (copies totalling >= 4x L2, n >= the
-- copy count, graph replay, median of three two-point timings), against the
-- cached read ceiling (1 GiB).
--
-- Why: the ceiling is measured over 1 GiB, where one launch's start and end
-- are a negligible part of its time; a 14336 x 5120 q4_0 GEMV reads 41 MB, a
-- few microseconds' work. This says what fraction of the ceiling a read of that size can
-- reach at all, launched back to back as the GEMV cells are.
--
-- OVERLAP=1: the launches overlap the one before (timing.runner's overlap;
-- kernels/cuda/read.cu waits before its first load), as gemv_variants --overlap.
--
-- COLD=1: instead, one call per sample after a clean L2 flush (bench's cold
-- method, the median of 20 samples), as linear_suite times its points: what
-- a single cold read of that size reaches, start and tail included.
local gpu = require "gpu"
local bench = require "gpubench.bench"
local ceilings = require "gpubench.ceilings"
local kernels = require "gpubench.kernels"
local timing = require "gpubench.timing"

local dev = gpu.open { backend = os.getenv("BACKEND") or "cuda" }
local sizes = {}
for _, a in ipairs(arg) do sizes[#sizes + 1] = assert(tonumber(a), "sizes are MB numbers, got " .. a) end
if #sizes == 0 then sizes = { 10, 20, 41, 80, 160, 1024 } end
-- L2_BYTES: for a device that does not report its L2 (lavapipe)
local l2 = dev.l2_bytes > 0 and dev.l2_bytes or tonumber(os.getenv("L2_BYTES") or "")
  or error("the device reports no L2 size: set L2_BYTES", 0)
local ceil = ceilings.get(dev)
local COLD = os.getenv("COLD") == "1"
local OVERLAP = os.getenv("OVERLAP") == "1"
if COLD and OVERLAP then error("COLD=1 times one call per sample: nothing before it to overlap (drop OVERLAP=1)", 0) end
local k = kernels.load(dev, "read")
local block, grid = 256, kernels.grid(dev)
local out <close> = dev:buffer(grid * block * 4)
out:fill("\0")
print(("%8s %7s %10s %9s %7s  (of the %.0f GB/s read ceiling)"):format("MB", "copies", "us", "GB/s", "% read", ceil.read_gbs))
for _, mb in ipairs(sizes) do
  local bytes = math.floor(mb * 1e6) // 16 * 16
  local copies = (COLD or bytes >= 4 * l2) and 1 or timing.rotation(bytes, l2)
  local bufs, launches = {}, {}
  for i = 1, copies do
    bufs[i] = dev:buffer(bytes)
    bufs[i]:fill("\0")
    launches[i] = { k, grid, block, bufs[i], out, bytes // 16, 0xA5A5A5A5 }
  end
  local d
  if COLD then
    local cell <close> = bench.cell(dev, { launches = launches })
    d = { ms = cell:cold { rule = { samples = 20 } }.ms }
  else
    local n = math.max(copies, bytes >= 256e6 and 8 or 200)
    local r <close> = timing.runner(dev, launches, { graph = true, overlap = OVERLAP })
    dev:flush_l2()
    d = timing.two_point_median(r:fn(), n, 3, { warmup = n })
  end
  local gbs = d.ms and ceilings.gbs(bytes, d.ms)
  print(("%8.1f %7d %10s %9s %7s"):format(mb, copies, d.ms and ("%.2f"):format(d.ms * 1e3) or "noise",
    gbs and ("%.0f"):format(gbs) or "-", gbs and ("%.1f"):format(ceilings.pct(gbs, ceil.read_gbs)) or "-"))
  for _, b in ipairs(bufs) do b:free() end
end
k:free()
