-- x quantized once per call on Vulkan (GEMV_XPRE=1: a first dispatch, gemv_idot_xprep.comp,
-- and the integer loops reading its records: q4_k, q5_k, q6_k, q8_0, q4_0) against the FP64
-- oracle, and the rule that takes it (gemv_vulkan.for_device's XPRE_RULES, from T = 2 for
-- most formats). Out of test_gemv_vulkan_kquant.lua, whose sanitizer run was near CI's time limit. Runs on lavapipe
-- in CI, so shapes stay small.
--
-- Criterion (the GEMV contract): per row |y - y_ref| <= 1e-4 * sum_j |w_ij x_j|, widened by
-- the exact x-rounding term for the integer kernels (gemv_bench.x_rounding_term).

local t = dofile("tests/lua/harness.lua")
local gemv = require "gpubench.gemv"
local specs = require "gpubench.gemv_vulkan"

local gc = dofile("tests/lua/gemv_check.lua")(t)
local releasing = gc.releasing
local fake, idot_device = gc.vulkan_fake, gc.idot_device

-- ------------------------------------------------------------ x quantized once per call
-- GEMV_XPRE=1 (q4_k, q5_k, q6_k, q8_0, q4_0): a first dispatch (kernels/vulkan/gemv_idot_xprep.comp)
-- quantizes x into a workspace the integer loops read in x's place (docs/kernels/vulkan-gemv.md,
-- "x quantized once per call").
t.test("GEMV_XPRE=1: the spec, its first dispatch and workspace bytes, and the errors", function()
  for _, fmt in ipairs { "q4_k", "q5_k", "q6_k", "q8_0", "q4_0" } do
    local s = specs.variant(fmt, { GEMV_IDOT = 1, GEMV_XPRE = 1, GEMV_TOKENS = 3 })
    t.eq(s.defines.GEMV_XPRE, 1, fmt)
    t.eq(s.max_k, nil, fmt .. ": no k limit, x is not in shared memory")
    t.eq(s.shared_bytes, 4 * 256 * s.defines.GEMV_NR, fmt .. ": the reduction array only")
    local p = s.prep
    t.eq({ p.spec.file, p.spec.entry, p.spec.block[1], p.spec.defines.GEMV_TOKENS },
      { "kernels/vulkan/gemv_idot_xprep.comp", "main", 256, 3 }, fmt)
    t.eq(p.grid(5120), { 15, 1, 1 }, fmt .. ": 160 blocks x 3 rows x 8 invocations")
    t.eq(p.bytes(5120), 80 * 3 * 160, fmt)
    t.truthy(specs.variant(fmt, { GEMV_IDOT = 1, GEMV_XPRE = 1, GEMV_TOKENS = 3, GEMV_NR = 2 }).prep.spec == p.spec,
      fmt .. ": one prep spec per T (the kernel cache's key)")
    t.eq(specs.variant(fmt, { GEMV_IDOT = 1, GEMV_XB = 8, GEMV_TOKENS = 3 }).defines.GEMV_XPRE, nil,
      fmt .. ": GEMV_XPRE=0 is not passed")
    if fmt == "q8_0" or fmt == "q4_0" then
      t.errors(function() specs.variant(fmt, { GEMV_IDOT = 2, GEMV_XPRE = 1 }) end,
        ("gemv_vulkan.variant: %s GEMV_XPRE=1 is the integer kernel's in layout 1: it needs GEMV_IDOT=1"):format(fmt), true)
    end
    t.eq(specs.variant_defines(fmt).GEMV_XPRE, 0, fmt)
    t.errors(function() specs.variant(fmt, { GEMV_XPRE = 1 }) end,
      ("gemv_vulkan.variant: %s GEMV_XPRE=1 is the integer kernel's in layout 1: it needs GEMV_IDOT=%s"):format(fmt,
        fmt == "q6_k" and "1 or 2" or "1"), true)
    t.errors(function() specs.variant(fmt, { GEMV_IDOT = 1, GEMV_XPRE = 2 }) end,
      "gemv_vulkan.variant: GEMV_XPRE=2 is not 0 or 1", true)
  end
  -- q6_k's two modes are both layout 1; GEMV_XB is not read with the records (one kernel whatever it says)
  local q6 = specs.variant("q6_k", { GEMV_IDOT = 2, GEMV_XB = 64, GEMV_XPRE = 1, GEMV_TOKENS = 8 })
  t.eq(q6.defines, { GEMV_T = 8, GEMV_NR = 4, GEMV_TOKENS = 8, GEMV_IDOT = 2, GEMV_XB = 8, GEMV_XPRE = 1 })
  t.truthy(specs.variant("q6_k", { GEMV_IDOT = 2, GEMV_XPRE = 1, GEMV_TOKENS = 8 }) == q6, "one table whatever GEMV_XB")
  t.errors(function() specs.variant("q6_k", { GEMV_IDOT = 2, GEMV_XB = 12, GEMV_XPRE = 1 }) end,
    "GEMV_IDOT=2 needs GEMV_XB >= 1 and a multiple of 8", true)
  t.errors(function() specs.variant("f16", { GEMV_XPRE = 1 }) end, "gemv_vulkan.variant: f16 has no define GEMV_XPRE", true)
end)

