-- gpubench.gemv: the GEMV kernels of every backend behind one Lua interface.
--
-- y[m] = W[m,k] . x[k], W in a GGML format (FORMATS.md), x and y f32; with
-- tokens T (1..8), y[T,m] = x[T,k] . W^T: T rows of x (x[t*k + i]) against
-- every weight, read once, into T rows of y (y[t*m + r]). Every GEMV kernel
-- takes (W buffer, x buffer, y buffer, u32 m, u32 k) in that order;
-- its launch geometry lives in gpubench.gemv_<backend> (file, entry, block,
-- rows_per_group, defines, optionally grid = function(m, k), k_multiple,
-- max_weight_bytes, the largest weight buffer the kernel can address, max_k,
-- the largest k it takes, and x_rounding, the x block a kernel that rounds x
-- to int16 quantizes per, for the oracle check's bound):
--
--   local gemv = require "gpubench.gemv"
--   gemv.spec("vulkan", "q4_k")                       --> the geometry table
--   local k, grid, block, ... = gemv.launch_args(dev, "q4_k", w, x, y, m, k)
--   k:launch(grid, block, ...)                        -- or dev:record(n, k, grid, block, ...)
--   gemv.launches(dev, "q4_k", w, x, y, m, k, 8, s)   --> { {k, grid, block, ...}, ... }: every
--                                                     -- launch of a call (two where s.prep)
--   local y, ystr = gemv.run(dev, "q4_k", weight_bytes, m, k, x)
--   gemv.spec("vulkan", "q4_k", 4)                    --> the 4-token kernel
--   gemv.spec_for(dev, "q8_0", m, k)                  --> what a launch on dev uses (Vulkan integer q8_0/q4_0/q4_k)
--   local y4 = gemv.run(dev, "q4_k", weight_bytes, m, k, x4, 4) -- x4: 4*k values
--
-- tokens is an optional trailing argument (nil: 1, today's kernels). Where
-- launch_args and run took a spec table in that place they still do; its
-- GEMV_TOKENS define then gives the tokens (a spec after tokens must agree).
--
-- Weight buffers are sized by gemv.buffer_bytes (the weight bytes rounded up to
-- 16 plus 16 bytes of slack): the Vulkan kernels of the 2-byte-aligned block
-- formats (q4_0, q8_0, q6_k) read whole 32-bit words, up to 4 bytes past the
-- last block.
--
-- Kernels are compiled once per device and cached in a table with weak device
-- keys; gemv.release(dev) frees a device's kernels and workspaces now (leak-checked tests).

local gemv = {}

-- Block geometry comes from the one format table (host/ref/formats.c, through
-- gpubench.ref); k must also be a multiple of 8 for the dense formats, whose
-- kernels read 16-byte words.
local ref = require "gpubench.ref"
local FORMATS = {}
for _, name in ipairs(ref.format_names) do
  local f = ref.formats[name]
  if f.layout == "blocks" then
    FORMATS[name] = { qk = f.qk, block_bytes = f.block_bytes, k_multiple = f.qk == 1 and 8 or f.qk }
  end
end

gemv.formats = { "f32", "f16", "bf16", "q4_0", "q8_0", "q4_k", "q5_k", "q6_k" }

-- A k every format accepts is a multiple of 256, the k-quants' super-block
-- (and a multiple of every other block size): the K check of the GEMV experiments.
gemv.K_MULTIPLE = 256
gemv.K_MULTIPLE_WHY = "the q4_k/q5_k/q6_k super-block"

-- Largest m or k: both travel to the kernels as u32.
local U32_MAX = 0xFFFFFFFF
local SLACK = 16

-- Token rows per launch: the kernels' GEMV_TOKENS define (1..8, compiled per T).
gemv.MAX_TOKENS = 8

-- level: error level of the caller's caller, as error() counts it from here.
local function format_of(fmt, fn, level)
  local f = type(fmt) == "string" and FORMATS[fmt] or nil
  if not f then
    error(("gemv.%s: unknown format %s (known: %s)"):format(fn, tostring(fmt),
      table.concat(gemv.formats, ", ")), level or 3)
  end
  return f
end

local function check_dim(v, name, fn, level)
  if math.type(v) ~= "integer" then
    if math.type(v) == "float" and v == math.floor(v) and v >= 1 and v <= U32_MAX then
      v = math.tointeger(v)
    else
      error(("gemv.%s: %s must be a positive integer, got %s"):format(fn, name, tostring(v)), level)
    end
  end
  if v < 1 or v > U32_MAX then
    error(("gemv.%s: %s must be in 1..%d, got %d"):format(fn, name, U32_MAX, v), level)
  end
  return v
end

-- tokens as an integer (nil: 1); level as in format_of.
local function check_tokens(v, fn, level)
  if v == nil then return 1 end
  local n = math.type(v) == "float" and v == math.floor(v) and math.tointeger(v) or v
  if math.type(n) ~= "integer" or n < 1 or n > gemv.MAX_TOKENS then
    error(("gemv.%s: tokens must be an integer in 1..%d, got %s"):format(fn, gemv.MAX_TOKENS, tostring(v)), level)
  end
  return n
end

-- The tokens a spec's kernel computes (its GEMV_TOKENS define; 1 without one).
local function spec_tokens(spec)
  return spec.defines and spec.defines.GEMV_TOKENS or 1
end

-- The trailing (tokens, spec) of launch_args and run: a table in the tokens
-- place is a spec (the older call form); tokens and a spec must agree.
-- deeper: levels between the public function and this call (0 when it calls directly).
local function tokens_and_spec(a, b, fn, deeper)
  deeper = deeper or 0
  if type(a) == "table" then return spec_tokens(a), a end
  local tokens = check_tokens(a, fn, 4 + deeper)
  if b ~= nil and spec_tokens(b) ~= tokens then
    error(("gemv.%s: tokens=%d, but the given spec's kernel computes GEMV_TOKENS=%s"):format(
      fn, tokens, tostring(spec_tokens(b))), 3 + deeper)
  end
  return tokens, b
end

-- The geometry of a format: {qk, block_bytes, k_multiple}.
function gemv.format(fmt)
  local f = format_of(fmt, "format")
  return { qk = f.qk, block_bytes = f.block_bytes, k_multiple = f.k_multiple }
end

-- Checks a shape for fmt (and, when given, a backend spec's own k_multiple and m_multiple);
-- returns m and k as integers. fn names the caller in the message; deeper as
-- in tokens_and_spec.
local function check_shape(fmt, m, k, spec, fn, deeper)
  deeper = deeper or 0
  local f = format_of(fmt, fn, 4 + deeper)
  m = check_dim(m, "m", fn, 4 + deeper)
  k = check_dim(k, "k", fn, 4 + deeper)
  local mult = f.k_multiple
  if spec and spec.k_multiple and spec.k_multiple > mult then mult = spec.k_multiple end
  if k % mult ~= 0 then
    error(("gemv.%s: %s needs k to be a multiple of %d, got k=%d"):format(fn, fmt, mult, k), 3 + deeper)
  end
  if spec and spec.m_multiple and m % spec.m_multiple ~= 0 then
    error(("gemv.%s: this %s kernel needs m to be a multiple of %d, got m=%d"):format(fn, fmt, spec.m_multiple, m),
      3 + deeper)
  end
  return m, k
end

-- Exact bytes of an m x k matrix in fmt.
function gemv.weight_bytes(fmt, m, k)
  m, k = check_shape(fmt, m, k, nil, "weight_bytes")
  local f = FORMATS[fmt]
  return m * (k // f.qk) * f.block_bytes
end

-- Bytes to allocate for the weight buffer: rounded up to 16, plus 16 of slack.
function gemv.buffer_bytes(fmt, m, k)
  m, k = check_shape(fmt, m, k, nil, "buffer_bytes")
  local f = FORMATS[fmt]
  local bytes = m * (k // f.qk) * f.block_bytes
  return (bytes + 15) // 16 * 16 + SLACK
end

-- Multi-token specs, one table per backend, format and defines (gemv.kernel
-- caches compiled kernels by spec table, so a spec asked for twice must be
-- the same table).
local token_specs = {}

local function token_spec(specs, backend, fmt, changes)
  local names = {}
  for name in pairs(changes) do names[#names + 1] = name end
  table.sort(names)
  local key = { backend, fmt }
  for _, name in ipairs(names) do key[#key + 1] = ("%s=%s"):format(name, tostring(changes[name])) end
  key = table.concat(key, ":")
  local s = token_specs[key]
  if not s then
    s = specs.variant(fmt, changes)
    token_specs[key] = s
  end
  return s
end

-- The launch geometry of fmt on a backend ("cuda", "vulkan"). With a shape
-- (m and k), the one the backend picks for it (its for_shape, where it has
-- one: a variant that measured faster at such shapes), else the default.
-- gemv.spec(backend, fmt, tokens) or gemv.spec(backend, fmt, m, k, tokens):
-- for tokens > 1, the backend's variant with GEMV_TOKENS = tokens on top of
-- the shape's changes (its shape_changes, where it has them) and the T-row
-- rule's (its token_changes: another kernel that measured faster at that T).
function gemv.spec(backend, fmt, m, k, tokens)
  if m ~= nil and k == nil and tokens == nil then m, tokens = nil, m end
  tokens = check_tokens(tokens, "spec", 3)
  if type(backend) ~= "string" then
    error(("gemv.spec: backend must be a string, got %s"):format(type(backend)), 2)
  end
  format_of(fmt, "spec", 3)
  local ok, specs = pcall(require, "gpubench.gemv_" .. backend)
  if not ok then
    error(("gemv.spec: no GEMV kernels for backend %s (%s)"):format(backend, tostring(specs)), 2)
  end
  local s = specs[fmt]
  if not s then
    error(("gemv.spec: backend %s has no %s GEMV kernel"):format(backend, fmt), 2)
  end
  local shaped = m ~= nil and k ~= nil
  if tokens > 1 then
    -- the token rule's changes also tell shape_changes which kernel the shape's rule must fit
    local tc = specs.token_changes and specs.token_changes(fmt, tokens) or {}
    local changes = shaped and specs.shape_changes and specs.shape_changes(fmt, m, k, tc) or {}
    for name, v in pairs(tc) do changes[name] = v end
    changes.GEMV_TOKENS = tokens
    return token_spec(specs, backend, fmt, changes)
  end
  if shaped and specs.for_shape then return specs.for_shape(fmt, m, k) end
  return s
end

-- The kernel a launch on dev uses for fmt at m x k with tokens when the caller
-- gives no spec: the backend's for_device (a kernel that needs a device
-- feature, such as Vulkan's integer-dot-product q8_0/q4_0; its rule lives in
-- gpubench.gemv_<backend>), else gemv.spec with the shape. dev may be a device
-- or a table of its info fields (backend, ...).
function gemv.spec_for(dev, fmt, m, k, tokens)
  if type(dev) ~= "table" and type(dev) ~= "userdata" then
    error(("gemv.spec_for: dev must be a device or a table of its fields, got %s"):format(type(dev)), 2)
  end
  return gemv.device_spec(dev, fmt, m, k, tokens) or gemv.spec(dev.backend, fmt, m, k, tokens)
end

-- device_spec(dev, fmt, m, k, tokens) -> the spec the backend's for_device
-- picks for this device and shape, or nil where its rule picks none (or the
-- backend has no such rule): the part of spec_for that depends on the device.
function gemv.device_spec(dev, fmt, m, k, tokens)
  local ok, specs = pcall(require, "gpubench.gemv_" .. tostring(dev.backend))
  if not (ok and specs.for_device) then return nil end
  return specs.for_device(dev, fmt, m, k, tokens)
end

-- shape_variant(backend, fmt, m, k [, tokens]) -> "NAME=v,..." (sorted) when
-- the shape runs another variant of the kernel than the default at tokens
-- (gemv.spec with the shape), naming the defines it changes; nil when it runs
-- the default (also where the T-row rule's kernel has no use for the shape's).
function gemv.shape_variant(backend, fmt, m, k, tokens)
  local default, used = gemv.spec(backend, fmt, tokens), gemv.spec(backend, fmt, m, k, tokens)
  if used == default then return nil end
  local diff = {}
  for name, v in pairs(used.defines) do
    if default.defines[name] ~= v then diff[#diff + 1] = ("%s=%s"):format(name, tostring(v)) end
  end
  for name in pairs(default.defines) do
    if used.defines[name] == nil then diff[#diff + 1] = name .. "=(unset)" end
  end
  table.sort(diff)
  return table.concat(diff, ",")
end

-- token_variant(backend, fmt, tokens) -> "NAME=v,..." (sorted) of the defines
-- the backend's T-row rule changes for fmt at tokens (its token_changes: another
-- kernel than the entry's); nil when none does.
function gemv.token_variant(backend, fmt, tokens)
  local ok, specs = pcall(require, "gpubench.gemv_" .. tostring(backend))
  if not ok or not specs.token_changes or (tokens or 1) <= 1 then return nil end
  local text = require("gpubench.options").format_defines(specs.token_changes(fmt, tokens))
  return text ~= "" and text or nil
end

-- Workgroups for m rows: the spec's grid function (Vulkan's integer kernels: at
-- most a cap of workgroups looping over row tiles), else ceil(m / rows_per_group).
function gemv.grid(spec, m, k)
  if type(spec.grid) == "function" then return spec.grid(m, k) end
  return { (m + spec.rows_per_group - 1) // spec.rows_per_group, 1, 1 }
end

-- Compiled kernels, once per device and spec (gpubench.kernels.cache: weak
-- device keys, so a device no longer referenced does not stay alive through
-- its kernels).
local cache = require("gpubench.kernels").cache()

-- The kernel of fmt on dev (compiled on first use). spec defaults to the
-- device's backend table; a caller may pass its own (a variant's defines).
function gemv.kernel(dev, fmt, spec)
  return cache.get(dev, spec or gemv.spec(dev.backend, fmt))
end

-- Workspaces of the specs with a first launch (`prep`: the CUDA int8
-- kernels' XPRE=1, x quantized once per call), one per device.
local workspaces = require("gpubench.workspace").registry()

-- Frees the kernels and workspaces kept for dev (all devices when nil).
function gemv.release(dev)
  cache.release(dev)
  workspaces.release(dev)
end

local function check_buffer(buf, need, what, fmt, m, k, tokens, fn)
  if buf.size < need then
    error(("gemv.%s: %s buffer is %d bytes, %s m=%d k=%d%s needs %d"):format(
      fn, what, buf.size, fmt, m, k, tokens > 1 and (" tokens=%d"):format(tokens) or "", need), 4)
  end
end

-- The checks of launch_args and launches (fn names the caller): the shape,
-- the kernel's limits and the buffer sizes (x: tokens * k floats, y:
-- tokens * m), so a bad call fails with the format and sizes in the message
-- rather than as an out-of-bounds read. Returns spec, m, k.
local function checked_call(dev, fmt, wbuf, xbuf, ybuf, m, k, tokens, spec, fn)
  format_of(fmt, fn, 4)
  tokens, spec = tokens_and_spec(tokens, spec, fn, 1)
  m, k = check_shape(fmt, m, k, spec or gemv.spec(dev.backend, fmt, nil, nil, tokens), fn, 1)
  if not spec then
    spec = gemv.spec_for(dev, fmt, m, k, tokens)
    check_shape(fmt, m, k, spec, fn, 1) -- the picked kernel's own multiples
  end
  if spec.requires then
    -- a kernel for some devices only (gemv_vulkan's GEMV_COOP=1): say what dev lacks
    local ok, why = spec.requires(dev)
    if not ok then error(("gemv.%s: %s: %s"):format(fn, fmt, why), 3) end
  end
  if spec.max_k and k > spec.max_k then
    -- the integer kernels hold x in shared memory sized for max_k values
    error(("gemv.%s: %s k=%d is more than the %d values of x the %s kernel (GEMV_XB=%s) holds"):format(
      fn, fmt, k, spec.max_k, spec.file or fmt, tostring(spec.defines and spec.defines.GEMV_XB)), 3)
  end
  local need = gemv.buffer_bytes(fmt, m, k)
  if spec.max_weight_bytes and need > spec.max_weight_bytes then
    error(("gemv.%s: %s m=%d k=%d needs a %d-byte weight buffer, more than the %d "
      .. "bytes the %s kernel can address"):format(fn, fmt, m, k, need, spec.max_weight_bytes,
      spec.file or fmt), 3)
  end
  check_buffer(wbuf, need, "weight", fmt, m, k, tokens, fn)
  check_buffer(xbuf, 4 * k * tokens, "x", fmt, m, k, tokens, fn)
  check_buffer(ybuf, 4 * m * tokens, "y", fmt, m, k, tokens, fn)
  return spec, m, k
end

-- The arguments of one launch: kernel, grid, block, W, x, y, u32 m, u32 k.
-- A kernel with a first launch (a spec with `prep`) is refused here:
-- gemv.launches gives both.
-- gemv.launch_args(dev, fmt, w, x, y, m, k [, tokens [, spec]]) or (..., m, k, spec).
function gemv.launch_args(dev, fmt, wbuf, xbuf, ybuf, m, k, tokens, spec)
  spec, m, k = checked_call(dev, fmt, wbuf, xbuf, ybuf, m, k, tokens, spec, "launch_args")
  if spec.prep then
    error(("gemv.launch_args: the %s kernel %s (%s) is two launches, x's quantization first: use gemv.launches")
      :format(fmt, spec.entry or "?", require("gpubench.options").format_defines(spec.defines)), 2)
  end
  local gpu = require "gpu"
  local kern = gemv.kernel(dev, fmt, spec)
  return kern, gemv.grid(spec, m, k), spec.block, wbuf, xbuf, ybuf, gpu.u32(m), gpu.u32(k)
end

-- launches(dev, fmt, w, x, y, m, k [, tokens [, spec]]) -> the launches of one
-- GEMV call, each {kernel, grid, block, args...} (what a bench cell times):
-- launch_args' one, or for a spec with `prep` two: the prep (x, a workspace,
-- u32 k) writing x's digits, then the kernel reading them in x's place
-- (W, workspace, y, u32 m, u32 k). The workspace is made here, before any timing.
function gemv.launches(dev, fmt, wbuf, xbuf, ybuf, m, k, tokens, spec)
  spec, m, k = checked_call(dev, fmt, wbuf, xbuf, ybuf, m, k, tokens, spec, "launches")
  local gpu = require "gpu"
  local kern, grid = gemv.kernel(dev, fmt, spec), gemv.grid(spec, m, k)
  if not spec.prep then return { { kern, grid, spec.block, wbuf, xbuf, ybuf, gpu.u32(m), gpu.u32(k) } } end
  local p = spec.prep
  local ws = workspaces.get(dev, p.bytes(k), "x_digits")
  return {
    { cache.get(dev, p.spec), p.grid(k), p.spec.block, xbuf, ws, gpu.u32(k) },
    { kern, grid, spec.block, wbuf, ws, ybuf, gpu.u32(m), gpu.u32(k) },
  }
end

-- y as a table of numbers from an f32 string, unpacked in slices so that a
-- large m does not exceed string.unpack's result count.
local function unpack_f32(s, n)
  local out = {}
  local slice = 256
  for i = 0, n - 1, slice do
    local c = math.min(slice, n - i)
    local vals = { string.unpack("<" .. string.rep("f", c), s, 4 * i + 1) }
    for j = 1, c do out[i + j] = vals[j] end
  end
  return out
end

-- x of tokens rows of k values as an f32 string; the messages of one token
-- are the single-vector ones.
local function x_string(x, k, tokens)
  local n = k * tokens
  local what = tokens == 1 and ("k=%d"):format(k) or ("tokens*k=%d*%d=%d"):format(tokens, k, n)
  if type(x) == "string" then
    if #x ~= 4 * n then
      error(("gemv.run: x is %d bytes, expected %s f32 values (%d bytes)"):format(#x, what, 4 * n), 3)
    end
    return x
  elseif type(x) == "table" then
    if #x ~= n then
      error(("gemv.run: x has %d entries, expected %s"):format(#x, what), 3)
    end
    local parts = {}
    for i = 1, n do
      local v = x[i]
      if type(v) ~= "number" then
        error(("gemv.run: x[%d] is a %s, expected a number"):format(i, type(v)), 3)
      end
      parts[i] = string.pack("<f", v)
    end
    return table.concat(parts)
  end
  error(("gemv.run: x must be an f32 string or a table of numbers, got %s"):format(type(x)), 3)
end

-- Uploads W and x, launches once, downloads y. Returns y as a table of
-- tokens * m numbers (token-major) and as the raw f32 string (what
-- ref.check_rows takes, one token's m values at a time).
-- gemv.run(dev, fmt, weights, m, k, x [, tokens [, spec]]) or (..., x, spec).
function gemv.run(dev, fmt, weights, m, k, x, tokens, spec)
  format_of(fmt, "run", 3)
  tokens, spec = tokens_and_spec(tokens, spec, "run")
  m, k = check_shape(fmt, m, k, spec or gemv.spec(dev.backend, fmt, nil, nil, tokens), "run")
  spec = spec or gemv.spec_for(dev, fmt, m, k, tokens)
  if type(weights) ~= "string" then
    error(("gemv.run: weights must be a string of %s blocks, got %s"):format(fmt, type(weights)), 2)
  end
  local need = gemv.weight_bytes(fmt, m, k)
  if #weights ~= need then
    error(("gemv.run: %s weights for m=%d k=%d are %d bytes, got %d"):format(
      fmt, m, k, need, #weights), 2)
  end
  local xs = x_string(x, k, tokens)
  local w <close> = dev:buffer(gemv.buffer_bytes(fmt, m, k))
  local xb <close> = dev:buffer(4 * k * tokens)
  local yb <close> = dev:buffer(4 * m * tokens)
  w:fill(0) -- the slack past the weights is read (and shifted out): keep it defined
  w:upload(weights)
  xb:upload(xs)
  for _, l in ipairs(gemv.launches(dev, fmt, w, xb, yb, m, k, spec)) do l[1]:launch(table.unpack(l, 2)) end
  local ys = yb:download(0, 4 * m * tokens)
  return unpack_f32(ys, m * tokens), ys
end

return gemv
