-- tools/gemv_diag.lua DEFINE [FMT...]: the quantized CUDA kernels at M x K
-- (default 14336 x 5120), weights rotated out of L2, timed as built and
-- with a diagnostic define added (e.g. GB_DIAG_X_COALESCED or
-- GB_STAGING_ONLY, kernels/cuda/gemv_common.cuh). A diagnostic build is not a
-- GEMV (its results are not checked): its time says what the part of the
-- kernel it changes costs. CHANGES="STAGES=3,ROWS=8": another geometry for
-- both builds (gemv_cuda.variant).
local gpu = require "gpu"
local gemv = require "gpubench.gemv"
local gemv_bench = require "gpubench.gemv_bench"
local ceilings = require "gpubench.ceilings"
local define = arg[1] or error("usage: gemv_diag.lua DEFINE [FMT...]", 0)
local dev = gpu.open { backend = "cuda" }
local m, k = tonumber(os.getenv("M") or 14336), tonumber(os.getenv("K") or 5120)
local fmts = { table.unpack(arg, 2) }
if #fmts == 0 then fmts = { "q4_0", "q8_0", "q4_k", "q5_k", "q6_k" } end
local changes = {}
for name, v in (os.getenv("CHANGES") or ""):gmatch("(%w+)=(%d+)") do changes[name] = tonumber(v) end
local ceil = ceilings.get(dev)
print(("%-6s %12s %12s  (GB/s, %% of the %.0f GB/s read ceiling; right: with %s)")
  :format("format", "kernel", "diagnostic", ceil.read_gbs, define))
for _, fmt in ipairs(fmts) do
  local spec = require("gpubench.gemv_cuda").variant(fmt, changes)
  local cell <close> = gemv_bench.prepare(dev, fmt, m, k, { rotate = true, spec = spec })
  local full = cell:time(200).ms
  local d = {}
  for name, v in pairs(spec.defines) do d[name] = v end
  d[define] = 1
  local diag = setmetatable({ defines = d }, { __index = spec })
  local launches = {}
  for i, l in ipairs(cell.launches) do
    launches[i] = { gemv.launch_args(dev, fmt, l[4], l[5], l[6], m, k, diag) }
  end
  local other = cell:time(200, { launches = launches }).ms
  local function show(ms)
    local gbs = ms and ceilings.gbs(cell.weight_bytes, ms)
    return gbs and ("%7.0f %4.1f%%"):format(gbs, ceilings.pct(gbs, ceil.read_gbs)) or "noise"
  end
  print(("%-6s %12s %12s"):format(fmt, show(full), show(other)))
end
