-- gpubench.linear_vendor: the vendor column of the Linear benchmark: cuBLASLt's
-- bf16 GEMM (dev:vendor_gemm, CUDA) on the same (N, K, T), over the group's
-- weights dequantized to bf16 on the device (kernels/cuda/planar_dequant.cu;
-- a bf16 group uses its own weights), checked against the FP64 reference of
-- the quantized weights (with the wider bound of weights rounded to bf16,
-- docs/LINEAR.md, "Accuracy") and timed cold by the same contract as ours.

local bench = require "gpubench.bench"
local linear = require "gpubench.linear"
local stats = require "gpubench.stats"

local vendor = {}

-- available(dev) -> true, or false and why (no CUDA, no cuBLASLt).
function vendor.available(dev)
  if dev.backend ~= "cuda" then return false, "the vendor GEMM (cuBLASLt) needs the CUDA backend" end
  local ok, g = pcall(dev.vendor_gemm, dev, { n = 8, k = 8, t = 1 })
  if not ok then return false, tostring(g) end
  vendor.info = g.vendor
  g:free()
  return true
end

function vendor.describe()
  local v = vendor.info or {}
  return { library = v.library, version = v.version, path = v.path }
end

function vendor.note()
  local v = vendor.info or {}
  return ("%s %s bf16 GEMM (fp32 compute, the heuristic's algorithm) over the weights dequantized to bf16 "
    .. "on the device; vendor/ours = vendor time / our time"):format(v.library or "cuBLASLt", v.version or "?")
end

local cache = require("gpubench.kernels").cache()
local DEQUANT = {} -- one spec per qtype: the cache keys on the spec table
local function dequant_kernel(dev, qtype)
  DEQUANT[qtype] = DEQUANT[qtype] or { file = "kernels/cuda/planar_dequant.cu", entry = "planar_dequant_" .. qtype }
  return cache.get(dev, DEQUANT[qtype])
end

-- prepare(dev, grp) -> {measure = function(p, o) -> {median_us, samples_us, check}, close}
function vendor.prepare(dev, grp)
  local gpu = require "gpu"
  local g, spec = grp.g, grp.spec
  local wbf = grp.w.buffer
  local owned = {}
  if g.qtype ~= "bf16" then
    wbf = dev:buffer(linear.buffer_bytes(2 * g.n * g.k))
    owned[#owned + 1] = wbf
    local blocks = math.min(65535, (g.n * g.k + 255) // 256)
    dequant_kernel(dev, g.qtype):launch({ blocks, 1, 1 }, { 256, 1, 1 }, grp.w.buffer, wbf,
      gpu.u32(g.n), gpu.u32(g.k), gpu.f32(grp.w.gscale))
    dev:sync()
  end
  local ops = {}
  local v = {}
  function v.measure(p, o)
    local op = dev:vendor_gemm { n = p.n, k = p.k, t = p.t }
    ops[#ops + 1] = op
    local launches = { { op, 1, 1, wbf, grp.x.buffer, grp.y.buffer } }
    local ystr = linear.run_and_download(dev, launches, grp.y.buffer, 2 * p.t * p.n)
    local chk = linear.compare(spec, grp.w, grp.x, ystr, p.t, o.max_rows, g.qtype == "bf16" and "exact" or "bf16")
    local out = { check = { failures = chk.failures, worst = chk.worst, rows = chk.rows } }
    if chk.failures > 0 then return out end -- not timed: outside the bound
    local cell <close> = bench.cell(dev, { launches = launches })
    local res = cell:cold { rule = o.rule, flush = o.flush, warmup = o.warmup }
    local us = {}
    for i, ms in ipairs(res.samples) do us[i] = ms * 1000 end
    out.median_us, out.samples_us = stats.median(us), us
    return out
  end
  function v.close()
    for _, op in ipairs(ops) do op:free() end
    for _, b in ipairs(owned) do b:free() end
  end
  return v
end

return vendor
