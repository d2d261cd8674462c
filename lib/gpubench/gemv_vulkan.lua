-- gpubench.gemv_vulkan: launch geometry of the Vulkan GEMV kernels (kernels/vulkan/gemv_*.comp).
--
-- Every kernel runs GEMV_WG = 256 invocations per workgroup (fixed in
-- gemv_common.glsl, repeated here as `block`), cut into lane groups of GEMV_T
-- lanes; a lane group computes GEMV_NR rows, so a workgroup computes
-- (256 / GEMV_T) * GEMV_NR rows: `rows_per_group`. gemv.lua launches
-- grid = {ceil(m / rows_per_group), 1, 1}. The defines are passed to the
-- compiler, and the shaders refuse to compile without them, so the numbers
-- below are the only copy of the geometry.
--
-- GEMV_T = 32 is one subgroup per lane group on NVIDIA (subgroup 32); 64
-- spreads a row over two. GEMV_NR rows share each chunk of x. GEMV_TOKENS
-- (1..8) is how many rows of x (tokens) each launch multiplies, every weight
-- decoded once for all of them: 1 in the table (y = W x), others through
-- variant (gemv.spec with tokens).

local WG = 256

-- The shaders address the weights with 32-bit byte offsets (and read up to 4
-- bytes past the last block), so one matrix stays below 4 GiB.
local MAX_WEIGHT_BYTES = (1 << 32) - 64

local MAX_TOKENS = 8

local function entry(fmt, t, nr, tokens)
  return {
    file = "kernels/vulkan/gemv_" .. fmt .. ".comp",
    entry = "main",
    block = { WG, 1, 1 },
    rows_per_group = (WG // t) * nr,
    defines = { GEMV_T = t, GEMV_NR = nr, GEMV_TOKENS = tokens or 1 },
    max_weight_bytes = MAX_WEIGHT_BYTES,
  }
end

-- Defaults: the fastest of the experiments/gemv_variants.lua sweeps at
-- 14336x5120 with rotated weights (docs/kernels/vulkan-gemv.md, "Work
-- split"): one row per lane group for the dense formats, 64-lane groups of 4
-- rows for q4_0/q8_0/q4_k, 32 lanes and 2 rows for q5_k/q6_k.
local M = {
  f32 = entry("f32", 32, 1),
  f16 = entry("f16", 32, 1),
  bf16 = entry("bf16", 32, 1),
  q4_0 = entry("q4_0", 64, 4),
  q8_0 = entry("q8_0", 64, 4),
  q4_k = entry("q4_k", 64, 4),
  q5_k = entry("q5_k", 32, 2),
  q6_k = entry("q6_k", 32, 2),
}

-- A spec for fmt with other defines ({GEMV_T = 64, GEMV_NR = 4},
-- {GEMV_TOKENS = 2}), with rows_per_group to match; for tuning runs
-- (experiments/gemv_variants.lua) and the multi-token kernels (gemv.spec with
-- tokens). Not stored in this table, so gemv.spec keeps returning the defaults.
function M.variant(fmt, changes)
  local base = type(fmt) == "string" and rawget(M, fmt) or nil
  if type(base) ~= "table" then
    error(("gemv_vulkan.variant: unknown format %s"):format(tostring(fmt)), 2)
  end
  local t, nr, tokens = base.defines.GEMV_T, base.defines.GEMV_NR, base.defines.GEMV_TOKENS
  for k, v in pairs(changes) do
    if k == "GEMV_TOKENS" then
      -- the shared message of both backends (gemv_cuda.variant says the same)
      if math.type(v) ~= "integer" or v < 1 or v > MAX_TOKENS then
        error(("gemv_vulkan.variant: GEMV_TOKENS=%s must be an integer in 1..%d"):format(tostring(v), MAX_TOKENS), 2)
      end
      tokens = v
    else
      if math.type(v) ~= "integer" or v < 1 then
        error(("gemv_vulkan.variant: %s=%s is not a positive integer"):format(tostring(k), tostring(v)), 2)
      end
      if k == "GEMV_T" then t = v
      elseif k == "GEMV_NR" then nr = v
      else
        error(("gemv_vulkan.variant: %s has no define %s (GEMV_T, GEMV_NR, GEMV_TOKENS)"):format(fmt, tostring(k)), 2)
      end
    end
  end
  if WG % t ~= 0 then
    error(("gemv_vulkan.variant: GEMV_T=%d does not divide the workgroup of %d"):format(t, WG), 2)
  end
  return entry(fmt, t, nr, tokens)
end

return M
