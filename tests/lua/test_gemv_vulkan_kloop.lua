-- The integer loops' switches on Vulkan: GEMV_KHALF (the k-quant loop, gemv_idot_kquant.glsl:
-- half a chunk a lane's unit, x's records) and GEMV_KPF (that loop, q8_0/q4_0's in
-- gemv_idot_blocks.glsl and q6_k's: the first unit's weights loaded before the workgroup quantizes x), each
-- against the FP64 oracle, its spec and its refusals. Runs on lavapipe in CI, so shapes stay small.
--
-- Criterion (the GEMV contract): per row |y - y_ref| <= 1e-4 * sum_j |w_ij x_j|, widened by
-- the exact x-rounding term for the integer kernels (gemv_bench.x_rounding_term).

local t = dofile("tests/lua/harness.lua")
local specs = require "gpubench.gemv_vulkan"

local gc = dofile("tests/lua/gemv_check.lua")(t)
local releasing = gc.releasing
local idot_device = gc.idot_device

-- ------------------------------------------------------------ half chunks
-- GEMV_KHALF=1 (q4_k, q5_k, with GEMV_XPRE=1): a lane's unit is half a chunk, its mins through
-- the half's sum of xq (docs/kernels/vulkan-gemv.md, "Half chunks").
t.test("GEMV_KHALF=1: the spec and the errors", function()
  for _, fmt in ipairs { "q4_k", "q5_k" } do
    local s = specs.variant(fmt, { GEMV_IDOT = 1, GEMV_XPRE = 1, GEMV_KHALF = 1, GEMV_TOKENS = 3, GEMV_T = 16 })
    t.eq(s.defines, { GEMV_T = 16, GEMV_NR = 4, GEMV_TOKENS = 3, GEMV_IDOT = 1, GEMV_XB = 8, GEMV_XPRE = 1, GEMV_KHALF = 1 },
      fmt)
    t.truthy(s.prep.spec == specs.variant(fmt, { GEMV_IDOT = 1, GEMV_XPRE = 1, GEMV_TOKENS = 3 }).prep.spec,
      fmt .. ": the same first dispatch")
    t.truthy(s ~= specs.variant(fmt, { GEMV_IDOT = 1, GEMV_XPRE = 1, GEMV_TOKENS = 3, GEMV_T = 16 }),
      fmt .. ": its own kernel")
    t.eq(specs.variant(fmt, { GEMV_IDOT = 1, GEMV_XPRE = 1, GEMV_KHALF = 0 }).defines.GEMV_KHALF, nil,
      fmt .. ": GEMV_KHALF=0 is not passed")
    t.eq(specs.variant_defines(fmt).GEMV_KHALF, 0, fmt)
    local need = ("gemv_vulkan.variant: %s GEMV_KHALF=1 is the integer kernel's with x quantized once per call: "
      .. "it needs GEMV_IDOT >= 1 and GEMV_XPRE=1"):format(fmt)
    t.errors(function() specs.variant(fmt, { GEMV_IDOT = 1, GEMV_XB = 8, GEMV_KHALF = 1 }) end, need, true)
    t.errors(function() specs.variant(fmt, { GEMV_KHALF = 1 }) end, need, true)
    t.errors(function() specs.variant(fmt, { GEMV_IDOT = 1, GEMV_XPRE = 1, GEMV_KHALF = 2 }) end,
      "gemv_vulkan.variant: GEMV_KHALF=2 is not 0 or 1", true)
  end
  for _, fmt in ipairs { "q6_k", "q8_0", "q4_0" } do
    t.errors(function() specs.variant(fmt, { GEMV_IDOT = 1, GEMV_XPRE = 1, GEMV_KHALF = 1 }) end,
      ("gemv_vulkan.variant: %s has no define GEMV_KHALF"):format(fmt), true)
  end
  t.errors(function() specs.variant("f16", { GEMV_KHALF = 1 }) end, "gemv_vulkan.variant: f16 has no define GEMV_KHALF",
    true)
end)

