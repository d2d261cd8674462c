-- tools/linear_define_ab.lua: a compile define outside the route table (a
-- kernel's knob such as LN_CSUM_U, kernels/cuda/linear_wgmma.cuh) A/B'd on
-- the table's own launches of a Linear call, in one process: the call as the
-- table makes it (A) and the same launches with the route's kernels (the
-- head and the tail of a tail route) compiled with DEFINE added (B). Both
-- outputs are compared bit for bit and B against the FP64 reference, then
-- each is timed cold (the suite's contract: a clean L2 flush, timestamps
-- around the call) A B B A. CUDA only.
--
--   DEFINE=LN_CSUM_U=1 POINTS="w8:4608:4608:1024 q5:1152:1152:1024" gpubench tools/linear_define_ab.lua
local gpu = require "gpu"
local linear = require "gpubench.linear"
local bench = require "gpubench.bench"

local name, value = (os.getenv("DEFINE") or ""):match("^([%w_]+)=(%-?%d+)$")
if not name then error("tools/linear_define_ab.lua: DEFINE=NAME=INTEGER is required, e.g. DEFINE=LN_CSUM_U=1", 0) end
value = math.tointeger(tonumber(value))
local dev = gpu.open { backend = "cuda" }

local function with_define(spec)
  local d = {}
  for k, v in pairs(spec.defines) do d[k] = v end
  if d[name] ~= nil then error(("tools/linear_define_ab.lua: %s is a define of the route itself; use linear_variants"):format(name), 0) end
  d[name] = value
  return { file = spec.file, entry = spec.entry, defines = d }
end

local function cold_us(launches)
  local cell <close> = bench.cell(dev, { launches = launches })
  return cell:cold { warmup = 3 }.ms * 1000
end

print(("%s: the table's launches (A) against the route's kernels with %s=%d (B)"):format(dev.name, name, value))
for p in (os.getenv("POINTS") or "w8:4608:4608:1024"):gmatch("%S+") do
  local q, n, k, t = p:match("^(%w+):(%d+):(%d+):(%d+)$")
  if not q then error("tools/linear_define_ab.lua: a point is QTYPE:N:K:T, got " .. p, 0) end
  n, k, t = math.tointeger(tonumber(n)), math.tointeger(tonumber(k)), math.tointeger(tonumber(t))
  local spec = { qtype = q, policy = "a16", n = n, k = k }
  local w = linear.weights(dev, q, n, k, 1)
  local x, y = linear.activations(dev, k, n, t, 2)
  local a, r = linear.launches(dev, spec, w, x, y, t)
  local swap = { [linear.kernel(dev, r.head or r)] = linear.kernel(dev, with_define(r.head or r)) }
  if r.tail then swap[linear.kernel(dev, r.tail)] = linear.kernel(dev, with_define(r.tail)) end
  local b = {}
  for i, l in ipairs(a) do
    b[i] = { table.unpack(l) }
    b[i][1] = swap[l[1]] or l[1]
  end
  local ya = linear.run_and_download(dev, a, y.buffer, 2 * t * n)
  local yb = linear.run_and_download(dev, b, y.buffer, 2 * t * n)
  local chk = linear.compare(spec, w, x, yb, t)
  local ta1, tb1, tb2, ta2 = cold_us(a), cold_us(b), cold_us(b), cold_us(a)
  print(("%-5s %6d x %-6d T=%-5d %-26s y %s, B against FP64: %d failures | cold us A %.2f  B %.2f  B %.2f  A %.2f | A/B %.3f")
    :format(q, n, k, t, r.name .. (r.tail and " + tail" or ""), ya == yb and "identical" or "DIFFERENT", chk.failures,
      ta1, tb1, tb2, ta2, (ta1 + ta2) / (tb1 + tb2)))
  w.buffer:free(); x.buffer:free(); y.buffer:free()
end
