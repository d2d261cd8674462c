-- gpubench.gemv_cuda: launch geometry of the CUDA GEMV kernels (kernels/cuda/gemv_*.cu).
--
-- Every kernel runs WARPS row groups per block, each group ROWS consecutive
-- rows, so a block computes ROWS * WARPS rows: `rows_per_group`, and gemv.lua launches
-- grid = {ceil(m / rows_per_group), 1, 1}. A group is one warp, except with
-- the quantized kernels' split-K (KSPLIT, below): KSPLIT warps, so block =
-- 32 * WARPS * KSPLIT threads (32 * WARPS without it). The defines go to the compiler
-- and this table is their only copy: the kernels refuse to compile without
-- them (kernels/cuda/gemv_geometry.cuh), and each kernel's first
-- `// gpubench-compile:` line repeats them for the NVRTC test. A variant is a
-- copy of an entry with other defines and the rows_per_group/block they
-- imply: use gemv_cuda.variant.
--
-- Quantized kernels (q4_0, q8_0, q4_k, q5_k, q6_k) also take STAGES: the
-- shared-memory slots per warp that tiles of 1024 columns are copied into
-- (STAGES - 1 tiles in flight while one is decoded). WARPS * KSPLIT * STAGES
-- * ROWS slots must fit the 48 KiB of static shared memory (the kernel refuses
-- to compile otherwise). Dense kernels (f32, f16, bf16) take UNROLL: 16-byte
-- loads per row issued before any is used.
--
-- Quantized kernels also take KSPLIT (scalar path, MMA=0, only; 1 = no split,
-- the default): each row group has KSPLIT warps, warp s of a group walks tiles
-- s, s + KSPLIT, ... of its ROWS rows, and the first warp adds the KSPLIT
-- partial sums (through shared memory) and writes y. More warps in flight per
-- row, the same bytes per warp in flight; WARPS * KSPLIT * STAGES * ROWS slots
-- must fit the 48 KiB, and STAGES = 1 is allowed with KSPLIT > 1 (the other
-- slices overlap the copies; at k = 5120, KSPLIT = 5 a warp has one tile).
--
-- (Scalar path, MMA=0:) ROWS follows the weight size: x values are loaded once per lane and reused
-- for the ROWS rows, so 4-bit formats (about 0.56 bytes per weight) use 8
-- rows and the 6.5- and 8.5-bit formats 4, keeping the x traffic below the
-- weight traffic. WARPS = 1 for the quantized kernels gives small blocks, so
-- even m = 1024 fills 128 blocks (the GPU has 132 SMs). The reasoning and the
-- instruction budgets per format are in docs/kernels/cuda-gemv.md.
--
-- Quantized kernels also take MMA and SUBN (0 or 1). MMA=1 (the default) is
-- the tensor-core path of kernels/cuda/gemv_mma.cuh: 16 rows per warp (ROWS
-- must be 16), WARPS warps per block sharing the conversion of x, tiles of 256
-- columns. SUBN=1 decodes codes straight into f16 subnormals; SUBN=0 adds one
-- HSUB2 per two weights and uses normal f16 only (the fallback if a GPU
-- flushed f16 subnormals in mma). MMA=0 is the scalar path below (ROWS rows
-- per warp, tiles of 1024 columns), e.g. variant("q4_0", {MMA = 0, ROWS = 8,
-- WARPS = 1, STAGES = 2}) for the previous defaults.
--
-- The quantized kernels copy whole 16-byte words, so the weight buffer must be
-- the weight bytes rounded up to 16 at least (gemv.buffer_bytes is that plus 16).

local M = {}

local function make(fmt, defines)
  local d = {}
  for k, v in pairs(defines) do d[k] = v end
  return {
    file = "kernels/cuda/gemv_" .. fmt .. ".cu",
    entry = "gemv_" .. fmt,
    block = { 32 * d.WARPS * (d.KSPLIT or 1), 1, 1 },
    rows_per_group = d.ROWS * d.WARPS,
    defines = d,
  }
end

