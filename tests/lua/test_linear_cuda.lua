-- The CUDA Linear kernels (kernels/cuda/linear_*.cu) through their route table
-- (lib/gpubench/linear_cuda.lua): the table itself, compilation of every
-- route for sm_90 with NVRTC (no GPU needed), and on a CUDA device every
-- format and route against the FP64 reference under docs/LINEAR.md's rule
-- |y - r| <= 2^-8 |r| + 2^-7 s (ref.linear, ref.check_linear).
--
-- Shapes: N = 37 and 100 are multiples of no block's rows (ragged tiles),
-- K = 200 and 4304 are not multiples of 128 (padded planes, x masked past
-- K), T covers each route's range at its ends and inside (1, 3, 8 | 9, 16 |
-- 17, 64 | 69, 1024); the tensor-core routes also run T = 1 and 3, below
-- their range, and the integer-dot routes (q4, q5, q6, w8 at T <= 2) T = 3,
-- above theirs (any T must be correct); the T = 1 route the benchmark shape
-- 14336 x 5120.

local t = dofile("tests/lua/harness.lua")
local routes = require "gpubench.linear_cuda"

local PARAMS = { "buffer", "buffer", "buffer", "u32", "u32", "u32", "f32" }
local GSCALE = 0.3671875 -- NVFP4's tensor scale; the other formats must ignore it

local function nvrtc_missing(msg)
  return msg:find("cannot load NVRTC", 1, true) or msg:find("CUDA backend not built", 1, true)
    or msg:find("NVRTC has no", 1, true)
end

local function round256(n) return (n + 255) // 256 * 256 end

-- The formats with an integer-dot route (kernels/cuda/linear_dot_<q>.cu).
local DOT = { q4 = true, q5 = true, q6 = true, w8 = true }

