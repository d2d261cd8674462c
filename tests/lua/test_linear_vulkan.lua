-- The Vulkan Linear kernels (kernels/vulkan/linear_*.comp) through their route table
-- (lib/gpubench/linear_vulkan.lua), against the FP64 reference (gpubench.ref.linear,
-- docs/LINEAR.md's accuracy rule). Every route the device can run is launched directly,
-- at the T values of its range, on ragged N and K that is not a multiple of 128; on
-- lavapipe that is the gemv and tiled routes (both y stores), on an NVIDIA device the
-- coopmat route too. Shapes stay small: lavapipe runs on the CPU.

local t = dofile("tests/lua/harness.lua")
local routes = require "gpubench.linear_vulkan"
local linear = require "gpubench.linear"

local GSCALE = 0.3 -- not a power of two: NVFP4 must apply it exactly once, the others ignore it

-- The T values a route is checked at: those of the list inside its range, plus its ends
-- (up to the largest of the list).
local function ts_for(r, list)
  local out, seen = {}, {}
  local function add(v)
    if v >= r.min_t and v <= r.max_t and not seen[v] then seen[v] = true; out[#out + 1] = v end
  end
  for _, v in ipairs(list) do add(v) end
  add(r.min_t)
  if r.max_t <= list[#list] then add(r.max_t) end
  table.sort(out)
  return out
end

local function route_label(q, r)
  local d = r.defines
  return ("%s %s y16=%d%s"):format(q, r.name, d.LIN_Y16,
    d.LIN_TMAX and (" tmax=%d"):format(d.LIN_TMAX) or "")
end

-- Runs route r for (q, n, k) at every T of ts on data made once (x: t_max rows of K
-- bf16, random unless given) and returns the weights and a function giving y at T; checks
-- that nothing past the T*N outputs was written.
local function run_route(dev, q, r, n, k, ts, seed, x)
  local gpu = require "gpu"
  local ref = require "gpubench.ref"
  local t_max = ts[#ts]
  local w = ref.planar_random(q, n, k, seed)
  x = x or ref.random_bf16(t_max * k, seed + 1)
  local wb <close> = dev:buffer(linear.buffer_bytes(#w))
  local xb <close> = dev:buffer(linear.buffer_bytes(#x))
  local ybytes = linear.buffer_bytes(2 * t_max * n) + 256
  local yb <close> = dev:buffer(ybytes)
  wb:upload(w)
  xb:upload(x)
  local kern <close> = dev:kernel { file = r.file, entry = r.entry, defines = r.defines }
  t.eq(kern.params, { "buffer", "buffer", "buffer", "u32", "u32", "u32", "f32" }, route_label(q, r) .. " parameters")
  local ys = {}
  for _, tt in ipairs(ts) do
    local what = ("%s n=%d k=%d T=%d"):format(route_label(q, r), n, k, tt)
    yb:fill("\xA5") -- neither a valid result nor zero: a skipped output and a stray write both show
    kern:launch(r.grid(n, k, tt), r.block, wb, xb, yb, gpu.u32(n), gpu.u32(k), gpu.u32(tt), gpu.f32(GSCALE))
    local y = yb:download()
    t.eq(y:sub(2 * tt * n + 1), string.rep("\xA5", ybytes - 2 * tt * n), what .. ": bytes past the outputs")
    ys[tt] = y:sub(1, 2 * tt * n)
  end
  return w, x, ys
end

-- run_route, then each y against the reference.
local function check_route(dev, q, r, n, k, ts, seed, x)
  local ref = require "gpubench.ref"
  local w, xs, ys = run_route(dev, q, r, n, k, ts, seed, x)
  for _, tt in ipairs(ts) do
    local what = ("%s n=%d k=%d T=%d"):format(route_label(q, r), n, k, tt)
    local rr, s = ref.linear(q, w, n, k, xs:sub(1, 2 * tt * k), tt, GSCALE)
    local c = ref.check_linear(ys[tt], rr, s, tt, n)
    local f = c.first
    t.truthy(c.ok, f and ("%s: %d outputs outside the bound, first t=%d n=%d: %.6g, reference %.6g, bound %.3g")
      :format(what, c.failures, f.t, f.n, f.y, f.ref, f.bound) or what)
  end
end

local function runnable(dev, q)
  local list = {}
  for _, r in ipairs(routes[q]) do
    if r.requires(dev) then list[#list + 1] = r end
  end
  return list
end

local SHAPES = { { 37, 200 }, { 100, 200 }, { 5, 4304 } }
local TS = { 1, 3, 17, 69 }

for i, q in ipairs(routes.qtypes) do
  t.test(q .. ": every route this device runs matches the reference (N 37/100/5, K 200/4304, T 1-69)", function()
    local dev = t.device("vulkan")
    local list = runnable(dev, q)
    t.truthy(#list >= 2, "at least the gemv and tiled routes run everywhere")
    for j, r in ipairs(list) do
      for s, shape in ipairs(SHAPES) do
        local ts = ts_for(r, TS)
        if #ts > 0 then check_route(dev, q, r, shape[1], shape[2], ts, 1000 * i + 10 * j + s) end
      end
    end
  end)
end

-- The gemv reduction has three paths by subgroup size sg against the lane-group width:
-- equal (one subgroupAdd), wider subgroups (a butterfly inside the lane group) and
-- narrower ones (subgroupAdd, then shared memory). Variants cover whichever the table's
-- geometry does not reach on this device; unroll 2 covers the clamped last chunks.
t.test("gemv reduction paths: lane groups narrower than, equal to and wider than a subgroup", function()
  local dev = t.device("vulkan")
  local sg = dev.subgroup_size
  local widths, seen = {}, {}
  for _, w in ipairs { sg // 2, sg, sg * 2, 256 } do
    if w >= 1 and w <= 256 and not seen[w] then seen[w] = true; widths[#widths + 1] = w end
  end
  for i, q in ipairs { "q4", "nvfp4", "bf16", "w8" } do
    for _, lanes in ipairs(widths) do
      for _, v in ipairs { { nr = 1, unroll = 2 }, { nr = 3, unroll = 1 } } do
        local r = routes.gemv(q, 1, 4, lanes, v.nr, true, v.unroll)
        if q ~= "w8" then check_route(dev, q, r, 29, 520, { 1, 3, 4 }, 500 + 10 * i + lanes + v.nr) end
        if routes.DOT_QTYPES[q] and dev.integer_dot_product then
          r = routes.dot(q, 1, 3, lanes, v.nr, true, v.unroll)
          check_route(dev, q, r, 29, 520, { 1, 3 }, 550 + 10 * i + lanes + v.nr)
        end
      end
    end
  end
end)

-- ---------------------------------------------------------------- the dot route

-- The table's dot routes this device runs, and each with 2 rows per lane group (what the
-- shape rule gives small N); those for T = 1 also with lane groups of 128 (what it gives
-- thin grids: 16 subgroups of lavapipe's 8, 4 of NVIDIA's 32).
-- q6 also in its other form (LIN_Q6_SPLIT: nibbles and high pairs dotted apart or together).
local function dot_routes(dev)
  local list = {}
  for _, q in ipairs { "q4", "q5", "q6", "w8" } do
    for _, r in ipairs(runnable(dev, q)) do
      if r.name == "dot" then
        list[#list + 1] = { q = q, r = r }
        list[#list + 1] = { q = q, r = routes.variant(q, r, { LIN_NR = 2 }) }
        if r.max_t == 1 then list[#list + 1] = { q = q, r = routes.variant(q, r, { LIN_LANES = 128, LIN_NR = 2 }) } end
        if q == "q6" then list[#list + 1] = { q = q, r = routes.variant(q, r, { LIN_Q6_SPLIT = 1 - r.defines.LIN_Q6_SPLIT }) } end
      end
    end
  end
  if #list == 0 then t.skip(dev.name .. " runs no dot route (no integer dot product)") end
  return list
end

local function bf16_bits(y, i) return string.unpack("<I2", y, 2 * i + 1) end

-- f (a double that an fp32 holds exactly) rounded to bf16 bits, to nearest even.
local function to_bf16(f)
  local u = string.unpack("<I4", string.pack("<f", f))
  return (u + 0x7FFF + ((u >> 16) & 1)) >> 16
end

-- x with one nonzero element per row: the integer route's sum is then (code - offset)
-- times a power-of-two code of x, and y is the decoded weight times x, bit for bit.
t.test("dot route: a one-hot x gives each decoded weight times x exactly (K 200, chunks past K)", function()
  local dev = t.device("vulkan")
  local ref = require "gpubench.ref"
  local n, k = 37, 200
  -- (k0, bf16 bits, value): the last valid element, a small and a large exponent, a negative
  local hot = { { 199, 0x3FC0, 1.5 }, { 0, 0x21C0, 1.5 * 2.0 ^ -60 }, { 97, 0xD080, -2.0 ^ 34 }, { 64, 0x3F80, 1.0 } }
  for i, e in ipairs(dot_routes(dev)) do
    local tt = e.r.max_t
    local rows = {}
    for j = 1, tt do
      local h = hot[(i + j) % #hot + 1]
      local row = {}
      for kk = 0, k - 1 do row[kk + 1] = string.pack("<I2", kk == h[1] and h[2] or 0) end
      rows[j] = table.concat(row)
    end
    local w, _, ys = run_route(dev, e.q, e.r, n, k, { tt }, 900 + i, table.concat(rows))
    local wf = ref.planar_dequantize(e.q, w, n, k)
    for j = 1, tt do
      local h = hot[(i + j) % #hot + 1]
      for nn = 0, n - 1 do
        local wv = string.unpack("<f", wf, 4 * (nn * k + h[1]) + 1)
        local got, want = bf16_bits(ys[tt], (j - 1) * n + nn), to_bf16(wv * h[3])
        if want == 0x8000 then want = 0 end -- a zero weight times a negative x: the sums start at +0
        if got ~= want then
          t.eq(got, want, ("%s t=%d n=%d: x[%d] = %g, w = %g"):format(route_label(e.q, e.r), j - 1, nn, h[1], h[3], wv))
        end
      end
    end
  end
end)

-- An infinity or NaN in a chunk of x: every output of that row of x is non-finite (NaN
-- makes NaN), the other row is unaffected.
-- fn(dev, i, e) for each dot route of dot_routes that takes two rows of x.
local function each_two_row_dot_route(fn)
  local dev = t.device("vulkan")
  for i, e in ipairs(dot_routes(dev)) do
    if e.r.max_t >= 2 then fn(dev, i, e) end
  end
end

t.test("dot route: NaN and infinity in x make their row's outputs non-finite", function()
  local ref = require "gpubench.ref"
  local n, k = 37, 200
  each_two_row_dot_route(function(dev, i, e)
    for _, bad in ipairs { { 5, 0x7FC0, "NaN" }, { 150, 0xFF80, "-inf" } } do
      local x = ref.random_bf16(2 * k, 700 + i)
      x = x:sub(1, 2 * bad[1]) .. string.pack("<I2", bad[2]) .. x:sub(2 * bad[1] + 3)
      local w, _, ys = run_route(dev, e.q, e.r, n, k, { 2 }, 800 + i, x)
      local what = ("%s x[0][%d] = %s"):format(route_label(e.q, e.r), bad[1], bad[3])
      for nn = 0, n - 1 do
        local b = bf16_bits(ys[2], nn)
        t.truthy(b & 0x7F80 == 0x7F80, ("%s: y[0][%d] = 0x%04x is finite"):format(what, nn, b))
        if bad[3] == "NaN" then t.truthy(b & 0x7F ~= 0, ("%s: y[0][%d] = 0x%04x is not NaN"):format(what, nn, b)) end
      end
      local rr, s = ref.linear(e.q, w, n, k, x:sub(2 * k + 1), 1, GSCALE)
      local c = ref.check_linear(ys[2]:sub(2 * n + 1), rr, s, 1, n)
      t.truthy(c.ok, what .. ": the other row of x")
    end
  end)
end)

-- Rows of x 2^80 apart: each row of x and each chunk has its own scale.
t.test("dot route: rows of x 2^80 apart, K 4304", function()
  local ref = require "gpubench.ref"
  local k = 4304
  each_two_row_dot_route(function(dev, i, e)
    local x = ref.random_bf16(2 * k, 600 + i)
    local parts = {}
    for j = 0, 2 * k - 1 do
      local b = string.unpack("<I2", x, 2 * j + 1)
      local shift = j < k and -40 or 40 -- exponent field moved by 40 (no random value leaves the range)
      if b & 0x7F80 ~= 0 then b = b + shift * 0x80 end
      parts[#parts + 1] = string.pack("<I2", b)
    end
    check_route(dev, e.q, e.r, 19, k, { 2 }, 610 + i, table.concat(parts))
  end)
end)

-- The largest T and the smallest K: grids at their limit, x rows of one 16-byte word.
t.test("T = 65535 and K = 8 on every route that takes T = 65535", function()
  local dev = t.device("vulkan")
  local any = false
  for i, q in ipairs { "q4", "nvfp4", "bf16" } do
    for _, r in ipairs(runnable(dev, q)) do
      if r.max_t == 65535 then
        any = true
        check_route(dev, q, r, 3, 8, { 65535 }, 77 + i)
      end
    end
  end
  t.truthy(any, "some route covers T = 65535")
end)

-- ---------------------------------------------------------------- the table itself

-- Without a device, so that CI compiles the coopmat route lavapipe cannot run: every
-- route of every qtype compiles for Vulkan 1.2 with no warning and takes the Linear
-- parameters.
t.test("every route's kernel compiles (coopmat included) and takes (W, x, y, N, K, T, gscale)", function()
  local gpu = t.gpu
  if not gpu then t.skip("no gpu module (stock interpreter)") end
  local n = 0
  for _, q in ipairs(routes.qtypes) do
    for _, r in ipairs(routes[q]) do
      local c = gpu.compile { backend = "vulkan", file = r.file, target = "vulkan1.2", defines = r.defines }
      t.eq(c.params, { "buffer", "buffer", "buffer", "u32", "u32", "u32", "f32" }, route_label(q, r))
      t.truthy(c.log == nil or c.log == "", route_label(q, r) .. " warnings: " .. tostring(c.log))
      n = n + 1
    end
  end
  t.truthy(n >= 6 * 3, "routes compiled: " .. n)
end)

local function fake(o)
  local d = { backend = "vulkan", name = o.name or "fake", subgroup_size = o.sg or 32,
              storage_buffer_16bit = o.s16 ~= false, max_shared_bytes = o.shared or 49152,
              cooperative_matrix = o.cm or false, cooperative_matrix_shapes = o.shapes or {},
              integer_dot_product = o.idot or false }
  d.info = d
  return d
end
local NV_SHAPES = { { m = 16, n = 16, k = 16, a = "f16", b = "f16", c = "f32", d = "f32" },
                    { m = 16, n = 8, k = 16, a = "f16", b = "f16", c = "f32", d = "f32" } }

t.test("every qtype has routes with the fields gpubench.linear reads", function()
  for _, q in ipairs(routes.qtypes) do
    t.truthy(#routes[q] > 0, q)
    for _, r in ipairs(routes[q]) do
      local label = route_label(q, r)
      t.truthy(r.name == "dot" or r.name == "gemv" or r.name == "coopmat" or r.name == "tiled", label)
      t.truthy(r.file:match("^kernels/vulkan/linear_") and r.entry == "main", label)
      t.eq(r.defines.LIN_FMT, routes.format_define[q], label)
      t.eq(r.block, { 256, 1, 1 }, label)
      t.truthy(math.type(r.min_t) == "integer" and r.min_t >= 1 and r.max_t <= 65535 and r.min_t <= r.max_t, label)
      local g = r.grid(14336, 5120, r.max_t)
      t.truthy(#g == 3 and g[1] >= 1 and g[2] >= 1 and g[3] == 1, label .. " grid")
    end
  end
end)

t.test("gpubench.linear picks dot or gemv for small T, coopmat on NV_cooperative_matrix, else tiled", function()
  local nv = fake { name = "nv", cm = "nv", shapes = NV_SHAPES }
  local plain = fake { name = "plain" }
  local no16 = fake { name = "no16", s16 = false }
  local idot = fake { name = "idot", idot = true }
  local idot32 = fake { name = "idot32", idot = true, s16 = false }
  for _, q in ipairs(routes.qtypes) do
    local spec = { qtype = q, n = 37, k = 200 }
    local has_dot = q ~= "nvfp4" and q ~= "bf16"
    for _, tt in ipairs { 1, 2, 3, 4, 5, 8, 9, 17, 1024, 65535 } do
      local a, b, c = linear.route(nv, spec, tt), linear.route(plain, spec, tt), linear.route(no16, spec, tt)
      t.eq(a.name, tt < 9 and "gemv" or "coopmat", ("%s T=%d nv"):format(q, tt))
      t.eq(b.name, tt < 9 and "gemv" or "tiled", ("%s T=%d plain"):format(q, tt))
      t.eq({ b.defines.LIN_Y16, c.defines.LIN_Y16, c.name }, { 1, 0, b.name }, ("%s T=%d y stores"):format(q, tt))
      if b.name == "gemv" then
        t.truthy(b.defines.LIN_TMAX >= tt, ("%s T=%d tmax"):format(q, tt))
        t.eq(b.defines.LIN_DOT, 0, ("%s T=%d gemv has LIN_DOT 0"):format(q, tt))
      end
      local d, d32 = linear.route(idot, spec, tt), linear.route(idot32, spec, tt)
      local want = (has_dot and (tt == 1 or (tt <= 3 and q ~= "q5"))) and "dot" or b.name
      t.eq({ d.name, d32.name, d.defines.LIN_Y16, d32.defines.LIN_Y16 }, { want, want, 1, 0 },
        ("%s T=%d with integer dot products"):format(q, tt))
      if want == "dot" then
        t.eq({ d.defines.LIN_DOT, d.file }, { 1, "kernels/vulkan/linear_gemv.comp" }, ("%s T=%d dot"):format(q, tt))
        t.truthy(d.defines.LIN_TMAX >= tt and d.defines.LIN_TMAX <= 4, ("%s T=%d dot tmax"):format(q, tt))
      end
    end
  end
end)

-- The grid by shape: the widest lane groups' most rows that leave three workgroups per SM,
-- widening the lane groups (up to 128 lanes, two chunk trips a lane) where no row count does.
t.test("the dot route's lane groups and rows follow N, K and the device's SM count", function()
  local linear = require "gpubench.linear"
  local dev = fake { name = "idot", idot = true }
  dev.sm_count = 132
  local function geo(q, n, k, tt, d)
    local r = linear.route(d or dev, { qtype = q, n = n, k = k or 5120 }, tt or 1)
    return r.defines.LIN_LANES .. "x" .. r.defines.LIN_NR
  end
  local function nr(q, n, tt, d) return linear.route(d or dev, { qtype = q, n = n, k = 5120 }, tt or 1).defines.LIN_NR end
  -- q5 (lanes of 32): 64 rows a workgroup at 8, 396 workgroups from 25281 rows; 32 at 4, from
  -- 12641 (12225 at 128 SMs); 16 at 2 from 6321. q4 at T = 1 (lanes of 16): 128 rows at 8,
  -- from 50561 rows.
  t.eq({ nr("q4", 131072), nr("q6", 248320, 2), nr("q5", 25281), nr("q5", 25280), nr("q5", 12641), nr("q5", 12640), nr("q5", 6321) },
    { 8, 8, 8, 4, 4, 2, 2 })
  t.eq({ nr("q4", 50561), nr("q4", 50560), nr("q4", 50560, 2) }, { 8, 4, 8 })
  local g1, g2 = linear.route(dev, { qtype = "q6", n = 248320, k = 5120 }, 1), linear.route(dev, { qtype = "q6", n = 248320, k = 5120 }, 2)
  t.eq({ g1.defines.LIN_LANES, g1.defines.LIN_UNROLL, g1.rows_per_group, g2.defines.LIN_LANES, g2.defines.LIN_UNROLL, g2.rows_per_group },
    { 16, 2, 128, 32, 1, 64 })
  t.eq({ g1.defines.LIN_Q6_SPLIT, g2.defines.LIN_Q6_SPLIT, linear.route(dev, { qtype = "q6", n = 1152, k = 1536 }, 1).defines.LIN_Q6_SPLIT },
    { 1, 0, 1 }, "q6 dots its high pairs apart at T = 1 only, whatever the grid")
  -- Wider lane groups where no row count leaves three workgroups per SM: q5 6144 x 5120 (160
  -- chunks: 64 lanes have 2.5 each, 128 would have 1.25), w8 5120 x 17408 and 2048 x 16384.
  t.eq({ geo("q5", 6320), geo("w8", 34816), geo("w8", 14336, 5120, 2), geo("w8", 12641), geo("w8", 12640),
         geo("w8", 5120, 17408), geo("w8", 2048, 16384), geo("w8", 2048, 16384, 3) },
    { "64x2", "32x4", "32x4", "32x4", "32x2", "64x2", "128x2", "128x2" })
  -- Too few chunks to widen (K = 1152: 36 chunks; lanes of 16 unrolled twice take 32 a trip):
  -- the most workgroups at the table's width.
  t.eq({ geo("q4", 3456, 1152), geo("q5", 1152, 1152), geo("w8", 2048, 2048) }, { "16x2", "32x2", "32x2" })
  local small = fake { name = "small", idot = true }
  small.sm_count = 16
  t.eq(nr("q5", 6144, 1, small), 8, "a device of 16 SMs")
  t.eq({ nr("q5", 12300, 1, fake { name = "nosms", idot = true }), nr("q5", 12300) }, { 4, 2 }, "no SM count: taken as 128")
  t.truthy(linear.route(dev, { qtype = "q4", n = 100, k = 64 }, 1) == linear.route(dev, { qtype = "q4", n = 90, k = 64 }, 1),
    "one route table per variant (the kernel cache's key)")
  t.truthy(linear.route(dev, { qtype = "w8", n = 5120, k = 17408 }, 1) == linear.route(dev, { qtype = "w8", n = 5000, k = 16384 }, 1),
    "the same for a widened variant")
  t.eq(linear.route(dev, { qtype = "q5", n = 131072, k = 5120 }, 2).name, "gemv", "q5 at T = 2 stays on gemv")
end)

t.test("the dot route: who has one, what it requires, what its maker refuses", function()
  local d
  for _, x in ipairs(routes.q4) do if x.name == "dot" and x.defines.LIN_Y16 == 1 then d = x; break end end
  t.truthy(d, "q4 has a dot route")
  t.eq({ d.requires(fake { name = "dev" }) }, { false, "dev has no integer dot product (shaderIntegerDotProduct)" })
  t.eq({ d.requires(fake { name = "dev", idot = true, s16 = false }) },
    { false, "dev has no 16-bit storage (storageBuffer16BitAccess)" })
  t.eq({ d.requires(fake { name = "dev", idot = true, sg = 2 }) },
    { false, "the gemv and dot routes need subgroups of at least 4 invocations; dev reports 2" })
  t.eq({ d.requires(fake { name = "dev", idot = true }) }, { true })
  for _, q in ipairs { "nvfp4", "bf16" } do
    for _, r in ipairs(routes[q]) do t.truthy(r.name ~= "dot", q .. " has no dot route") end
    t.errors(function() routes.dot(q, 1, 1, 32, 8, true, 1) end, ("linear_vulkan.dot: %s has no integer-dot route"):format(q), true)
  end
  t.errors(function() routes.dot("q4", 1, 5, 32, 8, true, 1) end, "linear_vulkan.dot: tmax 5 is above 4", true)
  local v = routes.variant("w8", d, { LIN_NR = 3 })
  t.eq({ v.name, v.defines.LIN_DOT, v.defines.LIN_NR, v.rows_per_group }, { "dot", 1, 3, (256 // d.defines.LIN_LANES) * 3 })
  -- shared memory: the reduction's 64 x NR x TMAX floats
  t.eq(v.shared_bytes, 64 * 3 * v.defines.LIN_TMAX * 4)
  t.eq({ v.requires(fake { name = "dev", idot = true, shared = 512 }) },
    { false, ("the route needs %d bytes of shared memory; dev allows 512"):format(v.shared_bytes) })
  t.eq(routes.variant("q4", v, { LIN_DOT = 0 }).name, "gemv")
  v = routes.variant("q6", d, { LIN_TMAX = 4 })
  t.eq({ v.name, v.min_t, v.max_t, v.defines.LIN_TMAX }, { "dot", 1, 4, 4 })
  t.errors(function() routes.variant("q4", v, { LIN_TMAX = 5 }) end, "linear_vulkan.variant: the dot route takes T up to 4, not 5", true)
  t.errors(function() routes.variant("q4", v, { LIN_DOT = 2 }) end, "linear_vulkan.variant: LIN_DOT=2 is not 0 or 1", true)
  t.eq(routes.variant("q6", v, { LIN_Q6_SPLIT = 1 }).defines.LIN_Q6_SPLIT, 1)
  t.errors(function() routes.variant("q4", v, { LIN_Q6_SPLIT = 1 }) end, "linear_vulkan.variant: LIN_Q6_SPLIT is for q6, not q4", true)
  for _, r in ipairs(routes.q6) do
    if r.name == "dot" then
      t.eq(r.defines.LIN_Q6_SPLIT, r.max_t == 1 and 1 or 0, "the table's q6 dot routes split at T = 1 only (it lost at T = 2)")
    end
  end
  t.errors(function() routes.variant("q4", v, { LIN_XS = 2 }) end,
    "linear_vulkan.variant: the dot route varies LIN_LANES, LIN_NR, LIN_UNROLL, LIN_TMAX, LIN_DOT and LIN_Q6_SPLIT, not LIN_XS", true)
end)

t.test("coopmat requirements name what is missing", function()
  local r
  for _, x in ipairs(routes.q4) do if x.name == "coopmat" then r = x end end
  t.eq({ r.requires(fake { name = "dev", cm = "nv", shapes = NV_SHAPES }) }, { true })
  t.eq({ r.requires(fake { name = "dev" }) }, { false, "dev offers no VK_NV_cooperative_matrix" })
  t.eq({ r.requires(fake { name = "dev", cm = "nv", shapes = { NV_SHAPES[2] } }) },
    { false, "dev lists no 16x16x16 f16 x f16 + f32 cooperative matrix" })
  t.eq({ r.requires(fake { name = "dev", cm = "nv", shapes = NV_SHAPES, sg = 64 }) },
    { false, "the coopmat route needs subgroups of 32; dev reports 64" })
  t.eq({ r.requires(fake { name = "dev", cm = "nv", shapes = NV_SHAPES, shared = 16384 }) },
    { false, ("the coopmat route needs %d bytes of shared memory; dev allows 16384"):format(r.shared_bytes) })
  local g
  for _, x in ipairs(routes.q4) do if x.name == "gemv" then g = x end end
  t.eq({ g.requires(fake { name = "dev", sg = 2 }) },
    { false, "the gemv and dot routes need subgroups of at least 4 invocations; dev reports 2" })
end)

t.test("the device reports its cooperative-matrix and storage capabilities", function()
  local dev = t.device("vulkan")
  t.truthy(type(dev.storage_buffer_16bit) == "boolean" and type(dev.storage_buffer_8bit) == "boolean")
  t.truthy(dev.cooperative_matrix == false or dev.cooperative_matrix == "nv", tostring(dev.cooperative_matrix))
  local shapes = dev.cooperative_matrix_shapes
  t.truthy(type(shapes) == "table")
  if dev.cooperative_matrix == "nv" then
    t.truthy(#shapes > 0, "an NV device lists its shapes")
    for _, s in ipairs(shapes) do
      t.truthy(s.m > 0 and s.n > 0 and s.k > 0 and #s.a > 0 and #s.d > 0)
    end
  else
    t.eq(#shapes, 0)
  end
end)

t.test("linear.check: outputs a kernel never writes are NaN (the poison) and fail, every one", function()
  local dev = t.device("vulkan")
  local spec = { qtype = "q4", n = 40, k = 128 }
  local w = linear.weights(dev, "q4", 40, 128, 5)
  local x, y = linear.activations(dev, 128, 40, 3, 6)
  spec.gscale = w.gscale
  y.buffer:fill("\0", 0, y.buffer.size) -- zeros first: a poison that is not applied would pass as zeros
  local ystr = linear.run_and_download(dev, {}, y.buffer, 2 * 3 * 40)
  t.eq(ystr, string.rep("\255\127", 3 * 40))
  local res = linear.compare(spec, w, x, ystr, 3)
  t.eq(res.failures, 3 * 40)
  local ok = linear.check(dev, spec, w, x, y, 3) -- the real kernel then passes on the same buffers
  t.eq(ok.failures, 0)
  for _, b in ipairs { w.buffer, x.buffer, y.buffer } do b:free() end
  linear.release(dev)
end)

t.run()
