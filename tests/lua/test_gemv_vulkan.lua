-- The Vulkan GEMV kernels (kernels/vulkan/gemv_*.comp) against the FP64 oracle,
-- through lib/gpubench/gemv.lua. Runs on lavapipe in CI, so shapes stay small.
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

-- A device table as for_device reads it: the H200's Vulkan limits by default.
local function fake(over)
  local d = { backend = "vulkan", integer_dot_product = true, subgroup_size = 32,
              max_shared_bytes = 49152, sm_count = 132 }
  for k, v in pairs(over or {}) do d[k] = v end
  return d
end

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
    -- T > 1: the T-token integer loop, layout 1, one workgroup per row tile, x in
    -- slices where it does not fit (any k), the same table an A/B's variant builds
    for _, T in ipairs { 2, 3, 8 } do
      local v = gemv.spec_for(fake(), fmt, 14336, 5120, T)
      local xb = T < 8 and 160 or 64 -- x whole at T = 2, 3 (160 blocks fit 48 KiB), slices of 64 at T = 8
      -- 16 lanes a row, 8 rows a lane group: tiles of 128 rows
      t.eq(v.defines, { GEMV_T = 16, GEMV_NR = 8, GEMV_TOKENS = T, GEMV_IDOT = 1, GEMV_XB = xb }, fmt .. " T=" .. T)
      t.eq(specs.idot_geometry(fmt, 14336, T), { 16, 8 }, fmt .. " T=" .. T)
      t.eq({ v.grid_cap, v.max_k, v.k_multiple, v.rows_per_group }, { 0, nil, nil, 128 }, fmt .. " T=" .. T)
      t.eq(gemv.grid(v, 14336, 5120), { 112, 1, 1 }, fmt .. " T=" .. T .. ": one workgroup per tile")
      t.truthy(v.shared_bytes <= 49152, fmt .. " T=" .. T .. " fits")
      local over = { GEMV_TOKENS = T, GEMV_IDOT = 1 }
      for d, x in pairs(specs.shape_changes(fmt, 14336, 5120, over)) do over[d] = x end
      t.truthy(specs.variant(fmt, over) == v, fmt .. " T=" .. T .. ": the A/B's variant is for_device's kernel")
      t.eq(gemv.spec_for(fake(), fmt, 300, 20000, T).defines.GEMV_IDOT, 1, fmt .. ": any k at T > 1 (slices)")
    end
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
    "gemv_vulkan.variant: f16 has no define GEMV_IDOT (GEMV_T, GEMV_NR, GEMV_TOKENS)", true)
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

-- The device's own integer kernel, or a skip where it has none.
local function idot_device()
  local dev = t.device("vulkan")
  if not dev.integer_dot_product then t.skip("the device has no shaderIntegerDotProduct") end
  if dev.subgroup_size < 8 then t.skip("subgroups below 8 invocations") end
  return dev
end

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

-- ------------------------------------------------------------ q4_k's integer path