-- T = 1, 3 and 8 (one token, an odd count, the most), k past the device's shared-memory
-- limit for x (what slices x without XPRE) and a k of one super-block, ragged m; then
-- workgroups over several row tiles through every reduction path, for one kernel of each
-- loop (q4_k: gemv_idot_kquant.glsl; q8_0: gemv_idot_blocks.glsl). Each (format, T) is a
-- shader compile: the T between are the same loop unrolled (and CI's sanitizer build runs
-- this file within its time limit).
t.test("GEMV_XPRE=1: q4_k, q5_k, q6_k (both modes), q8_0, q4_0 at T = 1, 3, 8, k past the shared limit, ragged m, every reduction path", function()
  local dev = idot_device()
  releasing(dev, function()
    for i, fmt in ipairs { "q4_k", "q5_k", "q8_0", "q4_0", "q6_k", "q6_k:1" } do
      local mode = fmt == "q6_k" and 2 or 1
      fmt = fmt:match("^[^:]+")
      for _, T in ipairs { 1, 3, 8 } do
        local v = specs.variant(fmt, { GEMV_IDOT = mode, GEMV_XPRE = 1, GEMV_TOKENS = T })
        local past = specs.idot_max_k(fmt, dev.max_shared_bytes, mode, T) + 256
        gc.check_tokens(dev, fmt, 37 + 30 * T, past, T, 500 + 20 * i + T, v)
        gc.check_tokens(dev, fmt, 5, 256, T, 540 + 20 * i + T, v)
      end
      if fmt == "q4_k" or fmt == "q8_0" then
        for _, lanes in ipairs(gc.lane_widths(dev.subgroup_size)) do
          local v = specs.variant(fmt, { GEMV_T = lanes, GEMV_NR = 3, GEMV_IDOT = 1, GEMV_XPRE = 1, GEMV_TOKENS = 3,
                                         GEMV_GRID = 3 })
          gc.check_tokens(dev, fmt, 300, 1024, 3, 590 + lanes, v)
        end
      end
    end
  end)
end)

t.test("q4_k and q5_k at T = 8: x quantized once per call (GEMV_XPRE=1) at each format's geometry, any k", function()
  for fmt, g in pairs { q4_k = { 16, 8 }, q5_k = { 8, 4 } } do
    for _, k in ipairs { 2048, 5120, 40960 } do
      local s, what = gemv.spec_for(fake(), fmt, 14336, k, 8), ("%s T=8 k=%d"):format(fmt, k)
      t.eq(s.defines, { GEMV_T = g[1], GEMV_NR = g[2], GEMV_TOKENS = 8, GEMV_IDOT = 1, GEMV_XB = 8, GEMV_XPRE = 1 }, what)
      t.eq({ s.max_k, s.grid_cap, s.shared_bytes, s.prep.bytes(k) }, { nil, 0, 1024 * g[2], 80 * 8 * (k // 32) }, what)
      t.eq(gemv.grid(s, 14336, k), { 14336 // (256 // g[1] * g[2]), 1, 1 }, what .. ": one workgroup per tile")
    end
    t.truthy(gemv.spec_for(fake { integer_dot_product = false }, fmt, 300, 1024, 8) == gemv.spec("vulkan", fmt, 8),
      fmt .. ": no integerDotProduct, the float kernel")
  end
end)

t.test("GEMV_XPRE=1: x on the int16 grid, exact to 1e-6 of sum |w x| (q4_k, q5_k, q6_k)", function()
  local dev = idot_device()
  releasing(dev, function()
    gc.check_int16_grid(dev, "q4_k", 67, 1024, 3, 161, { 8 }, 1, 1)
    gc.check_int16_grid(dev, "q5_k", 45, 1280, 2, 171, { 8 }, 1, 1)
    gc.check_int16_grid(dev, "q6_k", 29, 1280, 3, 181, { 8 }, 2, 1) -- the halves' sums from the records
  end)
end)

t.run()
