-- The CUDA SwiGLU kernels (kernels/cuda/swiglu_*.cu) on the FP64 reference
-- through the experiment's own checks (tests/lua/swiglu_cases.lua), on a CUDA
-- device (skipped, 77, without one; NVRTC compiles the kernels for sm_90 in
-- tests/c/test_nvrtc_compile.c). Shapes: K % 32 != 0 (the partial last chunk
-- of the mma loop), N % 8 != 0 (rows past N clamped; the scalar elementwise
-- path), N = 1, long K; every M; other geometries; the vendor path where
-- dev:vendor_gemm exists (cuBLASLt), else the reason it is n/a.
local t = dofile("tests/lua/harness.lua")
local sc = dofile("tests/lua/swiglu_cases.lua")(t)
local sb = require "gpubench.swiglu_bench"

local ALL_M = { 1, 2, 3, 4, 5, 6, 7, 8 }

t.test("chain and fused match the reference: ragged shapes, every M", function()
  local dev = t.device("cuda")
  sc.check_paths(dev, {
    { n = 37, k = 136, m = ALL_M },
    { n = 130, k = 1000, m = ALL_M },
    { n = 1, k = 8, m = { 1, 8 } },
    { n = 64, k = 256, m = { 2, 7 } },
    { n = 24, k = 6144, m = { 1, 4, 8 } },
    { n = 6912, k = 1536, m = { 1, 8 } }, -- AstrAI 1B
  }, { "chain", "fused" })
end)

t.test("KSPLIT: the fused kernel's warps x slices per block, the GEMV unchanged; limits", function()
  local S = require "gpubench.swiglu_cuda"
  local g = assert(S.geometry { WARPS = 2, KSPLIT = 4 })
  local f, v = S.fused(g, 8), S.gemv(g, 8)
  t.eq({ f.block, f.grid(13824), f.defines.KSPLIT }, { 256, 864, 4 }, "8 warps a block, 16 outputs a block")
  t.eq({ v.block, v.defines.KSPLIT }, { 64, nil })
  t.eq(S.fused(assert(S.geometry {}), 1).defines.KSPLIT, S.DEFAULT.KSPLIT)
  t.eq(S.fused(assert(S.geometry { KSPLIT = 1 }), 1).block, 32 * S.DEFAULT.WARPS)
  local no, why = S.geometry { WARPS = 8, KSPLIT = 8 }
  t.eq({ no, why }, { nil, "WARPS=8 x KSPLIT=8 warps is more than a block's 1024 threads" })
  local no2, why2 = S.geometry { KSPLIT = 9 }
  t.eq({ no2, why2 }, { nil, "KSPLIT=9 is not an integer from 1 to 8" })
end)

t.test("STAGES: 0 or 2..8, the fused kernel only, within a block's 227 KiB of shared memory", function()
  local S = require "gpubench.swiglu_cuda"
  local g = assert(S.geometry { STAGES = 4, UNROLL = 4, KSPLIT = 2 })
  t.eq({ S.fused(g, 1).defines.STAGES, S.gemv(g, 1).defines.STAGES }, { 4, nil })
  t.eq(S.fused(assert(S.geometry {}), 1).defines.STAGES, 0)
  -- 2 warps x 4 stages x 16 rows x 256 bytes, and one slice's sums (4 x 32 floats)
  t.eq(S.fused_smem_bytes(g), 2 * 4 * 16 * 256 + 512)
  t.eq({ S.geometry { STAGES = 1 } }, { nil, "STAGES=1 is not 0 (direct loads) or an integer from 2 to 8" })
  t.eq({ S.geometry { STAGES = 9 } }, { nil, "STAGES=9 is not 0 (direct loads) or an integer from 2 to 8" })
  -- past the static 48 KiB: dynamic shared memory (swiglu_fused.cu)
  t.eq(S.fused_smem_bytes(assert(S.geometry { STAGES = 4, UNROLL = 8, KSPLIT = 2 })), 66048)
  local no, why = S.geometry { STAGES = 8, UNROLL = 8, KSPLIT = 4 }
  t.eq(no, nil)
  t.eq(why, "the fused kernel's shared memory, 263680 bytes (STAGES=8 x 4 warps x 16 TILES rows x 64 UNROLL bytes, and the k-slice sums), is more than a block's 232448")
end)

