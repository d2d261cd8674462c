-- tools/linear_vulkan_routes.lua [PLAN.lua]: cold timings of Vulkan Linear route variants
-- (lib/gpubench/linear_vulkan.lua's makers, other geometry than the table's), for
-- tuning the table; gpubench.linear and experiments/linear_suite.lua never force a
-- route, this tool does. Each variant is first checked against the FP64 reference on
-- 24 rows spread over N (all T rows), then timed as the suite times a call: per sample
-- a clean L2 flush, timestamps around one launch (bench Cell:cold), SAMPLES samples
-- after 2 warm-up calls.
--
-- PLAN.lua returns function(v) and calls v.run(qtype, route, T, label) for each
-- variant; v.routes is gpubench.linear_vulkan, v.calibrate() times the GEMV kernel
-- kernels/vulkan/gemv_bf16.comp (f32 x) on the same bf16 weights, which says what the
-- cold timing of a well-understood memory-bound kernel is in the same call. Without a
-- plan the default below (the H200 table of docs/kernels/vulkan-linear.md) runs.
--
--   N=14336 K=5120 SAMPLES=10 gpubench tools/linear_vulkan_routes.lua [plan.lua]
local gpu = require "gpu"
local routes = require "gpubench.linear_vulkan"
local linear = require "gpubench.linear"
local bench = require "gpubench.bench"
local ref = require "gpubench.ref"
local ceilings = require "gpubench.ceilings"

local N, K = tonumber(os.getenv("N") or 14336), tonumber(os.getenv("K") or 5120)
local SAMPLES = tonumber(os.getenv("SAMPLES") or 10)
local T_ALLOC = tonumber(os.getenv("T_MAX") or 1024) -- x and y are allocated for this many rows

