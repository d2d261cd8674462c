-- gpubench.gemv_cuda: launch geometry of the CUDA GEMV kernels (kernels/cuda/gemv_*.cu).
--
-- A kernel runs WARPS row groups per block, each group ROWS consecutive rows,
-- so a block computes ROWS * WARPS rows (`rows_per_group`; gemv.lua launches
-- ceil(m / rows_per_group) blocks of 32 * WARPS * KSPLIT threads). The defines
-- go to the compiler and this table is their only copy: the kernels refuse to
-- compile without them (kernels/cuda/gemv_geometry.cuh), and each kernel's
-- `// gpubench-compile:` lines repeat them for the NVRTC test. A variant is a
-- copy of an entry with other defines: use gemv_cuda.variant.
--
-- Dense kernels (f32, f16, bf16): UNROLL, 16-byte loads per row in flight.
-- Quantized kernels (q4_0, q8_0, q4_k, q5_k, q6_k):
--   STAGES  shared-memory slots per warp that tiles of 1024 columns are copied
--           into, STAGES - 1 in flight while one is decoded;
--   PARTS   a tile's ROWS rows staged as PARTS parts of ROWS / PARTS rows, each
--           its own slot (a slot frees as soon as its part is decoded);
--   KSPLIT  warps per row group, each walking every KSPLIT-th tile, the first
--           adding the partial sums (scalar path only);
--   XQ=1    the integer dot (x quantized per tile, dp2a), x tiles staged in
--           shared memory where they fit; XQ=0 the f32 "magic" decode;
--   MMA=1   the tensor-core path (16 rows, whole tiles; SUBN picks its decode);
--   BULK=1  each row of a unit staged by one Hopper bulk copy (scalar path).
-- f16 and bf16: MMA=1 is the tensor-core kernel for T rows of x
--           (kernels/cuda/gemv_<fmt>_tc.cu): WARPS warps of TILES x 16 rows
--           per block times KSPLIT slices of k, UNROLL chunks of 32 k loaded
--           ahead (STAGES=0) or per shared-memory stage (STAGES >= 2, 1 KiB a
--           tile, chunk and warp); ROWS unused.
--   I8=1    (q4_k, q5_k, q6_k, q8_0, q4_0) the int8 tensor-core kernel for T rows of x
--           (kernels/cuda/gemv_<fmt>_i8.cu): WARPS warps of 16 rows per block
--           times KSPLIT slices of k; PREFETCH=1 (its own define, I8=1 only)
--           loads a step's weights during the previous step's mmas; the
--           scalar path's other defines unused; XPRE=1 or 2 (its own define
--           too) quantizes x once per call in a first launch (xprep_spec
--           below; 2: in the mma's fragment order), a spec with `prep` that
--           gemv.launches runs before the kernel; I8_GUARD=0 computes the
--           mma columns past T rather than branching past them; STAGED=2..4
--           (not q6_k; with XPRE=2) copies the weights through that many
--           stages per warp in shared memory. The default
--           from T = 2 or 3 (q6_k from 6; TOKEN_RULES below).
-- Every kernel: GEMV_TOKENS, the T rows of x (1..8) multiplied by each
-- weight read once (y[T, m] = x[T, k] . W^T; 1 in every entry, the GEMV).
-- A T > 1 variant keeps the entry's geometry: every entry compiles without
-- spills at T = 2 and 8 (ptxas figures in docs/kernels/cuda-gemv.md,
-- "Multi-token kernels"; the tensor-core path's x tiles grow with T, so
-- WARPS = 4 no longer fits its 48 KiB at T = 8), and which geometry is
-- fastest for T > 1 is not measured yet.
-- WARPS * KSPLIT * STAGES * ROWS / PARTS slots (plus the x ring) must fit the
-- 48 KiB of static shared memory, or the kernel does not compile. The
-- defaults are the fastest of the sweeps in docs/kernels/cuda-gemv.md
-- ("Row parts", "x through shared memory", "Bulk copies"); the weight buffer
-- must hold the weight bytes rounded up to 16 (gemv.buffer_bytes does).

local M = {}
local pick_token_rule = require "gpubench.token_rules"
local kernels = require "gpubench.kernels"

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

M.f32 = make("f32", { ROWS = 4, WARPS = 2, UNROLL = 2, GEMV_TOKENS = 1 })
M.f16 = make("f16", { ROWS = 4, WARPS = 2, UNROLL = 2, MMA = 0, GEMV_TOKENS = 1 })
M.bf16 = make("bf16", { ROWS = 4, WARPS = 2, UNROLL = 2, MMA = 0, GEMV_TOKENS = 1 })
M.q4_0 = make("q4_0", { XQ = 1, MMA = 0, SUBN = 1, ROWS = 14, WARPS = 1, STAGES = 2, KSPLIT = 1, PARTS = 2, BULK = 0, I8 = 0, TC = 0, GEMV_TOKENS = 1 })
M.q8_0 = make("q8_0", { XQ = 1, MMA = 0, SUBN = 1, ROWS = 16, WARPS = 1, STAGES = 2, KSPLIT = 1, PARTS = 4, BULK = 0, I8 = 0, TC = 0, GEMV_TOKENS = 1 })
M.q4_k = make("q4_k", { XQ = 1, MMA = 0, SUBN = 1, ROWS = 14, WARPS = 1, STAGES = 2, KSPLIT = 1, PARTS = 2, BULK = 0, I8 = 0, GEMV_TOKENS = 1 })
M.q5_k = make("q5_k", { XQ = 1, MMA = 0, SUBN = 1, ROWS = 14, WARPS = 1, STAGES = 2, KSPLIT = 1, PARTS = 2, BULK = 0, I8 = 0, GEMV_TOKENS = 1 })
M.q6_k = make("q6_k", { XQ = 1, MMA = 0, SUBN = 1, ROWS = 14, WARPS = 1, STAGES = 2, KSPLIT = 1, PARTS = 2, BULK = 0, I8 = 0, GEMV_TOKENS = 1 })

-- A spec for fmt with some defines changed (e.g. {ROWS = 4, STAGES = 3}), with
-- block and rows_per_group to match; for tuning runs and tests. Not stored in
-- this table, so gemv.spec keeps returning the defaults.
local KNOWN = { ROWS = true, WARPS = true, STAGES = true, UNROLL = true, MMA = true, XQ = true, SUBN = true, KSPLIT = true,
  PARTS = true, BULK = true, I8 = true, TC = true, GEMV_TOKENS = true, DYNAMIC = true }
local SWITCH = { MMA = true, XQ = true, SUBN = true, BULK = true, I8 = true, TC = true } -- 0 or 1

-- What both tensor-core kernels' specs check last and return: a block's
-- threads, its shared memory (smem bytes: stages and k-slice sums) and the
-- format's _tc file; DYNAMIC = 1 (changes') puts the stages in dynamic shared
-- memory even where they fit the static 48 KiB, to A/B the mechanism itself
-- (kernels/cuda/dynamic_shared.cuh). level: error's (both specs tail-call it).
local function tc_block_spec(fmt, tc, smem, level, changes)
  if changes.DYNAMIC ~= nil then
    if changes.DYNAMIC ~= 0 and changes.DYNAMIC ~= 1 then
      error(("gemv_cuda.variant: DYNAMIC=%s is not 0 or 1"):format(tostring(changes.DYNAMIC)), level)
    end
    if changes.DYNAMIC == 1 and tc.STAGES == 0 then
      error("gemv_cuda.variant: DYNAMIC=1 places shared-memory stages: it needs STAGES >= 2", level)
    end
    tc.DYNAMIC = changes.DYNAMIC
  end
  if 32 * tc.WARPS * tc.KSPLIT > 1024 then
    error(("gemv_cuda.variant: WARPS=%d KSPLIT=%d is more than a block's 1024 threads"):format(tc.WARPS, tc.KSPLIT), level)
  end
  if smem > kernels.CUDA_BLOCK_SHARED_BYTES then
    error(("gemv_cuda.variant: WARPS=%d KSPLIT=%d TILES=%d UNROLL=%d STAGES=%d needs %d bytes of shared memory, more than a block's %d")
      :format(tc.WARPS, tc.KSPLIT, tc.TILES, tc.UNROLL, tc.STAGES, smem, kernels.CUDA_BLOCK_SHARED_BYTES), level)
  end
  return {
    file = "kernels/cuda/gemv_" .. fmt .. "_tc.cu",
    entry = "gemv_" .. fmt .. "_tc",
    block = { 32 * tc.WARPS * tc.KSPLIT, 1, 1 },
    rows_per_group = 16 * tc.TILES * tc.WARPS,
    defines = tc,
  }