t.test("shape rules: staged; 3 short stages, 4 slices up to N = 8192; 2 short, 8 slices up to 12288; 2 of 4 chunks, 4 slices above; Vulkan has none", function()
  local S = require "gpubench.swiglu_cuda"
  local g, rule = S.for_shape(6912, 1536)
  t.eq({ g.KSPLIT, g.STAGES, g.UNROLL, g.WARPS, g.TILES }, { 4, 3, 2, S.DEFAULT.WARPS, S.DEFAULT.TILES })
  t.truthy(rule == S.SHAPE_RULES[1], "6912 rows: the first rule")
  t.eq((S.for_shape(8192, 4096)).STAGES, 3)
  local mid, second = S.for_shape(11008, 4096)
  t.eq({ mid.KSPLIT, mid.STAGES, mid.UNROLL, second == S.SHAPE_RULES[2] }, { 8, 2, 2, true })
  t.eq((S.for_shape(12288, 4096)).KSPLIT, 8)
  local big, third = S.for_shape(12289, 4096)
  t.eq({ big.KSPLIT, big.STAGES, big.UNROLL, third == S.SHAPE_RULES[3] }, { 4, 2, 4, true })
  t.eq((S.for_shape(24576, 6144)).STAGES, 2)
  for _, r in ipairs(S.SHAPE_RULES) do
    t.truthy(S.fused_smem_bytes(assert(S.geometry(r.changes))) <= 48 * 1024, "every rule fits a block's shared memory")
  end
  t.eq(S.DEFAULT.STAGES, 0, "the base of --geometry: direct loads")
  local V = require "gpubench.swiglu_vulkan"
  t.eq({ V.for_shape(6912, 1536) }, { V.geometry {} })
end)

t.test("other geometries: tiles, unroll, warps and k slices", function()
  local dev = t.device("cuda")
  sc.check_paths(dev, {
    { n = 131, k = 776, m = { 1, 5, 8 }, geometry = { TILES = 2, UNROLL = 4, WARPS = 2, KSPLIT = 3 } },
    { n = 300, k = 5120, m = { 1, 8 }, geometry = { WARPS = 1, KSPLIT = 4 } },
    { n = 37, k = 40, m = { 2, 8 }, geometry = { KSPLIT = 8 } }, -- slices past k: their warps add zeros
    { n = 131, k = 776, m = { 1, 5, 8 }, geometry = { TILES = 2, UNROLL = 4, WARPS = 2 } },
    { n = 77, k = 328, m = { 3, 8 }, geometry = { TILES = 1, UNROLL = 1, WARPS = 1 } },
    { n = 300, k = 2056, m = { 2, 8 }, geometry = { TILES = 3, UNROLL = 3, WARPS = 8 } },
    { n = 40, k = 4096, m = { 6 }, geometry = { TILES = 4, UNROLL = 16, WARPS = 4 } },
  }, { "chain", "fused" })
end)

-- The staged fused loop: slices shorter than one stage, a last stage cut
-- short inside a chunk (k % 32 != 0) and between chunks, more stages than the
-- slice has, N % 8 != 0, several tiles and warps.
t.test("staged geometries (STAGES >= 2): whole row runs through shared memory", function()
  local dev = t.device("cuda")
  sc.check_paths(dev, {
    { n = 131, k = 776, m = { 1, 5, 8 }, geometry = { STAGES = 2, UNROLL = 2, TILES = 2, KSPLIT = 3 } },
    { n = 300, k = 5120, m = { 1, 8 }, geometry = { STAGES = 4, UNROLL = 4, KSPLIT = 2 } },
    { n = 37, k = 40, m = { 2, 8 }, geometry = { STAGES = 3, UNROLL = 2, KSPLIT = 4 } }, -- slices 2, 3 past k
    { n = 77, k = 328, m = { 3, 8 }, geometry = { STAGES = 8, UNROLL = 1, KSPLIT = 1 } },
    { n = 300, k = 2056, m = { 2, 8 }, geometry = { STAGES = 3, UNROLL = 8, KSPLIT = 1, WARPS = 1 } },
    { n = 6912, k = 1536, m = { 1, 8 }, geometry = { STAGES = 3, UNROLL = 2, KSPLIT = 4, WARPS = 1 } },
    { n = 24, k = 6144, m = { 1, 4 }, geometry = { STAGES = 3, UNROLL = 2, KSPLIT = 2, WARPS = 2 } },
    { n = 300, k = 1000, m = { 1, 8 }, geometry = { STAGES = 2, UNROLL = 2, KSPLIT = 8 } }, -- the 8193..12288 rule
    { n = 300, k = 5120, m = { 1, 8 }, geometry = { STAGES = 3, UNROLL = 4, KSPLIT = 4 } }, -- 49152 + 1536 bytes: dynamic shared memory
  }, { "fused" })
end)