-- The shapes of the GEMV_XPRE test above (k past the shared limit, one super-block, ragged m, T = 1, 3,
-- 8), lane groups of 16 (two half-chunk lanes where one chunk lane was), then every reduction path
-- (q4_k), then x on the int16 grid, where one half's mins read from the other half's sum fail.
t.test("GEMV_KHALF=1: q4_k, q5_k at T = 1, 3, 8, k past the shared limit, ragged m, every reduction path, int16 grid", function()
  local dev = idot_device()
  releasing(dev, function()
    for i, fmt in ipairs { "q4_k", "q5_k" } do
      for _, T in ipairs { 1, 3, 8 } do
        local v = specs.variant(fmt, { GEMV_IDOT = 1, GEMV_XPRE = 1, GEMV_KHALF = 1, GEMV_TOKENS = T, GEMV_T = 16 })
        local past = specs.idot_max_k(fmt, dev.max_shared_bytes, 1, T) + 256
        gc.check_tokens(dev, fmt, 37 + 30 * T, past, T, 700 + 20 * i + T, v)
        gc.check_tokens(dev, fmt, 5, 256, T, 740 + 20 * i + T, v)
      end
    end
    for _, lanes in ipairs(gc.lane_widths(dev.subgroup_size)) do
      local v = specs.variant("q4_k", { GEMV_T = lanes, GEMV_NR = 3, GEMV_IDOT = 1, GEMV_XPRE = 1, GEMV_KHALF = 1,
                                       GEMV_TOKENS = 3, GEMV_GRID = 3 })
      gc.check_tokens(dev, "q4_k", 300, 1024, 3, 790 + lanes, v)
    end
    gc.check_int16_grid(dev, "q4_k", 67, 1024, 3, 191, { 8 }, 1, 1, { GEMV_KHALF = 1, GEMV_T = 16 })
    gc.check_int16_grid(dev, "q5_k", 45, 1280, 2, 193, { 8 }, 1, 1, { GEMV_KHALF = 1 })
  end)
end)


