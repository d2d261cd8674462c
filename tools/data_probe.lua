-- tools/data_probe.lua [N K]: does what is in the weights change how fast
-- they are read? The same bytes, rotated out of L2 as the experiments rotate
-- them, read by the pure-read kernel and by the bf16 GEMV, filled three ways:
-- zeros, uniform random bytes, and normal(0, 1) bf16 (what swiglu_ab's and
-- linear_suite's generators write). Then the swiglu_ab paths on that shape,
-- timed by swiglu_ab's samples and by the default cell policy.
--
-- Why: swiglu_ab read every path (cuBLAS included) far below the read
-- ceiling, which is measured over zero-filled buffers, while the GEMV tables
-- came close to it (the figures: docs/results/h200-swiglu.md).
local gpu = require "gpu"
local ceilings = require "gpubench.ceilings"
local kernels = require "gpubench.kernels"
local timing = require "gpubench.timing"
local clocks = require "gpubench.clocks"
local gemv = require "gpubench.gemv"
local swiglu_bench = require "gpubench.swiglu_bench"

local N, K = tonumber(arg[1] or 11008), tonumber(arg[2] or 4096)
local dev = gpu.open { backend = os.getenv("BACKEND") }
local l2 = dev.l2_bytes > 0 and dev.l2_bytes or tonumber(os.getenv("L2_BYTES") or "")
  or error("the device reports no L2 size: set L2_BYTES", 0)
local ceil = ceilings.get(dev)
local bytes = 2 * N * K * 2 -- the packed [2N, K] bf16 gate/up weight
local copies = timing.rotation(bytes, l2)
print(("data_probe on %s: [2N=%d, K=%d] bf16 = %.1f MB, %d copies; read ceiling %.1f GB/s (%s)")
  :format(dev.name, 2 * N, K, bytes / 1e6, copies, ceil.read_gbs, ceil.read_source))

local function clock_line()
  local c = clocks.read(dev)
  if not c then return "(no clocks)" end
  return ("sm %s MHz, mem %s MHz, %s W, reasons %s"):format(tostring(c.sm_mhz), tostring(c.memory_mhz),
    tostring(c.power_w), table.concat(clocks.reason_names(c.reasons or 0), "+"))
end

local bufs = {}
for i = 1, copies do bufs[i] = dev:buffer(bytes + 32) end -- the GEMV's slack (gemv.buffer_bytes)
local function fill(how)
  for i, b in ipairs(bufs) do
    if how == "zeros" then b:fill("\0")
    elseif how == "random bytes" then b:fill_random { dtype = "u8", seed = i }
    else b:fill_random { dtype = "bf16", dist = "normal", seed = i } end
  end
  dev:sync()
end

local read = kernels.load(dev, "read")
local block, grid = 256, kernels.grid(dev)
local out <close> = dev:buffer(grid * block * 4)
out:fill("\0")
local x <close> = dev:buffer(4 * K)
x:fill_random { dtype = "f32", seed = 7 }
local y <close> = dev:buffer(4 * 2 * N)

local function time(launches, n)
  local r <close> = timing.runner(dev, launches, { graph = true })
  dev:flush_l2()
  timing.settle(r:fn(), n, 50)
  local d = timing.two_point_median(r:fn(), n, 3)
  return d.ms
end

for _, how in ipairs { "zeros", "random bytes", "normal bf16" } do
  fill(how)
  local rl, gl = {}, {}
  for i, b in ipairs(bufs) do
    rl[i] = { read, grid, block, b, out, bytes // 16, 0xA5A5A5A5 }
    gl[i] = { gemv.launch_args(dev, "bf16", b, x, y, 2 * N, K) }
  end
  local n = math.max(copies, 200)
  local tr, tg = time(rl, n), time(gl, n)
  print(("%-13s read %8.2f us %6.1f %%   bf16 GEMV %8.2f us %6.1f %%   %s"):format(how,
    tr and tr * 1e3 or -1, tr and ceilings.pct(ceilings.gbs(bytes, tr), ceil.read_gbs) or -1,
    tg and tg * 1e3 or -1, tg and ceilings.pct(ceilings.gbs(bytes, tg), ceil.read_gbs) or -1, clock_line()))
end
for _, b in ipairs(bufs) do b:free() end
read:free()

-- swiglu_ab's paths on this shape, M = 1, rotated graph: its samples, then the default cell policy
local ctx <close> = swiglu_bench.context(dev, { m_values = { 1 }, warmup = 20, iterations = 100, trials = 2, seed = 1,
                                                l2_bytes = l2, read_gbs = ceil.read_gbs,
                                                geometry = require("gpubench.swiglu_" .. dev.backend).geometry({}) })
for _, mode in ipairs { "graph", "eager" } do
  local g = ctx:group { shape = { name = "probe", n = N, k = K }, m = 1, mode = mode, regime = "rotated" }
  g:arm()
  local row = g:measure()
  for _, path in ipairs { "vendor", "chain", "fused" } do
    local p, P = row.paths[path], g.paths[path]
    local line = ("%-6s %-6s swiglu samples p50 %s us"):format(mode, path, p.us and ("%.2f"):format(p.us) or p.status)
    if P.cell then
      local d = P.cell:time(100, { graph = mode == "graph" })
      line = line .. ("   default policy %s us"):format(d.ms and ("%.2f"):format(d.ms * 1e3) or "noise")
      local ts = {}
      for i = 1, math.min(4, #(p.timings or {})) do ts[i] = ("%.2f/%.2f"):format(p.timings[i].t_n, p.timings[i].t_2n) end
      line = line .. "   t(n)/t(2n) ms " .. table.concat(ts, " ")
    end
    print(line)
  end
  g:close()
  print("  " .. clock_line())
end
