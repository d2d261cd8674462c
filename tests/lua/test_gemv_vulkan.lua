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
    for _, fmt in ipairs { "q4_0", "q8_0" } do check(dev, fmt, 19, 288, 22) end
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
    local w = ref.random_blocks("q5_k", m * k // 256, 61)
    local x = ref.random_f32(k, 62)
    local _, want = gemv.run(dev, "q5_k", w, m, k, x)
    local wb <close> = dev:buffer(gemv.buffer_bytes("q5_k", m, k))
    local xb <close> = dev:buffer(4 * k)
    local yb <close> = dev:buffer(4 * m)
    wb:fill(0)
    wb:upload(w)
    xb:upload(x)
    yb:fill(0xFF) -- NaN everywhere: a row the kernel skips cannot pass
    local kern, grid, block, a1, a2, a3, a4, a5 = gemv.launch_args(dev, "q5_k", wb, xb, yb, m, k)
    local rpg = specs.q5_k.rows_per_group
    t.eq(grid, { (m + rpg - 1) // rpg, 1, 1 })
    t.eq(block, { 256, 1, 1 })
    t.eq(kern.params, { "buffer", "buffer", "buffer", "u32", "u32" })
    kern:launch(grid, block, a1, a2, a3, a4, a5)
    t.eq(yb:download(), want)
  end)
end)

t.run()
