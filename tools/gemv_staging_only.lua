-- tools/gemv_staging_only.lua [FMT...]: how fast the quantized CUDA kernels'
-- copy pipeline alone reads the weights at M x K (default 14336 x 5120),
-- weights rotated out of L2, against the full kernel with the same geometry.
-- The staging-only build (-DGB_STAGING_ONLY, kernels/cuda/gemv_common.cuh)
-- stages every tile exactly as the kernel does and skips the decode: its
-- GB/s is the ceiling of the kernel's memory side; the gap to the full kernel
-- is what the decode costs.
local gpu = require "gpu"
local gemv = require "gpubench.gemv"
local gemv_bench = require "gpubench.gemv_bench"
local ceilings = require "gpubench.ceilings"
local dev = gpu.open { backend = "cuda" }
local m, k = tonumber(os.getenv("M") or 14336), tonumber(os.getenv("K") or 5120)
local fmts = #arg > 0 and arg or { "q4_0", "q8_0", "q4_k", "q5_k", "q6_k" }
-- CHANGES="STAGES=3,ROWS=8": another geometry (gemv_cuda.variant) for both builds
local changes = {}
for name, v in (os.getenv("CHANGES") or ""):gmatch("(%w+)=(%d+)") do changes[name] = tonumber(v) end
local ceil = ceilings.get(dev)
print(("%-6s %12s %12s  (GB/s, %% of the %.0f GB/s read ceiling)"):format("format", "kernel", "staging only", ceil.read_gbs))
for _, fmt in ipairs(fmts) do
  local spec = require("gpubench.gemv_cuda").variant(fmt, changes)
  local cell <close> = gemv_bench.prepare(dev, fmt, m, k, { rotate = true, spec = spec })
  local full = cell:time(200).ms
  local d = {}
  for name, v in pairs(spec.defines) do d[name] = v end
  d.GB_STAGING_ONLY = 1
  local staging = setmetatable({ defines = d }, { __index = spec })
  local launches = {}
  for i, l in ipairs(cell.launches) do
    launches[i] = { gemv.launch_args(dev, fmt, l[4], l[5], l[6], m, k, staging) }
  end
  local only = cell:time(200, { launches = launches }).ms
  local function show(ms)
    local gbs = ms and ceilings.gbs(cell.weight_bytes, ms)
    return gbs and ("%7.0f %4.1f%%"):format(gbs, ceilings.pct(gbs, ceil.read_gbs)) or "noise"
  end
  print(("%-6s %12s %12s"):format(fmt, show(full), show(only)))
end
