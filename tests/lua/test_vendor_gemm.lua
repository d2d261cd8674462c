-- dev:vendor_gemm: cuBLASLt's bf16 GEMM y[T,N] = x[T,K]·W[N,K]^T as a
-- gpu.kernel. On Vulkan (lavapipe in CI): the refusal and the field checks.
-- On a CUDA device: the algorithm record, the argument checks with real
-- buffers, and the results against an FP64 reference for T = 1, 3, 17, 1024
-- and ragged N, launched alone, in a stream batch, in a graph batch next to
-- a compiled kernel, as a cold sample and through gpubench.bench.

local t = dofile("tests/lua/harness.lua")

-- ------------------------------------------------------------- bf16 helpers

local function bf16_bytes(v) -- v exactly representable in bf16
  return string.pack("<f", v):sub(3, 4)
end

local function bf16_value(s, i) -- element i (0-based) of a bf16 string
  return (string.unpack("<f", "\0\0" .. s:sub(2 * i + 1, 2 * i + 2)))
end

-- The bf16 nearest r (ties to even), for an r that is exact in fp32.
local function bf16_round(r)
  local u = string.unpack("<I4", string.pack("<f", r))
  local low, high = u & 0xffff, u >> 16
  if low > 0x8000 or (low == 0x8000 and high & 1 == 1) then high = high + 1 end
  return (string.unpack("<f", string.pack("<I4", (high & 0xffff) << 16)))
end

-- count values m/64, m an integer in [-127, 127] from a fixed LCG: every
-- product is a multiple of 2^-12 below 2^2, so fp32 sums of K <= 1024 of
-- them are exact, and y must be exactly the bf16 rounding of the FP64 sum.
local function grid_values(count, seed)
  local v, s = {}, seed
  for i = 1, count do
    s = (s * 1103515245 + 12345) % 2147483648
    v[i] = ((s >> 8) % 255 - 127) / 64
  end
  return v
end

local function pack(values)
  local parts = {}
  for i, v in ipairs(values) do parts[i] = bf16_bytes(v) end
  return table.concat(parts)
end

local function decode(s, count)
  local v = {}
  for i = 1, count do v[i] = bf16_value(s, i - 1) end
  return v
end

-- r[i*N + j + 1] = sum_k x[i,k] w[j,k] in FP64, and s = sqrt(sum (w x)^2).
local function reference(w, x, n, k, tt)
  local r, s = {}, {}
  for i = 0, tt - 1 do
    for j = 0, n - 1 do
      local acc, sq = 0.0, 0.0
      local xo, wo = i * k, j * k
      for c = 1, k do
        local p = x[xo + c] * w[wo + c]
        acc = acc + p
        sq = sq + p * p
      end
      r[i * n + j + 1] = acc
      s[i * n + j + 1] = math.sqrt(sq)
    end
  end
  return r, s
end

-- The first output that is not exactly bf16(r), or nil.
local function first_inexact(y, r)
  for i = 1, #r do
    local want = bf16_round(r[i])
    if y[i] ~= want then return ("y[%d] = %.9g, expected bf16(%.9g) = %.9g"):format(i - 1, y[i], r[i], want) end
  end
  return nil
end

-- The first output outside docs/LINEAR.md's bound |y - r| <= 2^-8 |r| + 2^-7 s.
local function first_outside(y, r, s)
  for i = 1, #r do
    if not (math.abs(y[i] - r[i]) <= 2 ^ -8 * math.abs(r[i]) + 2 ^ -7 * s[i]) then
      return ("y[%d] = %.9g, reference %.9g (s %.3g)"):format(i - 1, y[i], r[i], s[i])
    end
  end
  return nil
end

-- A problem on the device: W, x (grid values) and y, with its reference.
local function problem(dev, n, k, tt, seed)
  local w, x = grid_values(n * k, seed), grid_values(tt * k, seed + 1)
  local p = { n = n, k = k, t = tt }
  p.W = dev:buffer(2 * n * k); p.W:upload(pack(w))
  p.x = dev:buffer(2 * tt * k); p.x:upload(pack(x))
  p.y = dev:buffer(2 * tt * n)
  p.r, p.s = reference(w, x, n, k, tt)
  function p.poison() p.y:fill("\xff") end -- bf16 NaN everywhere: a skipped call shows
  function p.result() return decode(p.y:download(), tt * n) end
  function p.free() p.W:free(); p.x:free(); p.y:free() end
  return p
end

