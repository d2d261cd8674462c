-- tools/l2_state_probe.lua: does a small L2-resident GEMV cell's time depend
-- on what ran before it? Times one f16 2816 x 1024 cell (and one f32
-- 1024 x 2816) right after a q8_0 lm head (65536 x 1024, 71 MB), after an f16
-- lm head (134 MB), and after a q8_0 lm head with an L2 flush in between, each
-- timed like gemv_table (graph replay, two-point, n = 200), three rounds.
-- What it found on the H200 is in docs/results/h200-gemv.md ("Order
-- dependence"): it is why gpubench.bench starts every timing from a flushed L2.
local gpu = require "gpu"
local gemv_bench = require "gpubench.gemv_bench"
local dev = gpu.open { backend = os.getenv("BACKEND") or "cuda" }
local function us(d) return d.ms and ("%.2f"):format(d.ms * 1000) or "noise" end
local NO_FLUSH = { flush = false }
-- LM_M=N: lm heads of N rows instead (a device whose largest buffer is smaller)
local lm = tonumber(os.getenv("LM_M") or 65536)
local c16 = gemv_bench.prepare(dev, "f16", 2816, 1024)
local c32 = gemv_bench.prepare(dev, "f32", 1024, 2816)
local q8 = gemv_bench.prepare(dev, "q8_0", lm, 1024)
local h16 = gemv_bench.prepare(dev, "f16", lm, 1024)
require("gpubench.bench").ready(dev)
for round = 1, 3 do
  q8:time(200, NO_FLUSH); local a = us(c16:time(200, NO_FLUSH))
  q8:time(200, NO_FLUSH); local b = us(c16:time(200)) -- flushed first
  h16:time(200, NO_FLUSH); local c = us(c16:time(200, NO_FLUSH))
  q8:time(200, NO_FLUSH); local d = us(c32:time(200, NO_FLUSH))
  q8:time(200, NO_FLUSH); local e = us(c32:time(200))
  print(("round %d  f16 2816x1024 (us): after q8_0 lm head %s, flushed %s, after f16 lm head %s"
    .. " | f32 1024x2816: after q8_0 lm head %s, flushed %s"):format(round, a, b, c, d, e))
end
for _, cell in ipairs { c16, c32, q8, h16 } do cell:close() end