-- The largest k whose x of T tokens q4_k's integer kernel holds whole in shared bytes:
-- 72 bytes per 32-block and token beside the 4096-byte reduction array (GEMV_NR = 4),
-- whole super-blocks.
local function q4k_max_k(shared, T) return 32 * ((shared - 4096) // (72 * T) // 8 * 8) end

t.test("q4_k integer path: the selection rule at T = 1 .. 8 and shape_changes (fake devices)", function()
  t.eq({ specs.idot_max_k("q4_k", 49152), specs.idot_max_k("q4_k", 49152, 1, 3),
         specs.idot_max_k("q4_k", 49152, 1, 4), specs.idot_max_k("q4_k", 49152, 1, 8) }, { 19968, 6656, 4864, 2304 })
  for T = 1, 8 do
    for _, shared in ipairs { 49152, 32768 } do
      t.eq(specs.idot_max_k("q4_k", shared, 1, T), q4k_max_k(shared, T), ("T=%d, %d bytes"):format(T, shared))
    end
    -- k = 5120 fits whole up to T = 3 on the H200; T = 4..8 at k = 2048
    local k = T <= 3 and 5120 or 2048
    local s = gemv.spec_for(fake(), "q4_k", 14336, k, T)
    local what = ("q4_k T=%d k=%d"):format(T, k)
    -- 8 lanes a row; 2 rows a lane group at one token below 65536 rows (64-row tiles), 4 at T > 1 (128)
    local nr = T == 1 and 2 or 4
    t.eq(specs.idot_geometry("q4_k", 14336, T), { 8, nr }, what)
    t.eq(s.defines, { GEMV_T = 8, GEMV_NR = nr, GEMV_TOKENS = T, GEMV_IDOT = 1, GEMV_XB = k // 32 }, what)
    t.eq({ s.x_rounding, s.rows_per_group, s.grid_cap, s.file }, { 32, 32 * nr, 0, "kernels/vulkan/gemv_q4_k.comp" }, what)
    t.eq(s.max_k, nil, what .. ": no k limit (the kernel slices x past GEMV_XB)")
    t.eq(s.shared_bytes, 72 * (k // 32) * T + 1024 * nr, what)
    t.truthy(s.shared_bytes <= 49152, what .. ": fits")
    t.truthy(gemv.spec_for(fake(), "q4_k", 14336, k, T) == s, what .. ": one table per kernel")
    -- 224 tiles of 64 rows or 112 of 128, one workgroup each (q4_k's grid is not capped)
    t.eq(gemv.grid(s, 14336, k), { T == 1 and 224 or 112, 1, 1 }, what)
    local kmax = specs.idot_max_k("q4_k", 49152, 1, T, nr)
    local at = gemv.spec_for(fake(), "q4_k", 300, kmax, T)
    t.eq({ at.defines.GEMV_IDOT, at.defines.GEMV_XB }, { 1, kmax // 32 }, what .. ": at the limit, x whole")
    t.truthy(at.shared_bytes <= 49152, what .. ": at the limit fits")
    -- past it, x in slices of the most whole 32-block steps that fit
    local past = gemv.spec_for(fake(), "q4_k", 300, kmax + 256, T)
    local mxb = kmax // 32
    t.eq({ past.defines.GEMV_IDOT, past.defines.GEMV_XB }, { 1, mxb >= 32 and mxb // 32 * 32 or mxb },
      what .. ": past the limit, the integer kernel with x in slices")
    t.truthy(past.shared_bytes <= 49152, what .. ": past the limit fits")
    t.truthy(gemv.spec_for(fake { integer_dot_product = false }, "q4_k", 300, 1024, T) == gemv.spec("vulkan", "q4_k", T),
      what .. ": no integerDotProduct, the float kernel")
    t.truthy(gemv.spec_for(fake { subgroup_size = 4 }, "q4_k", 300, 1024, T) == gemv.spec("vulkan", "q4_k", T),
      what .. ": subgroup 4, the float kernel")
  end
  t.eq(gemv.spec_for(fake(), "q4_k", 14336, 5120, 4).defines.GEMV_XB, 128,
    "T = 4 at k = 5120: 45 KiB of x past the 44 KiB beside the reduction array, slices of 128 blocks")
  t.eq(gemv.spec_for(fake(), "q4_k", 14336, 5120, 8).defines.GEMV_XB, 64, "T = 8 at k = 5120: slices of 64 blocks")
  -- not capped: one workgroup per tile, whether or not the device reports its SMs
  -- (at one token from 65536 rows: 8 lanes a row, 8 rows a lane group, tiles of 256 rows)
  local tall = gemv.spec_for(fake(), "q4_k", 131072, 5120)
  t.eq({ tall.defines.GEMV_T, tall.defines.GEMV_NR, tall.rows_per_group }, { 8, 8, 256 })
  t.eq(gemv.grid(tall, 131072, 5120), { 512, 1, 1 })
  t.eq(gemv.grid(gemv.spec_for(fake(), "q4_k", 131072, 5120, 2), 131072, 5120), { 1024, 1, 1 }, "T = 2: tiles of 128")
  local cpu = gemv.spec_for(fake { sm_count = 0 }, "q4_k", 256 * 4097, 1024)
  t.eq({ cpu.grid_cap, gemv.grid(cpu, 256 * 4097, 1024) }, { 0, { 4097, 1, 1 } }, "4097 tiles, one each")
  -- shape_changes: for_device's GEMV_XB on a 48 KiB device, slices of whole
  -- 32-block steps where x of T tokens does not fit
  local function xb(over) return specs.shape_changes("q4_k", 14336, 5120, over).GEMV_XB end
  t.eq({ xb { GEMV_IDOT = 1 }, xb { GEMV_IDOT = 1, GEMV_TOKENS = 3 }, xb { GEMV_IDOT = 1, GEMV_TOKENS = 4 },
         xb { GEMV_IDOT = 1, GEMV_TOKENS = 8 }, xb { GEMV_IDOT = 1, GEMV_TOKENS = 8, GEMV_NR = 8 } }, { 160, 160, 128, 64, 64 })
  t.eq(specs.shape_changes("q4_k", 14336, 5120, { GEMV_IDOT = 0 }), {})
  for T = 1, 8 do
    local over = { GEMV_IDOT = 1, GEMV_TOKENS = T, GEMV_GRID = 0 }
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

-- x on its blocks' int16 grids (x_i = n_i 2^-e_b, |n_i| <= 32767, one |n_i| = 32767 per
-- block, e_b from 4 to 24): the quantization is exact (s_b is 2^-e_b to one rounding),
-- so the integer kernel has no x-rounding error and must meet a bound 100 times
-- tighter than the GEMV criterion (lavapipe: 5e-8 at worst, as the float kernel).
-- An integer dot 8 units off in every sub-block (2e-6 of sum |w x|) fails it and
-- passes the tests above, whose bound with the x-rounding term is about 1.5e-4.
-- fmt's integer kernel (GEMV_XB in xbs, one workgroup) on T rows of x on their blocks'
-- int16 grids (random seed; the weights seed + 1) against 1e-6 of sum |w x| per row.
local function check_int16_grid(dev, fmt, m, k, T, seed, xbs, mode, xpre)
  local ref = require "gpubench.ref"
  local rng = math.random
  math.randomseed(seed)
  local rows = {}
  for tk = 1, T do
    local parts = {}
    for b = 0, k // 32 - 1 do
      local e = 4 + (b * 7 + tk) % 21
      local top = rng(0, 31) -- the element that carries the block's amax
      for i = 0, 31 do
        local n = i == top and (rng(0, 1) == 0 and -32767 or 32767) or rng(-32767, 32767)
        parts[#parts + 1] = string.pack("<f", n * 2.0 ^ -e)
      end
    end
    rows[tk] = table.concat(parts)
  end
  local xs = table.concat(rows)
  local w = ref.random_blocks(fmt, m * k // 256, seed + 1)
  for _, xb in ipairs(xbs) do
    local spec = specs.variant(fmt, { GEMV_IDOT = mode or 1, GEMV_XB = xb, GEMV_TOKENS = T, GEMV_GRID = 1, GEMV_XPRE = xpre })
    local y, ys = gemv.run(dev, fmt, w, m, k, xs, T, spec)
    for tk = 1, T do
      local yref, absdot = ref.gemv(fmt, w, m, k, rows[tk])
      local ok, worst, rel, failures = ref.check_rows(ys:sub(4 * m * (tk - 1) + 1, 4 * m * tk), yref, absdot, 1e-6)
      t.truthy(ok, ("%s XB=%d token %d: %d rows beyond 1e-6 sum |w x|, worst row %d (%.3g), y=%.9g ref=%.9g"):format(
        fmt, xb, tk, failures, worst, rel, y[m * (tk - 1) + worst], yref[worst]))
    end
  end
end

t.test("q4_k integer path: x on the int16 grid, exact to 1e-6 of sum |w x|", function()
  local dev = idot_device()
  releasing(dev, function() check_int16_grid(dev, "q4_k", 67, 1024, 2, 151, { 32, 8 }) end)
end)

-- ------------------------------------------------------------ x quantized once per call
-- GEMV_XPRE=1 (q4_k, q5_k): a first dispatch (kernels/vulkan/gemv_idot_xprep.comp)
-- quantizes x into a workspace the k-quant loop reads in x's place (docs/kernels/vulkan-gemv.md,
-- "x quantized once per call").
t.test("GEMV_XPRE=1: the spec, its first dispatch and workspace bytes, and the errors", function()
  for _, fmt in ipairs { "q4_k", "q5_k", "q8_0", "q4_0" } do
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
      ("gemv_vulkan.variant: %s GEMV_XPRE=1 is the integer kernel's in layout 1: it needs GEMV_IDOT=1"):format(fmt), true)
    t.errors(function() specs.variant(fmt, { GEMV_IDOT = 1, GEMV_XPRE = 2 }) end,
      "gemv_vulkan.variant: GEMV_XPRE=2 is not 0 or 1", true)
  end
  t.errors(function() specs.variant("q6_k", { GEMV_IDOT = 2, GEMV_XB = 8, GEMV_XPRE = 1 }) end,
    "gemv_vulkan.variant: q6_k has no define GEMV_XPRE", true)
end)

-- Every T, k past the device's shared-memory limit for x (what slices x without XPRE), a k
-- of one super-block, ragged m, workgroups over several row tiles, every reduction path.
t.test("GEMV_XPRE=1: q4_k, q5_k, q8_0, q4_0 at every T = 1 .. 8, k past the shared limit, ragged m, every reduction path", function()
  local dev = idot_device()
  releasing(dev, function()
    for i, fmt in ipairs { "q4_k", "q5_k", "q8_0", "q4_0" } do
      for T = 1, 8 do
        local v = specs.variant(fmt, { GEMV_IDOT = 1, GEMV_XPRE = 1, GEMV_TOKENS = T })
        local past = specs.idot_max_k(fmt, dev.max_shared_bytes, 1, T) + 256
        gc.check_tokens(dev, fmt, 37 + 30 * T, past, T, 500 + 20 * i + T, v)
        gc.check_tokens(dev, fmt, 5, 256, T, 540 + 20 * i + T, v)
      end
      for _, lanes in ipairs(gc.lane_widths(dev.subgroup_size)) do
        local v = specs.variant(fmt, { GEMV_T = lanes, GEMV_NR = 3, GEMV_IDOT = 1, GEMV_XPRE = 1, GEMV_TOKENS = 3,
                                       GEMV_GRID = 3 })
        gc.check_tokens(dev, fmt, 300, 1024, 3, 590 + lanes, v)
      end
    end
  end)
end)

t.test("GEMV_XPRE=1: x on the int16 grid, exact to 1e-6 of sum |w x| (q4_k, q5_k)", function()
  local dev = idot_device()
  releasing(dev, function()
    check_int16_grid(dev, "q4_k", 67, 1024, 3, 161, { 8 }, 1, 1)
    check_int16_grid(dev, "q5_k", 45, 1280, 2, 171, { 8 }, 1, 1)
  end)
end)

-- ------------------------------------------------------------ q5_k's integer path
-- q4_k's kernel with the fifth bit OR-ed into each code (gemv_q5_k.comp, GEMV_IDOT=1),
-- picked by q4_k's rule (faster than the float kernel at T = 1 and 8 on the H200).
t.test("q5_k integer path: for_device picks it by q4_k's rule; its geometry and shared memory", function()
  for T = 2, 8 do
    local s = gemv.spec_for(fake(), "q5_k", 14336, 5120, T)
    local k4 = gemv.spec_for(fake(), "q4_k", 14336, 5120, T)
    t.eq({ s.file, s.defines, s.shared_bytes, s.grid_cap, s.x_rounding },
      { "kernels/vulkan/gemv_q5_k.comp", k4.defines, k4.shared_bytes, 0, 32 }, ("T=%d: q4_k's geometry"):format(T))
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
      { "kernels/vulkan/gemv_q6_k.comp", 2, T == 1 and 16 or 8, T == 1 and 2 or 4, T, 0 },
      ("T=%d: the integer kernel, %s"):format(T, T == 1 and "16 lanes a row, 2 rows a lane group at one token"
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
    local over = { GEMV_IDOT = 2, GEMV_TOKENS = T }
    for d, x in pairs(specs.shape_changes("q6_k", 14336, 5120, over)) do over[d] = x end
    t.truthy(specs.variant("q6_k", over) == s, "q6_k T=" .. T .. ": the A/B's variant is for_device's kernel")
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
    check_int16_grid(dev, "q6_k", 45, 1280, 2, 761, { 40, 8 })
  end)
end)

t.test("q6_k integer path, GEMV_IDOT=2 (codes q, the -32 per half through x's sums): the same checks", function()
  local dev = idot_device()
  releasing(dev, function()
    check_kquant_every_t(dev, "q6_k", 800, { 1, 2, 8 }, 2)
    check_int16_grid(dev, "q6_k", 45, 1280, 2, 861, { 40, 8 }, 2)
    -- T = 3 at its own geometry (16 lanes a row, 8 rows a lane group: 128-row tiles), over two tiles
    local few = specs.variant("q6_k", { GEMV_IDOT = 2, GEMV_XB = 48, GEMV_TOKENS = 3, GEMV_T = 16, GEMV_NR = 8 })
    gc.check_tokens(dev, "q6_k", 150, 1280, 3, 871, few)
  end)
end)

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

t.run()