t.test("route table: every qtype, T ranges tiling 1 .. 65535 in order, block and grid from the defines", function()
  t.eq(routes.qtypes, { "q4", "q5", "q6", "w8", "nvfp4", "bf16" })
  for _, q in ipairs(routes.qtypes) do
    local list = routes[q]
    t.truthy(#list >= 2, q .. ": at least a memory-bound and a tensor-core route")
    local next_t = 1
    for i, r in ipairs(list) do
      local where = ("%s route %d (%s)"):format(q, i, r.name)
      t.eq(r.min_t, next_t, where .. ": min_t follows the previous route")
      t.truthy(r.max_t >= r.min_t, where)
      t.eq(r.file, ("kernels/cuda/linear_%s_%s.cu"):format(r.name, q), where)
      t.eq(r.entry, ("linear_%s_%s"):format(r.name, q), where)
      if r.requires then
        -- an alternative: the next route takes the same T for the devices without it
        local nx = list[i + 1]
        t.truthy(nx and nx.min_t == r.min_t and nx.max_t == r.max_t and not nx.requires,
          where .. ": followed by a route of the same range without a requirement")
      else
        next_t = r.max_t + 1
      end
      if r.name == "wgmma" then
        t.eq(r.block, { 128 * (r.defines.LN_WG + r.defines.LN_WS), 1, 1 }, where)
        t.eq(r.defines.GB_ARCH_SPECIFIC, 1, where .. ": compiled for sm_90a")
      else
        t.eq(r.block, { 32 * r.defines.LN_NW * (r.name == "dot" and r.defines.LN_KS or 1), 1, 1 }, where)
      end
      if r.name == "wgmma" then
        local rows = 64 * r.defines.LN_MT * r.defines.LN_WG
        t.eq(r.grid(300, 200, 1000), { (1000 + r.defines.LN_BN - 1) // r.defines.LN_BN, (300 + rows - 1) // rows,
          r.defines.LN_KSPLIT }, where)
        t.eq(r.slices, r.defines.LN_KSPLIT, where)
        t.truthy(r.grid(248320, 8, 1)[2] <= 65535, where .. ": grid.y in range at the largest suite N")
      elseif r.name == "dot" then
        t.truthy(DOT[q], where .. ": the integer-dot route is for q4, q5, q6, w8 only")
        t.eq(r.max_t, r.defines.LN_TT, where .. ": the route covers T <= LN_TT")
        t.eq(r.grid(37, 200, 3), { (37 + r.defines.LN_NW * r.defines.LN_R - 1) // (r.defines.LN_NW * r.defines.LN_R),
          1, 1 }, where)
        t.eq(r.grid(100, 4304, 1)[1], (100 + r.defines.LN_NW * r.defines.LN_R - 1) // (r.defines.LN_NW * r.defines.LN_R),
          where)
      elseif r.name == "gemv" then
        t.eq(r.max_t, 8 * r.defines.LN_NJ, where .. ": the route covers T <= 8 LN_NJ")
        t.eq(r.grid(37, 200, 3), { (37 + 16 * r.defines.LN_RT - 1) // (16 * r.defines.LN_RT), 1, 1 }, where)
      else
        t.eq(r.name, "mma", where)
        t.eq(r.grid(300, 200, 1000), { (300 + 32 * r.defines.LN_NW - 1) // (32 * r.defines.LN_NW),
          (1000 + r.defines.LN_BN - 1) // r.defines.LN_BN, 1 }, where)
        t.truthy(r.grid(1, 8, 65535)[2] <= 65535, where .. ": grid.y in range at T = 65535")
      end
    end
    t.eq(next_t, 65536, q .. ": the last route ends at T = 65535")
    -- the integer formats start with the integer-dot route at T = 1, the others with the memory-bound one
    t.eq(list[1].name, DOT[q] and "dot" or "gemv", q)
    t.eq(list[#list].name, "mma", q)
    local names = {}
    for _, r in ipairs(list) do names[#names + 1] = r.name end
    local order = table.concat(names, " ")
    t.truthy(order:match("^[dot ]*gemv gemv mma wgmma mma$") or order:match("^dot[dot ]* gemv gemv mma wgmma mma$"),
      q .. ": " .. order)
  end
end)

t.test("the wgmma route is picked on sm_90 only; other architectures get the mma route of the same T", function()
  local linear = require "gpubench.linear"
  local function fake(arch) return { backend = "cuda", name = "fake " .. arch, info = { arch = arch } } end
  for _, q in ipairs(routes.qtypes) do
    local spec = { qtype = q, n = 34816, k = 5120 }
    t.eq(linear.route(fake("sm_90"), spec, 64).name, "mma", q .. " T = 64 on sm_90")
    t.eq(linear.route(fake("sm_90"), spec, 255).name, "mma", q .. " T = 255 on sm_90 (a large grid)")
    t.eq(linear.route(fake("sm_90"), spec, 256).name, "wgmma", q .. " T = 256 on sm_90")
    t.eq(linear.route(fake("sm_90"), spec, 1024).name, "wgmma", q .. " T = 1024 on sm_90")
    t.eq(linear.route(fake("sm_90"), spec, 65535).name, "wgmma", q .. " T = 65535 on sm_90")
    for _, arch in ipairs { "sm_89", "sm_100", "sm_120" } do
      t.eq(linear.route(fake(arch), spec, 1024).name, "mma", q .. " T = 1024 on " .. arch)
    end
  end
  local ok, why = routes.q4[#routes.q4 - 1].requires(fake("sm_89"))
  t.eq(ok, false)
  t.eq(why, "wgmma needs sm_90, this device is sm_89")
end)

-- Runs f with the route table's settings (CLUSTER_SLICES, CLUSTER_FROM_T)
-- set, and puts them back whatever f raises.
local function with_settings(set, f)
  local saved = {}
  for k, v in pairs(set) do saved[k], routes[k] = routes[k], v end
  local ok, err = pcall(f)
  for k, v in pairs(saved) do routes[k] = v end
  if not ok then error(err, 0) end
end
local function with_cluster_slices(n, f) with_settings({ CLUSTER_SLICES = n }, f) end
-- The rules under the tail's (TAIL_SLICES, which takes the grids with a
-- partial last wave first): their tests run without it.
local function without_tail(f) return function() with_settings({ TAIL_SLICES = 0 }, f) end end

t.test("the wgmma route by grid without clusters (CLUSTER_SLICES = 0) or a tail: slices of K under half a tile per SM (one wave from T = 256), else mma below T = 256, w8's and the prescaled formats' rules", function()
  with_settings({ CLUSTER_SLICES = 0, TAIL_SLICES = 0 }, function()
  local linear = require "gpubench.linear"
  local dev = { backend = "cuda", name = "fake H200", info = { arch = "sm_90" }, sm_count = 132 }
  local function pick(q, n, k, tt, d)
    local r = linear.route(d or dev, { qtype = q, n = n, k = k }, tt)
    return { r.name, r.defines.LN_BN, r.defines.LN_KSPLIT }
  end
  -- tiles = ceil(N / 128) ceil(T / BN), BN = 128 below T = 256, 256 from it
  t.eq(pick("q5", 1152, 4304, 128), { "wgmma", 128, 16 }) -- 9 tiles, 68 units: 16 slices of 4.25
  t.eq(pick("q5", 1152, 4304, 1024), { "wgmma", 256, 2 }) -- 36 tiles: 2 x 36 = 72 blocks in one wave, 4 x 36 = 144 not
  t.eq(pick("q5", 1152, 4304, 255), { "wgmma", 128, 16 }) -- below T = 256: up to 2.5 blocks per SM
  t.eq(pick("q4", 3456, 1152, 128), { "wgmma", 128, 4 })  -- 27 tiles, 18 units: 4 slices of 4.5
  t.eq(pick("q4", 3456, 1152, 1024), { "wgmma", 256, 1 }) -- 108 tiles: not under 66
  t.eq(pick("w8", 2048, 16384, 1024), { "wgmma", 256, 2 }) -- 64 tiles: 2 x 64 = 128 blocks, one wave
  t.eq(pick("w8", 2048, 16384, 1024, { backend = "cuda", name = "more", info = { arch = "sm_90" }, sm_count = 256 }),
    { "wgmma", 256, 4 }) -- 256 SMs: 4 x 64 blocks in one wave
  t.eq(pick("w8", 5120, 17408, 128), { "wgmma", 128, 8 }) -- 40 tiles
  t.eq(pick("q4", 64, 256, 1024), { "wgmma", 256, 1 })     -- 4 units: no slices of 4 or more; from T = 256 the route itself
  t.eq(pick("q4", 64, 128, 128), { "mma", 128, nil })      -- 2 units, T < 256: the mma route
  t.eq(pick("q4", 131072, 5120, 128), { "mma", 128, nil }) -- a large grid below T = 256
  t.eq(pick("q4", 131072, 5120, 256), { "wgmma", 256, 1 })
  -- from T = 256 under 1.5 tiles per SM: slices of 64 units or more within 5 blocks per SM
  t.eq(pick("w8", 5120, 5120, 1024), { "wgmma", 256, 1 }) -- 160 tiles, 80 units: 2 slices of 40
  t.eq(pick("w8", 5120, 10240, 1024), { "wgmma", 256, 2 }) -- 160 units
  t.eq(pick("w8", 5120, 17408, 1024), { "wgmma", 256, 4 }) -- 272 units: 4 x 160 = 640 <= 660 blocks
  t.eq(pick("q5", 6144, 5120, 1024), { "wgmma", 256, 1 }) -- 192 tiles, 80 units
  t.eq(pick("q5", 6144, 8192, 1024), { "wgmma", 256, 2 }) -- 128 units
  t.eq(pick("q5", 6144, 5120, 128), { "wgmma", 128, 4 })  -- 48 tiles: under half a tile per SM, 4 x 48 = 192 blocks
  t.eq(pick("w8", 14336, 5120, 128), { "mma", 64, nil })  -- 112 tiles below T = 256: the mma route
  -- w8 without slices under one tile per SM: the mma route (4224 rows: 33 x 4 = 132 tiles)
  t.eq(pick("w8", 4224, 4096, 1024), { "wgmma", 256, 1 }) -- 132 tiles, 64 units
  t.eq(pick("w8", 4096, 4096, 1024), { "mma", 64, nil })    -- 128 tiles
  t.eq(pick("w8", 8320, 5120, 1024), { "wgmma", 256, 1 })   -- 65 x 4 = 260 tiles
  t.eq(pick("w8", 14336, 5120, 1024), { "wgmma", 256, 1 })
  t.eq(pick("w8", 5120, 10240, 1024, { backend = "cuda", name = "half", info = { arch = "sm_90" }, sm_count = 66 }),
    { "wgmma", 256, 1 })
  t.eq(pick("w8", 5120, 10240, 1024, { backend = "cuda", name = "unsaid", info = { arch = "sm_90" } }),
    { "wgmma", 256, 2 }) -- 132 SMs
  -- the second slice rule is w8's and q5's only
  t.eq(pick("q4", 5120, 5120, 1024), { "wgmma", 256, 1 })
  t.eq(pick("q6", 6144, 5120, 1024), { "wgmma", 256, 1 })
  -- nvfp4 and bf16 from half to one tile per SM: tiles of 128 rows of x
  for _, q in ipairs { "nvfp4", "bf16" } do
    t.eq(pick(q, 4096, 5120, 1024), { "wgmma", 128, 1 }, q)  -- 32 x 4 = 128 tiles
    t.eq(pick(q, 14336, 5120, 1024), { "wgmma", 256, 1 }, q) -- 448 tiles
    t.eq(pick(q, 2048, 4096, 1024), { "wgmma", 256, 2 }, q)  -- 64 tiles: slices in one wave
    t.truthy(linear.route(dev, { qtype = q, n = 4096, k = 64 }, 300) == linear.route(dev, { qtype = q, n = 4000, k = 8 }, 999),
      q .. ": one spec table per variant")
  end
  t.eq(linear.route(dev, { qtype = "q5", n = 1152, k = 4304 }, 1024).cluster, false, "no cluster at 0")
  end)
end)

-- From T = 256 the table's slices are one thread block cluster each
-- (CLUSTER_SLICES = 4, the A/B of 2026-12-07: docs/kernels/cuda-linear.md,
-- "Slices in a cluster"): under half a tile per SM the most slices up to 4 in
-- one wave with 4 units a slice; w8 and q5 from half a tile to 3.5 tiles per
-- SM with 64 units, 2; below T = 256 the workspace rules.
t.test("the wgmma route's slices in a thread block cluster from T = 256 (CLUSTER_SLICES = 4; no tail)", without_tail(function()
  local linear = require "gpubench.linear"
  local dev = { backend = "cuda", name = "fake H200", info = { arch = "sm_90" }, sm_count = 132 }
  local function pick(q, n, k, tt, d)
    local r = linear.route(d or dev, { qtype = q, n = n, k = k }, tt)
    return { r.name, r.defines.LN_KSPLIT, r.defines.LN_CLUSTER, r.defines.LN_HALF, r.cluster }
  end
  t.eq(routes.CLUSTER_SLICES, 4, "the table's")
  -- under half a tile per SM: 36 tiles take 3 slices (108 blocks), 64 tiles 2, 9 tiles 4 (not more than CLUSTER_SLICES)
  t.eq(pick("q5", 1152, 1152, 1024), { "wgmma", 3, 1, 0, true })  -- 18 units: 6 a slice
  t.eq(pick("q6", 1152, 1536, 1024), { "wgmma", 3, 1, 0, true })
  t.eq(pick("q5", 1152, 4304, 1024), { "wgmma", 3, 1, 1, true })  -- 68 units: fp16 with slices
  t.eq(pick("w8", 2048, 4096, 1024), { "wgmma", 2, 1, 1, true })  -- w8 with slices in fp16
  t.eq(pick("w8", 2048, 16384, 1024), { "wgmma", 2, 1, 1, true })
  t.eq(pick("q5", 1152, 1152, 256), { "wgmma", 4, 1, 0, true })   -- 9 tiles, 18 units: 4 slices of 4.5
  t.eq(pick("w8", 2048, 4096, 256), { "wgmma", 4, 1, 1, true })   -- 16 tiles
  t.eq(pick("q4", 1152, 384, 1024), { "wgmma", 1, 0, 0, false })  -- 6 units: no 2 slices of 4
  t.eq(pick("bf16", 2048, 4096, 1024), { "wgmma", 2, 1, 0, true })
  t.eq(pick("w8", 2048, 16384, 1024, { backend = "cuda", name = "more", info = { arch = "sm_90" }, sm_count = 256 }),
    { "wgmma", 4, 1, 1, true }) -- 256 SMs: 4 x 64 blocks in one wave, 4 the most
  -- w8 and q5 from half a tile to 3.5 tiles per SM with 64 units: 2 slices
  t.eq(pick("w8", 4608, 4608, 1024), { "wgmma", 2, 1, 1, true })  -- 144 tiles, 72 units
  t.eq(pick("w8", 5120, 17408, 1024), { "wgmma", 2, 1, 1, true }) -- 160 tiles, 272 units
  t.eq(pick("w8", 4096, 4096, 1024), { "wgmma", 2, 1, 1, true })  -- 128 tiles: no longer the mma route
  t.eq(pick("w8", 14336, 5120, 1024), { "wgmma", 2, 1, 1, true }) -- 448 tiles < 462
  t.eq(pick("q5", 6144, 5120, 1024), { "wgmma", 2, 1, 1, true })  -- 192 tiles: fp16 as unsplit there
  t.eq(pick("w8", 14848, 5120, 1024), { "wgmma", 1, 0, 1, false }) -- 464 tiles: unsplit
  t.eq(pick("w8", 34816, 5120, 1024), { "wgmma", 1, 0, 1, false })
  t.eq(pick("w8", 4096, 3968, 1024), { "mma", nil, nil, nil, nil }) -- 62 units: w8 under a tile per SM, mma
  t.eq(pick("q4", 4304, 1152, 1024), { "wgmma", 1, 0, 1, false }) -- q4 not, and 18 units
  t.eq(pick("q6", 6144, 5120, 1024), { "wgmma", 1, 0, 1, false })
  -- below T = 256 the workspace rules, no cluster
  t.eq(pick("q5", 1152, 4304, 128), { "wgmma", 16, 0, 0, false })
  t.eq(pick("w8", 5120, 17408, 128), { "wgmma", 8, 0, 0, false })
  t.eq(linear.route(dev, { qtype = "q5", n = 1152, k = 1152 }, 1024).slices, 3, "the route's slices: its grid.z")
  with_cluster_slices(8, function()
    t.eq(pick("q5", 1152, 1152, 256), { "wgmma", 4, 1, 0, true }) -- 18 units: 4 a slice at most
    t.eq(pick("w8", 2048, 4096, 256), { "wgmma", 8, 1, 1, true })
  end)
  with_cluster_slices(2, function()
    t.eq(pick("q5", 1152, 1152, 1024), { "wgmma", 2, 1, 0, true })
  end)
  with_cluster_slices(0, function()
    t.eq(pick("q5", 1152, 1152, 1024), { "wgmma", 2, 0, 0, false })
    t.eq(pick("w8", 5120, 17408, 1024), { "wgmma", 4, 0, 1, false })
  end)
  -- CLUSTER_FROM_T moves where the cluster rules start (an A/B below T = 256)
  t.eq(routes.CLUSTER_FROM_T, 256)
  with_settings({ CLUSTER_FROM_T = 65 }, function()
    t.eq(pick("q5", 1152, 4304, 128), { "wgmma", 4, 1, 0, true })   -- 9 tiles of 128 rows of x: 4 in one wave
    t.eq(pick("w8", 5120, 17408, 128), { "wgmma", 3, 1, 0, true })  -- 40 tiles: 3 x 40 = 120 blocks; w8 below 256 in bf16 codes
    t.eq(pick("q4", 131072, 5120, 128), { "mma", nil, nil, nil, nil }) -- a large grid below T = 256: still the mma route
  end)
  t.eq(routes.CLUSTER_FROM_T, 256, "put back")
end))

-- The last wave in slices (TAIL_SLICES, 0 in the table until its A/B): from
-- T = 256 on grids of a wave of tiles or more whose last wave holds at most
-- half the SMs' worth, the whole waves in the route's own launch and the
-- rest's tiles in the most slices up to TAIL_SLICES that fit one wave with 4
-- units a slice, one cluster a tile, in a second launch counted from the last
-- tile (LN_TAIL = 1).
t.test("the wgmma route's last wave in slices (TAIL_SLICES): the rule, the two grids, the variant key TAIL", function()
  local linear = require "gpubench.linear"
  local dev = { backend = "cuda", name = "fake H200", info = { arch = "sm_90" }, sm_count = 132 }
  local function pick(q, n, k, tt, d)
    local r = linear.route(d or dev, { qtype = q, n = n, k = k }, tt)
    local g1, g2
    if r.tail then g1, g2 = r.grids(n, k, tt, (d or dev).sm_count) end
    return { r.tail_slices or 0, r.defines.LN_KSPLIT, r.defines.LN_HALF, g1, g2 }
  end
  t.eq(routes.TAIL_SLICES, 8, "the table's (docs/kernels/cuda-linear.md, \"The last wave in slices\")")
  with_settings({ TAIL_SLICES = 0 }, function() t.eq(pick("w8", 4608, 4608, 1024)[1], 0) end)
  with_settings({ TAIL_SLICES = 8 }, function()
    -- 144 tiles (36 rows of W x 4 of x): 33 rows make one wave, 12 tiles left: 8 slices (96 blocks, 9 units each)
    t.eq(pick("w8", 4608, 4608, 1024), { 8, 1, 1, { 4, 33, 1 }, { 4, 3, 8 } })
    t.eq(pick("w8", 5120, 4608, 1024), { 4, 1, 1, { 4, 33, 1 }, { 4, 7, 4 } })   -- 28 left: 4 x 28 = 112
    t.eq(pick("q5", 6144, 5120, 1024), { 2, 1, 1, { 4, 33, 1 }, { 4, 15, 2 } })  -- 60 left
    t.eq(pick("w8", 14336, 5120, 1024), { 2, 1, 1, { 4, 99, 1 }, { 4, 13, 2 } }) -- 3 waves, 52 left
    t.eq(pick("q4", 4304, 1152, 1024), { 4, 1, 1, { 4, 33, 1 }, { 4, 1, 4 } })   -- 18 units: 4 slices of 4.5
    t.eq(pick("w8", 9216, 4608, 512), { 8, 1, 1, { 2, 66, 1 }, { 2, 6, 8 } })  -- 72 x 2 tiles of x
    t.eq(pick("q4", 4224, 5120, 1024)[1], 0)   -- 132 tiles: whole waves only
    t.eq(pick("q5", 8704, 5120, 1024), { 8, 1, 1, { 4, 66, 1 }, { 4, 2, 8 } }) -- 2 waves, 8 tiles left
    t.eq(pick("q5", 6400, 5120, 1024), { 0, 2, 1 })  -- 200 tiles, 68 left: over half a wave, the cluster rules
    t.eq(pick("w8", 2048, 4096, 1024)[1], 0)   -- 64 tiles, under a wave: the cluster rules
    t.eq(pick("q5", 1152, 1152, 1024)[2], 3)
    t.eq(pick("w8", 4608, 4608, 128)[1], 0)    -- below CLUSTER_FROM_T
    t.eq(pick("w8", 4608, 4608, 1024, { backend = "cuda", name = "more", info = { arch = "sm_90" }, sm_count = 144 })[1], 0,
      "144 SMs: one whole wave")
    local r = linear.route(dev, { qtype = "w8", n = 4608, k = 4608 }, 1024)
    t.eq({ r.tail.defines.LN_KSPLIT, r.tail.defines.LN_CLUSTER, r.tail.defines.LN_TAIL, r.tail.defines.LN_HALF,
           r.tail.cluster, r.head.defines.LN_TAIL }, { 8, 1, 1, 1, true, 0 })
    t.truthy(r.head.tail == nil and r.prep and r.prep == r.head.prep, "the head is a plain route; one prepass for both")
    t.truthy(r == linear.route(dev, { qtype = "w8", n = 4608, k = 4504 }, 1000), "one spec table per pick")
  end)
  -- the variant key TAIL: on the unsplit route, kept by a variant of a route with a tail, 0 takes it off
  local base = routes.w8[#routes.w8 - 1]
  local r = routes.variant("w8", base, { TAIL = 4 })
  t.eq({ r.tail_slices, r.head == base, r.tail.defines.LN_KSPLIT }, { 4, true, 4 })
  t.eq(routes.variant("w8", r, { LN_HALF = 0 }).tail.defines.LN_HALF, 0)
  t.eq(routes.variant("w8", r, { LN_HALF = 0 }).tail_slices, 4)
  t.eq({ routes.variant("w8", r, { PREP_HOLD = 0 }).tail_slices, routes.variant("w8", r, { PREP_HOLD = 0 }).prep.defines.LN_PREP_HOLD },
    { r.tail_slices, 0 }, "PREP_HOLD keeps the tail")
  t.truthy(routes.variant("w8", r, { TAIL = 0 }).tail == nil)
  t.eq({ r.grids(4608, 4608, 1024, 132) }, { { 4, 33, 1 }, { 4, 3, 4 } })
  t.eq({ r.grids(4224, 4608, 1024, 132) }, { { 4, 33, 1 } }, "whole waves: one launch")
  t.eq({ r.grids(1000, 4608, 1024, 132) }, { { 4, 8, 1 } }, "under a wave: one launch")
  t.eq({ r.grids(4608, 4608, 1024) }, { { 4, 33, 1 }, { 4, 3, 4 } }, "132 SMs where the device does not say")
  t.errors(function() routes.variant("w8", base, { TAIL = 1 }) end, "a tail takes 2 to 8 slices (one cluster each tile), not 1", true)
  t.errors(function() routes.variant("w8", base, { TAIL = 16 }) end, "not 16", true)
  t.errors(function() routes.variant("w8", base, { TAIL = 2, LN_KSPLIT = 2 }) end,
    "a tail of slices follows a wgmma route of one slice (LN_KSPLIT=1, LN_WS=0, LN_TAIL=0), not wgmma LN_KSPLIT=2 LN_WS=0", true)
  t.errors(function() routes.variant("w8", base, { LN_TAIL = 1, LN_WS = 1, LN_STAGGER = 0 }) end,
    "LN_TAIL=1 is the lockstep kernel's (LN_WS=0)", true)
end)

-- LN_HALF (weights and x in fp16 from a first launch, staggered) for q4, q5,
-- q6, w8 on grids of a tile per SM or more without slices, and with slices
-- from T = 256 for w8 and for q4, q5, q6 with 64 units of K or more;
-- elsewhere the bf16 codes with the stagger of the exact path; the route
-- carries its prepass (one spec per format), and the formats without fp16
-- group scales refuse it.
t.test("the wgmma route's LN_HALF by grid (no tail), its prepass, and the formats that refuse it", without_tail(function()
  local linear = require "gpubench.linear"
  local dev = { backend = "cuda", name = "fake H200", info = { arch = "sm_90" }, sm_count = 132 }
  local function pick(q, n, k, tt)
    local r = linear.route(dev, { qtype = q, n = n, k = k }, tt)
    return { r.name, r.defines.LN_KSPLIT, r.defines.LN_HALF, r.defines.LN_STAGGER, r.prep and r.prep.defines.LN_PREP_Q }
  end
  t.eq(pick("q4", 131072, 5120, 1024), { "wgmma", 1, 1, 1, 4 })
  t.eq(pick("q4", 131072, 5120, 256), { "wgmma", 1, 1, 1, 4 })
  t.eq(pick("q6", 248320, 2048, 1024), { "wgmma", 1, 1, 1, 6 })
  t.eq(pick("w8", 34816, 5120, 1024), { "wgmma", 1, 1, 1, 8 })
  t.eq(pick("q5", 34816, 5120, 1024), { "wgmma", 1, 1, 1, 5 })  -- 1088 tiles
  t.eq(pick("q5", 14336, 5120, 1024), { "wgmma", 2, 1, 1, 5 })  -- 448 tiles: 2 slices in a cluster, fp16 as unsplit
  t.eq(pick("q4", 3456, 1152, 1024), { "wgmma", 1, 0, 0, nil }) -- 108 tiles, under one per SM
  t.eq(pick("q5", 6144, 5120, 1024), { "wgmma", 2, 1, 1, 5 })  -- 192 tiles, 2 slices in a cluster: fp16 as unsplit
  t.eq(pick("q5", 1152, 4304, 1024), { "wgmma", 3, 1, 1, 5 })  -- slices under half a tile per SM, 68 units: fp16
  t.eq(pick("q4", 1152, 4096, 256), { "wgmma", 4, 1, 1, 4 })    -- 64 units, the least
  t.eq(pick("q6", 1152, 4032, 1024), { "wgmma", 3, 0, 1, nil }) -- 63 units: the exact path
  t.eq(pick("q5", 1152, 1152, 1024), { "wgmma", 3, 0, 1, nil }) -- 18 units: the exact path
  t.eq(pick("q5", 1152, 4304, 128), { "wgmma", 16, 0, 1, nil }) -- below T = 256: the exact path
  t.eq(pick("q4", 3456, 1152, 128), { "wgmma", 4, 0, 0, nil })
  t.eq(pick("w8", 5120, 17408, 1024), { "wgmma", 2, 1, 1, 8 })  -- w8 with slices from T = 256
  t.eq(pick("w8", 5120, 17408, 128), { "wgmma", 8, 0, 0, nil })
  t.eq(pick("bf16", 14336, 5120, 1024), { "wgmma", 1, 0, 1, nil })
  t.eq(pick("nvfp4", 14336, 5120, 1024), { "wgmma", 1, 0, 1, nil })
  t.truthy(linear.route(dev, { qtype = "q4", n = 131072, k = 5120 }, 1024).prep
    == linear.route(dev, { qtype = "q4", n = 65536, k = 4096 }, 512).prep, "one prepass spec per format")
  -- the twin for long rows of x: each row read once, held in registers
  local prep = linear.route(dev, { qtype = "w8", n = 5120, k = 17408 }, 1024).prep
  t.eq({ prep.defines.LN_PREP_HOLD, prep.long.defines.LN_PREP_HOLD, prep.long_from_k }, { 0, 12, 16384 })
  t.eq({ prep.long.defines.LN_PREP_Q, prep.long.defines.LN_PREP_TILE }, { prep.defines.LN_PREP_Q, prep.defines.LN_PREP_TILE })
  -- the variant key PREP_HOLD: that prepass at every K (no twin), the route otherwise the same, a tail kept
  local r = linear.route(dev, { qtype = "w8", n = 4608, k = 4608 }, 1024)
  local v = routes.variant("w8", r, { PREP_HOLD = 12 })
  t.eq({ v.prep.defines.LN_PREP_HOLD, v.prep.long, v.tail_slices, v.defines.LN_XTILE, v.prep.defines.LN_PREP_TILE },
    { 12, nil, r.tail_slices, 1, 256 })
  t.errors(function() routes.variant("w8", r, { PREP_HOLD = 12, LN_HALF = 0 }) end,
    "PREP_HOLD is for a route with the prepass (LN_HALF=1), not wgmma LN_HALF=0", true)
  t.errors(function() routes.variant("w8", r, { PREP_HOLD = 65 }) end, "PREP_HOLD=65 is not an integer from 0 to 64", true)
  local base = routes.nvfp4[#routes.nvfp4 - 1]
  t.errors(function() routes.variant("nvfp4", base, { LN_HALF = 1 }) end,
    "LN_HALF=1 is for the formats with fp16 group scales (q4 q5 q6 w8), not nvfp4", true)
  -- a cluster of slices: 2 to 8 of them (the portable cluster size), the lockstep kernel's
  for _, c in ipairs { { LN_KSPLIT = 1, LN_CLUSTER = 1 }, { LN_KSPLIT = 16, LN_CLUSTER = 1 } } do
    t.errors(function() routes.variant("q5", routes.q5[#routes.q5 - 1], c) end,
      ("LN_CLUSTER=1 takes 2 to 8 slices of K (LN_KSPLIT) and LN_WS=0, not LN_KSPLIT=%d LN_WS=0"):format(c.LN_KSPLIT), true)
  end
  t.errors(function() routes.variant("q5", routes.q5[#routes.q5 - 1], { LN_KSPLIT = 2, LN_CLUSTER = 1, LN_WS = 1 }) end,
    "not LN_KSPLIT=2 LN_WS=1", true)
  t.eq(routes.variant("q5", routes.q5[#routes.q5 - 1], { LN_KSPLIT = 4, LN_CLUSTER = 1 }).cluster, true)
  -- x by bulk copies: the prepass's tiled copy (LN_HALF = 1), the lockstep kernel; 2 closes after the loop
  t.errors(function() routes.variant("q4", routes.q4[#routes.q4 - 1], { LN_XTILE = 1, LN_HALF = 0 }) end,
    "LN_XTILE=1 to 4 takes the prepass's x (LN_HALF=1) and the lockstep kernel (LN_WS=0; 2 to 4: LN_CLOSE=1), not LN_XTILE=1 LN_HALF=0", true)
  t.errors(function() routes.variant("q4", routes.q4[#routes.q4 - 1], { LN_XTILE = 2, LN_CLOSE = 0 }) end, "LN_CLOSE=0", true)
  t.errors(function() routes.variant("q4", routes.q4[#routes.q4 - 1], { LN_XTILE = 5, LN_HALF = 1 }) end, "not LN_XTILE=5", true)
  -- the weights from registers (3): the geometry its kernel takes, and the prepass with k permuted
  t.errors(function() routes.variant("w8", routes.w8[#routes.w8 - 1], { LN_XTILE = 3 }) end,
    "LN_XTILE=3 or 4 takes LN_WG=2, LN_MT=1, LN_STAGGER=0, LN_WPF=1 and at least 4 stages, not LN_WG=2 LN_MT=1 LN_STAGGER=1 LN_WPF=2 LN_STAGES=4", true)
  local ra = routes.variant("w8", routes.w8[#routes.w8 - 1], { LN_XTILE = 3, LN_STAGGER = 0, LN_WPF = 1, LN_STAGES = 6 })
  t.eq({ ra.xtile, ra.prep.defines.LN_PREP_TILE, ra.prep.defines.LN_PREP_PERM, ra.prep.long.defines.LN_PREP_PERM },
    { 256, 256, 1, 1 })
  t.eq(routes.variant("w8", routes.w8[#routes.w8 - 1], { LN_XTILE = 1 }).prep.defines.LN_PREP_PERM, 0)
  t.eq(routes.variant("w8", ra, { PREP_HOLD = 12 }).prep.defines.LN_PREP_PERM, 1, "PREP_HOLD keeps the permuted copy")
  t.truthy(routes.variant("w8", ra, { LN_XTILE = 4 }).prep == ra.prep, "4 (the diagnostic) reads the same permuted copy")
  local tiled = routes.variant("w8", routes.w8[#routes.w8 - 1], { LN_XTILE = 2 })
  t.eq({ tiled.xtile, tiled.prep.defines.LN_PREP_TILE, tiled.prep.defines.LN_PREP_Q }, { 256, 256, 8 })
  t.truthy(tiled.prep == routes.variant("w8", routes.w8[#routes.w8 - 1], { LN_XTILE = 1 }).prep, "one tiled prepass spec per format and tile")
  t.eq(routes.w8[#routes.w8 - 1].xtile, 256, "the table's fp16 geometry takes x by bulk copies")
  t.eq(routes.nvfp4[#routes.nvfp4 - 1].xtile, nil)
end))

t.test("the weights from registers by setting (WGMMA_RA): 1 the fp16 picks, 2 every integer format's; nvfp4 and bf16 never", function()
  local sm = { sm_count = 132 }
  local function pick(q, n, k) local l = routes[q]; return l[#l - 1].for_shape(n, k, sm, 1024) end
  local function xt(r) return { r.defines.LN_XTILE, r.defines.LN_HALF, r.defines.LN_KSPLIT, r.defines.LN_STAGES } end
  t.eq(xt(pick("q4", 131072, 5120)), { 1, 1, 1, 4 }, "the table")
  with_settings({ WGMMA_RA = 1 }, function()
    t.eq(xt(pick("q4", 131072, 5120)), { 3, 1, 1, 6 })
    t.eq(xt(pick("w8", 2048, 16384)), { 3, 1, 2, 6 }, "slices in a cluster")
    t.eq(xt(pick("q4", 3456, 1152)), { 0, 0, 1, 4 }, "the bf16 codes stay")
    local tail = pick("q4", 4304, 1152)
    t.eq({ tail.defines.LN_XTILE, tail.tail.defines.LN_XTILE, tail.tail.defines.LN_TAIL }, { 3, 3, 1 }, "a tail's both launches")
    t.eq(xt(pick("nvfp4", 14336, 5120)), { 0, 0, 1, 4 })
  end)
  with_settings({ WGMMA_RA = 2 }, function()
    t.eq(xt(pick("q4", 3456, 1152)), { 3, 1, 1, 6 })
    t.eq(xt(pick("q5", 1152, 1152)), { 3, 1, 3, 6 })
    t.eq(pick("q5", 1152, 1152).prep.defines.LN_PREP_PERM, 1)
    t.eq(xt(pick("bf16", 14336, 5120))[1], 0)
  end)
  t.eq(xt(pick("q4", 131072, 5120)), { 1, 1, 1, 4 }, "the setting put back")
end)

-- The variants a route picks for shapes (for_shape: the dot route's slices
-- of K, the wgmma route's tile by grid).
local function shape_variants(r)
  local out = {}
  if r.for_shape then
    for _, n in ipairs { 1, 5120, 14336, 34816, 131072, 248320 } do
      for _, tt in ipairs { r.min_t, 1024 } do out[#out + 1] = r.for_shape(n, 5120, nil, tt) end
    end
  end
  return out
end

t.test("dot routes at T = 1: LN_KS = 4 up to 340 row warps, 2 up to 2200, 1 above; w8 at T = 2: 2 up to 640; one spec per rule", function()
  for _, q in ipairs { "q4", "q5", "q6", "w8" } do
    local r = routes[q][1]
    t.eq({ r.name, r.min_t, r.defines.LN_KS }, { "dot", 1, 1 }, q)
    local R = r.defines.LN_R
    local function ks(n) return r.for_shape(n, 5120).defines.LN_KS end
    t.eq({ ks(1), ks(340 * R), ks(340 * R + 1), ks(2200 * R), ks(2200 * R + 1) }, { 4, 4, 2, 2, 1 }, q)
    t.truthy(r.for_shape(2200 * R + 1, 5120) == r, q .. ": above the rules, the route itself")
    t.truthy(r.for_shape(5, 8) == r.for_shape(7, 8), q .. ": the same table again")
    local v = r.for_shape(1, 8)
    t.eq({ v.block[1], v.grid(1000, 8, 1)[1], v.min_t, v.max_t }, { 32 * r.defines.LN_NW * 4, r.grid(1000, 8, 1)[1], 1, 1 }, q)
    if routes[q][2].name == "dot" and q ~= "w8" then t.eq(routes[q][2].for_shape, nil, q .. ": no rule at T = 2") end
  end
  local w2 = routes.w8[2]
  t.eq({ w2.name, w2.min_t, w2.max_t, w2.defines.LN_R }, { "dot", 2, 2, 8 }, "w8 at T = 2")
  local function ks2(n) return w2.for_shape(n, 17408).defines.LN_KS end
  t.eq({ ks2(5120), ks2(640 * 8), ks2(640 * 8 + 1), ks2(14336) }, { 2, 2, 1, 1 }, "w8 T = 2: LN_KS = 2 up to 640 row warps")
  t.truthy(w2.for_shape(14336, 5120) == w2, "w8 T = 2 at 14336 rows: the route itself")
  t.eq(routes.w8[1].for_shape(5120, 17408).defines.LN_KS, 4, "w8 5120 rows: 320 row warps")
  t.eq(routes.w8[1].for_shape(14336, 5120).defines.LN_KS, 2)
  t.eq(routes.q4[1].for_shape(131072, 2048).defines.LN_KS, 1)
end)

t.test("every route's defines are a gpubench-compile line of its file; the first line is its first route", function()
  for _, q in ipairs(routes.qtypes) do
    local seen = {}
    local all = {}
    for _, r in ipairs(routes[q]) do
      all[#all + 1] = r
      for _, v in ipairs(shape_variants(r)) do all[#all + 1] = v end
    end
    for _, r in ipairs(all) do
      local src = assert(io.open(r.file)):read("a")
      local lines = {}
      for entry, defs in src:gmatch("// gpubench%-compile: entry=(%S+) defines=(%S+)") do
        t.eq(entry, r.entry, r.file)
        local d = {}
        for name, value in defs:gmatch("([%w_]+)=(%d+)") do d[name] = tonumber(value) end
        lines[#lines + 1] = d
      end
      local found = false
      for _, d in ipairs(lines) do
        local same = true
        for k2, v in pairs(r.defines) do same = same and d[k2] == v end
        for k2 in pairs(d) do same = same and r.defines[k2] ~= nil end
        found = found or same
      end
      t.truthy(found, r.file .. ": no gpubench-compile line with the route's defines")
      if not seen[r.file] then
        seen[r.file] = true
        for k2, v in pairs(r.defines) do t.eq(lines[1][k2], v, r.file .. ": first line, " .. k2) end
      end
    end
  end
end)

t.test("every route compiles for sm_90 with NVRTC and takes (W, x, y, u32 N, u32 K, u32 T, f32 gscale)", function()
  local gpu = t.gpu
  if not gpu or not gpu.compile then t.skip("no gpu module") end
  for _, q in ipairs(routes.qtypes) do
    for _, r in ipairs(routes[q]) do
      local ok, res = pcall(gpu.compile, { backend = "cuda", file = r.file, entry = r.entry, defines = r.defines,
        target = "sm_90" })
      if not ok and nvrtc_missing(t.error_text(res)) then t.skip("NVRTC not available: " .. t.error_text(res)) end
      t.truthy(ok, r.entry .. ": " .. t.error_text(res))
      local want = { table.unpack(PARAMS) }
      if r.slices then -- the slices' workspace, then LN_HALF's exponents
        want[#want + 1] = "buffer"
        want[#want + 1] = "buffer"
      end
      t.eq(res.params, want, r.entry)
    end
  end
  -- without its geometry a kernel is refused, naming the table
  for _, r in ipairs { routes.q4[1], routes.q4[#routes.q4] } do
    local ok, err = pcall(gpu.compile, { backend = "cuda", file = r.file, entry = r.entry, target = "sm_90" })
    t.eq(ok, false, r.entry .. " compiled without defines")
    t.truthy(t.error_text(err):find("defaults: lib/gpubench/linear_cuda.lua", 1, true), t.error_text(err))
  end
  -- the wgmma kernels compiled for plain sm_90 (without GB_ARCH_SPECIFIC) say what they need
  local wg = routes.q4[#routes.q4 - 1]
  local plain = {}
  for k2, v in pairs(wg.defines) do plain[k2] = v end
  plain.GB_ARCH_SPECIFIC = nil
  t.errors(function()
    gpu.compile { backend = "cuda", file = wg.file, entry = wg.entry, defines = plain, target = "sm_90" }
  end, "the wgmma route needs sm_90a", true)
  -- an x ring that does not fit static shared memory is refused at compile time
  local r = routes.bf16[#routes.bf16]
  local big = { LN_NW = 8, LN_BN = 128, LN_STAGES = 4 } -- 64 KiB of x stages
  t.errors(function()
    gpu.compile { backend = "cuda", file = r.file, entry = r.entry, defines = big, target = "sm_90" }
  end, "exceed the 48 KiB of static shared memory", true)
end)

-- The devices whose kernels and workspace gpubench.linear holds (the routes
-- launched through linear.launches): released with the test's own kernels.
local linear_devs = {}

-- One launch of route r at N x K x T on random data, checked against the
-- reference; y's bytes past T*N must stay as they were.
local function check(dev, kernels, q, r, n, k, tt, seed)
  local ref = require "gpubench.ref"
  local w = ref.planar_random(q, n, k, seed)
  local x = ref.random_bf16(tt * k, seed + 1)
  local wb <close> = dev:buffer(round256(#w))
  local xb <close> = dev:buffer(round256(2 * tt * k))
  local ybytes = round256(2 * tt * n + 2)
  local yb <close> = dev:buffer(ybytes)
  wb:fill(0x5A)
  wb:upload(w)
  xb:fill(0xFF) -- NaN past T*K: a kernel using x there fails
  xb:upload(x)
  yb:fill(0xFF)
  if r.slices then
    -- a route that can split K: its launches as gpubench.linear makes them
    -- (the workspace, and the reduction as a second launch when it splits;
    -- LN_HALF's prepass as a first launch)
    local linear = require "gpubench.linear"
    linear_devs[dev] = true
    local ls = linear.launches(dev, { qtype = q, policy = "a16", n = n, k = k, gscale = GSCALE }, wb, xb, yb, tt, r)
    local tail = r.tail and select(2, r.grids(n, k, tt, dev.sm_count)) and 1 or 0
    t.eq(#ls, (r.slices > 1 and not r.cluster and 2 or 1) + (r.prep and 1 or 0) + tail, "launches of a call")
    for _, l in ipairs(ls) do l[1]:launch(table.unpack(l, 2)) end
  else
    local key = r.entry .. "#" .. r.min_t
    kernels[key] = kernels[key] or dev:kernel { file = r.file, entry = r.entry, defines = r.defines }
    kernels[key]:launch(r.grid(n, k, tt), r.block, wb, xb, yb, n, k, tt, t.gpu.f32(GSCALE))
  end
  local y = yb:download(0, 2 * tt * n)
  local rr, s = ref.linear(q, w, n, k, x, tt, GSCALE)
  local c = ref.check_linear(y, rr, s, tt, n)
  local where = ("%s %s [%d..%d] N=%d K=%d T=%d"):format(q, r.name, r.min_t, r.max_t, n, k, tt)
  t.truthy(c.ok, ("%s: %d outputs off%s"):format(where, c.failures,
    c.first and (", first (t=%d, n=%d) y=%.9g ref=%.9g bound %.3g"):format(c.first.t, c.first.n, c.first.y,
      c.first.ref, c.first.bound) or ""))
  t.eq(yb:download(2 * tt * n), ("\xFF"):rep(ybytes - 2 * tt * n), where .. ": bytes past y[T*N-1] untouched")
  return c.worst, y
end


local function releasing(kernels, fn)
  local ok, e = pcall(fn)
  for _, k in pairs(kernels) do k:free() end
  for d in pairs(linear_devs) do
    require("gpubench.linear").release(d)
    linear_devs[d] = nil
  end
  if not ok then error(e, 0) end
end

-- The T values each route is checked at: its ends and one inside, and for
-- the tensor-core and integer-dot routes also T = 1 and 3 (the integer-dot
-- routes end below 3: past LN_TT the kernel takes x LN_TT rows at a time,
-- which must be correct too).
local function ts_of(r)
  local ts = { r.min_t }
  if r.max_t > r.min_t then ts[#ts + 1] = math.min(r.max_t, r.min_t < 64 and r.max_t or 1024) end
  if r.name == "mma" or r.name == "wgmma" or r.name == "dot" then
    if r.min_t ~= 1 then ts[#ts + 1] = 1 end
    if r.max_t < 3 then ts[#ts + 1] = 3 end
  end
  if r.min_t == 1 and r.name ~= "dot" then ts[#ts + 1] = 3 end
  if r.min_t == 65 then ts[#ts + 1] = 69 end
  return ts
end

for _, q in ipairs(routes.qtypes) do
  t.test(q .. ": every route at ragged N, K not a multiple of 128 and the T it accepts, against FP64", function()
    local dev = t.device("cuda")
    local kernels = {}
    releasing(kernels, function()
      for i, r in ipairs(routes[q]) do
        for j, tt in ipairs(ts_of(r)) do
          local n = tt >= 512 and 37 or 100
          check(dev, kernels, q, r, 37, 200, tt, 100 * i + j)
          check(dev, kernels, q, r, n, 4304, tt, 100 * i + j + 50)
        end
      end
    end)
  end)
end

t.test("the T = 1 route (integer-dot or memory-bound) at the benchmark shape 14336 x 5120, every format", function()
  local dev = t.device("cuda")
  local kernels = {}
  releasing(kernels, function()
    for _, q in ipairs(routes.qtypes) do check(dev, kernels, q, routes[q][1], 14336, 5120, 1, 900) end
  end)
end)

t.test("integer-dot routes: T = 1, 3 and the largest T at K with a partial last tile and whole tiles only", function()
  local dev = t.device("cuda")
  local kernels = {}
  releasing(kernels, function()
    for _, q in ipairs(routes.qtypes) do
      for i, r in ipairs(routes[q]) do
        if r.name == "dot" then
          for _, tt in ipairs { 1, 3, r.max_t } do
            check(dev, kernels, q, r, 65, 3080, tt, 920 + 10 * i + tt) -- K % 1024 = 8: a last lane run of 8
            check(dev, kernels, q, r, 1, 2048, tt, 940 + 10 * i + tt)  -- N = 1, whole tiles
            check(dev, kernels, q, r, 4096, 5120, tt, 960 + 10 * i + tt)
          end
        end
      end
    end
  end)
end)

t.test("tensor-core routes at 1024 x 1024, T = 1024 (several tiles in both directions), every format", function()
  local dev = t.device("cuda")
  local kernels = {}
  releasing(kernels, function()
    for _, q in ipairs(routes.qtypes) do
      for i, r in ipairs(routes[q]) do
        if r.name == "wgmma" or r.max_t == 65535 then check(dev, kernels, q, r, 1024, 1024, 1024, 910 + i) end
      end
    end
  end)
end)

-- A test of the wgmma route on a CUDA device that has it: fn(dev, kernels).
local function wgmma_test(name, fn)
  t.test(name, function()
    local dev = t.device("cuda")
    if not routes.q4[#routes.q4 - 1].requires(dev) then t.skip("the wgmma route needs sm_90") end
    local kernels = {}
    releasing(kernels, function() fn(dev, kernels) end)
  end)
end

-- wgmma tiles ragged in every direction: N past a 256-row tile, T past a
-- 128-row tile of x, K past a unit of 64 (and not a multiple of 128).
wgmma_test("wgmma route at N = 1000, K = 1032, T = 1000 and at one row, every format", function(dev, kernels)
  for _, q in ipairs(routes.qtypes) do
    local r = routes[q][#routes[q] - 1]
    check(dev, kernels, q, r, 1000, 1032, 1000, 930)
    check(dev, kernels, q, r, 1, 64, 129, 931)
    -- and what the grid rule picks there (tiles of 128 rows of x for nvfp4 and bf16)
    local v = r.for_shape(1000, 1032, dev, 1000)
    if v ~= r and v.name == "wgmma" then check(dev, kernels, q, v, 1000, 1032, 1000, 932) end
  end
end)

-- Slices of K: uneven (3 of 4 or 68 units), more slices than units (8 of
-- 4: empty slices add zeros), and the workspace grown between calls.
wgmma_test("wgmma route with slices of K (LN_KSPLIT = 2, 3, 8), every format, against FP64", function(dev, kernels)
  for _, q in ipairs(routes.qtypes) do
    local base = routes[q][#routes[q] - 1]
    for i, ks in ipairs { 2, 3, 8 } do
      local r = routes.variant(q, base, { LN_KSPLIT = ks, LN_WS = 0 })
      t.eq(r.grid(100, 200, 300)[3], ks)
      check(dev, kernels, q, r, 37, 200, 300, 980 + i)
      check(dev, kernels, q, r, 300, 4304, 257, 990 + i)
    end
  end
end)

-- Routes a and b of q at each shape {N, K, T}: each against FP64, then the
-- same bits from both (what: b's change, for the message).
local function same_bits(dev, kernels, q, a, b, shapes, seed, what)
  for j, shape in ipairs(shapes) do
    local n, k, tt = table.unpack(shape)
    local _, ya = check(dev, kernels, q, a, n, k, tt, seed + j)
    local _, yb = check(dev, kernels, q, b, n, k, tt, seed + j)
    t.truthy(ya == yb, ("%s %s N=%d K=%d T=%d: %s gives other bits"):format(q, b.name, n, k, tt, what))
  end
end

-- The slices of a tile as one thread block cluster adding their sums in
-- shared memory (LN_CLUSTER = 1): one launch, and the same bits as the same
-- geometry's slices added by the second launch (both add the slices in slice
-- order), uneven (3), with empty slices (8 of 4 units), staggered or not, LN_HALF or not.
wgmma_test("wgmma route with the slices' sums added in a cluster (LN_CLUSTER = 1), every format: FP64, and the bits of the second launch's", function(dev, kernels)
  for _, q in ipairs(routes.qtypes) do
    local base = routes[q][#routes[q] - 1]
    for i, c in ipairs { { LN_KSPLIT = 2 }, { LN_KSPLIT = 3, LN_HALF = 0, LN_STAGGER = 0 }, { LN_KSPLIT = 8 } } do
      local global = routes.variant(q, base, c)
      c.LN_CLUSTER = 1
      local cluster = routes.variant(q, base, c)
      t.truthy(cluster.cluster and not global.cluster, "the route says where its slices add up")
      same_bits(dev, kernels, q, global, cluster, { { 37, 200, 300 }, { 300, 4304, 257 } }, 1000 + 10 * i,
        ("LN_KSPLIT=%d in a cluster (against the second launch's sums)"):format(c.LN_KSPLIT))
    end
  end
end)

-- The last wave in slices (the variant key TAIL): the route's own launch over
-- the first whole wave of tiles, then the rest in 2 or 8 slices a tile, one
-- cluster each (8 of 5 units: empty slices), counted from the last tile; a
-- ragged last tile of W and of x. 4600 x 1000: 36 x 4 = 144 tiles, so on 132
-- SMs 33 rows of W first and 3 in the second launch.
wgmma_test("wgmma route with the last wave in slices (TAIL = 2, 8; LN_TAIL = 1), every format, against FP64", function(dev, kernels)
  if (dev.sm_count or 0) > 144 then t.skip("the shape makes no tail on more than 144 SMs") end
  for _, q in ipairs(routes.qtypes) do
    local base = routes[q][#routes[q] - 1]
    for i, ks in ipairs { 2, 8 } do
      local r = routes.variant(q, base, { TAIL = ks })
      t.truthy(select(2, r.grids(4600, 264, 1000, dev.sm_count)) ~= nil, "the shape has a tail")
      check(dev, kernels, q, r, 4600, 264, 1000, 1100 + i)
    end
  end
end)

-- x by one bulk copy a unit from the prepass's tiled copy (LN_XTILE = 1, the
-- formats with LN_HALF; 2: each warpgroup its own rows, no block barrier in
-- the loop): against FP64 and bit for bit the y of the same
-- geometry's per-thread copies (the same fp16 x, the same products); 128 and
-- 256 rows of x, ragged T, K past a unit, K long enough for the prepass's
-- twin, slices in a cluster, and a refusal without the prepass.
wgmma_test("wgmma route with x by bulk copies (LN_XTILE = 1, and 2 without the block barrier), q4 q5 q6 w8: FP64, and the bits of the per-thread copies'", function(dev, kernels)
  for _, q in ipairs { "q4", "q5", "q6", "w8" } do
    local base = routes[q][#routes[q] - 1]
    for i, c in ipairs { { x = 1 }, { LN_BN = 128, x = 1 }, { LN_KSPLIT = 3, LN_CLUSTER = 1, x = 1 }, { x = 2 },
                         { LN_KSPLIT = 2, LN_CLUSTER = 1, x = 2 } } do
      local xt = c.x
      c.x = nil
      local plain = next(c) and routes.variant(q, base, c) or base
      c.LN_XTILE = xt
      local tiled = routes.variant(q, base, c)
      t.truthy(tiled.xtile == tiled.defines.LN_BN and tiled.prep.defines.LN_PREP_TILE == tiled.defines.LN_BN, "the tiled prepass")
      -- K = 16392: the prepass's twin for long rows (each row held in registers), a unit past K's last whole one
      same_bits(dev, kernels, q, plain, tiled, { { 37, 200, 300 }, { 300, 4304, 257 }, { 37, 16392, 70 } }, 1200 + 10 * i,
        "x by bulk copies")
    end
  end
end)

-- The weights from registers (LN_XTILE = 3): each warp decodes its rows into
-- wgmma's A fragments, x's k permuted by the prepass to match (other sums
-- than the stores' path, so FP64 only): every integer format, one slice, 128
-- rows of x, slices in a cluster (a tail of them), ragged N and T, K past a
-- unit's end, the prepass's twin for long rows (K = 16392).
wgmma_test("wgmma route with the weights from registers (LN_XTILE = 3, and 4 its products waited for each unit), q4 q5 q6 w8: FP64", function(dev, kernels)
  for _, q in ipairs { "q4", "q5", "q6", "w8" } do
    local base = routes[q][#routes[q] - 1]
    for i, c in ipairs { { x = 4 }, {}, { LN_BN = 128, LN_STAGES = 5 }, { LN_KSPLIT = 3, LN_CLUSTER = 1 } } do
      c.LN_XTILE, c.x = c.x or 3, nil
      c.LN_STAGGER, c.LN_WPF, c.LN_STAGES, c.LN_HALF = 0, 1, c.LN_STAGES or 6, 1
      local r = routes.variant(q, base, c)
      t.eq({ r.prep.defines.LN_PREP_PERM, r.xtile }, { 1, r.defines.LN_BN })
      for j, shape in ipairs { { 37, 200, 300 }, { 300, 4304, 257 }, { 37, 16392, 70 } } do
        check(dev, kernels, q, r, shape[1], shape[2], shape[3], 1400 + 10 * i + j)
      end
    end
  end
end)

-- wgmma with A from registers on its own (kernels/cuda/wgmma_ra_probe.cu):
-- one warpgroup's m64n256k16 over k-steps of small integers (exact in fp16
-- and fp32), A from shared memory (the table's form) and from registers in
-- lw_mma_ra's fragment layout, against the exact product: one unit of 64
-- (modes 0, 1), and four units in the register-A loop's order (a fragment a
-- k-step, each rewritten after the wait that leaves 3 groups pending); the
-- fragment words each thread read are checked against A too. Mode 2
-- rewrites the fragments' registers between the issue and the wait
-- (undefined in the PTX ISA): what it gives says whether the hardware has
-- read them by then, as ptxas's schedules of that loop assume
-- (docs/kernels/cuda-linear.md, "The weights from registers"); printed, not asserted.
wgmma_test("wgmma with A from registers: lw_mma_ra's fragment layout and the register-A loop's order against A from shared memory, exact", function(dev, kernels)
  local function f16(v) -- a small integer in fp16
    if v == 0 then return 0 end
    local a, e = math.abs(v), 0
    while a >= 2 ^ (e + 1) do e = e + 1 end
    return (v < 0 and 0x8000 or 0) | (e + 15) << 10 | math.floor((a / 2 ^ e - 1) * 1024)
  end
  t.eq({ f16(1), f16(-3), f16(4) }, { 0x3C00, 0xC200, 0x4400 })
  local r = require("gpubench.rng").new(4711)
  local function rnd() return r:int(9) - 5 end -- -4 .. 4
  local K = 256 -- A[64][K], B[256][K]: four units of 64
  local A, B, pa, pb = {}, {}, {}, {}
  for i = 0, 64 * K - 1 do A[i] = rnd(); pa[#pa + 1] = string.pack("<I2", f16(A[i])) end
  for i = 0, 256 * K - 1 do B[i] = rnd(); pb[#pb + 1] = string.pack("<I2", f16(B[i])) end
  local ab <close> = dev:buffer(2 * 64 * K)
  local bb <close> = dev:buffer(2 * 256 * K)
  local ob <close> = dev:buffer(4 * (2 * 128 * 128 + 128 * 16))
  ab:upload(table.concat(pa))
  bb:upload(table.concat(pb))
  -- thread (warp w, lane 4 g + t) holds d[4 j + c] = row 16 w + g + 8 (c >> 1), column 8 j + 2 t + (c & 1)
  local function exact(kend)
    local want = {}
    for tid = 0, 127 do
      local w, g, tt = tid // 32, tid % 32 // 4, tid % 4
      for j = 0, 127 do
        local row, col = 16 * w + g + 8 * ((j % 4) >> 1), 8 * (j // 4) + 2 * tt + (j % 2)
        local sum = 0
        for k = 0, kend - 1 do sum = sum + A[row * K + k] * B[col * K + k] end
        want[tid * 128 + j] = sum
      end
    end
    return want
  end
  local one, all = exact(64), exact(K)
  -- the sums of region `form` (0: A from shared memory, 1: from registers) against want
  local function off(out, form, want)
    local bad, first = 0, nil
    for i = 0, 128 * 128 - 1 do
      local y = string.unpack("<f", out, 1 + 4 * (form * 128 * 128 + i))
      if y ~= want[i] then
        bad = bad + 1
        first = first or ("thread %d d[%d] = %g, exact %g"):format(i // 128, i % 128, y, want[i])
      end
    end
    return bad, first or ""
  end
  local function probe(entry)
    return dev:kernel { file = "kernels/cuda/wgmma_ra_probe.cu", entry = entry, defines = { GB_ARCH_SPECIFIC = 1 } }
  end
  kernels.probe, kernels.probe_loop = probe("wgmma_ra_probe"), probe("wgmma_ra_probe_loop")
  for mode = 0, 2 do
    ob:fill(0xFF)
    kernels.probe:launch({ 1, 1, 1 }, { 128, 1, 1 }, ab, bb, ob, t.gpu.u32(mode))
    local out = ob:download(0, 4 * (2 * 128 * 128 + 128 * 16))
    local bad, first = off(out, 0, one)
    -- the fragment words the kernel read (inverted in mode 2): lw_mma_ra's layout read from A
    local wbad, wfirst = 0, nil
    for tid = 0, 127 do
      local w, g, tt = tid // 32, tid % 32 // 4, tid % 4
      for i = 0, 15 do
        local kk, q = i // 4, i % 4
        local row, k = 16 * w + g + 8 * (q & 1), 16 * kk + 2 * tt + 8 * (q >> 1)
        local want = f16(A[row * K + k]) | f16(A[row * K + k + 1]) << 16
        if mode == 2 then want = ~want & 0xFFFFFFFF end
        local got = string.unpack("<I4", out, 1 + 4 * (2 * 128 * 128 + tid * 16 + i))
        if got ~= want then
          wbad = wbad + 1
          wfirst = wfirst or ("thread %d word %d = %08x, want %08x"):format(tid, i, got, want)
        end
      end
    end
    t.eq(wbad, 0, ("mode %d, fragment words: %s"):format(mode, wfirst or ""))
    t.eq(bad, 0, ("mode %d, A from shared memory: %s"):format(mode, first))
    bad, first = off(out, 1, one)
    if mode < 2 then
      t.eq(bad, 0, ("mode %d, A from registers: %s"):format(mode, first))
    else
      print(("# wgmma_ra_probe: fragments rewritten between issue and wait: %d of %d sums off%s"):format(bad,
        128 * 128, bad > 0 and (" (the hardware reads A registers after issue; first: " .. first .. ")")
        or " (the hardware had read them)"))
    end
  end
  ob:fill(0xFF)
  kernels.probe_loop:launch({ 1, 1, 1 }, { 128, 1, 1 }, ab, bb, ob, t.gpu.u32(K // 64))
  local bad, first = off(ob:download(0, 4 * 2 * 128 * 128), 1, all)
  t.eq(bad, 0, "four units in the register-A loop's order: " .. first)
end)

-- A tile's sums out through shared memory, LN_HALF's factors read once a
-- block (LN_EPI = 1) against each sum stored from the fragment
-- (0): FP64, and the same bits, every format, one slice and a cluster's,
-- 128 and 256 rows of x, N a multiple of 4 (8-byte stores) or not, ragged T.
wgmma_test("wgmma route with the sums through shared memory (LN_EPI = 1) against the fragment's stores (0), every format: FP64 and the same bits", function(dev, kernels)
  for _, q in ipairs(routes.qtypes) do
    local base = routes[q][#routes[q] - 1]
    for i, c in ipairs { {}, { LN_BN = 128 }, { LN_KSPLIT = 3, LN_CLUSTER = 1 } } do
      c.LN_EPI = 0
      local old = routes.variant(q, base, c)
      c.LN_EPI = 1
      local new = routes.variant(q, base, c)
      same_bits(dev, kernels, q, old, new, { { 37, 200, 300 }, { 300, 1032, 257 } }, 1300 + 10 * i, "LN_EPI = 1 (against 0)")
    end
  end
end)

-- wgmma variants other than the table's, every format, at two shapes against
-- FP64 (kernels/cuda/linear_wgmma.cuh): LN_CLOSE = 0, the pipeline closed in
-- the last unit (lockstep, warp-specialized, slices of K); the LN_STAGGER the
-- table does not take for the format (1: the last warpgroup's products half a
-- unit behind the first's).
local function wgmma_variants_test(name, changes, seed)
  wgmma_test(name, function(dev, kernels)
    for _, q in ipairs(routes.qtypes) do
      local base = routes[q][#routes[q] - 1]
      for i, c in ipairs(changes) do
        local r = routes.variant(q, base, type(c) == "function" and c(base.defines) or c)
        check(dev, kernels, q, r, 37, 200, 300, seed + i)
        check(dev, kernels, q, r, 300, 4304, 257, seed + 5 + i)
      end
    end
  end)
end
wgmma_variants_test("wgmma route with the pipeline closed in the last unit (LN_CLOSE = 0, the table takes 1), every format, against FP64",
  { { LN_CLOSE = 0, LN_STAGGER = 0 }, { LN_CLOSE = 0, LN_WS = 1, LN_STAGGER = 0 },
    { LN_CLOSE = 0, LN_STAGGER = 0, LN_KSPLIT = 3 } }, 960)
wgmma_variants_test("wgmma route with the codes in bf16 and the scales after the sum (LN_HALF = 0; the table takes 1 for q4, q5, q6, w8), every format, against FP64",
  { { LN_HALF = 0 }, { LN_HALF = 0, LN_KSPLIT = 3 } }, 950)
local function other_stagger(d) return { LN_STAGGER = 1 - d.LN_STAGGER } end
wgmma_variants_test("wgmma route with the other LN_STAGGER than the table's (warpgroups in step or staggered), every format, against FP64",
  { other_stagger, function(d) return { LN_STAGGER = 1 - d.LN_STAGGER, LN_KSPLIT = 3 } end }, 970)

-- The wgmma route keeps the sum in units of the current group's scale
-- (kernels/cuda/linear_wgmma.cuh): rows whose scales are 0 in some groups
-- (codes stored as zeros, the previous scale carried), all 0, or alternate
-- between the smallest subnormal and the largest fp16 (ratios of 2^40).
local function with_scales(q, w, n, k)
  local kp = (k + 127) // 128 * 128
  local g = q == "w8" and 32 or 64
  local per_row = 2 * kp // g
  local plane = #w - n * per_row -- the scale plane is the last
  local pieces, at = {}, 1
  for row = 0, n - 1 do
    local kind = row % 4
    if kind ~= 0 then
      local bytes = {}
      for grp = 0, per_row // 2 - 1 do
        local v
        if kind == 1 then v = grp % 3 == 0 and "\0\0" or nil
        elseif kind == 2 then v = grp % 2 == 0 and "\1\0" or "\xFF\x7B"
        else v = "\0\0" end
        local off = plane + row * per_row + 2 * grp
        bytes[#bytes + 1] = v or w:sub(off + 1, off + 2)
      end
      local off = plane + row * per_row
      pieces[#pieces + 1] = w:sub(at, off)
      pieces[#pieces + 1] = table.concat(bytes)
      at = off + per_row + 1
    end
  end
  pieces[#pieces + 1] = w:sub(at)
  local out = table.concat(pieces)
  assert(#out == #w)
  return out
end

wgmma_test("wgmma route: zero, subnormal and largest fp16 scales in a row's groups, against FP64", function(dev, kernels)
  local ref = require "gpubench.ref"
  for _, q in ipairs { "q4", "q5", "q6", "w8" } do
    local r = routes[q][#routes[q] - 1]
    local n, k, tt = 300, 1032, 200
    local w = with_scales(q, ref.planar_random(q, n, k, 970), n, k)
    local x = ref.random_bf16(tt * k, 971)
    local wb <close> = dev:buffer(round256(#w))
    local xb <close> = dev:buffer(round256(2 * tt * k))
    local yb <close> = dev:buffer(round256(2 * tt * n))
    wb:upload(w)
    xb:upload(x)
    local linear = require "gpubench.linear"
    linear_devs[dev] = true
    local ls = linear.launches(dev, { qtype = q, policy = "a16", n = n, k = k, gscale = GSCALE }, wb, xb, yb, tt, r)
    for _, l in ipairs(ls) do l[1]:launch(table.unpack(l, 2)) end
    local y = yb:download(0, 2 * tt * n)
    local rr, s = ref.linear(q, w, n, k, x, tt, GSCALE)
    local c = ref.check_linear(y, rr, s, tt, n)
    t.truthy(c.ok, ("%s: %d outputs off%s"):format(q, c.failures, c.first and
      (", first (t=%d, n=%d) y=%.9g ref=%.9g"):format(c.first.t, c.first.n, c.first.y, c.first.ref) or ""))
    -- the rows with every scale 0 are exactly 0
    for tt0 = 0, tt - 1, 37 do
      for row = 3, n - 1, 4 do
        t.eq(y:sub(2 * (tt0 * n + row) + 1, 2 * (tt0 * n + row) + 2) == "\0\0" or
          y:sub(2 * (tt0 * n + row) + 1, 2 * (tt0 * n + row) + 2) == "\0\x80", true, q .. " zero row")
      end
    end
  end
end)

t.run()