-- ------------------------------------------------------------ weights ahead of x's quantization
-- GEMV_KPF=1 (q4_k, q5_k, x per workgroup): the first chunk of the workgroup's first tile loaded
-- before the quantization and taken by the loop's first trip (docs/kernels/vulkan-gemv.md,
-- "Weights ahead of x's quantization").
t.test("GEMV_KPF=1: the spec and the errors", function()
  for _, fmt in ipairs { "q4_k", "q5_k" } do
    local s = specs.variant(fmt, { GEMV_IDOT = 1, GEMV_XB = 32, GEMV_KPF = 1 })
    t.eq(s.defines, { GEMV_T = 8, GEMV_NR = 4, GEMV_TOKENS = 1, GEMV_IDOT = 1, GEMV_XB = 32, GEMV_KPF = 1 }, fmt)
    t.eq(s.prep, nil, fmt .. ": one launch")
    t.truthy(s ~= specs.variant(fmt, { GEMV_IDOT = 1, GEMV_XB = 32 }), fmt .. ": its own kernel")
    t.eq(specs.variant(fmt, { GEMV_IDOT = 1, GEMV_XB = 32, GEMV_KPF = 0 }).defines.GEMV_KPF, nil,
      fmt .. ": GEMV_KPF=0 is not passed")
    t.eq(specs.variant_defines(fmt).GEMV_KPF, 0, fmt)
    local need = ("gemv_vulkan.variant: %s GEMV_KPF=1 is the integer kernel's with x quantized per workgroup: "
      .. "it needs GEMV_IDOT >= 1 and GEMV_XPRE=0"):format(fmt)
    t.errors(function() specs.variant(fmt, { GEMV_IDOT = 1, GEMV_XPRE = 1, GEMV_KPF = 1 }) end, need, true)
    t.errors(function() specs.variant(fmt, { GEMV_KPF = 1 }) end, need, true)
    t.errors(function() specs.variant(fmt, { GEMV_IDOT = 1, GEMV_XB = 32, GEMV_KPF = 3 }) end,
      "gemv_vulkan.variant: GEMV_KPF=3 is not 0 or 1", true)
    t.errors(function() specs.variant(fmt, { GEMV_IDOT = 1, GEMV_XPRE = 1, GEMV_KPF = 1, GEMV_KHALF = 1 }) end,
      need, true)
    -- both refused (no integer kernel): the first in a fixed order, whatever the table's
    t.errors(function() specs.variant(fmt, { GEMV_KPF = 1, GEMV_KHALF = 1 }) end,
      ("gemv_vulkan.variant: %s GEMV_KHALF=1 is the integer kernel's with x quantized once per call"):format(fmt), true)
  end
  for _, fmt in ipairs { "q8_0", "q4_0" } do -- the blocks loop: both layouts at one token
    for mode = 1, 2 do
      local s = specs.variant(fmt, { GEMV_IDOT = mode, GEMV_XB = 32, GEMV_KPF = 1 })
      t.eq({ s.defines.GEMV_KPF, s.defines.GEMV_IDOT, s.prep }, { 1, mode, nil }, fmt .. " mode " .. mode)
    end
    t.errors(function() specs.variant(fmt, { GEMV_IDOT = 1, GEMV_XPRE = 1, GEMV_KPF = 1 }) end,
      ("gemv_vulkan.variant: %s GEMV_KPF=1 is the integer kernel's with x quantized per workgroup: "
        .. "it needs GEMV_IDOT >= 1 and GEMV_XPRE=0"):format(fmt), true)
    t.eq(specs.variant_defines(fmt).GEMV_KPF, 0, fmt)
  end
  t.eq(specs.variant("q6_k", { GEMV_IDOT = 2, GEMV_XB = 32, GEMV_KPF = 1 }).defines.GEMV_KPF, 1, "q6_k")
  t.errors(function() specs.variant("q6_k", { GEMV_IDOT = 2, GEMV_XPRE = 1, GEMV_KPF = 1 }) end,
    "gemv_vulkan.variant: q6_k GEMV_KPF=1 is the integer kernel's with x quantized per workgroup: "
      .. "it needs GEMV_IDOT >= 1 and GEMV_XPRE=0", true)
  t.errors(function() specs.variant("q6_k", { GEMV_IDOT = 2, GEMV_XPRE = 1, GEMV_KHALF = 1 }) end,
    "gemv_vulkan.variant: q6_k has no define GEMV_KHALF", true)
end)

-- x whole (the prefetch taken) at T = 1, 2, 3 with ragged m and workgroups over several tiles (the
-- later tiles load their own first chunk); x in slices (k past the shared limit: no prefetch); a
-- k of one super-block with fewer chunks than lanes (lanes past the row take none); every
-- reduction path; x on the int16 grid.
t.test("GEMV_KPF=1: q4_k, q5_k at T = 1, 2, 3, x whole and in slices, several tiles a workgroup, every reduction path", function()
  local dev = idot_device()
  releasing(dev, function()
    for i, fmt in ipairs { "q4_k", "q5_k" } do
      for _, T in ipairs { 1, 2, 3 } do
        local whole = specs.variant(fmt, { GEMV_IDOT = 1, GEMV_XB = 32, GEMV_KPF = 1, GEMV_TOKENS = T })
        gc.check_tokens(dev, fmt, 37 + 30 * T, 1024, T, 800 + 20 * i + T, whole)
        local tiles = specs.variant(fmt, { GEMV_IDOT = 1, GEMV_XB = 32, GEMV_KPF = 1, GEMV_TOKENS = T, GEMV_GRID = 2 })
        gc.check_tokens(dev, fmt, 300, 1024, T, 830 + 20 * i + T, tiles)
        gc.check_tokens(dev, fmt, 5, 256, T, 860 + 20 * i + T, whole)
        local sliced = specs.variant(fmt, { GEMV_IDOT = 1, GEMV_XB = 8, GEMV_KPF = 1, GEMV_TOKENS = T, GEMV_GRID = 3 })
        gc.check_tokens(dev, fmt, 45, 1280, T, 890 + 20 * i + T, sliced)
      end
    end
    for _, lanes in ipairs(gc.lane_widths(dev.subgroup_size)) do
      local v = specs.variant("q4_k", { GEMV_T = lanes, GEMV_NR = 3, GEMV_IDOT = 1, GEMV_XB = 32, GEMV_KPF = 1,
                                       GEMV_TOKENS = 2, GEMV_GRID = 3 })
      gc.check_tokens(dev, "q4_k", 300, 1024, 2, 950 + lanes, v)
    end
    gc.check_int16_grid(dev, "q4_k", 67, 1024, 2, 197, { 32 }, 1, 0, { GEMV_KPF = 1 })
    gc.check_int16_grid(dev, "q5_k", 45, 1280, 1, 199, { 64 }, 1, 0, { GEMV_KPF = 1 })
  end)
end)

