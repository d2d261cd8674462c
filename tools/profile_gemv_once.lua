-- tools/profile_gemv_once.lua FMT: one GEMV launch at 14336x5120 (for ncu --launch-count 1).
local gpu = require "gpu"
local gemv = require "gpubench.gemv"
local ref = require "gpubench.ref"
local dev = gpu.open{backend = "cuda"}
local fmt = arg[1]
local m, k = 14336, 5120
local w = ref.random_blocks(fmt, gemv.weight_bytes(fmt, m, k) // ref.formats[fmt].block_bytes, 1)
local y = gemv.run(dev, fmt, w, m, k, ref.random_f32(k, 2))
print(fmt, #y)
