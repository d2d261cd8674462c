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
-- GEMV_T = 32: one subgroup per lane group on NVIDIA (subgroup 32), and every
-- format's chunk (a vec4/uvec4 for dense rows, a block or 1/8 super-block of
-- 32 weights for the quantized ones) gives 32 lanes work from k = 1024 up.
-- GEMV_NR = 2: each chunk of x is loaded once for two rows.

local WG = 256

-- The shaders address the weights with 32-bit byte offsets (and read up to 4
-- bytes past the last block), so one matrix stays below 4 GiB.
local MAX_WEIGHT_BYTES = (1 << 32) - 64

local function entry(fmt, t, nr)
  return {
    file = "kernels/vulkan/gemv_" .. fmt .. ".comp",
    entry = "main",
    block = { WG, 1, 1 },
    rows_per_group = (WG // t) * nr,
    defines = { GEMV_T = t, GEMV_NR = nr },
    max_weight_bytes = MAX_WEIGHT_BYTES,
  }
end

return {
  f32 = entry("f32", 32, 2),
  f16 = entry("f16", 32, 2),
  bf16 = entry("bf16", 32, 2),
  q4_0 = entry("q4_0", 32, 2),
  q8_0 = entry("q8_0", 32, 2),
  q4_k = entry("q4_k", 32, 2),
  q5_k = entry("q5_k", 32, 2),
  q6_k = entry("q6_k", 32, 2),
}
