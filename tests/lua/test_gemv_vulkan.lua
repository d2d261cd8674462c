-- The Vulkan GEMV kernels (kernels/vulkan/gemv_*.comp) against the FP64 oracle,
-- through lib/gpubench/gemv.lua. Runs on lavapipe in CI, so shapes stay small. The
-- k-quants' integer path is in test_gemv_vulkan_kquant.lua, x quantized once per call in
-- test_gemv_vulkan_xpre.lua (three files, so that each runs within CI's time limit under the
-- sanitizers).
--
-- Criterion (the GEMV contract): per row |y - y_ref| <= 1e-4 * sum_j |w_ij x_j|.

local t = dofile("tests/lua/harness.lua")
local gemv = require "gpubench.gemv"
local specs = require "gpubench.gemv_vulkan"


local gc = dofile("tests/lua/gemv_check.lua")(t)
local releasing, check = gc.releasing, gc.check

t.test("format geometry agrees with gpubench.ref", function()
  local ref = require "gpubench.ref"
  for _, fmt in ipairs(gemv.formats) do
    local f, r = gemv.format(fmt), ref.formats[fmt]
    t.eq({ f.qk, f.block_bytes }, { r.qk, r.block_bytes }, fmt)
    t.eq(gemv.weight_bytes(fmt, 3, 256), 3 * ref.row_bytes(fmt, 256), fmt)
    local bb = gemv.buffer_bytes(fmt, 3, 256)
    t.truthy(bb % 16 == 0 and bb >= gemv.weight_bytes(fmt, 3, 256) + 16, fmt .. " buffer_bytes")
  end
  t.eq(gemv.weight_bytes("q6_k", 37, 512), 37 * 2 * 210)
  t.eq(gemv.buffer_bytes("q4_0", 1, 32), 32 + 16) -- 18 bytes round up to 32, plus the slack
end)

