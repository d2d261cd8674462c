-- tools/profile_gemv_once.lua FMT [NAME=V,...]: one GEMV launch at 14336x5120
-- (for ncu --launch-count 1), with the default geometry or the given CUDA
-- defines changed (gemv_cuda.variant), e.g. q4_k XQ=1,ROWS=16,WARPS=1.
local gpu = require "gpu"
local gemv = require "gpubench.gemv"
local ref = require "gpubench.ref"
local dev = gpu.open{backend = "cuda"}
local fmt = arg[1]
local spec
if arg[2] then
  local changes = {}
  for name, v in arg[2]:gmatch("(%w+)=(%d+)") do changes[name] = tonumber(v) end
  spec = require("gpubench.gemv_cuda").variant(fmt, changes)
end
local m, k = 14336, 5120
local w = ref.random_blocks(fmt, gemv.weight_bytes(fmt, m, k) // ref.formats[fmt].block_bytes, 1)
local y = gemv.run(dev, fmt, w, m, k, ref.random_f32(k, 2), spec)
print(fmt, arg[2] or "defaults", #y)
