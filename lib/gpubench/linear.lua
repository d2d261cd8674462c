-- gpubench.linear: the one public Linear entry, y[T,N] = x[T,K] . W[N,K]^T.
--
-- The contract (buffers, kernel parameters, routes, accuracy) is
-- docs/LINEAR.md; the weight formats docs/FORMATS.md, "Planar group formats".
-- Given (qtype, policy, N, K, T) this module picks the kernel route in one
-- place, from the backend's route table (gpubench.linear_cuda,
-- gpubench.linear_vulkan); an experiment never names a route:
--
--   local linear = require "gpubench.linear"
--   local w = linear.weights(dev, "q4", n, k, seed)        -- {buffer, host, gscale, ...}
--   local x, y = linear.activations(dev, k, n, t_max, seed)
--   local launches = linear.launches(dev, {qtype = "q4", policy = "a16", n = n, k = k}, w, x, y, t)
--   linear.call(dev, spec, w, x, y, t)                      -- one call, now
--   local r = linear.check(dev, spec, w, x, y, t)           -- against the FP64 reference
--
-- qtypes: q4 (Q4G64_F16S), q5, q6, w8 (W8G32_F16S), nvfp4, bf16. Policies: a16
-- (bf16 activations, every qtype); a4 (FP4 activations, nvfp4 only, on
-- devices with FP4 tensor cores: sm_100 and later).

local linear = {}

-- Per qtype: the format's name, group size and the bytes of one group in
-- each plane, in plane order (docs/FORMATS.md, "Plane layout").
linear.QTYPES = {
  q4 = { format = "Q4G64_F16S", g = 64, planes = { 32, 2 } },
  q5 = { format = "Q5G64_F16S", g = 64, planes = { 32, 8, 2 } },
  q6 = { format = "Q6G64_F16S", g = 64, planes = { 32, 16, 2 } },
  w8 = { format = "W8G32_F16S", g = 32, planes = { 32, 2 } },
  nvfp4 = { format = "NVFP4", g = 16, planes = { 8, 1 } },
  bf16 = { format = "BF16" },
}
linear.qtypes = { "q4", "q5", "q6", "w8", "nvfp4", "bf16" }
linear.policies = { "a16", "a4" }
linear.K_PAD = 128
linear.MAX_T = 65535
-- The NVFP4 tensor scale the generated weights are stored with: a power of
-- two, so that e2m1 * e4m3 * g stays one exact product.
linear.GSCALE = 1 / 64

local U32_MAX = 0xFFFFFFFF

local function qtype_of(q, who, level)
  local d = type(q) == "string" and linear.QTYPES[q]
  if not d then
    error(("%s: unknown qtype %s (known: %s)"):format(who, tostring(q), table.concat(linear.qtypes, ", ")), level or 3)
  end
  return d
end

function linear.k_pad(k) return (k + linear.K_PAD - 1) // linear.K_PAD * linear.K_PAD end

-- Bytes of each plane's row, in plane order (BF16: one plane of 2K).
function linear.plane_row_bytes(qtype, k)
  local d = qtype_of(qtype, "linear.plane_row_bytes")
  if not d.g then return { 2 * k } end
  local kp, out = linear.k_pad(k), {}
  for i, b in ipairs(d.planes) do out[i] = kp // d.g * b end
  return out
end

function linear.weight_bytes(qtype, n, k)
  local sum = 0
  for _, b in ipairs(linear.plane_row_bytes(qtype, k)) do sum = sum + b end
  return n * sum
end

function linear.model_bytes(qtype, n, k, t)
  return linear.weight_bytes(qtype, n, k) + 2 * k * t + 2 * n * t
end

function linear.flops(n, k, t) return 2 * n * k * t end

-- Buffers are allocated in whole 256-byte units (docs/LINEAR.md, "Shapes and buffers").
local function round256(b) return (b + 255) // 256 * 256 end
linear.buffer_bytes = round256

