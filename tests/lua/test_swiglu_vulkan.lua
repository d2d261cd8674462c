-- The Vulkan SwiGLU kernels (kernels/vulkan/swiglu_*.comp) on the FP64
-- reference through the experiment's own checks (tests/lua/swiglu_cases.lua):
-- ragged N (odd: the fused kernel's half-word stores), K not a multiple of the
-- workgroup's words, every M, other workgroup sizes; an unwritten output is
-- caught; one group timed in A-B-C-C-B-A order with the vendor path n/a.
local t = dofile("tests/lua/harness.lua")
local sc = dofile("tests/lua/swiglu_cases.lua")(t)
local sb = require "gpubench.swiglu_bench"

t.test("chain and fused match the reference: ragged shapes, every M", function()
  local dev = t.device("vulkan")
  sc.check_paths(dev, {
    { n = 37, k = 136, m = { 1, 2, 3, 4, 5, 6, 7, 8 } },
    { n = 1, k = 8, m = { 1, 2 } },
    { n = 64, k = 1032, m = { 3 } },
  }, { "chain", "fused" })
end)

t.test("other workgroup sizes", function()
  local dev = t.device("vulkan")
  sc.check_paths(dev, {
    { n = 19, k = 264, m = { 1, 8 }, geometry = { SW_WG = 32 } },
    { n = 20, k = 520, m = { 5 }, geometry = { SW_WG = 256 } },
  }, { "chain", "fused" })
end)

-- SW_OUT = 4: 4 outputs (8 rows) a workgroup; N of every residue mod 4 (the last
-- workgroup's outputs past N, odd N's half-word stores), every M.
t.test("4 outputs a workgroup (SW_OUT=4): N = 17 .. 20, M = 1 .. 8", function()
  local dev = t.device("vulkan")
  sc.check_paths(dev, {
    { n = 17, k = 264, m = { 1, 3, 8 }, geometry = { SW_OUT = 4 } },
    { n = 18, k = 520, m = { 2, 7 }, geometry = { SW_OUT = 4, SW_WG = 32 } },
    { n = 19, k = 256, m = { 4, 5 }, geometry = { SW_OUT = 4 } },
    { n = 20, k = 1032, m = { 6, 8 }, geometry = { SW_OUT = 4, SW_WG = 128 } },
  }, { "chain", "fused" })
  local S = require "gpubench.swiglu_vulkan"
  local g = assert(S.geometry { SW_OUT = 4 })
  t.eq({ S.fused(g, 8).grid(17), S.gemv(g, 8).grid(34), S.fused(g, 8).defines.SW_OUT }, { 5, 5, 4 })
  t.eq({ S.fused(assert(S.geometry {}), 1).grid(17), S.gemv(assert(S.geometry {}), 1).grid(34) }, { 9, 9 },
    "the default: 2 outputs, 4 rows a workgroup")
  for _, bad in ipairs { { SW_OUT = 3 }, { SW_OUT = 8 }, { SW_ROWS = 4 } } do
    local ok, why = S.geometry(bad)
    t.truthy(ok == nil and why:find(next(bad), 1, true), tostring(why))
  end
end)

-- SW_COOP: the kernels on fp16 cooperative matrices filled from registers
-- (kernels/vulkan/swiglu_coop.comp). Emulated (SW_COOP=2: pairs of components in a
-- scrambled layout, lavapipe runs it): odd and tiny N (the last tile's rows past N, the
-- half-word stores), K with a last half step of 16, every M, slices that do not divide K.
t.test("SW_COOP=2 (emulated cooperative matrices): chain and fused against the reference", function()
  local dev = t.device("vulkan")
  sc.check_paths(dev, {
    { n = 37, k = 136, m = { 1, 2, 3, 4, 5, 6, 7, 8 }, geometry = { SW_COOP = 2 } },
    { n = 1, k = 8, m = { 1, 8 }, geometry = { SW_COOP = 2, SW_WR = 1, SW_KS = 1, SW_U = 1 } },
    { n = 20, k = 264, m = { 2, 8 }, geometry = { SW_COOP = 2, SW_WR = 2, SW_KS = 3, SW_U = 3 } },
  }, { "chain", "fused" })
end)

-- SW_WB=1 (W in B, kernels/vulkan/swiglu_wideb.comp), emulated in NVIDIA's layout: odd and tiny
-- N (a tile's rows past N, the half-word stores), every M, units of 64 k the slices and SW_U do
-- not divide; a build with the emulation scrambled gives NaN everywhere (the layout check)
t.test("SW_COOP=2 SW_WB=1 (W in B, emulated): chain and fused against the reference", function()
  local dev = t.device("vulkan")
  sc.check_paths(dev, {
    { n = 37, k = 128, m = { 1, 2, 3, 4, 5, 6, 7, 8 }, geometry = { SW_COOP = 2, SW_WB = 1 } },
    { n = 1, k = 64, m = { 1, 8 }, geometry = { SW_COOP = 2, SW_WB = 1, SW_WR = 1, SW_KS = 1, SW_U = 1 } },
    { n = 21, k = 64 * 7, m = { 2, 8 }, geometry = { SW_COOP = 2, SW_WB = 1, SW_WR = 2, SW_KS = 3, SW_U = 3 } },
  }, { "chain", "fused" })
end)

t.test("SW_WB=1: its geometry, grids, K refused where not a multiple of 64, the layout check", function()
  local S = require "gpubench.swiglu_vulkan"
  local swiglu = require "gpubench.swiglu"
  local g = assert(S.geometry { SW_COOP = 1, SW_WB = 1, SW_WR = 2 })
  t.eq(g, { SW_COOP = 1, SW_WB = 1, SW_WR = 2, SW_KS = 2, SW_U = 2 }, "SW_WB printed when set")
  local f, c = S.fused(g, 3), S.gemv(g, 3)
  t.eq({ f.file, f.grid(37), c.grid(74), f.k_multiple, c.k_multiple },
    { "kernels/vulkan/swiglu_wideb.comp", 5, 5, 64, 64 }, "4 outputs (fused) or 8 rows (chain) a tile, 2 tiles a workgroup")
  t.eq({ S.geometry { SW_COOP = 1, SW_WB = 2 } }, { nil, "SW_WB=2 is not 0 or 1 (W in B)" })
  t.eq({ S.geometry { SW_WB = 1 } }, { nil, "SW_WB is the cooperative-matrix kernels' (SW_COOP=0)" })
  t.eq(swiglu.check_launch("vulkan", 13824, 8, g, 5120), nil, "K = 5120: 80 units")
  t.eq(swiglu.check_launch("vulkan", 13824, 8, g, 5128),
    "K=5128 must be a multiple of 64 for SW_COOP=1,SW_KS=2,SW_U=2,SW_WB=1,SW_WR=2 (the kernels read units of 64 k)")
  t.eq(swiglu.check_launch("vulkan", 13824, 8, assert(S.geometry { SW_COOP = 1 }), 5128), nil, "SW_WB=0: K of 8")
  local dev = t.device("vulkan")
  local scrambled = assert(S.geometry { SW_COOP = 2, SW_WB = 1, SW_WR = 1, SW_KS = 1, SW_U = 1 })
  local ks = swiglu.kernels(dev, 2, scrambled)
  t.errors(function() swiglu.launches("fused", ks, {}, 8, 96, 2) end,
    "swiglu.launches: K=96 must be a multiple of 64 for kernels/vulkan/swiglu_wideb.comp (units of 64 k)", true)
  -- the emulation scrambled (FRAG_MMA_LAYOUT=0): the kernel's layout check makes every output NaN
  local root = require("gpubench.kernels").root()
  local spec = S.gemv(scrambled, 2)
  local defines = {}
  for k, v in pairs(spec.defines) do defines[k] = v end
  defines.FRAG_MMA_LAYOUT = 0
  local kern <close> = dev:kernel { file = root .. "/" .. spec.file, entry = "main", defines = defines }
  local n, k = 8, 64
  local w <close> = dev:buffer(4 * n * k)
  local x <close> = dev:buffer(4 * k)
  local h <close> = dev:buffer(4 * n)
  w:fill(0x3F)
  x:fill(0x3F)
  h:fill(0)
  kern:launch(spec.grid(2 * n), spec.block, w, x, h, 2 * n, k)
  local words = { string.unpack(("<" .. ("I4"):rep(n)), h:download()) }
  local nan = 0
  for i = 1, n do
    for _, half in ipairs { words[i] & 0xFFFF, words[i] >> 16 } do
      if half & 0x7F80 == 0x7F80 and half & 0x7F ~= 0 then nan = nan + 1 end
    end
  end
  t.eq(nan, 2 * n, "the chain's h of 2 tokens x 8 rows: every bf16 NaN")
end)

t.test("SW_COOP: its geometry, its errors, and the refusal on a device without the matrices", function()
  local S = require "gpubench.swiglu_vulkan"
  local g = assert(S.geometry { SW_COOP = 1, SW_KS = 4 })
  t.eq(g, { SW_COOP = 1, SW_WR = 4, SW_KS = 4, SW_U = 2 }, "only what the kernels read")
  t.eq(assert(S.geometry {}), { SW_WG = 64, SW_OUT = 2 }, "the scalar kernels' geometry as before")
  local f, c = S.fused(g, 5), S.gemv(g, 5)
  t.eq({ f.file, f.block, f.defines, f.grid(37) },
    { "kernels/vulkan/swiglu_coop.comp", 512, { MT = 5, SW_WR = 4, SW_KS = 4, SW_U = 2, SW_CHAIN = 0 }, 2 },
    "fused: 8 outputs a tile, 4 tiles a workgroup")
  t.eq({ c.defines.SW_CHAIN, c.grid(74) }, { 1, 2 }, "chain: 16 rows a tile")
  t.eq(S.fused(assert(S.geometry { SW_COOP = 2 }), 1).defines.COOP_EMULATE, 1)
  for bad, why in pairs {
    [{ SW_COOP = 3 }] = "SW_COOP=3 is not 0 (scalar), 1 (cooperative matrices) or 2 (emulated)",
    [{ SW_COOP = 1, SW_WG = 128 }] = "SW_WG is the scalar kernels' (SW_COOP=1)",
    [{ SW_KS = 4 }] = "SW_KS is the cooperative-matrix kernels' (SW_COOP=0)",
    [{ SW_COOP = 1, SW_WR = 8, SW_KS = 8 }] = "SW_WR=8 x SW_KS=8 subgroups of 32 are more than a workgroup's 1024 invocations",
    [{ SW_COOP = 1, SW_U = 9 }] = "SW_U=9 is not an integer from 1 to 8",
  } do
    t.eq({ S.geometry(bad) }, { nil, why })
  end
  local dev = t.device("vulkan")
  if dev.cooperative_matrix ~= "nv" then
    t.errors(function() require("gpubench.swiglu").kernels(dev, 2, g) end,
      ("swiglu.kernels: SW_COOP=1 needs VK_NV_cooperative_matrix, which %s does not offer"):format(dev.name), true)
  end
end)

t.test("SW_COOP=1 and 2 compile for Vulkan 1.2 at every M without warnings", function()
  local gpu = t.gpu
  if not gpu then t.skip("no gpu module (stock interpreter)") end
  local S = require "gpubench.swiglu_vulkan"
  for m = 1, 8 do
    local g = assert(S.geometry { SW_COOP = m % 2 + 1, SW_WR = m % 3 + 1, SW_KS = m % 4 + 1, SW_U = m })
    local wb = assert(S.geometry { SW_COOP = (m + 1) % 2 + 1, SW_WB = 1, SW_WR = m % 3 + 1, SW_KS = m % 4 + 1, SW_U = m })
    for _, sp in ipairs { S.fused(g, m), S.gemv(g, m), S.fused(wb, m), S.gemv(wb, m) } do
      local c = gpu.compile { backend = "vulkan", file = sp.file, target = "vulkan1.2", defines = sp.defines }
      local label = ("M=%d SW_CHAIN=%d %s"):format(m, sp.defines.SW_CHAIN, sp.file)
      t.eq(c.params, { "buffer", "buffer", "buffer", "u32", "u32" }, label)
      t.truthy(c.log == nil or c.log == "", label .. " warnings: " .. tostring(c.log))
    end
  end
end)

t.test("SW_COOP=1 (and SW_WB=1): chain and fused against the reference where the device has the matrices", function()
  local dev = t.device("vulkan")
  local S = require "gpubench.swiglu_vulkan"
  local ok, why = S.fused(assert(S.geometry { SW_COOP = 1 }), 1).requires(dev)
  if not ok then t.skip(why) end
  sc.check_paths(dev, {
    { n = 37, k = 136, m = { 1, 2, 3, 4, 5, 6, 7, 8 }, geometry = { SW_COOP = 1 } },
    { n = 1, k = 8, m = { 1, 8 }, geometry = { SW_COOP = 1, SW_WR = 1, SW_KS = 1, SW_U = 1 } },
    { n = 300, k = 1032, m = { 3, 8 }, geometry = { SW_COOP = 1, SW_WR = 2, SW_KS = 3, SW_U = 3 } },
    { n = 512, k = 4096, m = { 8 }, geometry = { SW_COOP = 1, SW_WR = 8, SW_KS = 4, SW_U = 4 } },
    { n = 37, k = 128, m = { 1, 2, 3, 4, 5, 6, 7, 8 }, geometry = { SW_COOP = 1, SW_WB = 1 } },
    { n = 301, k = 64 * 17, m = { 3, 8 }, geometry = { SW_COOP = 1, SW_WB = 1, SW_WR = 2, SW_KS = 3, SW_U = 3 } },
    { n = 512, k = 4096, m = { 8 }, geometry = { SW_COOP = 1, SW_WB = 1, SW_WR = 8, SW_KS = 4, SW_U = 4 } },
  }, { "chain", "fused" })
end)

t.test("a token left unwritten fails the check", function()
  sc.unwritten_token_fails(t.device("vulkan"))
end)

t.test("for_device: W in B from M = 7 where the device has the fp16 matrices and K fits; the report names it", function()
  local S = require "gpubench.swiglu_vulkan"
  local swiglu = require "gpubench.swiglu"
  local F16 = { m = 16, n = 8, k = 16, a = "f16", b = "f16", c = "f32", d = "f32" }
  local nv = { backend = "vulkan", name = "nv", subgroup_size = 32, cooperative_matrix = "nv",
               cooperative_matrix_shapes = { F16 } }
  local wb = { SW_COOP = 1, SW_WB = 1, SW_WR = 4, SW_KS = 2, SW_U = 2 }
  for m = 1, 6 do t.eq(S.for_device(nv, 13824, 5120, m), nil, ("M=%d: the shape's geometry"):format(m)) end
  for m = 7, 8 do t.eq(S.for_device(nv, 13824, 5120, m), wb, ("M=%d"):format(m)) end
  t.eq(swiglu.device_geometry(nv, 13824, 5120, 8), wb, "swiglu.device_geometry asks it")
  t.eq(S.for_device(nv, 13824, 5120 + 32, 8), nil, "K not a multiple of 64")
  t.eq(S.for_device({ backend = "vulkan", name = "lvp", subgroup_size = 8, cooperative_matrix = false }, 13824, 5120, 8),
    nil, "no matrices")
  t.eq(S.for_device({ backend = "vulkan", name = "nv", subgroup_size = 64, cooperative_matrix = "nv",
    cooperative_matrix_shapes = { F16 } }, 13824, 5120, 8), nil, "subgroups of 64")
  t.eq(swiglu.device_geometry({ backend = "cuda" }, 13824, 5120, 8), nil, "CUDA has no device rule")
  local notes = require("gpubench.swiglu_report").notes({}, {
    warmup = 1, iterations = 2, trials = 1, shape_geometries = {
      { name = "llama", n = 13824, k = 5120, geometry = { SW_WG = 64, SW_OUT = 2 },
        device = { geometry = wb, m_values = { 7, 8 }, backend = "vulkan" } } } })
  local want = "* kernel geometry of llama (N=13824) at M=7,8: SW_COOP=1 SW_KS=2 SW_U=2 SW_WB=1 SW_WR=4, which this "
    .. "device's features select (swiglu_vulkan.for_device, docs/kernels/swiglu.md)"
  local found = false
  for _, n in ipairs(notes) do found = found or n == want end
  t.truthy(found, table.concat(notes, "\n"))
end)

t.test("the vendor path is n/a on Vulkan, and says why", function()
  local dev = t.device("vulkan")
  local ctx <close> = sb.context(dev, { m_values = { 1 }, seed = 1, warmup = 1, iterations = 2, trials = 1,
                                         l2_bytes = 1 << 20, geometry = { SW_WG = 64 } })
  local r = ctx:check(ctx:shape { name = "case", n = 8, k = 16 }, "vendor", 1)
  t.eq({ r.status, r.why, r.launches_per_call }, { "n/a", "n/a on vulkan (cuBLASLt is a CUDA library)", 2 })
end)

t.test("a group timed in A-B-C-C-B-A trials, L2 and rotated", function()
  local dev = t.device("vulkan")
  local row = sc.measured_group(dev, { "chain", "fused" }, "rotated")
  t.eq(row.paths.vendor.status, "n/a")
  t.eq(row.order[1].path, "chain")
  t.eq(row.order[2].path, "fused")
  sc.measured_group(dev, { "chain", "fused" }, "l2")
end)

t.test("random bf16 data without gpubench.ref.random_bf16 comes from the device, seeded", function()
  local dev = t.device("vulkan")
  local ref = require "gpubench.ref"
  local saved = ref.random_bf16
  ref.random_bf16 = nil
  local ok, err = pcall(function()
    local a, b, c = sb.random_bf16(dev, 1000, 5), sb.random_bf16(dev, 1000, 5), sb.random_bf16(dev, 1000, 6)
    t.eq(#a, 2000)
    t.truthy(a == b and a ~= c, "same seed, same bytes; another seed, others")
    local sum, sq = 0, 0
    for i = 0, 999 do
      local v = require("gpubench.swiglu_check").bf16(a, i)
      sum, sq = sum + v, sq + v * v
    end
    t.truthy(math.abs(sum / 1000) < 0.2 and math.abs(sq / 1000 - 1) < 0.2, "normal(0, 1)")
  end)
  ref.random_bf16 = saved
  if not ok then error(err, 0) end
end)

t.run()