M.f32 = make("f32", { ROWS = 4, WARPS = 2, UNROLL = 2 })
M.f16 = make("f16", { ROWS = 4, WARPS = 2, UNROLL = 2 })
M.bf16 = make("bf16", { ROWS = 4, WARPS = 2, UNROLL = 2 })
M.q4_0 = make("q4_0", { XQ = 0, MMA = 1, SUBN = 1, ROWS = 16, WARPS = 4, STAGES = 4, KSPLIT = 1 })
M.q8_0 = make("q8_0", { XQ = 0, MMA = 1, SUBN = 1, ROWS = 16, WARPS = 4, STAGES = 2, KSPLIT = 1 })
M.q4_k = make("q4_k", { XQ = 0, MMA = 0, SUBN = 1, ROWS = 8, WARPS = 2, STAGES = 2, KSPLIT = 1 })
M.q5_k = make("q5_k", { XQ = 0, MMA = 0, SUBN = 1, ROWS = 8, WARPS = 2, STAGES = 2, KSPLIT = 1 })
M.q6_k = make("q6_k", { XQ = 0, MMA = 0, SUBN = 1, ROWS = 8, WARPS = 1, STAGES = 2, KSPLIT = 1 })

-- A spec for fmt with some defines changed (e.g. {ROWS = 4, STAGES = 3}), with
-- block and rows_per_group to match; for tuning runs and tests. Not stored in
-- this table, so gemv.spec keeps returning the defaults.
local KNOWN = { ROWS = true, WARPS = true, STAGES = true, UNROLL = true, MMA = true, XQ = true, SUBN = true, KSPLIT = true }
local SWITCH = { MMA = true, XQ = true, SUBN = true } -- 0 or 1
function M.variant(fmt, changes)
  local base = type(fmt) == "string" and rawget(M, fmt) or nil
  if type(base) ~= "table" then
    error(("gemv_cuda.variant: unknown format %s"):format(tostring(fmt)), 2)
  end
  if type(changes) ~= "table" then
    error(("gemv_cuda.variant: changes must be a table of defines, got %s"):format(type(changes)), 2)
  end
  local d = {}
  for k, v in pairs(base.defines) do d[k] = v end
  for k, v in pairs(changes) do
    if not KNOWN[k] or base.defines[k] == nil then
      error(("gemv_cuda.variant: %s has no define %s"):format(fmt, tostring(k)), 2)
    end
    if SWITCH[k] then
      if v ~= 0 and v ~= 1 then
        error(("gemv_cuda.variant: %s=%s is not 0 or 1"):format(k, tostring(v)), 2)
      end
    elseif math.type(v) ~= "integer" or v < 1 then
      error(("gemv_cuda.variant: %s=%s is not a positive integer"):format(k, tostring(v)), 2)
    end
    d[k] = v
  end
  if d.MMA == 1 and d.ROWS ~= 16 then
    error(("gemv_cuda.variant: %s with MMA=1 computes 16 rows per warp (ROWS=%d given; MMA=0 for the scalar path)")
      :format(fmt, d.ROWS), 2)
  end
  if d.MMA == 1 and d.XQ == 1 then
    error(("gemv_cuda.variant: %s XQ=1 (integer dot) is a scalar-path decode: it needs MMA=0"):format(fmt), 2)
  end
  if d.MMA == 1 and d.KSPLIT ~= 1 then
    error(("gemv_cuda.variant: %s with MMA=1 (the tensor-core path) has no split-K: KSPLIT must be 1 (KSPLIT=%d given; MMA=0 for the scalar path)")
      :format(fmt, d.KSPLIT), 2)
  end
  if d.STAGES == 1 and d.KSPLIT == 1 then
    error(("gemv_cuda.variant: %s STAGES=1 leaves no tile in flight: STAGES must be at least 2 (1 only with KSPLIT > 1)")
      :format(fmt), 2)
  end
  local ks = d.KSPLIT or 1
  if 32 * d.WARPS * ks > 1024 then
    if ks > 1 then
      error(("gemv_cuda.variant: WARPS=%d x KSPLIT=%d warps is more than a block's 1024 threads")
        :format(d.WARPS, ks), 2)
    end
    error(("gemv_cuda.variant: WARPS=%d is more than a block's 1024 threads"):format(d.WARPS), 2)
  end
  return make(fmt, d)
end

return M