end

-- XPRE's first launch (kernels/cuda/gemv_i8_xprep.cu): x quantized once
-- per call into a workspace the int8 kernel then reads in place of x. Per
-- format the digits' extra sum (XP_SX) and column order (XP_PERM) its step
-- expects (the format's SX and PERM in gemv_q4k_q5k_i8.cuh, gemv_q6k_i8.cuh,
-- gemv_b32_i8.cuh); XPRE=1 writes the shared layout, a chunk of 256 columns
-- 640 T bytes (GbI8Smem<T>), one thread per (chunk, row of x, run of 32);
-- XPRE=2 the mma's fragment order, 4608 bytes a chunk at every T (GbI8Frag),
-- four threads per (chunk, run, row of x) (both pinned by static_asserts in
-- gemv_i8_common.cuh). The workspace holds whole steps of KSPLIT chunks
-- (gb_i8_xq_chunks).
local XPREP = { q4_k = { 0, 0 }, q5_k = { 0, 0 }, q6_k = { 1, 1 }, q8_0 = { 1, 0 }, q4_0 = { 2, 1 } }
local XPREP_BLOCK = { 256, 64 } -- [XPRE]
local XPREP_UNITS = { 8, 32 }   -- [XPRE]: threads per chunk and row of x
local xprep_specs = {} -- one table per defines: gemv.kernel caches compiled kernels by spec table
local function xprep_spec(fmt, tokens, ksplit, xpre)
  local sx, perm = XPREP[fmt][1], XPREP[fmt][2]
  local key = ("%d:%d:%d:%d"):format(sx, perm, tokens, xpre)
  local p = xprep_specs[key]
  if not p then
    local block, units = XPREP_BLOCK[xpre], XPREP_UNITS[xpre]
    p = {
      file = "kernels/cuda/gemv_i8_xprep.cu",
      entry = "gemv_i8_xprep",
      block = { block, 1, 1 },
      defines = { XP_SX = sx, XP_PERM = perm, XP_FRAG = xpre - 1, GEMV_TOKENS = tokens },
      grid = function(k) return { (k // 256 * units * tokens + block - 1) // block, 1, 1 } end,
    }
    xprep_specs[key] = p
  end
  local chunk = xpre == 1 and 640 * tokens or 4608
  return {
    spec = p,
    grid = p.grid,
    bytes = function(k) return chunk * ((k // 256 + ksplit - 1) // ksplit * ksplit) end,
  }
end

-- The int8 kernel's own switches: their values, the kernels' default first. PREFETCH and
-- XPRE are always passed; I8_GUARD (0: the epilogues compute the mma columns past T instead
-- of branching past them) and STAGED (the weights copied through a ring of that many stages
-- per warp; gemv_i8_common.cuh) only away from their default, so that the default's compile
-- and cache key stay the same. STAGED takes integers only, away from its default.
local I8_SWITCHES = {
  PREFETCH = { values = { 0, 1 }, says = "0 or 1" },
  XPRE = { values = { 0, 1, 2 }, says = "0, 1 or 2" },
  I8_GUARD = { values = { 1, 0 }, says = "0 or 1" },
  STAGED = { values = { 0, 2, 3, 4 }, says = "0, 2, 3 or 4", integer = true },
}
local function i8_switch_ok(k, v)
  local sw = I8_SWITCHES[k]
  if sw.integer and math.type(v) ~= "integer" and v ~= sw.values[1] then return false end
  for _, a in ipairs(sw.values) do
    if v == a then return true end
  end
  return false
end

-- A row's bytes in a staged ring (STAGED: the formats' SSTRIDE, gemv_q4k_q5k_i8.cuh, gemv_b32_i8.cuh;
-- q6_k's 210-byte chunks are no whole number of 16-byte copies).
local I8_STAGE_STRIDE = { q4_k = 160, q5_k = 224, q8_0 = 288, q4_0 = 160 }

-- The int8 tensor-core kernel's spec: its own file and entry, 16 rows a warp;
-- with XPRE=1 or 2 a prep (xprep_spec) that gemv.launches runs first.
local function i8_spec(fmt, d, own)
  local prefetch, xpre, staged = own.PREFETCH or 0, own.XPRE or 0, own.STAGED or 0
  if d.MMA == 1 or d.BULK == 1 then
    error(("gemv_cuda.variant: %s I8=1 is its own kernel: MMA and BULK must stay 0"):format(fmt), 3)
  end
  if 32 * d.WARPS * d.KSPLIT > 1024 then
    error(("gemv_cuda.variant: WARPS=%d KSPLIT=%d is more than a block's 1024 threads"):format(d.WARPS, d.KSPLIT), 3)
  end
  if staged > 0 then
    if xpre ~= 2 or prefetch ~= 0 then
      error(("gemv_cuda.variant: %s STAGED=%d needs XPRE=2 and PREFETCH=0"):format(fmt, staged), 3)
    end
    -- the rings (16 rows a stage) and the slices' sums must fit a block's 48 KiB of static shared memory
    local bytes = d.WARPS * d.KSPLIT * staged * 16 * I8_STAGE_STRIDE[fmt] + d.WARPS * math.max(d.KSPLIT - 1, 1) * 512
    if bytes > 48 * 1024 then
      error(("gemv_cuda.variant: %s STAGED=%d WARPS=%d KSPLIT=%d needs %d bytes of shared memory, more than 48 KiB")
        :format(fmt, staged, d.WARPS, d.KSPLIT, bytes), 3)
    end
  end
  return {
    file = "kernels/cuda/gemv_" .. fmt .. "_i8.cu",
    entry = "gemv_" .. fmt .. "_i8",
    block = { 32 * d.WARPS * d.KSPLIT, 1, 1 },
    rows_per_group = 16 * d.WARPS,
    defines = { I8 = 1, WARPS = d.WARPS, KSPLIT = d.KSPLIT, PREFETCH = prefetch, XPRE = xpre, GEMV_TOKENS = d.GEMV_TOKENS,
      I8_GUARD = own.I8_GUARD == 0 and 0 or nil, STAGED = staged > 0 and staged or nil },
    prep = xpre > 0 and xprep_spec(fmt, d.GEMV_TOKENS, d.KSPLIT, xpre) or nil,
  }
end
-- The dense tensor-core kernel's spec (f16, bf16): its own file and entry,
-- TILES tiles of 16 rows a warp; KSPLIT, TILES and STAGES its own defines
-- (the FMA kernel has none).
local TC_DEFINES = { MMA = true, WARPS = true, KSPLIT = true, TILES = true, UNROLL = true, STAGES = true, GEMV_TOKENS = true,
  DYNAMIC = true }
-- Its geometry where a variant names none: the fastest of the H200 sweeps at
-- T = 4 and 8 (docs/kernels/cuda-gemv.md, "Dense tensor-core kernels").
local TC_BEST = {
  bf16 = { WARPS = 1, KSPLIT = 2, TILES = 2, UNROLL = 4, STAGES = 2 },
  f16 = { WARPS = 1, KSPLIT = 4, TILES = 2, UNROLL = 2, STAGES = 2 },
}
local function tc_spec(fmt, d, changes)
  for k in pairs(changes) do
    if not TC_DEFINES[k] then
      error(("gemv_cuda.variant: %s MMA=1 (the tensor-core kernel) takes WARPS, KSPLIT, TILES, UNROLL, STAGES and GEMV_TOKENS, not %s")
        :format(fmt, tostring(k)), 3)
    end
  end
  local best = TC_BEST[fmt]
  local tc = { MMA = 1, GEMV_TOKENS = d.GEMV_TOKENS }
  for name, v in pairs(best) do tc[name] = changes[name] or v end
  for _, name in ipairs { "WARPS", "KSPLIT", "TILES", "UNROLL" } do
    local v = tc[name]
    if math.type(v) ~= "integer" or v < 1 then
      error(("gemv_cuda.variant: %s=%s is not a positive integer"):format(name, tostring(v)), 3)
    end
  end
  if tc.TILES > 4 then error(("gemv_cuda.variant: TILES=%d is more than 4 row tiles of 16 per warp"):format(tc.TILES), 3) end
  local st = tc.STAGES
  if math.type(st) ~= "integer" or st == 1 or st < 0 or st > 8 then
    error(("gemv_cuda.variant: STAGES=%s is 0 (direct loads) or 2..8 (shared-memory stages)"):format(tostring(st)), 3)
  end
  -- the stages (1 KiB per tile, chunk and warp) and the k-slice sums (512 bytes per tile and warp past the first slice)
  return tc_block_spec(fmt, tc, tc.WARPS * tc.KSPLIT * 1024 * tc.TILES * tc.UNROLL * st
    + (tc.KSPLIT - 1) * tc.WARPS * 512 * tc.TILES, 3, changes)
end

-- The f16 tensor-core q8_0 and q4_0 kernels' spec (TC=1, kernels/cuda/gemv_q8_0_tc.cu, gemv_q4_0_tc.cu):
-- warps independent, TILES tiles of 16 rows a warp, KSPLIT slices of k,
-- UNROLL pairs of blocks in flight (STAGES = 0, direct loads) or per
-- shared-memory stage (STAGES >= 2, UNROLL a multiple of 4), read
-- INTERLEAVE pairs at a time (staged only). Its geometry
-- where a variant names none: docs/kernels/cuda-gemv.md, "The f16
-- tensor-core q8_0 kernel".
local QTC_DEFINES = { TC = true, WARPS = true, KSPLIT = true, TILES = true, UNROLL = true, STAGES = true, INTERLEAVE = true,
  GEMV_TOKENS = true, DYNAMIC = true }
local QTC_BEST = { q8_0 = { WARPS = 1, KSPLIT = 2, TILES = 2, UNROLL = 4, STAGES = 2, INTERLEAVE = 2 },
  -- 4 slices: its 36-byte pairs keep 4 warps' stages within the static 48 KiB (q8_0's need 73728 bytes)
  q4_0 = { WARPS = 1, KSPLIT = 4, TILES = 2, UNROLL = 4, STAGES = 2, INTERLEAVE = 2 } }
local QTC_PAIR_BYTES = { q8_0 = 68, q4_0 = 36 } -- two blocks (GbTcQ8_0, GbTcQ4_0 in gemv_b32_tc.cuh)
local function qtc_spec(fmt, d, changes)
  for k, v in pairs(changes) do
    if not QTC_DEFINES[k] and not (k == "I8" and v == 0) then
      error(("gemv_cuda.variant: %s TC=1 (the f16 tensor-core kernel) takes WARPS, KSPLIT, TILES, UNROLL, STAGES, INTERLEAVE and GEMV_TOKENS, not %s")
        :format(fmt, tostring(k)), 3)
    end
  end
  local tc = { TC = 1, GEMV_TOKENS = d.GEMV_TOKENS }
  for name, v in pairs(QTC_BEST[fmt]) do
    tc[name] = changes[name] or v
    if math.type(tc[name]) ~= "integer" or tc[name] < (name == "STAGES" and 0 or 1) then
      error(("gemv_cuda.variant: %s=%s is not a positive integer"):format(name, tostring(tc[name])), 3)
    end
  end
  if tc.TILES > 4 then error(("gemv_cuda.variant: TILES=%d is more than 4 row tiles of 16 per warp"):format(tc.TILES), 3) end
  if tc.UNROLL > 8 then error(("gemv_cuda.variant: UNROLL=%d is more than 8 pairs of blocks in flight"):format(tc.UNROLL), 3) end
  local st = tc.STAGES
  if st == 1 or st > 8 then
    error(("gemv_cuda.variant: STAGES=%d is 0 (direct loads) or 2..8 (shared-memory stages)"):format(st), 3)
  end
  if st >= 2 and tc.UNROLL % 4 ~= 0 then
    error(("gemv_cuda.variant: STAGES=%d stages whole groups of 4 pairs of blocks: UNROLL=%d must be a multiple of 4")
      :format(st, tc.UNROLL), 3)
  end
  if changes.INTERLEAVE == nil and st == 0 then tc.INTERLEAVE = 1 end -- QTC_BEST's reads a stage: direct loads have none
  local il = tc.INTERLEAVE
  if il ~= 1 and il ~= 2 and il ~= 4 then
    error(("gemv_cuda.variant: INTERLEAVE=%d is not 1, 2 or 4 pairs of blocks read together"):format(il), 3)
  end
  if il > 1 and st == 0 then
    error(("gemv_cuda.variant: INTERLEAVE=%d reads a shared-memory stage: it needs STAGES >= 2 (direct loads: UNROLL)"):format(il), 3)
  end
  -- the stages (16 rows a tile of pair bytes x UNROLL + 16) and the k-slice sums (512 bytes per tile and warp past the first slice)
  return tc_block_spec(fmt, tc, tc.WARPS * tc.KSPLIT * st * 16 * tc.TILES * (QTC_PAIR_BYTES[fmt] * tc.UNROLL + 16)
    + (tc.KSPLIT - 1) * tc.WARPS * 512 * tc.TILES, 3, changes)
end

-- The defines variant(fmt, ...) takes and their defaults: the entry's, and
-- PREFETCH = 0, XPRE = 0, I8_GUARD = 1 and STAGED = 0 where the entry has the int8 kernel (I8) behind it.
function M.variant_defines(fmt)
  local base = type(fmt) == "string" and rawget(M, fmt) or nil
  if type(base) ~= "table" or type(base.defines) ~= "table" then return nil end
  local d = {}
  for k, v in pairs(base.defines) do d[k] = v end
  if d.I8 ~= nil then
    for k, sw in pairs(I8_SWITCHES) do d[k] = sw.values[1] end
  end
  d.EARLY_RELEASE = 0 -- the FMA and scalar kernels' release of an overlapping next launch: at start, not exit
  if d.XQ ~= nil then d.XSHARED = 1 end -- the integer dot's x through shared memory (0: registers)
  if TC_BEST[fmt] then d.KSPLIT, d.STAGES, d.TILES = 1, 0, 1 end -- the FMA kernel's: no split, direct loads, ROWS rows (MMA=1 takes others)
  for k, v in pairs(QTC_BEST[fmt] or {}) do -- TC=1's own defines, at their defaults
    if d[k] == nil then d[k] = v end
  end
  if TC_BEST[fmt] or QTC_BEST[fmt] then d.DYNAMIC = 0 end -- the tensor-core kernels' stages forced dynamic (A/B)
  return d
end

-- xshared(v, who) -> the XSHARED define of a variant's value v (the integer dot's x in registers
-- instead of each warp's shared slots, gemv_warp.cuh GbQuantSmem): 0, or nil for 1, the kernels'
-- default, which is not passed so that the default's compile stays the same. who names the caller
-- in the error (moe_cuda.variant takes it too).
function M.xshared(v, who)
  if v ~= 0 and v ~= 1 then error(("%s: XSHARED=%s is not 0 or 1"):format(who, tostring(v)), 3) end
  return v == 0 and 0 or nil
end

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
  -- a tensor-core kernel (the dense formats' MMA=1, q8_0's and q4_0's TC=1): its own spec
  local own = (TC_BEST[fmt] and changes.MMA == 1 and tc_spec) or (QTC_BEST[fmt] and changes.TC == 1 and qtc_spec)
  if own then
    local t = changes.GEMV_TOKENS or d.GEMV_TOKENS
    if math.type(t) ~= "integer" or t < 1 or t > 8 then
      error(("gemv_cuda.variant: GEMV_TOKENS=%s must be an integer in 1..8"):format(tostring(t)), 2)
    end
    d.GEMV_TOKENS = t
    return own(fmt, d, changes)
  end
  local own = {} -- the int8 kernel's own switches (I8_SWITCHES), not defines of the entry
  for k, v in pairs(changes) do
    if k == "EARLY_RELEASE" then
      -- an overlapping next launch released at the block's start, not by its exit
      -- (launch_overlap.cuh): 0 is the kernels' default and not passed, so the default's
      -- compile stays the same
      if v ~= 0 and v ~= 1 then error(("gemv_cuda.variant: EARLY_RELEASE=%s is not 0 or 1"):format(tostring(v)), 2) end
      if v == 1 and changes.I8 == 1 then
        error(("gemv_cuda.variant: %s EARLY_RELEASE is the scalar and FMA kernels' (not the int8 kernel's)"):format(fmt), 2)
      end
      d.EARLY_RELEASE = v == 1 and 1 or nil
    elseif k == "XSHARED" and base.defines.XQ ~= nil then
      d.XSHARED = M.xshared(v, "gemv_cuda.variant")
    elseif I8_SWITCHES[k] and base.defines.I8 ~= nil then
      if changes.I8 ~= 1 then error(("gemv_cuda.variant: %s %s is the int8 kernel's: it needs I8=1"):format(fmt, k), 2) end
      if k == "STAGED" and not I8_STAGE_STRIDE[fmt] and v ~= 0 then
        error(("gemv_cuda.variant: %s has no staged int8 kernel (STAGED: q4_k, q5_k, q8_0, q4_0): its chunks are no "
          .. "whole number of 16-byte copies"):format(fmt), 2)
      end
      if not i8_switch_ok(k, v) then
        error(("gemv_cuda.variant: %s=%s is not %s"):format(k, tostring(v), I8_SWITCHES[k].says), 2)
      end
      own[k] = v
    elseif (k == "KSPLIT" or k == "STAGES" or k == "TILES") and TC_BEST[fmt] then
      -- MMA=1 returned above: the FMA kernel has no split, loads directly and has ROWS rows: KSPLIT=1, STAGES=0, TILES=1
      if k == "TILES" and v ~= 1 then
        error(("gemv_cuda.variant: %s TILES=%s is the tensor-core kernel's (the FMA kernel has ROWS): it needs MMA=1")
          :format(fmt, tostring(v)), 2)
      elseif k == "KSPLIT" and v ~= 1 then
        error(("gemv_cuda.variant: %s KSPLIT=%s splits k in the tensor-core kernel only: it needs MMA=1")
          :format(fmt, tostring(v)), 2)
      elseif k == "STAGES" and v ~= 0 then
        error(("gemv_cuda.variant: %s STAGES=%s stages weights in the tensor-core kernel only: it needs MMA=1")
          :format(fmt, tostring(v)), 2)
      end
    else
      if not KNOWN[k] or base.defines[k] == nil then
        error(("gemv_cuda.variant: %s has no define %s"):format(fmt, tostring(k)), 2)
      end
      if k == "GEMV_TOKENS" then
        if math.type(v) ~= "integer" or v < 1 or v > 8 then
          error(("gemv_cuda.variant: GEMV_TOKENS=%s must be an integer in 1..8"):format(tostring(v)), 2)
        end
      elseif SWITCH[k] then
        if v ~= 0 and v ~= 1 then
          error(("gemv_cuda.variant: %s=%s is not 0 or 1"):format(k, tostring(v)), 2)
        end
      elseif math.type(v) ~= "integer" or v < 1 then
        error(("gemv_cuda.variant: %s=%s is not a positive integer"):format(k, tostring(v)), 2)
      end
      d[k] = v
    end
  end
  if d.XSHARED == 0 and (d.XQ ~= 1 or d.MMA == 1 or d.I8 == 1) then
    error(("gemv_cuda.variant: %s XSHARED=0 keeps the integer dot's x in registers: it needs XQ=1, MMA=0 and I8=0")
      :format(fmt), 2)
  end
  if d.I8 == 1 then return i8_spec(fmt, d, own) end
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
-- (docs/kernels/cuda-gemv.md, "Bulk copies": BULK=1 helps q6_k where a warp
-- has many tiles, at 14336 rows but not at 131072; "Large m": q4_k's 16-row
-- warps at 131072 rows): the first rule whose min_k and min_m the shape
-- reaches, and whose max_m it does not pass, applies.
local SHAPE_RULES = {
  q4_k = { { min_m = 65536, changes = { ROWS = 16 } } },
  q6_k = { { min_k = 4096, max_m = 65535, changes = { BULK = 1 } } },
}
local shaped = {} -- one table per rule: gemv.kernel caches compiled kernels by spec

-- Kernels that won the one-process A/Bs at T > 1 rows of x (the figures:
-- docs/kernels/cuda-gemv.md, from "The int8 tensor-core q4_k kernel" on): a
-- tensor-core kernel from min_tokens, none at the T where the integer dot
-- won. i8: the int8 kernel with x quantized once per call, its digits in the
-- mma's fragment order (XPRE = 2, which beat the shared layout, x quantized
-- per block and the f16 kernels: "x in fragment order"), at a geometry, more:
-- defines besides. The unguarded epilogue (I8_GUARD = 0) won where the branch
-- past T was left divergent ("The epilogue's guard past T"); the weights
-- staged through a cp.async ring per warp (STAGED) won for q5_k, q8_0 and
-- q4_0 ("Weights staged in shared memory"). Each rule is its T's fastest in
-- both orders of one process, measured on an H100.
local function i8(warps, ksplit, more)
  local c = { I8 = 1, XPRE = 2, WARPS = warps, KSPLIT = ksplit, PREFETCH = 0 }
  for k, v in pairs(more or {}) do c[k] = v end
  return c
end
-- bf16 and f16 from T = 3: the dense tensor-core kernel (its TC_BEST
-- geometry); f32: the FMA kernel's geometry at the two T it was swept at, the
-- entry's elsewhere (docs/results/h200-gemv-tokens.md, "The dense tensor-core kernels").
-- A format's rules are tried in order: the first whose min_tokens ..
-- max_tokens holds T applies.
local TOKEN_RULES = {
  bf16 = { { min_tokens = 3, changes = { MMA = 1 } } },
  f16 = { { min_tokens = 3, changes = { MMA = 1 } } },
  f32 = { { min_tokens = 4, max_tokens = 4, changes = { UNROLL = 1 } },
          { min_tokens = 8, max_tokens = 8, changes = { ROWS = 2 } } },
  q4_k = { { min_tokens = 3, max_tokens = 6, changes = i8(7, 4, { I8_GUARD = 0 }) },
           { min_tokens = 7, changes = i8(7, 4) } },
  q5_k = { { min_tokens = 5, max_tokens = 5, changes = i8(2, 4) },
           { min_tokens = 7, max_tokens = 7, changes = i8(1, 2, { STAGED = 4, I8_GUARD = 0 }) },
           { min_tokens = 2, changes = i8(2, 2, { STAGED = 2, I8_GUARD = 0 }) } },
  q6_k = { { min_tokens = 6, max_tokens = 7, changes = i8(8, 4, { I8_GUARD = 0 }) },
           { min_tokens = 8, changes = i8(4, 2, { PREFETCH = 1 }) } },
  q8_0 = { { min_tokens = 2, changes = i8(1, 2, { STAGED = 3, I8_GUARD = 0 }) } },
  q4_0 = { { min_tokens = 3, changes = i8(2, 2, { STAGED = 4, I8_GUARD = 0 }) } },
}

-- token_changes(fmt, tokens) -> the defines fmt's T-row kernel changes
-- besides GEMV_TOKENS (a fresh table; empty when no rule applies).
function M.token_changes(fmt, tokens)
  if type(fmt) ~= "string" or type(rawget(M, fmt)) ~= "table" then
    error(("gemv_cuda.token_changes: unknown format %s"):format(tostring(fmt)), 2)
  end
  return pick_token_rule(TOKEN_RULES[fmt], tokens)
end

local function rule_for(fmt, m, k, who)
  if type(fmt) ~= "string" or type(rawget(M, fmt)) ~= "table" then
    error(("gemv_cuda.%s: unknown format %s"):format(who, tostring(fmt)), 3)
  end
  if math.type(m) ~= "integer" then error(("gemv_cuda.%s: m must be an integer, got %s"):format(who, tostring(m)), 3) end
  if math.type(k) ~= "integer" then error(("gemv_cuda.%s: k must be an integer, got %s"):format(who, tostring(k)), 3) end
  for i, rule in ipairs(SHAPE_RULES[fmt] or {}) do
    if k >= (rule.min_k or 0) and m >= (rule.min_m or 0) and m <= (rule.max_m or math.maxinteger) then return rule, i end
  end
end

-- shape_changes(fmt, m, k [, over]) -> the defines a rule changes for that
-- shape (a fresh table; empty when none applies): a sweep's base
-- (gemv_variants). over: the sweep's own changes; a rule's define that is a
-- scalar-path switch (BULK) is left out where over asks for a tensor-core
-- kernel (MMA=1, I8=1), so that the rule does not make the sweep's variant
-- (or gemv.spec's T-row kernel) invalid.
function M.shape_changes(fmt, m, k, over)
  local rule = rule_for(fmt, m, k, "shape_changes")
  local c = {}
  for name, v in pairs(rule and rule.changes or {}) do c[name] = v end
  if over and (over.MMA == 1 or over.I8 == 1) and over.BULK == nil then c.BULK = nil end
  return c
end

-- for_shape(fmt, m, k) -> the spec gemv uses for that shape by default (the
-- table's entry unless a rule picks a variant).
function M.for_shape(fmt, m, k)
  local rule, i = rule_for(fmt, m, k, "for_shape")
  if not rule then return M[fmt] end
  local key = fmt .. "#" .. i
  shaped[key] = shaped[key] or M.variant(fmt, rule.changes)
  return shaped[key]
end

return M