-- ------------------------------------------------------------------ Vulkan

t.test("vendor_gemm on a Vulkan device is refused, naming the backend", function()
  local dev = t.device("vulkan")
  t.errors(function() dev:vendor_gemm { n = 64, k = 128, t = 1 } end,
    "vendor GEMM (cuBLASLt) needs the CUDA backend; this device is vulkan", true)
end)

t.test("vendor_gemm checks its fields before the backend", function()
  local dev = t.device("vulkan")
  local g = function(spec) return function() dev:vendor_gemm(spec) end end
  t.errors(g(5), "dev:vendor_gemm: expected a table {n =, k =, t =}, got number", true)
  t.errors(g { n = 4, k = 8 }, "dev:vendor_gemm: field 't' must be an integer from 1 to 2147483647, got nothing", true)
  t.errors(g { n = 0, k = 8, t = 1 }, "field 'n' must be an integer from 1 to 2147483647, got 0", true)
  t.errors(g { n = 4, k = 8.5, t = 1 }, "field 'k' must be an integer from 1 to 2147483647, got 8.5", true)
  t.errors(g { n = 4, k = 8, t = 2 ^ 31 }, "field 't' must be an integer from 1 to 2147483647", true)
  t.errors(g { n = 4, k = 8, t = "3" }, "field 't' must be an integer from 1 to 2147483647, got string", true)
  t.errors(g { n = 4, k = 8, t = 1, m = 2 }, "dev:vendor_gemm: unknown field 'm' (the fields are n, k, t)", true)
  t.errors(g { 4, 8, 1 }, "dev:vendor_gemm: unknown field number (the fields are n, k, t)", true)
end)

t.test("a compiled kernel's vendor field is false", function()
  local dev = t.device("vulkan")
  local k <close> = dev:kernel { file = "kernels/vulkan/copy.comp", entry = "main" }
  t.eq(k.vendor, false)
end)

-- -------------------------------------------------------------------- CUDA

