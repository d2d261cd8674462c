-- gpubench.linear_vulkan: the Vulkan Linear routes (kernels/vulkan/linear_*.comp), the
-- table gpubench.linear takes a route from (docs/LINEAR.md, "Routes";
-- docs/kernels/vulkan-linear.md says why each route is built as it is).
--
-- M[qtype] (q4 q5 q6 w8 nvfp4 bf16) is an ordered list of routes
--   { name = "dot" | "gemv" | "coopmat" | "tiled", min_t =, max_t =, file =, entry = "main",
--     defines =, block = {x, y, z}, grid = function(N, K, T) -> {gx, gy, gz},
--     requires = function(dev) -> true | false, why }
-- and the first route whose [min_t, max_t] holds T and whose requirement holds is the
-- one to run. Every route comes twice: storing y through 16-bit storage (LIN_Y16 = 1,
-- for devices with storageBuffer16BitAccess), then through 32-bit atomics (LIN_Y16 = 0,
-- any device). The defines are the shaders' only copy of their geometry: the shaders
-- refuse to compile without them.

local M = {}

M.qtypes = { "q4", "q5", "q6", "w8", "nvfp4", "bf16" }
local FMT = { q4 = 1, q5 = 2, q6 = 3, w8 = 4, nvfp4 = 5, bf16 = 6 }
M.format_define = FMT

local MAX_T = 65535
local WG = 256

local function ceil_div(a, b) return (a + b - 1) // b end

-- ---------------------------------------------------------------- requirements

-- The gemv reduction keeps one partial per subgroup, sized for subgroups of 4 or more.
local function any_device(dev)
  local sg = dev.subgroup_size or 0
  if sg < 4 then
    return false, ("the gemv and dot routes need subgroups of at least 4 invocations; %s reports %d")
      :format(tostring(dev.name), sg)
  end
  return true
end

-- A requirement on one boolean field of the device.
local function needs(field, what)
  return function(dev)
    if not dev[field] then return false, ("%s has no %s"):format(tostring(dev.name), what) end
    return true
  end
end
local storage16 = needs("storage_buffer_16bit", "16-bit storage (storageBuffer16BitAccess)")
local integer_dot = needs("integer_dot_product", "integer dot product (shaderIntegerDotProduct)")

-- `who` needs `bytes` of shared memory.
local function shared_fits(bytes, who)
  return function(dev)
    if (dev.max_shared_bytes or 0) < bytes then
      return false, ("%s needs %d bytes of shared memory; %s allows %d")
        :format(who, bytes, tostring(dev.name), dev.max_shared_bytes or 0)
    end
    return true
  end
end

-- The coopmat shaders use 16x16x16 fp16 x fp16 -> fp32 subgroup matrices, 8 subgroups
-- of 32, 16-bit y stores and `shared` bytes of shared memory.
local function coopmat_device(shared)
  return function(dev)
    if dev.cooperative_matrix ~= "nv" then
      return false, ("%s offers no VK_NV_cooperative_matrix"):format(tostring(dev.name))
    end
    local found = false
    for _, s in ipairs(dev.cooperative_matrix_shapes or {}) do
      if s.m == 16 and s.n == 16 and s.k == 16 and s.a == "f16" and s.b == "f16"
          and s.c == "f32" and s.d == "f32" then
        found = true
      end
    end
    if not found then
      return false, ("%s lists no 16x16x16 f16 x f16 + f32 cooperative matrix"):format(tostring(dev.name))
    end
    if dev.subgroup_size ~= 32 then
      return false, ("the coopmat route needs subgroups of 32; %s reports %d")
        :format(tostring(dev.name), dev.subgroup_size or 0)
    end
    local ok, why = shared_fits(shared, "the coopmat route")(dev)
    if not ok then return false, why end
    return storage16(dev)
  end
end

local function both(a, b)
  return function(dev)
    local ok, why = a(dev)
    if not ok then return false, why end
    return b(dev)
  end
end

-- ---------------------------------------------------------------- route makers

