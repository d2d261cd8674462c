-- tools/placement_swap.lua [FMT M K]: which of a GEMV cell's buffers makes an
-- L2-resident cell slow? The cell is allocated first (where the
-- slow placements were seen, tools/placement_probe.lua), timed, then its x,
-- its y and its weights are each moved to a fresh allocation made after
-- 1 GiB of other buffers, and it is timed again after each move.
local gpu = require "gpu"
local gemv = require "gpubench.gemv"
local gemv_bench = require "gpubench.gemv_bench"
local dev = gpu.open { backend = os.getenv("BACKEND") or "cuda" }
local fmt, m, k = arg[1] or "f16", tonumber(arg[2] or 2816), tonumber(arg[3] or 1024)
local cell <close> = gemv_bench.prepare(dev, fmt, m, k)
local filler = {}
for i = 1, 4 do filler[i] = dev:buffer((tonumber(os.getenv("BIG_MIB") or 256)) << 20) end
local l = cell.launches[1] -- kern, grid, block, w, x, y, m, k
local function ms()
  -- no flush: the probe looks at the state earlier work leaves (gpubench.bench)
  return cell:time(200, { flush = false, launches = { { gemv.launch_args(dev, fmt, l[4], l[5], l[6], m, k) } } }).ms
end
local function moved(i)
  local old = l[i]
  local new = dev:buffer(old.size)
  new:copy_from(old)
  l[i] = new
  cell.buffers[#cell.buffers + 1] = new
end
local function show(what) -- timed twice: the spread of one placement
  local a, b = ms(), ms()
  local function f(t) return t and ("%.5f ms"):format(t) or "noise" end
  print(("%-28s %s  %s"):format(what, f(a), f(b)))
end
show("as allocated")
moved(5); show("x moved")
moved(6); show("x, y moved")
moved(4); show("x, y, weights moved")
for _, b in ipairs(filler) do b:free() end