-- shape_error(qtype, policy, n, k, t) -> nil, or the message naming the rule broken.
function linear.shape_error(qtype, policy, n, k, t)
  if type(qtype) ~= "string" or not linear.QTYPES[qtype] then
    return ("unknown qtype %s (known: %s)"):format(tostring(qtype), table.concat(linear.qtypes, ", "))
  end
  if policy ~= "a16" and policy ~= "a4" then
    return ("unknown policy %s (known: a16, a4)"):format(tostring(policy))
  end
  if policy == "a4" and qtype ~= "nvfp4" then
    return ("policy a4 (FP4 activations) is for nvfp4 weights only, not %s"):format(qtype)
  end
  for _, d in ipairs { { "N", n, 1 }, { "K", k, 8 }, { "T", t, 1 } } do
    if math.tointeger(d[2]) == nil then return ("%s must be an integer, got %s"):format(d[1], tostring(d[2])) end
    if d[2] < d[3] then return ("%s must be at least %d, got %d"):format(d[1], d[3], d[2]) end
  end
  if k % 8 ~= 0 then
    return ("K=%d must be a multiple of 8 (x rows are read as 16-byte words: docs/LINEAR.md)"):format(k)
  end
  if n > U32_MAX or k > U32_MAX then return ("N and K must fit in 32 bits, got N=%d K=%d"):format(n, k) end
  if t > linear.MAX_T then return ("T=%d is more than %d"):format(t, linear.MAX_T) end
  return nil
end

local function check_shape(spec, t, who)
  local msg = linear.shape_error(spec.qtype, spec.policy or "a16", spec.n, spec.k, t)
  if msg then error(who .. ": " .. msg, 3) end
end

-- policy_error(dev, qtype, policy) -> nil, or why this device cannot run the policy.
function linear.policy_error(dev, qtype, policy)
  if policy ~= "a4" then return nil end
  local arch = dev.info and dev.info.arch or ""
  local major = tonumber(arch:match("^sm_(%d+)%d$") or "")
  if dev.backend ~= "cuda" or not major or major < 10 then
    return ("policy a4 needs FP4 tensor cores (sm_100 or later); %s is %s (%s)")
      :format(dev.name, arch ~= "" and arch or "not an NVIDIA architecture", dev.backend)
  end
  -- FP4 tensor-core kernels (tcgen05) are not written yet: say so rather than
  -- fall back to a16 under an a4 label.
  return ("policy a4: no FP4 route is implemented for %s (%s) yet"):format(dev.name, arch)
end

local route_tables = {}
function linear.route_table(backend)
  if not route_tables[backend] then
    local ok, t = pcall(require, "gpubench.linear_" .. backend)
    if not ok then error(("linear: no route table for backend %s: %s"):format(tostring(backend), t), 2) end
    route_tables[backend] = t
  end
  return route_tables[backend]
end