-- q8_0 and q4_0: the one-token loop in both layouts (x whole: its k limit) with ragged m and
-- workgroups over several tiles, k of one block pair with fewer blocks than lanes; the T-token
-- loop with x whole and in slices; every reduction path.
t.test("GEMV_KPF=1: q8_0, q4_0 at T = 1 (both layouts) and 3 (x whole and in slices), several tiles a workgroup", function()
  local dev = idot_device()
  releasing(dev, function()
    for i, fmt in ipairs { "q8_0", "q4_0" } do
      for mode = 1, 2 do
        local one = specs.variant(fmt, { GEMV_IDOT = mode, GEMV_XB = 32, GEMV_KPF = 1 })
        gc.check_tokens(dev, fmt, 37, 1024, 1, 1000 + 10 * i + mode, one)
        gc.check_tokens(dev, fmt, 5, 64, 1, 1020 + 10 * i + mode, one)
        local tiles = specs.variant(fmt, { GEMV_IDOT = mode, GEMV_XB = 32, GEMV_KPF = 1, GEMV_GRID = 2 })
        gc.check_tokens(dev, fmt, 300, 1024, 1, 1040 + 10 * i + mode, tiles)
      end
      local whole = specs.variant(fmt, { GEMV_IDOT = 1, GEMV_XB = 32, GEMV_KPF = 1, GEMV_TOKENS = 3, GEMV_GRID = 2 })
      gc.check_tokens(dev, fmt, 300, 1024, 3, 1060 + i, whole)
      local sliced = specs.variant(fmt, { GEMV_IDOT = 1, GEMV_XB = 7, GEMV_KPF = 1, GEMV_TOKENS = 3, GEMV_GRID = 3 })
      gc.check_tokens(dev, fmt, 45, 1280, 3, 1070 + i, sliced)
    end
    for _, lanes in ipairs(gc.lane_widths(dev.subgroup_size)) do
      local v = specs.variant("q8_0", { GEMV_T = lanes, GEMV_NR = 3, GEMV_IDOT = 2, GEMV_XB = 32, GEMV_KPF = 1,
                                       GEMV_GRID = 3 })
      gc.check_tokens(dev, "q8_0", 300, 1024, 1, 1080 + lanes, v)
    end
  end)
end)

