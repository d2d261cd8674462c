-- tools/flush_probe.lua: what DRAM writes a cold call pays for after each kind
-- of L2 flush. Run under `ncu --profile-from-start off --cache-control none
-- --metrics dram__bytes_write.sum,gpu__time_duration.sum`: every profiled
-- range holds one kernel, in the order printed. The sequences: a q4_k GEMV
-- (14336 x 5120, or M, K) after the first clean flush of the process (a fresh
-- flush buffer), after the write flush, after one clean flush, after
-- five, after a clean flush and a 10 ms pause; then the clean flush's own
-- read pass right after a write flush (the write-backs it absorbs).
local gpu = require "gpu"
local gemv_bench = require "gpubench.gemv_bench"
local dev = gpu.open { backend = os.getenv("BACKEND") or "cuda" }
local m, k = tonumber(os.getenv("M") or 14336), tonumber(os.getenv("K") or 5120)
local cell <close> = gemv_bench.prepare(dev, os.getenv("FMT") or "q4_k", m, k)
cell:arm_cold()
local function call(name)
  dev:profiler_start(name)
  cell.cold_batch:submit()
  dev:sync()
  dev:profiler_stop()
  print("profiled: " .. name)
end
for _ = 1, 3 do cell.cold_batch:submit() end
dev:flush_l2(); call("after the first clean flush (a fresh flush buffer)")
dev:flush_l2("write"); call("after the write flush")
dev:flush_l2(); call("after one clean flush")
for _ = 1, 5 do dev:flush_l2() end; call("after five clean flushes")
dev:flush_l2(); local t0 = gpu.clock(); while gpu.clock() - t0 < 0.01 do end; call("after a clean flush and 10 ms")
dev:flush_l2("write")
dev:profiler_start("the clean flush's read pass after a write flush")
dev:flush_l2()
dev:profiler_stop()
print("profiled: the clean flush's read pass after a write flush (zero fill, then read passes)")