-- First, so that no earlier call has loaded cuBLASLt's kernels: CUDA loads a
-- kernel at its first launch and that load waits for the device, so a first
-- call queued behind the held stream would hang (blaslt.c's warm-up).
t.test("a fresh GEMM's first call can be a cold sample behind the held stream", function()
  local dev = t.device("cuda")
  local p = problem(dev, 3000, 72, 333, 41)
  local g <close> = dev:vendor_gemm { n = 3000, k = 72, t = 333 }
  local timer <close> = dev:timer()
  local batch <close> = dev:batch { count = 1, graph = false, { g, 1, 1, p.W, p.x, p.y } }
  p.poison()
  local ms, held = batch:cold_sample(timer)
  t.truthy(ms > 0 and held == true, ("cold sample %s ms, held %s"):format(ms, held))
  t.eq(first_inexact(p.result(), p.r), nil)
  p.free()
end)

t.test("the GEMM records its library, version, shape and algorithm", function()
  local dev = t.device("cuda")
  local g <close> = dev:vendor_gemm { n = 4096, k = 4096, t = 17 }
  t.eq(g.entry, "cublaslt_bf16_gemm")
  t.eq(g.params, { "buffer", "buffer", "buffer" })
  t.eq(g.backend, "cuda")
  t.eq(g.cache_hit, false)
  local v = g.vendor
  t.eq({ v.op, v.library, v.n, v.k, v.t }, { "bf16 gemm", "cuBLASLt", 4096, 4096, 17 })
  t.truthy(v.path:find("libcublasLt%.so"), v.path)
  t.eq(g.label, v.path)
  t.truthy(v.version:match("^%d+%.%d+%.%d+$"), v.version)
  local major, minor, patch = v.version:match("^(%d+)%.(%d+)%.(%d+)$")
  t.eq(v.version_number, tonumber(major) * 10000 + tonumber(minor) * 100 + tonumber(patch))
  t.truthy(tonumber(major) >= 12, v.version)
  t.truthy(v.algo_id >= 0, "algo_id " .. v.algo_id)
  t.eq(v.workspace_limit, 32 * 1024 * 1024)
  t.truthy(v.workspace_bytes >= 0 and v.workspace_bytes <= v.workspace_limit, "workspace " .. v.workspace_bytes)
  t.truthy(v.waves > 0, "waves " .. v.waves)
  t.truthy(tostring(g):find("^gpu%.kernel: cublaslt_bf16_gemm from .*libcublasLt"), tostring(g))
end)

t.test("launches with buffers too small, shared or mis-shaped are refused before the device", function()
  local dev = t.device("cuda")
  local g <close> = dev:vendor_gemm { n = 5, k = 8, t = 3 } -- W 80 bytes, x 48, y 30
  local W <close> = dev:buffer(80)
  local x <close> = dev:buffer(48)
  local y <close> = dev:buffer(30)
  local small <close> = dev:buffer(29)
  local big <close> = dev:buffer(4096)
  local function launch(...) local a = { ... }; return function() g:launch(1, 1, table.unpack(a)) end end
  t.errors(launch(small, x, y), "cublaslt_bf16_gemm argument 1 (W [N, K] bf16): the buffer has 29 bytes, "
    .. "needs 2*N*K = 80 (N = 5, K = 8, T = 3)", true)
  t.errors(launch(W, small, y), "argument 2 (x [T, K] bf16): the buffer has 29 bytes, needs 2*T*K = 48", true)
  t.errors(launch(W, x, small), "argument 3 (y [T, N] bf16): the buffer has 29 bytes, needs 2*T*N = 30", true)
  t.errors(launch(big, x, big), "argument 3 (y) is the same buffer as argument 1 (W)", true)
  t.errors(launch(W, x), "kernel cublaslt_bf16_gemm takes 3 arguments (see kernel.params), got 2", true)
  t.errors(launch(W, x, 7), "kernel cublaslt_bf16_gemm argument 3: expected buffer, got number", true)
  t.errors(function() g:launch(2, 1, W, x, y) end,
    "a vendor GEMM takes grid 1 and block 1 (the library picks its own geometry), got grid 2x1x1", true)
  t.errors(function() dev:record(3, g, 1, 1, W, small, y) end, "argument 2 (x [T, K] bf16)", true)
  t.errors(function() dev:batch { count = 2, graph = true, { g, 1, 1, W, x, small } } end,
    "argument 3 (y [T, N] bf16)", true)
  g:launch(1, 1, W, x, y) -- exact sizes pass
  g:launch(1, 1, big, x, y) -- a larger buffer too
  dev:sync()
end)

t.test("single launches match the reference exactly for T = 1, 3, 17, 1024 and ragged N", function()
  local dev = t.device("cuda")
  local shapes = { { 77, 136, 1 }, { 77, 136, 3 }, { 130, 64, 17 }, { 33, 200, 1024 }, { 1, 8, 1 }, { 77, 135, 3 } }
  for i, shape in ipairs(shapes) do -- the last: K odd, rows not 16-byte aligned
    local n, k, tt = shape[1], shape[2], shape[3]
    local p = problem(dev, n, k, tt, 100 * i)
    local g <close> = dev:vendor_gemm { n = n, k = k, t = tt }
    p.poison()
    g:launch(1, 1, p.W, p.x, p.y)
    local bad = first_inexact(p.result(), p.r)
    p.free()
    t.eq(bad, nil, ("N = %d, K = %d, T = %d (algo %d)"):format(n, k, tt, g.vendor.algo_id))
  end
end)

t.test("random normal bf16 data is within the Linear bound", function()
  local dev = t.device("cuda")
  local n, k, tt = 300, 1000, 17 -- K = 1000: not a multiple of 128
  local W <close> = dev:buffer(2 * n * k)
  local x <close> = dev:buffer(2 * tt * k)
  local y <close> = dev:buffer(2 * tt * n)
  W:fill_random { dtype = "bf16", dist = "normal", seed = 7 }
  x:fill_random { dtype = "bf16", dist = "normal", seed = 8 }
  local g <close> = dev:vendor_gemm { n = n, k = k, t = tt }
  g:launch(1, 1, W, x, y)
  local r, s = reference(decode(W:download(), n * k), decode(x:download(), tt * k), n, k, tt)
  t.eq(first_outside(decode(y:download(), tt * n), r, s), nil)
end)

t.test("random bf16 data passes gpubench.ref's Linear check", function()
  local dev = t.device("cuda")
  local ref = require "gpubench.ref"
  if not ref.linear then t.skip("gpubench.ref has no linear reference in this build") end
  for i, shape in ipairs { { 4099, 520, 1 }, { 1000, 256, 17 }, { 96, 5120, 1024 } } do
    local n, k, tt = shape[1], shape[2], shape[3]
    local w, xs = ref.random_bf16(n * k, 50 + i), ref.random_bf16(tt * k, 60 + i)
    local W <close> = dev:buffer(#w)
    local x <close> = dev:buffer(#xs)
    local y <close> = dev:buffer(2 * tt * n)
    W:upload(w); x:upload(xs)
    local g <close> = dev:vendor_gemm { n = n, k = k, t = tt }
    g:launch(1, 1, W, x, y)
    local r, s = ref.linear("bf16", w, n, k, xs, tt)
    local c = ref.check_linear(y:download(), r, s, tt, n)
    t.eq(c.failures, 0, ("N = %d, K = %d, T = %d: %s"):format(n, k, tt,
      c.first and ("y[%d, %d] = %g, ref %g, bound %g"):format(c.first.t, c.first.n, c.first.y, c.first.ref, c.first.bound) or ""))
  end
end)

t.test("stream and graph batches, rotating sets, and ordering next to a compiled kernel", function()
  local dev = t.device("cuda")
  local a, b = problem(dev, 70, 96, 17, 5), problem(dev, 70, 96, 17, 9)
  local g <close> = dev:vendor_gemm { n = 70, k = 96, t = 17 }
  -- rotating sets in one stream submission: both outputs written
  a.poison(); b.poison()
  dev:record(4, { g, 1, 1, a.W, a.x, a.y }, { g, 1, 1, b.W, b.x, b.y })
  t.eq(first_inexact(a.result(), a.r), nil, "record, set 1")
  t.eq(first_inexact(b.result(), b.r), nil, "record, set 2")
  -- a graph batch: a copy kernel brings b's x into a's x buffer, then the GEMM reads it
  local copy <close> = dev:kernel { file = "kernels/cuda/copy.cu" }
  local scratch <close> = dev:buffer(a.x.size)
  scratch:copy_from(a.x)
  for _, graph in ipairs { true, false } do
    a.x:copy_from(scratch)
    a.poison()
    local batch <close> = dev:batch { count = 2, graph = graph,
      { copy, 4, 128, b.x, a.x, a.x.size // 16 }, { g, 1, 1, a.W, a.x, a.y } }
    batch:submit()
    local want = reference(grid_values(70 * 96, 5), grid_values(17 * 96, 10), 70, 96, 17)
    t.eq(first_inexact(a.result(), want), nil, "graph = " .. tostring(graph))
  end
  a.free(); b.free()
end)

t.test("a graph batch replays many calls, and refuses to run once the GEMM is freed", function()
  local dev = t.device("cuda")
  local p = problem(dev, 129, 72, 3, 21)
  local g = dev:vendor_gemm { n = 129, k = 72, t = 3 }
  local batch <close> = dev:batch { count = 1000, graph = true, { g, 1, 1, p.W, p.x, p.y } }
  p.poison()
  batch:submit()
  t.eq(first_inexact(p.result(), p.r), nil)
  g:free()
  t.errors(function() batch:submit() end, "batch launch 1 uses kernel cublaslt_bf16_gemm, which was released", true)
  p.free()
end)

t.test("timers, cold samples and gpubench.bench time it like a kernel", function()
  local dev = t.device("cuda")
  local bench = require "gpubench.bench"
  local p = problem(dev, 256, 512, 17, 31)
  local g <close> = dev:vendor_gemm { n = 256, k = 512, t = 17 }
  local timer <close> = dev:timer()
  timer:start(); g:launch(1, 1, p.W, p.x, p.y); timer:stop()
  t.truthy(timer:ms() > 0, "timed launch")
  local batch <close> = dev:batch { count = 1, graph = true, { g, 1, 1, p.W, p.x, p.y } }
  p.poison()
  local ms, held = batch:cold_sample(timer)
  t.truthy(ms > 0 and held == true, ("cold sample %s ms, held %s"):format(ms, held))
  t.eq(first_inexact(p.result(), p.r), nil, "after the cold sample")
  local cell <close> = bench.cell(dev, { launches = { { g, 1, 1, p.W, p.x, p.y } } })
  local cold = cell:cold { rule = { samples = 5 } }
  t.eq(#cold.samples, 5)
  t.truthy(cold.ms > 0 and cold.held, "bench cold")
  local d = cell:time(50, { runners = 1, repeats = 1, settle_ms = 1 })
  t.truthy(d.t_n > 0 and d.t_2n > d.t_n, ("two-point %s, %s"):format(d.t_n, d.t_2n))
  p.poison()
  dev:record(1, g, 1, 1, p.W, p.x, p.y)
  t.eq(first_inexact(p.result(), p.r), nil, "after the bench")
  p.free()
end)

t.run()
