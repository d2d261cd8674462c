-- gpubench.linear and gpubench.linear_suites without a device: bytes, shape
-- and policy rules, the route choice, row slicing, suite expansion.
local t = dofile("tests/lua/harness.lua")
local linear = require "gpubench.linear"
local suites = require "gpubench.linear_suites"
local ref = require "gpubench.ref"

t.test("weight bytes per format, K padded to 128", function()
  t.eq(linear.weight_bytes("q4", 4096, 5120), 11141120)
  t.eq(linear.k_pad(4304), 4352)
  t.eq(linear.k_pad(128), 128)
  t.eq(linear.weight_bytes("q5", 1152, 4304), 1152 * 4352 / 64 * 42)
  t.eq(linear.weight_bytes("q6", 10, 200), 10 * 256 / 64 * 50)
  t.eq(linear.weight_bytes("w8", 10, 200), 10 * 256 / 32 * 34)
  t.eq(linear.weight_bytes("nvfp4", 10, 200), 10 * 256 / 16 * 9)
  t.eq(linear.weight_bytes("bf16", 10, 200), 2 * 10 * 200)
  t.eq(linear.model_bytes("q4", 4096, 5120, 1), 11141120 + 10240 + 8192)
  t.eq(linear.flops(3, 5, 7), 210)
  t.eq(linear.plane_row_bytes("q6", 200), { 128, 64, 8 })
end)

t.test("the Lua layout agrees with the C format table", function()
  for _, q in ipairs(linear.qtypes) do
    for _, nk in ipairs { { 1, 8 }, { 37, 200 }, { 4096, 5120 }, { 1152, 4304 } } do
      t.eq(linear.weight_bytes(q, nk[1], nk[2]), ref.planar_weight_bytes(linear.QTYPES[q].format, nk[1], nk[2]),
        ("%s %dx%d"):format(q, nk[1], nk[2]))
    end
  end
end)

t.test("shape and policy rules name what is wrong", function()
  t.eq(linear.shape_error("q4", "a16", 4096, 5120, 1), nil)
  t.eq(linear.shape_error("q3", "a16", 1, 8, 1), "unknown qtype q3 (known: q4, q5, q6, w8, nvfp4, bf16)")
  t.eq(linear.shape_error("q4", "a8", 1, 8, 1), "unknown policy a8 (known: a16, a4)")
  t.eq(linear.shape_error("q4", "a4", 1, 8, 1), "policy a4 (FP4 activations) is for nvfp4 weights only, not q4")
  t.eq(linear.shape_error("q4", "a16", 0, 8, 1), "N must be at least 1, got 0")
  t.eq(linear.shape_error("q4", "a16", 1, 12, 1), "K=12 must be a multiple of 8 (x rows are read as 16-byte words: docs/LINEAR.md)")
  t.eq(linear.shape_error("q4", "a16", 1, 8, 65536), "T=65536 is more than 65535")
  t.eq(linear.shape_error("q4", "a16", 1, 8, 1.5), "T must be an integer, got 1.5")
  local h100 = { backend = "cuda", name = "H100", info = { arch = "sm_90" } }
  t.eq(linear.policy_error(h100, "nvfp4", "a16"), nil)
  t.eq(linear.policy_error(h100, "nvfp4", "a4"), "policy a4 needs FP4 tensor cores (sm_100 or later); H100 is sm_90 (cuda)")
  local lvp = { backend = "vulkan", name = "llvmpipe", info = { arch = "" } }
  t.eq(linear.policy_error(lvp, "nvfp4", "a4"),
    "policy a4 needs FP4 tensor cores (sm_100 or later); llvmpipe is not an NVIDIA architecture (vulkan)")
end)

t.test("the route is the first whose T range and requirement hold", function()
  package.loaded["gpubench.linear_fake"] = {
    q4 = {
      { name = "small", min_t = 1, max_t = 8 },
      { name = "tc", min_t = 9, requires = function(dev) return dev.tc, "no tensor cores" end },
      { name = "tiled", min_t = 9 },
    },
  }
  local dev = { backend = "fake", name = "fake0", info = {}, tc = true }
  local spec = { qtype = "q4", policy = "a16", n = 64, k = 128 }
  t.eq(linear.route(dev, spec, 1).name, "small")
  t.eq(linear.route(dev, spec, 8).name, "small")
  t.eq(linear.route(dev, spec, 9).name, "tc")
  dev.tc = false
  t.eq(linear.route(dev, spec, 1024).name, "tiled")
  t.errors(function() linear.route(dev, { qtype = "q5", policy = "a16", n = 64, k = 128 }, 1) end,
    "no fake route for q5 T=1 on fake0", true)
  t.errors(function() linear.route(dev, spec, 0) end, "linear.route: T must be at least 1, got 0", true)
  package.loaded["gpubench.linear_fake"] = nil
end)