t.test("EARLY_RELEASE=1 (an overlapping next launch released at the block's start): chain and fused match the reference", function()
  local dev = t.device("cuda")
  sc.check_paths(dev, {
    { n = 37, k = 136, m = { 1, 3, 8 }, geometry = { EARLY_RELEASE = 1, KSPLIT = 1, WARPS = 1 } }, -- 32-thread blocks
    { n = 300, k = 1000, m = { 1, 8 }, geometry = { EARLY_RELEASE = 1, STAGES = 2, UNROLL = 2, KSPLIT = 8 } },
    { n = 6912, k = 1536, m = { 1, 8 }, geometry = { EARLY_RELEASE = 1, STAGES = 3, UNROLL = 2, KSPLIT = 4 } },
  }, { "chain", "fused" })
  local S = require "gpubench.swiglu_cuda"
  t.eq({ S.geometry { EARLY_RELEASE = 2 } }, { nil, "EARLY_RELEASE=2 is not 0 or 1" })
  t.eq(S.fused(assert(S.geometry {}), 1).defines.EARLY_RELEASE, nil, "EARLY_RELEASE=0 is the kernels' default, not passed")
  t.eq(S.gemv(assert(S.geometry { EARLY_RELEASE = 1 }), 1).defines.EARLY_RELEASE, 1)
end)

t.test("--overlap: a group whose launches overlap (the vendor path's elementwise step, not its GEMM)", function()
  local dev = t.device("cuda")
  if not dev.launch_overlap then t.skip(dev.name .. " has no launch overlap (sm_90 or later)") end
  local timed = type(dev.vendor_gemm) == "function" and pcall(function() dev:vendor_gemm { n = 8, k = 8, t = 1 }:free() end)
    and { "vendor", "chain", "fused" } or { "chain", "fused" }
  sc.measured_group(dev, timed, "rotated", true, { EARLY_RELEASE = 1 })
  sc.measured_group(dev, timed, "l2", true)
end)

t.test("a token left unwritten fails the check", function()
  sc.unwritten_token_fails(t.device("cuda"))
end)

t.test("the vendor path matches the reference, or says why it is n/a", function()
  local dev = t.device("cuda")
  if type(dev.vendor_gemm) ~= "function" then
    local ctx <close> = sb.context(dev, { m_values = { 1 }, seed = 1, warmup = 1, iterations = 2, trials = 1,
                                           l2_bytes = dev.l2_bytes, geometry = require("gpubench.swiglu_cuda").DEFAULT })
    local r = ctx:check(ctx:shape { name = "case", n = 8, k = 16 }, "vendor", 1)
    t.eq({ r.status, r.why }, { "n/a", "cuBLASLt op not available: this gpubench has no dev:vendor_gemm" })
    return
  end
  local ok, err = pcall(dev.vendor_gemm, dev, { n = 16, k = 16, t = 1 })
  if not ok then
    local ctx <close> = sb.context(dev, { m_values = { 1 }, seed = 1, warmup = 1, iterations = 2, trials = 1,
                                           l2_bytes = dev.l2_bytes, geometry = require("gpubench.swiglu_cuda").DEFAULT })
    local r = ctx:check(ctx:shape { name = "case", n = 8, k = 16 }, "vendor", 1)
    t.eq(r.status, "n/a")
    t.truthy(r.why:find("cuBLASLt op not available: ", 1, true), r.why)
    return
  end
  err:free()
  sc.check_paths(dev, {
    { n = 37, k = 136, m = ALL_M },
    { n = 6912, k = 1536, m = { 1, 8 } },
  }, { "vendor" })
end)

t.test("a group timed in A-B-C-C-B-A trials, eager and graph", function()
  local dev = t.device("cuda")
  local timed = type(dev.vendor_gemm) == "function" and pcall(function() dev:vendor_gemm { n = 8, k = 8, t = 1 }:free() end)
    and { "vendor", "chain", "fused" } or { "chain", "fused" }
  sc.measured_group(dev, timed, "rotated")
  sc.measured_group(dev, timed, "l2")
end)

t.run()