-- route(dev, spec, t) -> the route that computes (spec, t) on dev: the first
-- of the backend's routes for the qtype whose T range holds t and whose
-- requirement the device meets. The only place a route is chosen.
function linear.route(dev, spec, t)
  check_shape(spec, t, "linear.route")
  local msg = linear.policy_error(dev, spec.qtype, spec.policy or "a16")
  if msg then error("linear.route: " .. msg, 2) end
  local list = linear.route_table(dev.backend)[spec.qtype]
  local why = {}
  for _, r in ipairs(list or {}) do
    if t >= (r.min_t or 1) and t <= (r.max_t or linear.MAX_T) then
      local ok, reason = true, nil
      if r.requires then ok, reason = r.requires(dev) end
      if ok then
        -- a route may pick its own variant for the shape and device (the CUDA dot route's
        -- slices of K, the Vulkan dot route's rows per lane group, the CUDA wgmma route's tile by grid)
        if r.for_shape then return r.for_shape(spec.n, spec.k, dev, t) end
        return r
      end
      why[#why + 1] = ("%s: %s"):format(r.name, tostring(reason or "not available"))
    end
  end
  error(("linear.route: no %s route for %s T=%d on %s%s"):format(dev.backend, spec.qtype, t, dev.name,
    #why > 0 and (" (" .. table.concat(why, "; ") .. ")") or ""), 2)
end

local cache = require("gpubench.kernels").cache()
-- kernel(dev, route) -> the route's kernel, compiled once per device.
linear.kernel = cache.get

-- workspace(dev, bytes [, name]) -> a device buffer of at least `bytes`,
-- one per device and name ("part" when left out), grown when a call needs
-- more (gpubench.workspace): the fp32 sums of the slices of K of a route that
-- splits K ("part"), the fp16 copy of x and the exponents of an LN_HALF route
-- ("half_x", "half_ex").
local workspaces = require("gpubench.workspace").registry()
function linear.workspace(dev, bytes, name)
  return workspaces.get(dev, bytes, name or "part")
end

-- release(dev): frees the kernels compiled for dev and its workspaces.
function linear.release(dev)
  cache.release(dev)
  workspaces.release(dev)
end

-- The second launch of a call whose route splits K (CUDA): the slices' sums into y.
local REDUCE = { file = "kernels/cuda/linear_reduce.cu", entry = "linear_reduce", defines = {} }
local REDUCE_BLOCK, REDUCE_MAX_BLOCKS = 256, 1056
local PREP_BLOCK, PREP_W_ROWS = 256, 8 -- linear_half_prep.cu's block, and rows of W a block (a warp each)

local function check_buffer(buf, need, what, who)
  if type(buf) ~= "userdata" and type(buf) ~= "table" then
    error(("%s: the %s buffer is missing"):format(who, what), 4)
  end
  if buf.size < need then
    error(("%s: the %s buffer is %d bytes, the call needs %d"):format(who, what, buf.size, need), 4)
  end
end

local function buffers_of(w, x, y)
  return (type(w) == "table" and w.buffer or w), (type(x) == "table" and x.buffer or x),
    (type(y) == "table" and y.buffer or y)
end

-- prep_at(route, k) -> the prepass spec a call of route at K launches (nil
-- without one): its twin for long rows of x (`long`) from `long_from_k`.
function linear.prep_at(route, k)
  local p = route.prep
  if p and p.long and k >= p.long_from_k then return p.long end
  return p
end

-- launches(dev, spec, w, x, y, t [, route]) -> the launches of one call, each
-- {kernel, grid, block, args...}: what a bench cell times.
-- spec = {qtype, policy = "a16", n, k, gscale}; w, x, y: buffers (or the
-- tables linear.weights / linear.activations return). route: a route of
-- the backend's table's shape, for a geometry sweep (experiments/linear_variants.lua)
-- only; an experiment of the contract leaves it out and gets linear.route's.
function linear.launches(dev, spec, w, x, y, t, route)
  check_shape(spec, t, "linear.launches")
  local gpu = require "gpu"
  local r = route or linear.route(dev, spec, t)
  local wb, xb, yb = buffers_of(w, x, y)
  check_buffer(wb, linear.weight_bytes(spec.qtype, spec.n, spec.k), "weight", "linear.launches")
  check_buffer(xb, 2 * t * spec.k, "x", "linear.launches")
  check_buffer(yb, 2 * t * spec.n, "y", "linear.launches")
  local gscale = spec.gscale or (type(w) == "table" and w.gscale) or 1.0
  local ls = {}
  local xk, ex = xb, yb
  if r.prep then
    -- LN_HALF: a first launch writes x in fp16 and the exponents of the rows of
    -- x and W; with LN_XTILE as the kernel's tiles of `xtile` rows of x and 64
    -- of K, the rows and K rounded up to them
    local rows = r.xtile and (t + r.xtile - 1) // r.xtile * r.xtile or t
    local cols = r.xtile and (spec.k + 63) // 64 * 64 or spec.k
    xk = linear.workspace(dev, 2 * rows * cols, "half_x")
    ex = linear.workspace(dev, 4 * (t + spec.n), "half_ex")
    ls[1] = { linear.kernel(dev, linear.prep_at(r, spec.k)), { rows + (spec.n + PREP_W_ROWS - 1) // PREP_W_ROWS, 1, 1 }, { PREP_BLOCK, 1, 1 },
              xb, xk, ex, wb, gpu.u32(spec.n), gpu.u32(spec.k), gpu.u32(t) }
  end
  -- a route with a tail (CUDA's wgmma, gpubench.linear_cuda's with_tail): its
  -- own kernel (`head`) over the first tile rows, then the tail's over the rest
  local grid, tail_grid = r.grid(spec.n, spec.k, t), nil
  if r.tail then grid, tail_grid = r.grids(spec.n, spec.k, t, dev.sm_count) end
  local l = { linear.kernel(dev, r.head or r), grid, r.block, wb, xk, yb,
              gpu.u32(spec.n), gpu.u32(spec.k), gpu.u32(t), gpu.f32(gscale) }
  ls[#ls + 1] = l
  if not r.slices then return ls, r end
  -- a kernel that can split K takes a buffer for the slices' sums (y itself,
  -- never written through it, when it does not split or its slices add
  -- their sums in a cluster's shared memory), then the exponents (y, never
  -- read, without LN_HALF)
  local global_sums = r.slices > 1 and not r.cluster
  local part = global_sums and linear.workspace(dev, 4 * r.slices * t * spec.n) or yb
  l[#l + 1] = part
  l[#l + 1] = ex
  if tail_grid then
    ls[#ls + 1] = { linear.kernel(dev, r.tail), tail_grid, r.tail.block, table.unpack(l, 4) }
  end
  if not global_sums then return ls, r end
  local blocks = math.min((t * spec.n + REDUCE_BLOCK - 1) // REDUCE_BLOCK, REDUCE_MAX_BLOCKS)
  ls[#ls + 1] = { linear.kernel(dev, REDUCE), { blocks, 1, 1 }, { REDUCE_BLOCK, 1, 1 }, part, yb,
                  gpu.u32(spec.n), gpu.u32(t), gpu.u32(r.slices) }
  return ls, r
end

-- call(dev, spec, w, x, y, t): one Linear call, queued now.
function linear.call(dev, spec, w, x, y, t)
  local ls = linear.launches(dev, spec, w, x, y, t)
  for _, l in ipairs(ls) do l[1]:launch(table.unpack(l, 2)) end
end

-- weights(dev, qtype, n, k, seed) -> {buffer, host, gscale, bytes}: random
-- valid weights (gpubench.ref), kept on the host for the reference check.
function linear.weights(dev, qtype, n, k, seed)
  local d = qtype_of(qtype, "linear.weights")
  local ref = require "gpubench.ref"
  local host = ref.planar_random(d.format, n, k, seed)
  local bytes = linear.weight_bytes(qtype, n, k)
  if #host ~= bytes then
    error(("linear.weights: the reference made %d bytes of %s, the layout says %d"):format(#host, qtype, bytes), 2)
  end
  local buf = dev:buffer(round256(bytes))
  buf:upload(host)
  return { buffer = buf, host = host, gscale = qtype == "nvfp4" and linear.GSCALE or 1.0, bytes = bytes,
           qtype = qtype, n = n, k = k }
end

-- activations(dev, k, n, t_max, seed) -> x, y: x {buffer, host} holds t_max
-- rows of K random bf16 values; y a buffer for t_max rows of N.
function linear.activations(dev, k, n, t_max, seed)
  local ref = require "gpubench.ref"
  local host = ref.random_bf16(t_max * k, seed)
  local xb = dev:buffer(round256(2 * t_max * k))
  xb:upload(host)
  local yb = dev:buffer(round256(2 * t_max * n))
  return { buffer = xb, host = host, t_max = t_max }, { buffer = yb, t_max = t_max }
end

-- The rows `rows` (ascending, 0-based) of planar weights, as a weight
-- matrix of #rows rows: each plane cut row by row.
function linear.slice_rows(qtype, host, n, k, rows)
  local out, off = {}, 0
  for _, rb in ipairs(linear.plane_row_bytes(qtype, k)) do
    for _, r in ipairs(rows) do
      out[#out + 1] = host:sub(off + r * rb + 1, off + (r + 1) * rb)
    end
    off = off + n * rb
  end
  return table.concat(out)
end

-- Rows a check covers: all of them up to max_rows, else an even spread that
-- includes the first and the last (where ragged tiles live).
local function check_rows(n, max_rows)
  if n <= max_rows then return nil end
  local rows, seen = {}, {}
  for i = 0, max_rows - 1 do
    local r = math.floor(i * (n - 1) / (max_rows - 1) + 0.5)
    if not seen[r] then seen[r] = true; rows[#rows + 1] = r end
  end
  return rows
end

-- compare(spec, w, x, ystr, t [, max_rows [, weights]]) -> {failures, worst, first, rows}
-- Compares y (a bf16 string [T, N], as downloaded) with the FP64 reference
-- (docs/LINEAR.md, "Accuracy") over every row, or over max_rows rows spread
-- across N when N is larger (the reference costs N*K*T multiply-adds on the
-- host). w and x: the tables linear.weights / linear.activations return.
-- weights: "bf16" where the computation rounded the weights to bf16 (the
-- vendor's), for the wider bound; "exact" (the default) otherwise.
function linear.compare(spec, w, x, ystr, t, max_rows, weights)
  local ref = require "gpubench.ref"
  local rows = check_rows(spec.n, max_rows or 256)
  local whost, n = w.host, spec.n
  local xhost = x.host:sub(1, 2 * t * spec.k)
  if rows then
    whost, n = linear.slice_rows(spec.qtype, w.host, spec.n, spec.k, rows), #rows
    local cols = {}
    for tt = 0, t - 1 do
      for _, r in ipairs(rows) do
        local at = 2 * (tt * spec.n + r)
        cols[#cols + 1] = ystr:sub(at + 1, at + 2)
      end
    end
    ystr = table.concat(cols)
  end
  local r, s = ref.linear(linear.QTYPES[spec.qtype].format, whost, n, spec.k, xhost, t, w.gscale)
  local res = ref.check_linear(ystr, r, s, t, n, weights)
  res.rows = rows and #rows or spec.n
  if rows and res.first then res.first.n = rows[res.first.n + 1] or res.first.n end
  return res
end

-- run_and_download(dev, launches, ybuf, bytes) -> y string: the output
-- poisoned with NaN (0x7FFF, so an output never written fails any check;
-- filled on the device: y can be hundreds of MB), the launches run once, y
-- read back.
function linear.run_and_download(dev, launches, ybuf, bytes)
  ybuf:fill("\255\127", 0, bytes)
  for _, l in ipairs(launches) do l[1]:launch(table.unpack(l, 2)) end
  dev:sync()
  return ybuf:download(0, bytes)
end

-- check(dev, spec, w, x, y, t [, {max_rows = 256, route}]) -> {failures, worst, first, rows, route}
-- One call through the public entry, compared with the FP64 reference.
function linear.check(dev, spec, w, x, y, t, o)
  local launches, route = linear.launches(dev, spec, w, x, y, t, (o or {}).route)
  local yb = select(3, buffers_of(w, x, y))
  local ystr = linear.run_and_download(dev, launches, yb, 2 * t * spec.n)
  local res = linear.compare(spec, w, x, ystr, t, (o or {}).max_rows)
  res.route = route.name
  return res
end

return linear