-- A route that splits K (the CUDA wgmma route's slices): the call is its
-- kernel with an eleventh argument, a workspace of 4 slices T N bytes that
-- linear keeps per device (grown, never shrunk, freed by release; gpubench.workspace), then the
-- reduction as a second launch; without slices the eleventh argument is y.
-- The twelfth is the exponents of LN_HALF, y without it.
local function fake_dev() return dofile("tests/lua/fake_device.lua")("fake") end
local function split_route(ks, prep, cluster)
  return { name = "split", min_t = 1, file = "k.cu", entry = "split", defines = { KS = ks }, slices = ks, prep = prep,
           cluster = cluster, block = { 256, 1, 1 }, grid = function(n, k, tt) return { 1, 1, ks } end }
end

t.test("a route with slices of K: the workspace and the second launch", function()
  local dev, made, freed = fake_dev()
  local spec = { qtype = "bf16", policy = "a16", n = 100, k = 64 }
  local w, x, y = { size = 1 << 20 }, { size = 1 << 20 }, { size = 1 << 20 }
  local ls = linear.launches(dev, spec, w, x, y, 30, split_route(1))
  t.eq(#ls, 1)
  t.eq(#ls[1], 12)
  t.truthy(ls[1][11] == y and ls[1][12] == y, "no slices, no LN_HALF: y is the eleventh and twelfth argument")
  t.eq(#made, 0)
  ls = linear.launches(dev, spec, w, x, y, 30, split_route(4))
  t.eq(#ls, 2)
  t.eq(ls[2][1].entry, "linear_reduce")
  local ws = ls[1][11]
  t.truthy(ws == made[1] and ws.size >= 4 * 4 * 30 * 100, "a workspace of 4 slices T N fp32")
  t.truthy(ls[2][4] == ws and ls[2][5] == y, "the reduction reads the workspace into y")
  t.eq({ tostring(ls[2][6]), tostring(ls[2][7]), tostring(ls[2][8]) }, { "gpu.u32(100)", "gpu.u32(30)", "gpu.u32(4)" })
  -- a smaller call reuses it; a larger one frees it and takes a larger one
  ls = linear.launches(dev, spec, w, x, y, 10, split_route(2))
  t.truthy(ls[1][11] == ws and #made == 1, "reused")
  ls = linear.launches(dev, spec, w, x, y, 300, split_route(8))
  t.eq(#made, 2)
  t.truthy(ls[1][11] == made[2] and made[2].size >= 4 * 8 * 300 * 100, "grown")
  t.truthy(not made[1].freed, "the smaller one is retired, not freed: launches built before may still use it")
  linear.release(dev)
  t.eq(freed.n, 2)
end)

-- Slices whose sums a thread block cluster adds in shared memory (the wgmma
-- route's LN_CLUSTER = 1): one launch, y as the eleventh argument, no workspace.
t.test("a route whose slices add their sums in a cluster: one launch, no workspace", function()
  local dev, made = fake_dev()
  local spec = { qtype = "bf16", policy = "a16", n = 100, k = 64 }
  local w, x, y = { size = 1 << 20 }, { size = 1 << 20 }, { size = 1 << 20 }
  local ls = linear.launches(dev, spec, w, x, y, 30, split_route(4, nil, true))
  t.eq(#ls, 1)
  t.eq(ls[1][2], { 1, 1, 4 })
  t.truthy(ls[1][11] == y and ls[1][12] == y, "y is the eleventh and twelfth argument")
  t.eq(#made, 0)
  local prep = { file = "p.cu", entry = "prep", defines = { LN_PREP_Q = 4 } }
  ls = linear.launches(dev, spec, w, x, y, 30, split_route(2, prep, true))
  t.eq({ ls[1][1].entry, ls[2][1].entry }, { "prep", "split" })
  t.truthy(ls[2][11] == y and ls[2][12] == ls[1][6], "y, then the exponents")
  linear.release(dev)
end)

-- LN_HALF (a route with `prep`): a first launch from x into an fp16 copy of
-- 2 T K bytes and T + N exponents, both workspaces of their own; the kernel
-- reads the copy as its x and the exponents as its twelfth argument.
t.test("a route with LN_HALF: the prepass launch and its workspaces", function()
  local dev, made, freed = fake_dev()
  local spec = { qtype = "q4", policy = "a16", n = 100, k = 64 }
  local w, x, y = { size = 1 << 20 }, { size = 1 << 20 }, { size = 1 << 20 }
  local prep = { file = "p.cu", entry = "prep", defines = { LN_PREP_Q = 4 } }
  local ls = linear.launches(dev, spec, w, x, y, 30, split_route(2, prep))
  t.eq(#ls, 3)
  t.eq({ ls[1][1].entry, ls[2][1].entry, ls[3][1].entry }, { "prep", "split", "linear_reduce" })
  local xh, ex = ls[1][5], ls[1][6]
  t.truthy(ls[1][4] == x and ls[1][7] == w, "the prepass reads x and the weights' scales")
  t.truthy(xh.size >= 2 * 30 * 64 and ex.size >= 4 * (30 + 100), "x in fp16 and T + N exponents")
  t.eq(ls[1][2], { 30 + 13, 1, 1 }) -- the rows of x, then 8 rows of W a block: ceil(100 / 8)
  t.eq(ls[1][3], { 256, 1, 1 })
  t.eq({ tostring(ls[1][8]), tostring(ls[1][9]), tostring(ls[1][10]) }, { "gpu.u32(100)", "gpu.u32(64)", "gpu.u32(30)" })
  t.truthy(ls[2][5] == xh and ls[2][12] == ex and ls[2][11] ~= ex and ls[2][11] ~= xh, "the kernel reads the copy and the exponents")
  t.eq(#made, 3)
  -- the next call reuses all three
  ls = linear.launches(dev, spec, w, x, y, 20, split_route(2, prep))
  t.truthy(ls[2][5] == xh and ls[2][12] == ex and #made == 3, "reused")
  t.eq(ls[1][2], { 20 + 13, 1, 1 })
  linear.release(dev)
  t.eq(freed.n, 3)
  -- a prepass with a twin for long rows of x: the twin from long_from_k on
  local twin = { file = "p.cu", entry = "prep", defines = { LN_PREP_Q = 4 } }
  twin.long, twin.long_from_k = { file = "p.cu", entry = "prep_long", defines = { LN_PREP_Q = 4 } }, 128
  t.eq(linear.launches(dev, spec, w, x, y, 20, split_route(2, twin))[1][1].entry, "prep")
  t.eq(linear.launches(dev, { qtype = "q4", policy = "a16", n = 100, k = 128 }, w, x, y, 20, split_route(2, twin))[1][1].entry, "prep_long")
  t.truthy(linear.prep_at(split_route(2, twin), 127) == twin and linear.prep_at(split_route(2, twin), 128) == twin.long
    and linear.prep_at(split_route(2, prep), 1 << 20) == prep and linear.prep_at(split_route(2), 64) == nil, "prep_at")
  linear.release(dev)
end)

t.test("slice_rows cuts every plane row by row", function()
  -- q4 at K=128: codes 64 B per row, scales 4 B per row; rows 0..2 hold bytes tagged by plane and row.
  local n, k = 3, 128
  local codes, scales = {}, {}
  for r = 0, n - 1 do
    codes[#codes + 1] = string.rep(string.char(0x10 + r), 64)
    scales[#scales + 1] = string.rep(string.char(0x20 + r), 4)
  end
  local host = table.concat(codes) .. table.concat(scales)
  t.eq(#host, linear.weight_bytes("q4", n, k))
  local s = linear.slice_rows("q4", host, n, k, { 0, 2 })
  t.eq(s, string.rep("\16", 64) .. string.rep("\18", 64) .. string.rep("\32", 4) .. string.rep("\34", 4))
  t.eq(linear.slice_rows("bf16", ("ab"):rep(2) .. ("cd"):rep(2), 2, 2, { 1 }), "cdcd")
end)

t.test("suites: 49, 37 and 68 points; all keeps every role label once", function()
  t.eq(#suites.expand("qwen3_6_27b"), 49)
  t.eq(#suites.expand("qwen3_6_35b_a3b"), 37)
  local all = suites.expand("all")
  t.eq(#all, 68)
  local shared = 0
  for _, p in ipairs(all) do
    if #p.labels == 2 then
      shared = shared + 1
      t.eq(p.labels[1]:sub(1, 4), "27b.")
      t.eq(p.labels[2]:sub(1, 4), "35b.")
    end
    t.eq(p.policy, "a16")
  end
  t.eq(shared, 18, "six shared Vision geometries at three T each")
  local nv = suites.expand("nvfp4", "a4")
  t.eq(#nv, 15)
  t.eq(nv[1].policy, "a4")
  t.errors(function() suites.expand("qwen2") end, "unknown suite qwen2", true)
  local g = suites.groups(all)
  t.eq(#g, 19)
  t.eq(g[1].t_max, 1024)
  t.eq(g[1].qtype, "q6")
end)

t.run()