local dev = gpu.open { backend = "vulkan" }
local shapes = {}
for _, s in ipairs(dev.cooperative_matrix_shapes) do
  shapes[#shapes + 1] = ("%dx%dx%d %s,%s->%s"):format(s.m, s.n, s.k, s.a, s.b, s.d)
end
print(("%s: subgroup %d, shared %d B, 16-bit storage %s, cooperative matrix %s (%s)"):format(dev.name,
  dev.subgroup_size, dev.max_shared_bytes, tostring(dev.storage_buffer_16bit), tostring(dev.cooperative_matrix),
  table.concat(shapes, "; ")))
local ceil = ceilings.get(dev)
print(("read ceiling %.0f GB/s; N=%d K=%d, %d samples per variant"):format(ceil.read_gbs, N, K, SAMPLES))

-- One weight set at a time (a bf16 14336 x 5120 matrix is 147 MB).
local current
local function data(q)
  if current and current.q == q then return current end
  if current then for _, b in ipairs(current.bufs) do b:free() end end
  collectgarbage()
  local w = linear.weights(dev, q, N, K, 11)
  local x, y = linear.activations(dev, K, N, T_ALLOC, 12)
  current = { q = q, w = w, x = x, y = y, bufs = { w.buffer, x.buffer, y.buffer } }
  return current
end

local rows = {}
for i = 0, 23 do rows[#rows + 1] = math.floor(i * (N - 1) / 23 + 0.5) end

local function check(q, d, T)
  local ys = d.y.buffer:download(0, 2 * T * N)
  local picked = {}
  for t = 0, T - 1 do
    for _, r in ipairs(rows) do picked[#picked + 1] = ys:sub(2 * (t * N + r) + 1, 2 * (t * N + r) + 2) end
  end
  local r, s = ref.linear(q, linear.slice_rows(q, d.w.host, N, K, rows), #rows, K, d.x.host:sub(1, 2 * T * K), T,
    d.w.gscale)
  return ref.check_linear(table.concat(picked), r, s, T, #rows)
end

local v = { routes = routes }

function v.run(q, r, T, label)
  local can, why = r.requires(dev)
  if T > T_ALLOC then can, why = false, ("T is beyond T_MAX=%d"):format(T_ALLOC) end
  if not can then
    print(("%-6s %-34s T=%-5d skipped: %s"):format(q, label, T, why))
    return
  end
  local d = data(q)
  local ok, kern = pcall(dev.kernel, dev, { file = r.file, entry = r.entry, defines = r.defines })
  if not ok then
    print(("%-6s %-34s T=%-5d load failed: %s"):format(q, label, T, tostring(kern)))
    return
  end
  local launch = { kern, r.grid(N, K, T), r.block, d.w.buffer, d.x.buffer, d.y.buffer, gpu.u32(N), gpu.u32(K),
                   gpu.u32(T), gpu.f32(d.w.gscale) }
  d.y.buffer:fill("\255")
  kern:launch(table.unpack(launch, 2))
  dev:sync()
  local c = check(q, d, T)
  local us, fixed = 0 / 0, 0 / 0
  do
    local cell <close> = bench.cell(dev, { launches = { launch } })
    local res = cell:cold { rule = { samples = SAMPLES }, warmup = 2 }
    us, fixed = res.ms * 1000, res.fixed_ms * 1000
  end
  kern:free()
  local mb = linear.model_bytes(q, N, K, T)
  print(("%-6s %-34s T=%-5d %9.2f us (fixed %.1f) %6.0f GB/s %5.1f%% of read %7.1f TFLOP/s  %s"):format(q, label, T,
    us, fixed, mb / us / 1e3, 100 * mb / us / 1e3 / ceil.read_gbs, 2 * N * K * T / us / 1e6,
    c.ok and "ok" or ("WRONG: " .. c.failures .. " outputs")))
  io.stdout:flush()
end

function v.calibrate()
  local d = data("bf16")
  local kern <close> = dev:kernel { file = "kernels/vulkan/gemv_bf16.comp", defines = { GEMV_T = 32, GEMV_NR = 1, GEMV_TOKENS = 1 } }
  local xb <close> = dev:buffer(4 * K)
  local yb <close> = dev:buffer(4 * N)
  xb:fill("\0")
  local cell <close> = bench.cell(dev, { launches = { { kern, { (N + 7) // 8, 1, 1 }, { 256, 1, 1 }, d.w.buffer, xb, yb,
                                                       gpu.u32(N), gpu.u32(K) } } })
  local res = cell:cold { rule = { samples = SAMPLES }, warmup = 2 }
  local us = res.ms * 1000
  print(("calibration: gemv_bf16.comp (f32 x, y) %9.2f us (fixed %.1f) %6.0f GB/s"):format(us, res.fixed_ms * 1000,
    2 * N * K / us / 1e3))
end

local function default_plan(p)
  local R = p.routes
  p.calibrate()
  for _, q in ipairs(R.qtypes) do p.run(q, R.gemv(q, 1, 1, 32, 2, true, 1), 1, "gemv lanes 32 nr 2") end
  for _, g in ipairs { { 32, 1 }, { 32, 4 }, { 64, 2 } } do
    p.run("q4", R.gemv("q4", 1, 1, g[1], g[2], true, 1), 1, ("gemv lanes %d nr %d"):format(g[1], g[2]))
  end
  for _, t in ipairs { 2, 4, 8 } do
    p.run("q4", R.gemv("q4", 1, t, 32, t <= 4 and 2 or 1, true, 1), t, "gemv tmax " .. t)
  end
  for _, c in ipairs { { 4, 128, 16, 8, 1 }, { 16, 128, 16, 8, 1 }, { 64, 128, 64, 8, 1 }, { 1024, 128, 128, 2, 4 },
                       { 1024, 256, 128, 4, 2 } } do
    local st = 2 * (c[2] + c[3]) * 80 <= dev.max_shared_bytes and 2 or 1 -- 80 bytes per tile row
    p.run("q4", R.coopmat("q4", 1, 65535, c[2], c[3], c[4], c[5], st), c[1],
      ("coopmat %dx%d %dx%d stages %d"):format(c[2], c[3], c[4], c[5], st))
  end
end

local plan = arg[1] and dofile(arg[1]) or default_plan
plan(v)
if current then for _, b in ipairs(current.bufs) do b:free() end end