-- q6_k, both modes (signed codes; unsigned with the -32 through the half sums): T = 1 and 2 with x
-- whole, several tiles a workgroup, x in slices; a k of one super-block.
t.test("GEMV_KPF=1: q6_k in both modes at T = 1, 2, x whole and in slices, several tiles a workgroup", function()
  local dev = idot_device()
  releasing(dev, function()
    for mode = 1, 2 do
      for _, T in ipairs { 1, 2 } do
        local whole = specs.variant("q6_k", { GEMV_IDOT = mode, GEMV_XB = 32, GEMV_KPF = 1, GEMV_TOKENS = T })
        gc.check_tokens(dev, "q6_k", 37 + 30 * T, 1024, T, 1100 + 10 * mode + T, whole)
        gc.check_tokens(dev, "q6_k", 5, 256, T, 1120 + 10 * mode + T, whole)
        local tiles = specs.variant("q6_k", { GEMV_IDOT = mode, GEMV_XB = 32, GEMV_KPF = 1, GEMV_TOKENS = T, GEMV_GRID = 2 })
        gc.check_tokens(dev, "q6_k", 300, 1024, T, 1140 + 10 * mode + T, tiles)
        local sliced = specs.variant("q6_k", { GEMV_IDOT = mode, GEMV_XB = 8, GEMV_KPF = 1, GEMV_TOKENS = T, GEMV_GRID = 3 })
        gc.check_tokens(dev, "q6_k", 45, 1280, T, 1160 + 10 * mode + T, sliced)
      end
    end
  end)
end)

-- The table's kernels (for_device) by T: GEMV_KHALF with its doubled lanes where its A/B won (q4_k
-- T = 2 to 4, q5_k T = 4), GEMV_KPF on q6_k at T = 2 only (it lost at T = 1 in every format), neither
-- elsewhere; then the picks themselves against the oracle on this device.
t.test("for_device takes the loop switches where their A/Bs won: the defines by T, and the kernels", function()
  local gemv = require "gpubench.gemv"
  local want = { -- T -> {GEMV_T, GEMV_NR, GEMV_XPRE, GEMV_KHALF, GEMV_KPF}
    q4_k = { { 8, 2, nil, nil, nil }, { 16, 4, 1, 1, nil }, { 16, 4, 1, 1, nil }, { 16, 4, 1, 1, nil },
             { 16, 8, 1, nil, nil }, [8] = { 16, 8, 1, nil, nil } },
    q5_k = { { 8, 2, nil, nil, nil }, { 8, 4, 1, nil, nil }, { 8, 4, 1, nil, nil }, { 16, 4, 1, 1, nil },
             { 8, 4, 1, nil, nil }, [8] = { 8, 4, 1, nil, nil } },
    q6_k = { { 16, 4, nil, nil, nil }, { 8, 4, nil, nil, 1 }, { 16, 8, nil, nil, nil }, { 16, 8, 1, nil, nil },
             [8] = { 8, 4, nil, nil, nil } },
    q8_0 = { { 32, 8, nil, nil, nil }, { 16, 4, 1, nil, nil }, [8] = { 16, 4, 1, nil, nil } },
    q4_0 = { { 32, 8, nil, nil, nil }, { 16, 4, 1, nil, nil }, [8] = { 16, 4, 1, nil, nil } },
  }
  for fmt, by_t in pairs(want) do
    for T, w in pairs(by_t) do
      local d = gemv.spec_for(gc.vulkan_fake(), fmt, 14336, 5120, T).defines
      t.eq({ d.GEMV_T, d.GEMV_NR, d.GEMV_XPRE, d.GEMV_KHALF, d.GEMV_KPF }, w, ("%s T=%d"):format(fmt, T))
    end
  end
  local dev = idot_device()
  releasing(dev, function()
    for i, c in ipairs { { "q4_k", 3 }, { "q5_k", 4 }, { "q6_k", 2 } } do
      local fmt, T = c[1], c[2]
      local s = gemv.spec_for(dev, fmt, 300, 1024, T)
      t.truthy(s.defines.GEMV_KHALF == 1 or s.defines.GEMV_KPF == 1, ("%s T=%d on %s: a switch"):format(fmt, T, dev.name))
      gc.check_tokens(dev, fmt, 300, 1024, T, 1200 + i, s)
    end
  end)
end)

t.run()
