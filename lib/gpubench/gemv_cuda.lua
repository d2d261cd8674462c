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
-- to compile otherwise); XQ=1 adds 2 + (STAGES - 1) / PARTS x tiles of 4 KiB
-- per warp where they fit too. Dense kernels (f32, f16, bf16) take UNROLL: 16-byte
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
-- Quantized kernels also take PARTS (scalar path only; 1 = whole tiles): a
-- tile's ROWS rows are staged as PARTS parts of ROWS / PARTS rows, each in its
-- own slot, and STAGES counts those slots (STAGES - 1 parts in flight while
-- one is decoded). A slot frees as soon as its part is decoded, so the same
-- shared memory keeps more bytes in flight, and the last decode of a warp,
-- which no copy overlaps, is one part rather than a tile. Shared memory:
-- WARPS * KSPLIT * STAGES * ROWS / PARTS slots.
--
-- Quantized kernels take MMA, XQ and SUBN (0 or 1) to pick a decode:
--   MMA=0, XQ=1 (the default): the scalar path with the integer dot: each lane
--     quantizes its 32 x values of a tile to int16 codes (one power-of-two
--     scale) and the weight codes meet them in dp2a, so a 4-bit weight costs
--     well under one instruction. x tiles are copied a tile ahead, coalesced,
--     into shared memory (into registers where those slots would not fit
--     the 48 KiB; docs/kernels/cuda-gemv.md, "x through shared memory").
--   MMA=0, XQ=0: the scalar path with the f32 "magic" decode (one byte
--     permute and one FMA per weight), the previous default of q4_k/q5_k/q6_k.
--   MMA=1: the tensor-core path of kernels/cuda/gemv_mma.cuh (ROWS must be
--     16, WARPS warps per block share the conversion of x, tiles of 256
--     columns; SUBN=1 decodes codes into f16 subnormals, SUBN=0 adds one HSUB2
--     per two weights), the previous default of q4_0/q8_0.
-- WARPS = 1, STAGES = 2 with ROWS = 14, PARTS = 2 (q8_0: ROWS = 16, PARTS =
-- 4) measured fastest on the H200 at 14336x5120 (docs/kernels/cuda-gemv.md):
-- the rows of a warp share each lane's x conversion, and one-warp blocks of
-- 9-19 KiB of shared memory let all warps be resident at once (14 rows: 1024
-- warps, 2 per scheduler on most SMs). Whole-tile slots (PARTS = 1) left
-- q8_0 (37 KiB a block) a second wave; more stages, more parts, 8, 12, 18,
-- 20, 24 or 32 rows all measured slower.
--
-- Quantized kernels also take BULK (scalar path only; 0 or 1): 1 stages each
-- row's words of a unit with one Hopper bulk copy (cp.async.bulk by lane 0,
-- completing on the slot's mbarrier) instead of every lane's 16-byte
-- cp.async. Measured on the H200 at 14336x5120, rotated: q6_k 69.4 -> 72.6 %
-- of the read ceiling, but q4_k 72.4 -> 63.1 %, q5_k 73.6 -> 69.0 %, q4_0
-- 73.6 -> 71.9 %, q8_0 80.6 -> 80.0 %; and on every LFM2 shape (k = 1024 or
-- 2816: one to three tiles a warp, so each unit's copy latency shows) every
-- format ran 12-54 % slower, q6_k 12-30 %. So BULK is 0 in the table and
-- for_shape picks BULK=1 for q6_k at k >= 4096 only (measured at 5120; not
-- between 2816 and 5120).
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
M.q4_0 = make("q4_0", { XQ = 1, MMA = 0, SUBN = 1, ROWS = 14, WARPS = 1, STAGES = 2, KSPLIT = 1, PARTS = 2, BULK = 0 })
M.q8_0 = make("q8_0", { XQ = 1, MMA = 0, SUBN = 1, ROWS = 16, WARPS = 1, STAGES = 2, KSPLIT = 1, PARTS = 4, BULK = 0 })
M.q4_k = make("q4_k", { XQ = 1, MMA = 0, SUBN = 1, ROWS = 14, WARPS = 1, STAGES = 2, KSPLIT = 1, PARTS = 2, BULK = 0 })
M.q5_k = make("q5_k", { XQ = 1, MMA = 0, SUBN = 1, ROWS = 14, WARPS = 1, STAGES = 2, KSPLIT = 1, PARTS = 2, BULK = 0 })
M.q6_k = make("q6_k", { XQ = 1, MMA = 0, SUBN = 1, ROWS = 14, WARPS = 1, STAGES = 2, KSPLIT = 1, PARTS = 2, BULK = 0 })

-- A spec for fmt with some defines changed (e.g. {ROWS = 4, STAGES = 3}), with
-- block and rows_per_group to match; for tuning runs and tests. Not stored in
-- this table, so gemv.spec keeps returning the defaults.
local KNOWN = { ROWS = true, WARPS = true, STAGES = true, UNROLL = true, MMA = true, XQ = true, SUBN = true, KSPLIT = true,
  PARTS = true, BULK = true }
local SWITCH = { MMA = true, XQ = true, SUBN = true, BULK = true } -- 0 or 1
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
  -- The tensor-core path has a fixed geometry (16 rows, whole tiles): asking
  -- for it without naming ROWS or PARTS gets that rather than an error.
  if changes.MMA == 1 then
    if changes.ROWS == nil then d.ROWS = 16 end
    if changes.PARTS == nil and d.PARTS then d.PARTS = 1 end
    if changes.BULK == nil and d.BULK then d.BULK = 0 end
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
  if d.MMA == 1 and d.PARTS ~= 1 then
    error(("gemv_cuda.variant: %s with MMA=1 (the tensor-core path) stages whole tiles: PARTS must be 1 (PARTS=%d given; MMA=0 for the scalar path)")
      :format(fmt, d.PARTS), 2)
  end
  if d.MMA == 1 and d.BULK == 1 then
    error(("gemv_cuda.variant: %s BULK=1 (bulk copies) is for the scalar path: it needs MMA=0"):format(fmt), 2)
  end
  if d.PARTS and d.ROWS % d.PARTS ~= 0 then
    error(("gemv_cuda.variant: %s PARTS=%d does not divide ROWS=%d (a part is ROWS / PARTS rows of a tile)")
      :format(fmt, d.PARTS, d.ROWS), 2)
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

-- Variants that measured faster than a format's default at some shapes
-- (above): the first rule whose min_k k reaches applies.
local SHAPE_RULES = {
  q6_k = { { min_k = 4096, changes = { BULK = 1 } } },
}
local shaped = {} -- one table per rule: gemv.kernel caches compiled kernels by spec

local function rule_for(fmt, k, who)
  if type(fmt) ~= "string" or type(rawget(M, fmt)) ~= "table" then
    error(("gemv_cuda.%s: unknown format %s"):format(who, tostring(fmt)), 3)
  end
  if math.type(k) ~= "integer" then error(("gemv_cuda.%s: k must be an integer, got %s"):format(who, tostring(k)), 3) end
  for i, rule in ipairs(SHAPE_RULES[fmt] or {}) do
    if k >= rule.min_k then return rule, i end
  end
end

-- shape_changes(fmt, m, k) -> the defines a rule changes for that shape (a
-- fresh table; empty when none applies): a sweep's base (gemv_variants).
function M.shape_changes(fmt, m, k)
  local rule = rule_for(fmt, k, "shape_changes")
  local c = {}
  for name, v in pairs(rule and rule.changes or {}) do c[name] = v end
  return c
end

-- for_shape(fmt, m, k) -> the spec gemv uses for that shape by default (the
-- table's entry unless a rule picks a variant).
function M.for_shape(fmt, m, k)
  local rule, i = rule_for(fmt, k, "for_shape")
  if not rule then return M[fmt] end
  local key = fmt .. "#" .. i
  shaped[key] = shaped[key] or M.variant(fmt, rule.changes)
  return shaped[key]
end

return M