t.test("spec tables: every format, 256 invocations, rows_per_group from the defines", function()
  for _, fmt in ipairs(gemv.formats) do
    local s = gemv.spec("vulkan", fmt)
    t.eq(s, specs[fmt], fmt)
    t.eq(s.block, { 256, 1, 1 }, fmt)
    t.eq(s.rows_per_group, (256 // s.defines.GEMV_T) * s.defines.GEMV_NR, fmt)
    t.eq(gemv.grid(s, 37, 256), { (37 + s.rows_per_group - 1) // s.rows_per_group, 1, 1 }, fmt)
  end
end)

-- k = 256 and a larger k; m = 37 is not a multiple of any rows_per_group, so the last
-- workgroup has rows past the end.
for _, fmt in ipairs(gemv.formats) do
  t.test(fmt .. ": m=37 k=256 and m=70 k=2048 match the FP64 reference", function()
    local dev = t.device("vulkan")
    releasing(dev, function()
      check(dev, fmt, 37, 256, 11)
      check(dev, fmt, 70, 2048, 12)
      -- q8_0/q4_0/q4_k run the integer kernel by default where the device has it:
      -- the float kernel (the fallback) explicitly too
      if specs.for_device(dev, fmt, 70, 2048) then
        check(dev, fmt, 37, 256, 11, specs[fmt])
        check(dev, fmt, 70, 2048, 12, specs[fmt])
      end
    end)
  end)
end

-- k that is not a multiple of 256: rows of q4_0 (9 blocks = 162 bytes) and q8_0
-- (306 bytes) then start 2 bytes into a word on every other row, and the dense
-- kernels' unrolled loop ends in its remainder loop.
t.test("k not a multiple of 256 (f32, f16, bf16: 264; q4_0, q8_0: 288)", function()
  local dev = t.device("vulkan")
  releasing(dev, function()
    for _, fmt in ipairs { "f32", "f16", "bf16" } do check(dev, fmt, 19, 264, 21) end
    for _, fmt in ipairs { "q4_0", "q8_0" } do
      check(dev, fmt, 19, 288, 22)
      check(dev, fmt, 19, 288, 22, specs[fmt]) -- the float kernel, whichever the default is
    end
    check(dev, "q4_0", 1, 32, 23) -- the smallest shape: one block, one row
  end)
end)

-- The reduction has three paths by subgroup size sg against the lane-group width T:
-- sg == T (one subgroupAdd), sg > T (butterfly inside the lane group) and sg < T
-- (subgroupAdd, then shared memory). Variants of the kernels with other T and GEMV_NR
-- cover whichever paths the default geometry does not reach on this device.
t.test("reduction paths: lane groups narrower than, equal to and wider than a subgroup", function()
  local dev = t.device("vulkan")
  local sg = dev.subgroup_size
  t.truthy(sg >= 1, "device reports its subgroup size")
  local widths = gc.lane_widths(sg)
  releasing(dev, function()
    for _, fmt in ipairs { "f32", "q4_k", "q6_k" } do
      for _, T in ipairs(widths) do
        for _, NR in ipairs { 1, 3 } do
          local base = specs[fmt]
          local spec = {
            file = base.file, entry = base.entry, block = base.block,
            rows_per_group = (256 // T) * NR, defines = { GEMV_T = T, GEMV_NR = NR, GEMV_TOKENS = 1 },
          }
          check(dev, fmt, 29, 512, 31 + T + NR, spec)
        end
      end
    end
  end)
end)

t.test("x given as a table gives the same y as x given as an f32 string", function()
  local dev = t.device("vulkan")
  local ref = require "gpubench.ref"
  releasing(dev, function()
    local w = ref.random_blocks("q8_0", 5 * 256 // 32, 41)
    local xs = ref.random_f32(256, 42)
    local xt = { string.unpack("<" .. string.rep("f", 256), xs) }
    xt[257] = nil -- string.unpack's last result is the next position
    local y1 = gemv.run(dev, "q8_0", w, 5, 256, xs)
    local y2 = gemv.run(dev, "q8_0", w, 5, 256, xt)
    t.eq(y2, y1)
  end)
end)

t.test("kernels are compiled once per device and freed by gemv.release", function()
  local dev = t.device("vulkan")
  local gpu = require "gpu"
  local before = gpu.live().kernels
  local k1 = gemv.kernel(dev, "f32")
  t.eq(gemv.kernel(dev, "f32"), k1)
  t.eq(gpu.live().kernels, before + 1)
  gemv.release(dev)
  t.eq(gpu.live().kernels, before)
  local k2 = gemv.kernel(dev, "f32")
  t.truthy(k2 ~= k1, "a new kernel after release")
  gemv.release(dev)
end)

t.test("argument errors name the format and the sizes", function()
  local dev = t.device("vulkan")
  local ref = require "gpubench.ref"
  releasing(dev, function()
    local x = ref.random_f32(256, 51)
    local w = ref.random_blocks("q4_k", 4, 52)
    t.errors(function() gemv.run(dev, "q4_k", w, 4, 100, x) end,
      "gemv.run: q4_k needs k to be a multiple of 256, got k=100", true)
    t.errors(function() gemv.run(dev, "q4_0", w, 4, 48, x) end,
      "gemv.run: q4_0 needs k to be a multiple of 32, got k=48", true)
    t.errors(function() gemv.run(dev, "f16", w, 4, 260, x) end,
      "gemv.run: f16 needs k to be a multiple of 8, got k=260", true)
    t.errors(function() gemv.run(dev, "q4_k", w:sub(2), 4, 256, x) end,
      "gemv.run: q4_k weights for m=4 k=256 are 576 bytes, got 575", true)
    t.errors(function() gemv.run(dev, "q4_k", w, 4, 256, x:sub(5)) end,
      "gemv.run: x is 1020 bytes, expected k=256 f32 values (1024 bytes)", true)
    t.errors(function() gemv.run(dev, "q4_k", w, 0, 256, x) end,
      "gemv.run: m must be in 1..4294967295, got 0", true)
    t.errors(function() gemv.run(dev, "q3_k", w, 4, 256, x) end,
      "gemv.run: unknown format q3_k", true)
    t.errors(function() gemv.spec("metal", "f32") end, "gemv.spec: no GEMV kernels for backend metal", true)
    local wb <close> = dev:buffer(gemv.weight_bytes("q4_k", 4, 256)) -- without the slack
    local xb <close> = dev:buffer(4 * 256)
    local yb <close> = dev:buffer(4 * 4)
    t.errors(function() gemv.launch_args(dev, "q4_k", wb, xb, yb, 4, 256) end,
      "gemv.launch_args: weight buffer is 576 bytes, q4_k m=4 k=256 needs 592", true)
    local wb2 <close> = dev:buffer(gemv.buffer_bytes("q4_k", 4, 256))
    t.errors(function() gemv.launch_args(dev, "q4_k", wb2, xb, yb, 5, 256) end,
      "gemv.launch_args: weight buffer is 592 bytes, q4_k m=5 k=256 needs 736", true)
    t.errors(function() gemv.launch_args(dev, "q4_k", wb2, yb, yb, 4, 256) end,
      "gemv.launch_args: x buffer is 16 bytes, q4_k m=4 k=256 needs 1024", true)
    -- 2^22 x 2^10 f32 = 16 GiB: past the shaders' 32-bit byte offsets, refused before
    -- the buffer sizes are even looked at.
    t.errors(function() gemv.launch_args(dev, "f32", wb2, xb, yb, 1 << 22, 1024) end,
      "gemv.launch_args: f32 m=4194304 k=1024 needs a 17179869200-byte weight buffer, more than "
      .. "the 4294967232 bytes the kernels/vulkan/gemv_f32.comp kernel can address", true)
  end)
end)

t.test("launch_args: a launch by hand equals gemv.run", function()
  local dev = t.device("vulkan")
  local ref = require "gpubench.ref"
  releasing(dev, function()
    local m, k = 21, 512
    local w = ref.random_blocks("q6_k", m * k // 256, 61)
    local x = ref.random_f32(k, 62)
    local _, want = gemv.run(dev, "q6_k", w, m, k, x)
    local wb <close> = dev:buffer(gemv.buffer_bytes("q6_k", m, k))
    local xb <close> = dev:buffer(4 * k)
    local yb <close> = dev:buffer(4 * m)
    wb:fill(0)
    wb:upload(w)
    xb:upload(x)
    yb:fill(0xFF) -- NaN everywhere: a row the kernel skips cannot pass
    local kern, grid, block, a1, a2, a3, a4, a5 = gemv.launch_args(dev, "q6_k", wb, xb, yb, m, k)
    local spec = gemv.spec_for(dev, "q6_k", m, k)
    if dev.integer_dot_product then t.eq(spec.defines.GEMV_IDOT, 2, "the integer kernel (codes q, half sums) where the device has it") end
    t.eq(grid, gemv.grid(spec, m, k))
    t.eq(block, spec.block)
    t.eq(kern.params, { "buffer", "buffer", "buffer", "u32", "u32" })
    kern:launch(grid, block, a1, a2, a3, a4, a5)
    t.eq(yb:download(), want)
  end)
end)

-- ------------------------------------------------------------ integer path (q8_0, q4_0, q4_k)

local IDOT = { "q8_0", "q4_0" }

local fake, idot_device = gc.vulkan_fake, gc.idot_device

t.test("integer path: the selection rule (fake devices)", function()
  -- beside x, the reduction array of the default geometry's rows (q8_0, q4_0: 8 a lane group, 8 KiB)
  t.eq(specs.idot_max_k("q8_0", 49152), 32 * ((49152 - 8192) // 68))
  t.eq(specs.idot_max_k("q4_0", 49152), 32 * ((49152 - 8192) // 72))
  t.eq(specs.idot_max_k("q8_0", 49152, 2), 32 * ((49152 - 8192) // 76))
  t.eq(specs.idot_max_k("q4_0", 49152, 2), 32 * ((49152 - 8192) // 88))
  t.eq(specs.idot_max_k("q8_0", 49152, 1, 1, 4), 32 * ((49152 - 4096) // 68), "4 rows a lane group: 4 KiB")
  t.eq(specs.idot_max_k("q4_0", 32768), 10912)
  t.eq(specs.idot_max_k("q4_0", 4096), 0)
  t.eq(specs.idot_max_k("f32", 49152), 0, "f32 has no integer kernel")
  t.eq(specs.idot_max_k("q5_k", 49152), specs.idot_max_k("q4_k", 49152), "q5_k's x layout is q4_k's")
  t.eq(specs.idot_max_k("q4_k", 49152, 2), 0, "q4_k has layout 1 only")
  for _, fmt in ipairs(IDOT) do
    local s = gemv.spec_for(fake(), fmt, 14336, 5120)
    -- one token: 32 lanes a row and 8 rows a lane group below 65536 rows, 16 and 8 from it
    t.eq(s.defines, { GEMV_T = 32, GEMV_NR = 8, GEMV_TOKENS = 1, GEMV_IDOT = 2, GEMV_XB = 160 }, fmt)
    t.eq(specs.idot_geometry(fmt, 14336), { 32, 8 }, fmt)
    t.eq(s.k_multiple, 64, fmt .. ": layout 2 needs k a multiple of 64")
    t.eq(s.file, "kernels/vulkan/gemv_" .. fmt .. ".comp")
    t.eq({ s.x_rounding, s.max_k, s.rows_per_group, s.grid_cap }, { 32, 5120, 64, 132 * 2 }, fmt)
    t.truthy(s.shared_bytes <= 49152, fmt .. " shared bytes within the limit")
    t.truthy(gemv.spec_for(fake(), fmt, 14336, 5120) == s, fmt .. ": one table per kernel (the cache key)")
    -- 224 tiles of 64 rows, within the cap of 264 workgroups: one each
    t.eq(gemv.grid(s, 14336, 5120), { 224, 1, 1 }, fmt)
    -- from 65536 rows tiles of 128 (16 lanes, 8 rows), and q8_0 takes 8 workgroups per SM (1024 tiles, one
    -- each); q4_0 keeps 2 (4 each)
    local tall = gemv.spec_for(fake(), fmt, 131072, 5120)
    t.eq({ tall.defines.GEMV_T, tall.defines.GEMV_NR, tall.rows_per_group }, { 16, 8, 128 }, fmt)
    t.eq({ tall.grid_cap, gemv.grid(tall, 131072, 5120) }, fmt == "q8_0" and { 1056, { 1024, 1, 1 } } or { 264, { 256, 1, 1 } }, fmt)
    t.eq(specs.idot_geometry(fmt, 65535), { 32, 8 }, fmt .. ": below the tall rows")
    t.eq(specs.idot_geometry(fmt, 65536), { 16, 8 }, fmt .. ": from the tall rows")
    t.eq(gemv.grid(s, 150, 5120), { 3, 1, 1 }, fmt .. ": fewer tiles than the cap, one each")
    -- k rounds up to 1024-steps of shared memory; m does not matter (37 rows: 8 rows a lane group, whose
    -- reduction array the shared-memory limits take)
    local nr = specs.idot_geometry(fmt, 37)[2]
    t.eq(nr, 8, fmt)
    local function pick(d, k) local x = gemv.spec_for(d, fmt, 37, k).defines return { x.GEMV_IDOT, x.GEMV_XB } end
    t.eq(pick(fake(), 4096), { 2, 128 }, fmt)
    t.eq(pick(fake(), 4128), { 1, 160 }, fmt .. ": an odd block count, layout 1")
    t.eq(pick(fake(), 5152), { 1, 192 }, fmt)
    t.eq(pick(fake(), 288), { 1, 32 }, fmt)
    t.eq(pick(fake(), 32), { 1, 32 }, fmt)
    t.eq(pick(fake(), 64), { 2, 32 }, fmt)
    local k2 = specs.idot_max_k(fmt, 49152, 2, 1, nr) // 64 * 64
    t.eq(k2, (49152 - 8192) // (fmt == "q8_0" and 76 or 88) * 32 // 64 * 64, fmt .. ": 8 KiB of reduction array beside x")
    -- at layout 2's limit x's blocks round up to the step, within what fits (the limit's blocks)
    t.eq(pick(fake(), k2), { 2, specs.idot_max_k(fmt, 49152, 2, 1, nr) // 32 }, fmt .. ": at layout 2's limit")
    local nb2 = (k2 + 64) // 32
    t.eq(pick(fake(), k2 + 64), { 1, (nb2 + 31) // 32 * 32 }, fmt .. ": past layout 2's limit, layout 1")
    t.truthy(gemv.spec_for(fake(), fmt, 37, k2).shared_bytes <= 49152, fmt)
    -- the fallbacks: no feature, T > 1, small subgroups, k past the shared memory
    t.truthy(gemv.spec_for(fake { integer_dot_product = false }, fmt, 14336, 5120) == specs[fmt],
      fmt .. ": no integerDotProduct, the float kernel")
    local silent = fake()
    silent.integer_dot_product = nil
    t.truthy(gemv.spec_for(silent, fmt, 14336, 5120) == specs[fmt],
      fmt .. ": a device that does not say, the float kernel")
    -- T > 1 with x per workgroup: the T-token integer loop, layout 1, one workgroup per row tile, x in
    -- slices where it does not fit (any k); a variant since for_device takes x quantized once per call
    -- from T = 2 (below), what that rule's A/B ran against
    for _, T in ipairs { 2, 3, 7 } do
      local over = { GEMV_TOKENS = T, GEMV_IDOT = 1 }
      for d, x in pairs(specs.shape_changes(fmt, 14336, 5120, over)) do over[d] = x end
      local v = specs.variant(fmt, over)
      local xb = T < 7 and 160 or 64 -- x whole at T = 2, 3 (160 blocks fit 48 KiB), slices of 64 at T = 7
      -- 16 lanes a row, 8 rows a lane group: tiles of 128 rows
      t.eq(v.defines, { GEMV_T = 16, GEMV_NR = 8, GEMV_TOKENS = T, GEMV_IDOT = 1, GEMV_XB = xb }, fmt .. " T=" .. T)
      t.eq(specs.idot_geometry(fmt, 14336, T), { 16, 8 }, fmt .. " T=" .. T)
      t.eq({ v.grid_cap, v.max_k, v.k_multiple, v.rows_per_group }, { 0, nil, nil, 128 }, fmt .. " T=" .. T)
      t.eq(gemv.grid(v, 14336, 5120), { 112, 1, 1 }, fmt .. " T=" .. T .. ": one workgroup per tile")
      t.truthy(v.shared_bytes <= 49152, fmt .. " T=" .. T .. " fits")
    end
    -- from T = 2: x quantized once per call (a first launch), 16 lanes a row and 4 rows a lane group, any k
    for T = 2, 8 do
      local x8 = gemv.spec_for(fake(), fmt, 14336, 5120, T)
      t.eq(x8.defines, { GEMV_T = 16, GEMV_NR = 4, GEMV_TOKENS = T, GEMV_IDOT = 1, GEMV_XB = 1, GEMV_XPRE = 1 },
        fmt .. " T=" .. T)
      t.eq({ x8.grid_cap, x8.max_k, x8.rows_per_group, x8.prep.spec.file },
        { 0, nil, 64, "kernels/vulkan/gemv_idot_xprep.comp" }, fmt .. " T=" .. T)
      t.eq(gemv.grid(x8, 14336, 5120), { 224, 1, 1 }, fmt .. " T=" .. T .. ": one workgroup per tile")
      local over = { GEMV_TOKENS = T, GEMV_IDOT = 1, GEMV_XPRE = 1, GEMV_T = 16, GEMV_NR = 4 }
      for d, x in pairs(specs.shape_changes(fmt, 14336, 5120, over)) do over[d] = x end
      t.truthy(specs.variant(fmt, over) == x8, fmt .. " T=" .. T .. ": the A/B's variant is for_device's kernel")
      t.eq(gemv.spec_for(fake(), fmt, 300, 20000, T).defines.GEMV_XPRE, 1, fmt .. ": any k at T = " .. T)
    end
    t.eq(gemv.spec_for(fake(), fmt, 300, 20000, 8).defines.GEMV_XPRE, 1, fmt .. ": any k at T = 8")
    t.truthy(gemv.spec_for(fake { subgroup_size = 4 }, fmt, 300, 5120) == specs[fmt], fmt .. ": subgroup 4")
    local kmax = specs.idot_max_k(fmt, 49152, 1, 1, nr)
    local at = gemv.spec_for(fake(), fmt, 300, kmax)
    t.eq({ at.defines.GEMV_IDOT, at.max_k }, { 1, kmax }, fmt .. ": at the limit (layout 1)")
    t.truthy(at.shared_bytes <= 49152, fmt .. " at the limit fits")
    t.truthy(gemv.spec_for(fake(), fmt, 300, kmax + 32) == specs[fmt], fmt .. ": past the limit, the float kernel")
    t.truthy(gemv.spec_for(fake { max_shared_bytes = 32768 }, fmt, 300, kmax) == specs[fmt],
      fmt .. ": the limit is the device's")
    -- a device that does not report its SMs: a fixed cap of 256 workgroups
    local cpu = gemv.spec_for(fake { sm_count = 0 }, fmt, 65536, 1024)
    t.eq(cpu.grid_cap, 256)
    t.eq(cpu.rows_per_group, 128, fmt .. ": the tall rows' tiles")
    t.eq(gemv.grid(cpu, 65536, 1024), { 256, 1, 1 }, fmt .. ": 512 tiles, 2 each")
    t.eq(gemv.grid(cpu, 513 * 128, 1024), { 171, 1, 1 }, fmt .. ": 513 tiles, 3 each")
  end
  for _, fmt in ipairs { "f32", "f16", "bf16" } do
    t.truthy(gemv.spec_for(fake(), fmt, 300, 1024) == specs[fmt], fmt .. " has no integer kernel")
  end
  t.truthy(gemv.spec_for({ backend = "cuda" }, "q8_0", 300, 1024) == gemv.spec("cuda", "q8_0", 300, 1024),
    "CUDA: its own spec")
end)

t.test("integer path: variants and their errors", function()
  t.eq(specs.variant("q8_0", { GEMV_IDOT = 1, GEMV_XB = 8 }).defines,
    { GEMV_T = 16, GEMV_NR = 8, GEMV_TOKENS = 1, GEMV_IDOT = 1, GEMV_XB = 8 }, "the integer geometry unless named")
  local v = specs.variant("q8_0", { GEMV_IDOT = 1, GEMV_XB = 8, GEMV_GRID = 3, GEMV_T = 64, GEMV_NR = 4 })
  t.eq(v.defines, { GEMV_T = 64, GEMV_NR = 4, GEMV_TOKENS = 1, GEMV_IDOT = 1, GEMV_XB = 8 })
  t.eq({ v.max_k, v.grid_cap }, { 256, 3 })
  t.eq(gemv.grid(v, 300, 256), { 3, 1, 1 }, "19 tiles over at most 3 workgroups: 7 each")
  t.eq(gemv.grid(specs.variant("q8_0", { GEMV_IDOT = 1, GEMV_XB = 8, GEMV_T = 64, GEMV_NR = 4 }), 300, 256), { 19, 1, 1 },
    "GEMV_GRID = 0: one workgroup per tile")
  t.eq(specs.shape_changes("q4_0", 300, 5120, { GEMV_IDOT = 1 }), { GEMV_T = 32, GEMV_NR = 8, GEMV_XB = 160 },
    "the geometry for_device takes at 300 rows and one token")
  t.eq(specs.shape_changes("q4_0", 300, 5120, { GEMV_IDOT = 1, GEMV_NR = 2 }), { GEMV_XB = 160 }, "a named geometry stays")
  t.eq(specs.shape_changes("q4_0", 300, 5120, { GEMV_IDOT = 1, GEMV_XB = 32 }), { GEMV_T = 32, GEMV_NR = 8 })
  t.eq(specs.shape_changes("q4_0", 300, 5120, { GEMV_IDOT = 0 }), {})
  t.eq(specs.shape_changes("q4_0", 300, 5120), {})
  t.eq(specs.variant_defines("q4_0").GEMV_IDOT, 0)
  t.eq(specs.variant_defines("bf16").GEMV_IDOT, nil)
  t.eq(specs.variant_defines("q4_k").GEMV_IDOT, 0)
  t.errors(function() specs.variant("q8_0", { GEMV_IDOT = 1 }) end,
    "gemv_vulkan.variant: GEMV_IDOT=1 needs GEMV_XB >= 1", true)
  t.errors(function() specs.variant("q8_0", { GEMV_IDOT = 3 }) end,
    "gemv_vulkan.variant: GEMV_IDOT=3 is not 0, 1 or 2", true)
  t.eq(specs.variant("q4_0", { GEMV_IDOT = 2, GEMV_XB = 8 }).k_multiple, 64)
  t.eq(specs.shape_changes("q8_0", 300, 1024, { GEMV_IDOT = 2 }), { GEMV_T = 32, GEMV_NR = 8, GEMV_XB = 32 })
  -- T > 1: the T-token loop, which slices x past GEMV_XB (no k limit); T = 1 keeps x whole
  local v2 = specs.variant("q8_0", { GEMV_IDOT = 1, GEMV_XB = 8, GEMV_TOKENS = 2 })
  t.eq(v2.defines, { GEMV_T = 16, GEMV_NR = 8, GEMV_TOKENS = 2, GEMV_IDOT = 1, GEMV_XB = 8 })
  t.eq({ v2.max_k, v2.x_rounding, v2.shared_bytes }, { nil, 32, 8 * 68 * 2 + 4 * 256 * 8 })
  t.eq(specs.variant("q4_0", { GEMV_IDOT = 2, GEMV_XB = 8, GEMV_TOKENS = 8 }).shared_bytes, 8 * 88 * 8 + 4 * 256 * 8)
  -- shape_changes sizes x for 48 KiB: whole where T tokens fit, else slices of whole 32-block steps
  t.eq(specs.shape_changes("q8_0", 14336, 5120, { GEMV_IDOT = 2, GEMV_TOKENS = 2 }), { GEMV_XB = 160 })
  t.eq(specs.shape_changes("q8_0", 14336, 5120, { GEMV_IDOT = 2, GEMV_TOKENS = 8 }), { GEMV_XB = 64 },
    "(49152 - 8192) // (76 * 8) = 67 blocks: slices of 64")
  t.eq(specs.shape_changes("q4_0", 14336, 5120, { GEMV_IDOT = 1, GEMV_TOKENS = 4 }), { GEMV_XB = 128 },
    "(49152 - 8192) // (72 * 4) = 142 blocks: slices of 128")
  t.eq(specs.shape_changes("q4_0", 14336, 5120, { GEMV_IDOT = 1, GEMV_TOKENS = 1 }), { GEMV_T = 32, GEMV_NR = 8, GEMV_XB = 160 })
  t.errors(function() specs.variant("q8_0", { GEMV_GRID = 4 }) end,
    "gemv_vulkan.variant: GEMV_XB and GEMV_GRID apply to the integer kernel only (GEMV_IDOT=1 or 2)", true)
  t.errors(function() specs.variant("f16", { GEMV_IDOT = 1 }) end,
    "gemv_vulkan.variant: f16 has no define GEMV_IDOT (GEMV_T, GEMV_NR, GEMV_WG, GEMV_TOKENS, GEMV_COOP, COOP_WR, COOP_KS, COOP_U, COOP_DIRECT, COOP_REG, COOP_RT, COOP_PF)", true)
  t.errors(function() specs.variant("f32", { GEMV_IDOT = 1 }) end,
    "gemv_vulkan.variant: f32 has no define GEMV_IDOT (GEMV_T, GEMV_NR, GEMV_WG, GEMV_TOKENS, GEMV_COOP, COOP_WR, COOP_KS, COOP_U, COOP_REG, COOP_RT)", true)
  -- GEMV_WG: smaller workgroups, the block and rows to match; 256 is the default (no define)
  local w64 = specs.variant("q4_k", { GEMV_IDOT = 1, GEMV_XB = 8, GEMV_TOKENS = 4, GEMV_WG = 64 })
  t.eq({ w64.block, w64.rows_per_group, w64.defines.GEMV_WG, w64.shared_bytes }, { { 64, 1, 1 }, 32, 64, 8 * 72 * 4 + 4 * 64 * 4 })
  t.eq(specs.variant("q4_k", { GEMV_IDOT = 1, GEMV_XB = 8, GEMV_WG = 256 }).defines.GEMV_WG, nil)
  t.eq({ specs.variant("f16", { GEMV_WG = 128 }).block[1], specs.variant("f16", { GEMV_WG = 128 }).rows_per_group }, { 128, 4 })
  t.eq(specs.variant_defines("q4_k").GEMV_WG, 256)
  t.errors(function() specs.variant("q4_k", { GEMV_WG = 96 }) end,
    "gemv_vulkan.variant: GEMV_WG=96 is not a power of two in 32..1024", true)
  t.errors(function() specs.variant("f16", { GEMV_WG = 32, GEMV_T = 64 }) end,
    "gemv_vulkan.variant: GEMV_T=64 does not divide the workgroup of 32", true)
  local dev = t.device("vulkan")
  t.truthy(type(dev.integer_dot_product) == "boolean", "integer_dot_product is a boolean")
  t.truthy(type(dev.integer_dot_4x8_accelerated) == "boolean", "integer_dot_4x8_accelerated is a boolean")
  local major, minor = dev.api_version:match("^(%d+)%.(%d+)")
  if dev.name:find("llvmpipe", 1, true) and tonumber(major) == 1 and tonumber(minor) >= 3 then
    -- lavapipe has the feature (unaccelerated): CI must run the integer path, not skip it
    t.truthy(dev.integer_dot_product, "lavapipe 1.3 reports shaderIntegerDotProduct")
  end
  releasing(dev, function()
    local wb <close> = dev:buffer(gemv.buffer_bytes("q8_0", 4, 512))
    local xb <close> = dev:buffer(4 * 512)
    local yb <close> = dev:buffer(4 * 4)
    t.errors(function() gemv.launch_args(dev, "q8_0", wb, xb, yb, 4, 512, v) end,
      "gemv.launch_args: q8_0 k=512 is more than the 256 values of x the kernels/vulkan/gemv_q8_0.comp "
      .. "kernel (GEMV_XB=8) holds", true)
  end)
end)


for _, fmt in ipairs(IDOT) do
  t.test(fmt .. " integer path: ragged m, k = 32 .. 5120 and at the shared-memory limit", function()
    local dev = idot_device()
    releasing(dev, function()
      -- the limits of the geometry at 37 rows (8 rows a lane group at one token: the larger reduction array)
      local nr = specs.idot_geometry(fmt, 37)[2]
      local kmax = specs.idot_max_k(fmt, dev.max_shared_bytes, 1, 1, nr)
      local k2 = specs.idot_max_k(fmt, dev.max_shared_bytes, 2, 1, nr) // 64 * 64
      t.truthy(k2 >= 5120, ("%s: the device's shared memory holds k=5120 (limit %d)"):format(fmt, k2))
      local shapes = { { 37, 32, 1 }, { 300, 256, 2 }, { 37, 1024, 2 }, { 19, 288, 1 }, { 300, 5120, 2 },
                       { 37, k2, 2 }, { 37, k2 + 64, 1 }, { 37, kmax, 1 } }
      for i, shape in ipairs(shapes) do
        local m, k, mode = shape[1], shape[2], shape[3]
        local s = gemv.spec_for(dev, fmt, m, k)
        t.eq(s.defines.GEMV_IDOT, mode, ("%s m=%d k=%d runs the integer kernel, layout %d"):format(fmt, m, k, mode))
        check(dev, fmt, m, k, 100 + i)
      end
      t.truthy(gemv.spec_for(dev, fmt, 37, kmax + 32) == specs[fmt], fmt .. ": past the limit, the float kernel")
      check(dev, fmt, 37, kmax + 32, 120)
    end)
  end)

  -- Workgroups that loop over several row tiles (GEMV_GRID), through the three
  -- reduction paths (lane groups narrower than, as wide as and wider than a subgroup):
  -- the barrier between tiles and the tile's rows in the shared-memory reduction.
  t.test(fmt .. " integer path: workgroups over several row tiles, every reduction path", function()
    local dev = idot_device()
    releasing(dev, function()
      for mode = 1, 2 do
        for _, T in ipairs(gc.lane_widths(dev.subgroup_size)) do
          for _, g in ipairs { { 1, 1 }, { 3, 3 } } do
            local NR, grid = g[1], g[2]
            local v = specs.variant(fmt, { GEMV_T = T, GEMV_NR = NR, GEMV_IDOT = mode, GEMV_XB = 32, GEMV_GRID = grid })
            check(dev, fmt, 300, 1024, 130 + T + NR, v)
          end
        end
      end
    end)
  end)

  -- Per-block int16 scales: blocks 2^20 apart in magnitude, and blocks of zeros. The odd
  -- rows see only the small blocks (their large blocks' d set to 0), so a kernel that
  -- quantized a small block with a large scale would fail them.
  t.test(fmt .. " integer path: block magnitudes 2^20 apart, zero blocks, zero x", function()
    local dev = idot_device()
    local ref = require "gpubench.ref"
    local f = gemv.format(fmt)
    releasing(dev, function()
      local m, k = 37, 1024
      local nb = k // 32
      local v = { string.unpack(("<" .. ("f"):rep(k)), ref.random_f32(k, 141)) }
      v[k + 1] = nil
      local parts = {}
      for i = 1, k do
        local b = (i - 1) // 32
        local x = v[i] * (b % 2 == 0 and 2.0 ^ 10 or 2.0 ^ -10)
        if b == 3 or b == 6 then x = 0.0 end -- a large and a small block of zeros
        parts[i] = string.pack("<f", x)
      end
      local xs = table.concat(parts)
      local w = ref.random_blocks(fmt, m * nb, 142)
      local blocks = {}
      for r = 0, m - 1 do
        for b = 0, nb - 1 do
          local o = (r * nb + b) * f.block_bytes
          local blk = w:sub(o + 1, o + f.block_bytes)
          if r % 2 == 1 and b % 2 == 0 then blk = "\0\0" .. blk:sub(3) end -- d = +0
          blocks[#blocks + 1] = blk
        end
      end
      w = table.concat(blocks)
      for mode = 1, 2 do
        local spec = specs.variant(fmt, { GEMV_IDOT = mode, GEMV_XB = nb })
        local y, ys = gemv.run(dev, fmt, w, m, k, xs, spec)
        local yref, absdot = ref.gemv(fmt, w, m, k, xs)
        for r = 2, m, 2 do -- the odd rows (0-based) see only the small blocks
          t.truthy(absdot[r] > 0 and absdot[r] < 1e-4 * absdot[r - 1],
            ("row %d: sum |w x| %.3g against row %d's %.3g"):format(r - 1, absdot[r], r - 2, absdot[r - 1]))
        end
        local term = gc.x_rounding_term(fmt, w, m, k, xs, 32, gc.TOL)
        for i = 1, m do absdot[i] = absdot[i] + term[i] end
        local ok, worst, rel, failures = ref.check_rows(ys, yref, absdot, gc.TOL)
        t.truthy(ok, ("%s layout %d: %d rows off, worst row %d (%.3g), y=%.9g ref=%.9g"):format(fmt, mode, failures,
          worst, rel, y[worst], yref[worst]))
        -- x all zeros: every scale 0, y exactly 0 (no NaN from 0/0)
        local yz = gemv.run(dev, fmt, w, m, k, string.rep("\0", 4 * k), spec)
        for i = 1, m do t.truthy(yz[i] == 0, ("%s zero x: y[%d] = %s"):format(fmt, i, tostring(yz[i]))) end
      end
    end)
  end)
end


-- The dense kernels at T > 1 (gemv_vulkan's token rules): 8 rows per lane group, 16 lanes
-- from T = 4; through gemv.run's default kernel, ragged m (never a multiple of the 128- or
-- 64-row workgroup), against the FP64 reference.
t.test("dense formats at T > 1: the token rules' geometry, checked at T = 2, 3, 4, 5, 8", function()
  for _, fmt in ipairs { "f32", "f16", "bf16" } do
    t.eq(specs.token_changes(fmt, 1), {}, fmt)
    t.eq(specs.token_changes(fmt, 3), { GEMV_NR = 8 }, fmt)
    t.eq(specs.token_changes(fmt, 4), { GEMV_T = 16, GEMV_NR = 8 }, fmt)
    t.eq(specs.token_changes(fmt, 8), { GEMV_T = 16, GEMV_NR = 8 }, fmt)
    local s = gemv.spec("vulkan", fmt, 14336, 5120, 8)
    t.eq({ s.defines, s.rows_per_group }, { { GEMV_T = 16, GEMV_NR = 8, GEMV_TOKENS = 8 }, 128 }, fmt)
    t.eq(gemv.spec("vulkan", fmt, 14336, 5120, 2).rows_per_group, 64, fmt)
  end
  t.eq(specs.token_changes("q6_k", 8), {})
  t.errors(function() specs.token_changes("q9", 2) end, "gemv_vulkan.token_changes: unknown format q9", true)
  local dev = t.device("vulkan")
  releasing(dev, function()
    for _, fmt in ipairs { "f32", "f16", "bf16" } do
      for _, T in ipairs { 2, 3, 4, 5, 8 } do
        gc.check_tokens(dev, fmt, 130 + T, 520, T, 600 + T)
        gc.check_tokens(dev, fmt, 37, 1024, T, 620 + T)
      end
    end
  end)
end)

-- Smaller workgroups (GEMV_WG): the integer kernels at T = 1, 2 and 4 and a float one, with lane
-- groups as wide as the workgroup and rows past the last, against the oracle.
t.test("GEMV_WG 32 and 64 against the oracle (integer and float kernels, T = 1, 2, 4)", function()
  local dev = t.device("vulkan")
  releasing(dev, function()
    for i, c in ipairs {
      { "q4_k", { GEMV_IDOT = 1, GEMV_XB = 8, GEMV_WG = 64 }, 4 },
      { "q4_k", { GEMV_IDOT = 1, GEMV_XB = 8, GEMV_WG = 32, GEMV_T = 32, GEMV_NR = 2 }, 2 },
      { "q8_0", { GEMV_IDOT = 1, GEMV_XB = 8, GEMV_WG = 64 }, 4 },
      { "q6_k", { GEMV_IDOT = 2, GEMV_XB = 8, GEMV_WG = 64 }, 1 },
      { "f16", { GEMV_WG = 32 }, 2 },
    } do
      local ch = {}
      for k, v in pairs(c[2]) do ch[k] = v end
      ch.GEMV_TOKENS = c[3]
      gc.check_tokens(dev, c[1], 37, 512, c[3], 700 + i, specs.variant(c[1], ch))
    end
  end)
end)

t.run()