-- Shared memory the lane kernel declares (kernels/vulkan/linear_gemv.comp): the
-- reduction's partials, one per subgroup of at least 4 and per sum.
local function lane_shared(d)
  return (WG // 4) * d.LIN_NR * d.LIN_TMAX * 4
end

-- The memory-bound kernel (linear_gemv.comp) as route "gemv" (fp32 FMAs, LIN_DOT = 0) or
-- "dot" (integer dots, LIN_DOT = 1: q4, q5, q6 and w8, on devices with integer dot products).
-- g = {lanes, nr, unroll, dot = 0 | 1}
local function lane_route(qtype, min_t, tmax, g, y16)
  local rows = (WG // g.lanes) * g.nr
  local d = { LIN_FMT = FMT[qtype], LIN_Y16 = y16 and 1 or 0, LIN_LANES = g.lanes, LIN_NR = g.nr,
              LIN_TMAX = tmax, LIN_UNROLL = g.unroll or 1, LIN_DOT = g.dot or 0 }
  if d.LIN_DOT > 0 and qtype == "q6" then d.LIN_Q6_SPLIT = g.q6_split or 0 end
  local shared = lane_shared(d)
  local req = both(y16 and both(any_device, storage16) or any_device, shared_fits(shared, "the route"))
  return {
    name = d.LIN_DOT > 0 and "dot" or "gemv", min_t = min_t, max_t = tmax,
    file = "kernels/vulkan/linear_gemv.comp", entry = "main",
    defines = d,
    block = { WG, 1, 1 },
    rows_per_group = rows,
    shared_bytes = shared,
    grid = function(N, K, T) return { ceil_div(N, rows), 1, 1 } end,
    requires = d.LIN_DOT > 0 and both(integer_dot, req) or req,
  }
end

-- gemv: lane groups of `lanes` lanes, `nr` rows each, up to `tmax` rows of x, `unroll`
-- chunks loaded per trip.
function M.gemv(qtype, min_t, tmax, lanes, nr, y16, unroll)
  return lane_route(qtype, min_t, tmax, { lanes = lanes, nr = nr, unroll = unroll }, y16)
end

-- dot: the same work split with x quantized to int16 and integer dots on the codes
-- (kernels/vulkan/linear_dot.glsl); tmax at most 4. q6_split (q6 only): 1 dots the nibbles
-- and the high pairs apart (LIN_Q6_SPLIT; the table's at T = 1).
M.DOT_QTYPES = { q4 = true, q5 = true, q6 = true, w8 = true }
function M.dot(qtype, min_t, tmax, lanes, nr, y16, unroll, q6_split)
  if not M.DOT_QTYPES[qtype] then error(("linear_vulkan.dot: %s has no integer-dot route"):format(tostring(qtype)), 2) end
  if tmax > 4 then error(("linear_vulkan.dot: tmax %d is above 4"):format(tmax), 2) end
  if q6_split and q6_split ~= 0 and qtype ~= "q6" then
    error(("linear_vulkan.dot: q6_split is for q6, not %s"):format(qtype), 2)
  end
  return lane_route(qtype, min_t, tmax, { lanes = lanes, nr = nr, unroll = unroll, dot = 1, q6_split = q6_split }, y16)
end

-- tiled: 64 x 64 tiles of y, workgroup x over t.
function M.tiled(qtype, min_t, y16)
  return {
    name = "tiled", min_t = min_t, max_t = MAX_T,
    file = "kernels/vulkan/linear_tiled.comp", entry = "main",
    defines = { LIN_FMT = FMT[qtype], LIN_Y16 = y16 and 1 or 0 },
    block = { WG, 1, 1 },
    grid = function(N, K, T) return { ceil_div(T, 64), ceil_div(N, 64), 1 } end,
    requires = y16 and storage16 or function() return true end,
  }
end

-- coopmat: bn x bt tiles of y, wn x wt subgroups, `stages` shared buffers.
function M.coopmat(qtype, min_t, max_t, bn, bt, wn, wt, stages)
  local shared = stages * (bn + bt) * 5 * 16 -- rows of 4 + 1 uvec4 (kernels/vulkan/linear_coopmat.comp)
  return {
    name = "coopmat", min_t = min_t, max_t = max_t,
    file = "kernels/vulkan/linear_coopmat.comp", entry = "main",
    defines = { LIN_FMT = FMT[qtype], LIN_Y16 = 1, LIN_BN = bn, LIN_BT = bt, LIN_WN = wn,
                LIN_WT = wt, LIN_STAGES = stages },
    block = { WG, 1, 1 },
    shared_bytes = shared,
    grid = function(N, K, T) return { ceil_div(T, bt), ceil_div(N, bn), 1 } end,
    requires = coopmat_device(shared),
  }
end

-- ---------------------------------------------------------------- the table

-- The integer-dot route by T: for each format where the sweeps took it over gemv, its
-- lane groups (lanes, chunks loaded per trip), the sweeps' picks (docs/kernels/
-- vulkan-linear.md, "Route `dot`", has which formats and T, and why it stops at T = 3).
-- The dot routes come before the gemv variants and run where the device has integer
-- dot products.
-- q6 at T = 1 dots its nibbles and high pairs apart (LIN_Q6_SPLIT): faster there, slower at
-- T = 2, where x would be packed a second time per row of x (docs/kernels/vulkan-linear.md,
-- "Route `dot`", has the A/B).
local WIDE, NARROW = { lanes = 32, unroll = 1 }, { lanes = 16, unroll = 2 }
local NARROW_SPLIT = { lanes = 16, unroll = 2, q6_split = 1 }
local DOT = {
  { tmax = 1, geo = { q4 = NARROW, q5 = WIDE, q6 = NARROW_SPLIT, w8 = WIDE } },
  { tmax = 2, geo = { q4 = WIDE, q6 = WIDE, w8 = WIDE } },
  { tmax = 3, geo = { q4 = WIDE, q6 = WIDE, w8 = WIDE } },
}
-- The grid by shape (docs/kernels/vulkan-linear.md, "Thin grids"): the first of these with at
-- least DOT_MIN_GROUPS_PER_SM workgroups per SM, in this order: the lane groups' width, then
-- 2x and 4x it (up to DOT_MAX_LANES, and only while every lane has DOT_MIN_TRIPS loop trips
-- of chunks), and at each width the rows per lane group below, most first (each lane's x
-- quantization is shared by its rows). Where none has enough, the last one tried: the most
-- workgroups. w8 starts at 4 rows (its chunks are two 16-byte words a row).
local DOT_NR = { q4 = { 8, 4, 2 }, q5 = { 8, 4, 2 }, q6 = { 8, 4, 2 }, w8 = { 4, 2 } }
local DOT_MIN_GROUPS_PER_SM = 3
local DOT_MAX_LANES = 128
local DOT_MIN_TRIPS = 2
local DOT_UNKNOWN_SMS = 128 -- where the device does not report its SM count

-- The dot route for T up to tmax with lane groups g: its table entry has the most rows per
-- lane group, and for_shape(N, K, dev) gives the variant the shape rule picks (one table
-- per (lanes, rows) pair: the kernel cache's key).
local function dot_route(qtype, min_t, tmax, y16, g)
  local list = DOT_NR[qtype]
  local by, for_shape = {}, nil
  local function get(lanes, nr)
    local key = lanes * 16 + nr
    if not by[key] then
      by[key] = M.dot(qtype, min_t, tmax, lanes, nr, y16, g.unroll, g.q6_split)
      by[key].for_shape = for_shape
    end
    return by[key]
  end
  for_shape = function(N, K, dev)
    local sms = dev and dev.sm_count or 0
    if sms <= 0 then sms = DOT_UNKNOWN_SMS end
    local nch = ceil_div(K, 32)
    local lanes, pick = g.lanes, nil
    repeat
      for _, nr in ipairs(list) do
        pick = get(lanes, nr)
        if ceil_div(N, (WG // lanes) * nr) >= DOT_MIN_GROUPS_PER_SM * sms then return pick end
      end
      lanes = lanes * 2
    until lanes > DOT_MAX_LANES or nch < DOT_MIN_TRIPS * lanes * (g.unroll or 1)
    return pick
  end
  return get(g.lanes, list[1])
end

-- gemv variants by T: (tmax, lanes, nr, unroll); each takes T from the previous tmax + 1.
local GEMV = {
  { tmax = 1, lanes = 32, nr = 2, unroll = 1 },
  { tmax = 2, lanes = 32, nr = 2, unroll = 1 },
  { tmax = 4, lanes = 32, nr = 2, unroll = 1 },
  { tmax = 8, lanes = 32, nr = 1, unroll = 1 },
}
-- Where cooperative matrices take over (gemv below, where every device runs it and, at T
-- up to 8, the faster of the two) and their tiles by T: a t tile no wider than T needs
-- (each weight is then decoded once per call up to T = 64), 128 x 128 beyond. Where the
-- tiled route takes over on a device without them. The figures behind these are in
-- docs/kernels/vulkan-linear.md.
local COOPMAT_FROM = 9
local COOPMAT = {
  { max_t = 16, bn = 128, bt = 16, wn = 8, wt = 1, stages = 2 },
  { max_t = 64, bn = 128, bt = 64, wn = 8, wt = 1, stages = 2 },
  { max_t = MAX_T, bn = 128, bt = 128, wn = 2, wt = 4, stages = 2 },
}
local TILED_FROM = 9

-- The gemv variants covering T in [lo, hi].
local function gemv_range(list, qtype, lo, hi, y16)
  local from = 1
  for _, g in ipairs(GEMV) do
    local a, b = math.max(from, lo), math.min(g.tmax, hi)
    if a <= b then
      local r = M.gemv(qtype, a, g.tmax, g.lanes, g.nr, y16, g.unroll)
      r.max_t = b
      list[#list + 1] = r
    end
    from = g.tmax + 1
  end
end

local function routes(qtype)
  local list = {}
  for _, y16 in ipairs { true, false } do
    local from = 1
    for _, g in ipairs(DOT) do
      if g.geo[qtype] then list[#list + 1] = dot_route(qtype, from, g.tmax, y16, g.geo[qtype]) end
      from = g.tmax + 1
    end
  end
  for _, y16 in ipairs { true, false } do gemv_range(list, qtype, 1, COOPMAT_FROM - 1, y16) end
  local from = COOPMAT_FROM
  for _, c in ipairs(COOPMAT) do
    list[#list + 1] = M.coopmat(qtype, from, c.max_t, c.bn, c.bt, c.wn, c.wt, c.stages)
    from = c.max_t + 1
  end
  for _, y16 in ipairs { true, false } do gemv_range(list, qtype, COOPMAT_FROM, TILED_FROM - 1, y16) end
  for _, y16 in ipairs { true, false } do list[#list + 1] = M.tiled(qtype, TILED_FROM, y16) end
  return list
end

for _, q in ipairs(M.qtypes) do M[q] = routes(q) end

-- variant(qtype, route, changes) -> a copy of a gemv or dot route of qtype's list
-- with other LIN_LANES / LIN_NR / LIN_UNROLL / LIN_TMAX (T then up to it), or the other
-- kind (LIN_DOT = 0 | 1), for a geometry sweep (experiments/linear_variants.lua); the tiled
-- and coopmat routes are not swept.
local SWEPT = { LIN_LANES = true, LIN_NR = true, LIN_UNROLL = true, LIN_DOT = true, LIN_TMAX = true,
                LIN_Q6_SPLIT = true }
function M.variant(qtype, route, changes)
  if route.name ~= "gemv" and route.name ~= "dot" then
    error(("linear_vulkan.variant: only the gemv and dot routes are swept, not %s"):format(route.name), 2)
  end
  local d = {}
  for k in pairs(SWEPT) do d[k] = route.defines[k] end
  for k, v in pairs(changes) do
    if not SWEPT[k] then
      error(("linear_vulkan.variant: the %s route varies LIN_LANES, LIN_NR, LIN_UNROLL, LIN_TMAX, LIN_DOT and LIN_Q6_SPLIT, not %s")
        :format(route.name, tostring(k)), 2)
    end
    local flag = k == "LIN_DOT" or k == "LIN_Q6_SPLIT"
    if math.type(v) ~= "integer" or v < (flag and 0 or 1) or (flag and v > 1) then
      error(("linear_vulkan.variant: %s=%s is not %s"):format(k, tostring(v), flag and "0 or 1" or "a positive integer"), 2)
    end
    d[k] = v
  end
  if WG % d.LIN_LANES ~= 0 then error(("linear_vulkan.variant: LIN_LANES=%d does not divide %d"):format(d.LIN_LANES, WG), 2) end
  local y16 = route.defines.LIN_Y16 == 1
  local min_t = math.min(route.min_t, d.LIN_TMAX)
  if d.LIN_DOT == 0 then
    if d.LIN_TMAX > 16 then error(("linear_vulkan.variant: LIN_TMAX=%d is above 16"):format(d.LIN_TMAX), 2) end
    return M.gemv(qtype, min_t, d.LIN_TMAX, d.LIN_LANES, d.LIN_NR, y16, d.LIN_UNROLL)
  end
  if not M.DOT_QTYPES[qtype] then
    error(("linear_vulkan.variant: %s has no integer-dot route (LIN_DOT=1)"):format(qtype), 2)
  end
  if d.LIN_TMAX > 4 then
    error(("linear_vulkan.variant: the dot route takes T up to 4, not %d"):format(d.LIN_TMAX), 2)
  end
  if (d.LIN_Q6_SPLIT or 0) ~= 0 and qtype ~= "q6" then
    error(("linear_vulkan.variant: LIN_Q6_SPLIT is for q6, not %s"):format(qtype), 2)
  end
  return M.dot(qtype, min_t, d.LIN_TMAX, d.LIN_LANES, d.LIN_NR, y16, d.LIN_UNROLL, d.LIN_Q6_SPLIT)
end

return M
