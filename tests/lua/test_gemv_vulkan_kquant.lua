-- The integer path of the k-quant Vulkan GEMV kernels (q4_k, q5_k, q6_k: gemv_idot.glsl,
-- gemv_idot_kquant.glsl) and the q8_0/q4_0 T-token loop against the FP64 oracle; x quantized
-- once per call (GEMV_XPRE) is in test_gemv_vulkan_xpre.lua, the rest of the Vulkan GEMV
-- tests in test_gemv_vulkan.lua. Runs on lavapipe in CI, so shapes stay small.
--
-- Criterion (the GEMV contract): per row |y - y_ref| <= 1e-4 * sum_j |w_ij x_j|, widened by
-- the exact x-rounding term for the integer kernels (gemv_bench.x_rounding_term).

local t = dofile("tests/lua/harness.lua")
local gemv = require "gpubench.gemv"
local specs = require "gpubench.gemv_vulkan"

local gc = dofile("tests/lua/gemv_check.lua")(t)
local releasing = gc.releasing
local fake, idot_device = gc.vulkan_fake, gc.idot_device
local IDOT = { "q8_0", "q4_0" }

-- ------------------------------------------------------------ q4_k's integer path

-- The largest k whose x of T tokens q4_k's integer kernel holds whole in shared bytes:
-- 72 bytes per 32-block and token beside the 4096-byte reduction array (GEMV_NR = 4),
-- whole super-blocks.
local function q4k_max_k(shared, T) return 32 * ((shared - 4096) // (72 * T) // 8 * 8) end

t.test("q4_k integer path: the selection rule at T = 1 .. 8 and shape_changes (fake devices)", function()
  t.eq({ specs.idot_max_k("q4_k", 49152), specs.idot_max_k("q4_k", 49152, 1, 3),
         specs.idot_max_k("q4_k", 49152, 1, 4), specs.idot_max_k("q4_k", 49152, 1, 8) }, { 19968, 6656, 4864, 2304 })
  for T = 1, 7 do -- T = 8: x quantized once per call (the test after this one)
    for _, shared in ipairs { 49152, 32768 } do
      t.eq(specs.idot_max_k("q4_k", shared, 1, T), q4k_max_k(shared, T), ("T=%d, %d bytes"):format(T, shared))
    end
    -- k = 5120 fits whole up to T = 3 on the H200; T = 4..8 at k = 2048
    local k = T <= 3 and 5120 or 2048
    local what = ("q4_k T=%d k=%d"):format(T, k)
    -- from T = 2 for_device takes x quantized once per call (8 lanes, 4 rows); the kernel with x per
    -- workgroup stays what a variant with shape_changes builds (what that rule's A/B ran against)
    local function per_workgroup(m, kk)
      if T == 1 then return gemv.spec_for(fake(), "q4_k", m, kk, T) end
      local over = { GEMV_TOKENS = T, GEMV_IDOT = 1 }
      for d, x in pairs(specs.shape_changes("q4_k", m, kk, over)) do over[d] = x end
      return specs.variant("q4_k", over)
    end
    if T > 1 then
      -- half-chunk units at 16 lanes and 4 rows a lane group to T = 4 (GEMV_KHALF), 16 and 8 from T = 5
      local lt, nr, half = 16, T <= 4 and 4 or 8, T <= 4 and 1 or nil
      t.eq(gemv.spec_for(fake(), "q4_k", 14336, k, T).defines,
        { GEMV_T = lt, GEMV_NR = nr, GEMV_TOKENS = T, GEMV_IDOT = 1, GEMV_XB = 8, GEMV_XPRE = 1, GEMV_KHALF = half },
        what .. ": the rule")
    end
    local s = per_workgroup(14336, k)
    -- 8 lanes a row; 2 rows a lane group at one token below 65536 rows (64-row tiles), 4 at T > 1 (128)
    local nr = T == 1 and 2 or 4
    t.eq(specs.idot_geometry("q4_k", 14336, T), { 8, nr }, what)
    t.eq(s.defines, { GEMV_T = 8, GEMV_NR = nr, GEMV_TOKENS = T, GEMV_IDOT = 1, GEMV_XB = k // 32 }, what)
    t.eq({ s.x_rounding, s.rows_per_group, s.grid_cap, s.file }, { 32, 32 * nr, 0, "kernels/vulkan/gemv_q4_k.comp" }, what)
    t.eq(s.max_k, nil, what .. ": no k limit (the kernel slices x past GEMV_XB)")
    t.eq(s.shared_bytes, 72 * (k // 32) * T + 1024 * nr, what)
    t.truthy(s.shared_bytes <= 49152, what .. ": fits")
    t.truthy(per_workgroup(14336, k) == s, what .. ": one table per kernel")
    -- 224 tiles of 64 rows or 112 of 128, one workgroup each (q4_k's grid is not capped)
    t.eq(gemv.grid(s, 14336, k), { T == 1 and 224 or 112, 1, 1 }, what)
    local kmax = specs.idot_max_k("q4_k", 49152, 1, T, nr)
    local at = per_workgroup(300, kmax)
    t.eq({ at.defines.GEMV_IDOT, at.defines.GEMV_XB }, { 1, kmax // 32 }, what .. ": at the limit, x whole")
    t.truthy(at.shared_bytes <= 49152, what .. ": at the limit fits")
    -- past it, x in slices of the most whole 32-block steps that fit
    local past = per_workgroup(300, kmax + 256)
    local mxb = kmax // 32
    t.eq({ past.defines.GEMV_IDOT, past.defines.GEMV_XB }, { 1, mxb >= 32 and mxb // 32 * 32 or mxb },
      what .. ": past the limit, the integer kernel with x in slices")
    t.truthy(past.shared_bytes <= 49152, what .. ": past the limit fits")
    t.truthy(gemv.spec_for(fake { integer_dot_product = false }, "q4_k", 300, 1024, T) == gemv.spec("vulkan", "q4_k", T),
      what .. ": no integerDotProduct, the float kernel")
    t.truthy(gemv.spec_for(fake { subgroup_size = 4 }, "q4_k", 300, 1024, T) == gemv.spec("vulkan", "q4_k", T),
      what .. ": subgroup 4, the float kernel")
  end
  local function xb_at(T)
    return specs.shape_changes("q4_k", 14336, 5120, { GEMV_IDOT = 1, GEMV_TOKENS = T }).GEMV_XB
  end
  t.eq(xb_at(4), 128, "T = 4 at k = 5120: 45 KiB of x past the 44 KiB beside the reduction array, slices of 128 blocks")
  t.eq(xb_at(7), 64, "T = 7 at k = 5120: slices of 64 blocks")
  -- not capped: one workgroup per tile, whether or not the device reports its SMs
  -- (at one token from 65536 rows: 8 lanes a row, 8 rows a lane group, tiles of 256 rows)
  local tall = gemv.spec_for(fake(), "q4_k", 131072, 5120)
  t.eq({ tall.defines.GEMV_T, tall.defines.GEMV_NR, tall.rows_per_group }, { 8, 8, 256 })
  t.eq(gemv.grid(tall, 131072, 5120), { 512, 1, 1 })
  t.eq(gemv.grid(gemv.spec_for(fake(), "q4_k", 131072, 5120, 2), 131072, 5120), { 2048, 1, 1 },
    "T = 2: tiles of 64 (16 lanes a row, 4 rows a lane group)")
  t.eq(gemv.spec_for(fake(), "q4_k", 131072, 5120, 2).defines.GEMV_XPRE, 1, "T = 2: x quantized once per call")
  local cpu = gemv.spec_for(fake { sm_count = 0 }, "q4_k", 256 * 4097, 1024)
  t.eq({ cpu.grid_cap, gemv.grid(cpu, 256 * 4097, 1024) }, { 0, { 4097, 1, 1 } }, "4097 tiles, one each")
  -- shape_changes: for_device's GEMV_XB on a 48 KiB device, slices of whole
  -- 32-block steps where x of T tokens does not fit
  local function xb(over) return specs.shape_changes("q4_k", 14336, 5120, over).GEMV_XB end
  t.eq({ xb { GEMV_IDOT = 1 }, xb { GEMV_IDOT = 1, GEMV_TOKENS = 3 }, xb { GEMV_IDOT = 1, GEMV_TOKENS = 4 },
         xb { GEMV_IDOT = 1, GEMV_TOKENS = 8 }, xb { GEMV_IDOT = 1, GEMV_TOKENS = 8, GEMV_NR = 8 } }, { 160, 160, 128, 64, 64 })
  t.eq(specs.shape_changes("q4_k", 14336, 5120, { GEMV_IDOT = 0 }), {})
  for T = 1, 8 do
    -- (from T = 2 the A/Bs' variant, its geometry named: half-chunk units at 16 lanes and 4 rows to T = 4,
    -- 16 and 8 from 5)
    local over = T == 1 and { GEMV_IDOT = 1, GEMV_TOKENS = T, GEMV_GRID = 0 }
      or { GEMV_IDOT = 1, GEMV_TOKENS = T, GEMV_XPRE = 1, GEMV_T = 16, GEMV_NR = T <= 4 and 4 or 8,
           GEMV_KHALF = T <= 4 and 1 or 0 }
    for d, x in pairs(specs.shape_changes("q4_k", 14336, 5120, over)) do over[d] = x end
    local v = specs.variant("q4_k", over)
    t.truthy(v.shared_bytes <= 49152, ("T=%d: the A/B's variant fits 48 KiB"):format(T))
    t.truthy(v == gemv.spec_for(fake(), "q4_k", 14336, 5120, T), ("T=%d: the A/B runs for_device's kernel"):format(T))
  end
  -- variants: the integer geometry unless named, any tokens, GEMV_XB in super-blocks
  local v = specs.variant("q4_k", { GEMV_IDOT = 1, GEMV_XB = 8, GEMV_TOKENS = 3 })
  t.eq(v.defines, { GEMV_T = 8, GEMV_NR = 4, GEMV_TOKENS = 3, GEMV_IDOT = 1, GEMV_XB = 8 })
  t.eq(v.shared_bytes, 8 * 72 * 3 + 4096)
  t.eq(specs.variant("q4_k", { GEMV_IDOT = 1, GEMV_XB = 8, GEMV_T = 64, GEMV_NR = 2 }).defines.GEMV_T, 64)
  t.eq(specs.variant("q4_k", { GEMV_TOKENS = 3 }).defines.GEMV_T, 64, "the float kernel keeps its own")
  t.errors(function() specs.variant("q4_k", { GEMV_IDOT = 2, GEMV_XB = 8 }) end,
    "gemv_vulkan.variant: GEMV_IDOT=2 is not 0 or 1", true)
  t.errors(function() specs.variant("q4_k", { GEMV_IDOT = 1, GEMV_XB = 12 }) end,
    "gemv_vulkan.variant: GEMV_IDOT=1 needs GEMV_XB >= 1 and a multiple of 8", true)
end)

-- q8_0 and q4_0's T-token integer loop (for_device's pick at T > 1 in layout 1), both x layouts, every T = 2 .. 8 (check_tokens' rows 4x apart in magnitude,
-- so a token given another's scale fails): x whole; x in slices of 7 blocks (k = 1280:
-- 40 blocks in 6 slices, slice starts odd and even, the last one short) over workgroups
-- that take 2 row tiles each (the re-quantization per tile and slice); m never a
-- multiple of the 16-row tile.
t.test("q8_0, q4_0 integer path: T = 2 .. 8, both layouts, x whole and in slices, ragged m", function()
  local dev = idot_device()
  releasing(dev, function()
    for _, fmt in ipairs(IDOT) do
      for mode = 1, 2 do
        for T = 2, 8 do
          local whole = specs.variant(fmt, { GEMV_IDOT = mode, GEMV_XB = 32, GEMV_TOKENS = T })
          gc.check_tokens(dev, fmt, 37, 1024, T, 500 + 10 * mode + T, whole)
          local sliced = specs.variant(fmt, { GEMV_IDOT = mode, GEMV_XB = 7, GEMV_TOKENS = T, GEMV_GRID = 5, GEMV_T = 64,
                                              GEMV_NR = 4 })
          t.eq(gemv.grid(sliced, 150, 1280), { 5, 1, 1 }, "10 tiles over 5 workgroups")
          gc.check_tokens(dev, fmt, 150, 1280, T, 600 + 10 * mode + T, sliced)
        end
      end
    end
  end)
end)

-- Every T, through the kernel gemv.run picks at the device's k limit for T (x whole,
-- quantized once per workgroup) and a variant that slices x (5 super-blocks in slices of
-- 3 and 2, quantized again per row tile: 3 tiles over 2 workgroups); m is never a
-- multiple of the 64-row tile.
t.test("q4_k integer path: every T = 1 .. 8, x whole at the device's limit and in slices, ragged m", function()
  local dev = idot_device()
  releasing(dev, function()
    for T = 1, 8 do
      local kmax = specs.idot_max_k("q4_k", dev.max_shared_bytes, 1, T)
      t.eq(kmax, q4k_max_k(dev.max_shared_bytes, T), "T=" .. T)
      t.truthy(kmax >= 1024, ("T=%d: the device holds x of k=1024 whole (limit %d)"):format(T, kmax))
      local s = gemv.spec_for(dev, "q4_k", 37 + 30 * T, kmax, T)
      t.eq({ s.defines.GEMV_IDOT, s.defines.GEMV_TOKENS }, { 1, T }, ("T=%d k=%d runs the integer kernel"):format(T, kmax))
      gc.check_tokens(dev, "q4_k", 37 + 30 * T, kmax, T, 300 + T)
      -- past it, the default slices x; checked like the others
      local past = gemv.spec_for(dev, "q4_k", 37, kmax + 256, T)
      t.eq({ past.defines.GEMV_IDOT, past.max_k }, { 1, nil }, ("T=%d: past the limit, x in slices"):format(T))
      gc.check_tokens(dev, "q4_k", 37, kmax + 256, T, 340 + T)
      local v = specs.variant("q4_k", { GEMV_IDOT = 1, GEMV_XB = 24, GEMV_TOKENS = T, GEMV_GRID = 2 })
      gc.check_tokens(dev, "q4_k", 150, 1280, T, 320 + T, v)
    end
  end)
end)

-- Workgroups over several row tiles (GEMV_GRID) through the three reduction paths, with
-- x whole (one token, one row per lane group) and in slices of one super-block (three
-- tokens, three rows): the barriers between tiles and slices, the re-quantization per tile.
t.test("q4_k integer path: workgroups over several row tiles, every reduction path, x whole and sliced", function()
  local dev = idot_device()
  releasing(dev, function()
    for _, T in ipairs(gc.lane_widths(dev.subgroup_size)) do
      local whole = specs.variant("q4_k", { GEMV_T = T, GEMV_NR = 1, GEMV_IDOT = 1, GEMV_XB = 32, GEMV_GRID = 3 })
      gc.check_tokens(dev, "q4_k", 300, 1024, 1, 400 + T, whole)
      local sliced = specs.variant("q4_k", { GEMV_T = T, GEMV_NR = 3, GEMV_IDOT = 1, GEMV_XB = 8, GEMV_TOKENS = 3,
                                             GEMV_GRID = 3 })
      gc.check_tokens(dev, "q4_k", 300, 1024, 3, 410 + T, sliced)
    end
  end)
end)

-- q4_k weights whose odd rows have scale and min 0 in sub-blocks 0, 2, 4, 6 (the even
-- bytes of S hold all of theirs: docs/FORMATS.md, q4_k), against x whose even 32-blocks
-- are 2^20 larger than its odd ones: a kernel that quantized a small block with a
-- large block's scale would fail the odd rows. Blocks of zeros and an all-zero x (y
-- exactly 0), one and two tokens, x whole and in slices.
t.test("q4_k integer path: sub-block magnitudes 2^20 apart, zero blocks, zero x, x whole and sliced", function()
  local dev = idot_device()
  local ref = require "gpubench.ref"
  releasing(dev, function()
    local m, k = 37, 1024
    local nsb = k // 256
    local w = ref.random_blocks("q4_k", m * nsb, 142)
    local blocks = {}
    for r = 0, m - 1 do
      for sb = 0, nsb - 1 do
        local o = (r * nsb + sb) * 144
        local blk = w:sub(o + 1, o + 144)
        if r % 2 == 1 then
          local b = { blk:byte(1, 144) }
          for i = 0, 10, 2 do b[5 + i] = 0 end -- S[i] is byte 4 + i of the block
          blk = string.char(table.unpack(b))
        end
        blocks[#blocks + 1] = blk
      end
    end
    w = table.concat(blocks)
    for _, T in ipairs { 1, 2 } do
      local rows = {}
      for tk = 1, T do
        local v = { string.unpack(("<" .. ("f"):rep(k)), ref.random_f32(k, 140 + tk)) }
        local parts = {}
        for i = 1, k do
          local b = (i - 1) // 32
          local x = v[i] * (b % 2 == 0 and 2.0 ^ 10 or 2.0 ^ -10)
          if b == 3 or b == 6 then x = 0.0 end -- a small and a large block of zeros
          parts[i] = string.pack("<f", x)
        end
        rows[tk] = table.concat(parts)
      end
      local xs = table.concat(rows)
      for _, xb in ipairs { 32, 8, "XPRE" } do -- x whole, in slices, quantized once per call (GEMV_XPRE)
        local spec = xb == "XPRE" and specs.variant("q4_k", { GEMV_IDOT = 1, GEMV_XPRE = 1, GEMV_TOKENS = T })
          or specs.variant("q4_k", { GEMV_IDOT = 1, GEMV_XB = xb, GEMV_TOKENS = T })
        local y, ys = gemv.run(dev, "q4_k", w, m, k, xs, T, spec)
        for tk = 1, T do
          local yref, absdot = ref.gemv("q4_k", w, m, k, rows[tk])
          for r = 2, m, 2 do -- the odd rows (0-based) see only the small blocks
            t.truthy(absdot[r] > 0 and absdot[r] < 1e-4 * absdot[r - 1],
              ("row %d: sum |w x| %.3g against row %d's %.3g"):format(r - 1, absdot[r], r - 2, absdot[r - 1]))
          end
          local term = gc.x_rounding_term("q4_k", w, m, k, rows[tk], 32, gc.TOL)
          for i = 1, m do absdot[i] = absdot[i] + term[i] end
          local ok, worst, rel, failures = ref.check_rows(ys:sub(4 * m * (tk - 1) + 1, 4 * m * tk), yref, absdot, gc.TOL)
          t.truthy(ok, ("T=%d XB=%s token %d: %d rows off, worst row %d (%.3g), y=%.9g ref=%.9g"):format(T, xb, tk,
            failures, worst, rel, y[m * (tk - 1) + worst], yref[worst]))
        end
        local yz = gemv.run(dev, "q4_k", w, m, k, string.rep("\0", 4 * k * T), T, spec)
        for i = 1, m * T do t.truthy(yz[i] == 0, ("T=%d XB=%s zero x: y[%d] = %s"):format(T, xb, i, tostring(yz[i]))) end
      end
    end
  end)
end)

t.test("q4_k integer path: x on the int16 grid, exact to 1e-6 of sum |w x|", function()
  local dev = idot_device()
  releasing(dev, function() gc.check_int16_grid(dev, "q4_k", 67, 1024, 2, 151, { 32, 8 }) end)
end)

-- ------------------------------------------------------------ q5_k's integer path
-- q4_k's kernel with the fifth bit OR-ed into each code (gemv_q5_k.comp, GEMV_IDOT=1),
-- picked by q4_k's rule (faster than the float kernel at T = 1 and 8 on the H200).
t.test("q5_k integer path: for_device picks it by q4_k's rule; its geometry and shared memory", function()
  for T = 2, 7 do -- T = 8: each its own geometry with x quantized once per call (above)
    local s = gemv.spec_for(fake(), "q5_k", 14336, 5120, T)
    local k4 = gemv.spec_for(fake(), "q4_k", 14336, 5120, T)
    -- x quantized once per call, 8 lanes and 4 rows a lane group at every T but 4 (half-chunk units at
    -- 16 lanes there; q4_k: 16 and 8 from T = 5)
    t.eq({ s.file, s.defines, s.grid_cap, s.x_rounding },
      { "kernels/vulkan/gemv_q5_k.comp", { GEMV_T = T == 4 and 16 or 8, GEMV_NR = 4, GEMV_TOKENS = T, GEMV_IDOT = 1,
        GEMV_XB = 8, GEMV_XPRE = 1, GEMV_KHALF = T == 4 and 1 or nil }, 0, 32 }, ("q5_k T=%d"):format(T))
    t.eq(k4.defines.GEMV_XPRE, 1, ("q4_k T=%d: x quantized once per call"):format(T))
    if T <= 4 then t.eq(s.shared_bytes, k4.shared_bytes, ("T=%d: q4_k's shared memory"):format(T)) end
  end
  -- one token: 8 lanes a row, 2 rows a lane group at any m (q4_k: 8 rows from 65536)
  for _, m in ipairs { 14336, 131072 } do
    local s = gemv.spec_for(fake(), "q5_k", m, 5120)
    t.eq({ s.defines.GEMV_T, s.defines.GEMV_NR, s.defines.GEMV_XB, s.grid_cap }, { 8, 2, 160, 0 }, "q5_k T=1 m=" .. m)
    t.eq(gemv.spec_for(fake(), "q4_k", m, 5120).defines.GEMV_NR, m < 65536 and 2 or 8, "q4_k T=1 m=" .. m)
  end
  for T = 1, 8 do
    t.truthy(gemv.spec_for(fake { integer_dot_product = false }, "q5_k", 300, 1024, T) == gemv.spec("vulkan", "q5_k", T),
      ("T=%d: no integerDotProduct, the float kernel"):format(T))
  end
  t.eq(specs.variant_defines("q5_k").GEMV_IDOT, 0)
  local v = specs.variant("q5_k", { GEMV_IDOT = 1, GEMV_XB = 8, GEMV_TOKENS = 3 })
  t.eq(v.defines, { GEMV_T = 8, GEMV_NR = 4, GEMV_TOKENS = 3, GEMV_IDOT = 1, GEMV_XB = 8 })
  t.eq({ v.shared_bytes, v.x_rounding, v.grid_cap, v.max_k }, { 8 * 72 * 3 + 4096, 32, 0, nil })
  t.eq(specs.shape_changes("q5_k", 14336, 5120, { GEMV_IDOT = 1, GEMV_TOKENS = 8 }).GEMV_XB, 64)
  t.errors(function() specs.variant("q5_k", { GEMV_IDOT = 2, GEMV_XB = 8 }) end,
    "gemv_vulkan.variant: GEMV_IDOT=2 is not 0 or 1", true)
  t.errors(function() specs.variant("q5_k", { GEMV_IDOT = 1, GEMV_XB = 12 }) end,
    "gemv_vulkan.variant: GEMV_IDOT=1 needs GEMV_XB >= 1 and a multiple of 8", true)
end)

-- fmt's k-quant integer kernel (q5_k, q6_k; GEMV_IDOT = mode, default 1) at each T of Ts (default 1 .. 8) with x whole
-- (GEMV_XB past k/32) and in slices (3 super-blocks a slice of 5: x quantized again per row
-- tile and slice), over several row tiles a workgroup, ragged m, then every reduction path;
-- seeds from seed up.
local function check_kquant_every_t(dev, fmt, seed, Ts, mode)
  for _, T in ipairs(Ts or { 1, 2, 3, 4, 5, 6, 7, 8 }) do
    local whole = specs.variant(fmt, { GEMV_IDOT = mode or 1, GEMV_XB = 48, GEMV_TOKENS = T })
    if whole.shared_bytes <= dev.max_shared_bytes then gc.check_tokens(dev, fmt, 37 + 30 * T, 1280, T, seed + T, whole) end
    local sliced = specs.variant(fmt, { GEMV_IDOT = mode or 1, GEMV_XB = 24, GEMV_TOKENS = T, GEMV_GRID = 2 })
    gc.check_tokens(dev, fmt, 150, 1280, T, seed + 20 + T, sliced)
  end
  for _, lanes in ipairs(gc.lane_widths(dev.subgroup_size)) do
    local v = specs.variant(fmt, { GEMV_T = lanes, GEMV_NR = 3, GEMV_IDOT = mode or 1, GEMV_XB = 8, GEMV_TOKENS = 2,
                                   GEMV_GRID = 3 })
    gc.check_tokens(dev, fmt, 300, 1024, 2, seed + 40 + lanes, v)
  end
end

t.test("q5_k integer path: every T = 1 .. 8, x whole and in slices, ragged m", function()
  local dev = idot_device()
  releasing(dev, function() check_kquant_every_t(dev, "q5_k", 500) end)
end)

-- ------------------------------------------------------------ q6_k's integer path
-- gemv_q6_k.comp, GEMV_IDOT=1: signed codes q - 32 against int16 x through q8_0's dots, a scale
-- per 16-element half of each 32-block; a variant (for_device keeps the float kernel until an
-- A/B on a GPU).
t.test("q6_k integer path: for_device picks it by q4_k's rule; geometry, shared memory, errors", function()
  for _, T in ipairs { 1, 2, 8 } do
    local s = gemv.spec_for(fake(), "q6_k", 14336, 5120, T)
    t.eq({ s.file, s.defines.GEMV_IDOT, s.defines.GEMV_T, s.defines.GEMV_NR, s.defines.GEMV_TOKENS, s.grid_cap },
      { "kernels/vulkan/gemv_q6_k.comp", 2, T == 1 and 16 or 8, 4, T, 0 },
      ("T=%d: the integer kernel, %s"):format(T, T == 1 and "16 lanes a row, 4 rows a lane group at one token"
        or "q4_k's geometry"))
    t.eq(s.k_multiple, nil, ("T=%d: GEMV_IDOT=2 takes any k"):format(T))
    t.eq(s.defines.GEMV_XB, specs.shape_changes("q6_k", 14336, 5120, { GEMV_IDOT = 2, GEMV_TOKENS = T }).GEMV_XB,
      ("T=%d: x sized as the variant's"):format(T))
    t.truthy(gemv.spec_for(fake { integer_dot_product = false }, "q6_k", 300, 1024, T) == gemv.spec("vulkan", "q6_k", T),
      ("T=%d: no integerDotProduct, the float kernel"):format(T))
  end
  -- T = 3, 4: 16 lanes a row, 8 rows a lane group (faster there: docs/kernels/vulkan-gemv.md); 8 x 4 again from T = 5
  for T = 2, 8 do
    local want = (T == 3 or T == 4) and { 16, 8 } or { 8, 4 }
    t.eq(specs.idot_geometry("q6_k", 14336, T), want, "q6_k T=" .. T)
    local s = gemv.spec_for(fake(), "q6_k", 14336, 5120, T)
    t.eq({ s.defines.GEMV_T, s.defines.GEMV_NR }, want, "q6_k T=" .. T)
    t.truthy(s.shared_bytes <= 49152, "q6_k T=" .. T .. " fits beside its reduction array")
    -- T = 4: x quantized once per call (its A/B there; it lost at T = 2); T = 2: the first chunk's
    -- weights ahead of x's quantization (GEMV_KPF, its A/B there)
    local over = { GEMV_IDOT = 2, GEMV_TOKENS = T }
    if T == 4 then over.GEMV_XPRE, over.GEMV_T, over.GEMV_NR = 1, 16, 8 end
    if T == 2 then over.GEMV_KPF = 1 end
    for d, x in pairs(specs.shape_changes("q6_k", 14336, 5120, over)) do over[d] = x end
    t.truthy(specs.variant("q6_k", over) == s, "q6_k T=" .. T .. ": the A/B's variant is for_device's kernel")
    t.eq(s.defines.GEMV_XPRE, T == 4 and 1 or nil, "q6_k T=" .. T)
  end
  t.eq(specs.idot_geometry("q4_k", 14336, 3), { 8, 4 }, "q4_k keeps one geometry at T > 1")
  t.eq(specs.variant_defines("q6_k").GEMV_IDOT, 0)
  local v = specs.variant("q6_k", { GEMV_IDOT = 1, GEMV_XB = 8, GEMV_TOKENS = 3 })
  t.eq(v.defines, { GEMV_T = 8, GEMV_NR = 4, GEMV_TOKENS = 3, GEMV_IDOT = 1, GEMV_XB = 8 })
  -- two byte planes and the scale, no block sum (the -32 is in the codes)
  t.eq({ v.shared_bytes, v.x_rounding, v.grid_cap, v.max_k }, { 8 * 68 * 3 + 4096, 32, 0, nil })
  t.eq(specs.idot_max_k("q6_k", 49152), 32 * ((49152 - 4096) // 68 // 8 * 8), "whole super-blocks")
  t.eq(specs.shape_changes("q6_k", 14336, 5120, { GEMV_IDOT = 1 }).GEMV_XB, 160, "x whole at T = 1")
  t.eq(specs.shape_changes("q6_k", 14336, 5120, { GEMV_IDOT = 1, GEMV_TOKENS = 8 }).GEMV_XB, 64)
  -- GEMV_IDOT=2 (unsigned codes, the -32 through x's half sums; for_device's, any k): two more words a block
  local v2 = specs.variant("q6_k", { GEMV_IDOT = 2, GEMV_XB = 8, GEMV_TOKENS = 3 })
  t.eq({ v2.defines.GEMV_IDOT, v2.shared_bytes, v2.x_rounding }, { 2, 8 * 76 * 3 + 4096, 32 })
  t.eq(specs.shape_changes("q6_k", 14336, 5120, { GEMV_IDOT = 2 }).GEMV_XB, 160, "x whole at T = 1")
  t.eq(gemv.spec_for(fake(), "q6_k", 300, 60 * 256, 8).defines, { GEMV_T = 8, GEMV_NR = 4, GEMV_TOKENS = 8, GEMV_IDOT = 2,
    GEMV_XB = 64 }, "T = 8: (49152 - 4096) // (76 * 8) = 74 blocks, x in slices of 64, still GEMV_IDOT=2")
  t.errors(function() specs.variant("q6_k", { GEMV_IDOT = 3, GEMV_XB = 8 }) end,
    "gemv_vulkan.variant: GEMV_IDOT=3 is not 0, 1 or 2", true)
  t.errors(function() specs.variant("q6_k", { GEMV_IDOT = 1, GEMV_XB = 12 }) end,
    "gemv_vulkan.variant: GEMV_IDOT=1 needs GEMV_XB >= 1 and a multiple of 8", true)
end)

-- T = 1, 2, 3, 8 with x whole and in slices (3 super-blocks a slice of 5), over several row tiles a
-- workgroup, ragged m; k = 1280 makes rows of 1050 bytes, so super-blocks start on both halves
-- of a word (the funnel shifts); every reduction path; x on the int16 grids (exact quantization)
-- against 1e-6 of sum |w x|, where a code or scale off by one would show.
t.test("q6_k integer path: T = 1, 2, 3, 8, x whole and in slices, ragged m, exact on int16 x", function()
  local dev = idot_device()
  releasing(dev, function()
    -- T = 1, 2, 3, 8: the single-token loop, the first multi-token ones, the largest (the
    -- kernel's T loop is q5_k's shape; the sanitizer build's time is the limit)
    check_kquant_every_t(dev, "q6_k", 700, { 1, 2, 3, 8 })
    gc.check_int16_grid(dev, "q6_k", 45, 1280, 2, 761, { 40, 8 })
  end)
end)

t.test("q6_k integer path, GEMV_IDOT=2 (codes q, the -32 per half through x's sums): the same checks", function()
  local dev = idot_device()
  releasing(dev, function()
    check_kquant_every_t(dev, "q6_k", 800, { 1, 2, 8 }, 2)
    gc.check_int16_grid(dev, "q6_k", 45, 1280, 2, 861, { 40, 8 }, 2)
    -- T = 3 at its own geometry (16 lanes a row, 8 rows a lane group: 128-row tiles), over two tiles
    local few = specs.variant("q6_k", { GEMV_IDOT = 2, GEMV_XB = 48, GEMV_TOKENS = 3, GEMV_T = 16, GEMV_NR = 8 })
    gc.check_tokens(dev, "q6_k", 150, 1280, 3, 871, few)
  end)
end)

t.run()
