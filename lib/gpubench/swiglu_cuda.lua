-- gpubench.swiglu_cuda: launch geometry of the CUDA SwiGLU kernels
-- (kernels/cuda/swiglu_fused.cu, swiglu_gemv.cu, swiglu_mul.cu).
--
-- A warp of the fused kernel owns TILES tiles of 8 outputs (one mma tile: their
-- 8 gate and 8 up rows); a warp of the GEMV owns TILES tiles of 16 rows. Both
-- load UNROLL chunks of 32 k (2 x TILES 16-byte weight words per lane each)
-- before using any, and run WARPS warps per block; the fused kernel's KSPLIT
-- warps share each warp's outputs, one slice of k each (KSPLIT x WARPS warps
-- a block; the GEMV ignores it); STAGES >= 2 moves its weights through
-- shared memory in whole row runs (0: direct loads; the GEMV ignores it
-- too); EARLY_RELEASE = 1 has the fused kernel and the GEMV release an overlapping
-- next launch at their start rather than by ending (launch overlap:
-- docs/kernels/swiglu.md, "Launch overlap"). The defines go to the
-- compiler, which refuses to build the kernels without them, so this table is
-- their one copy; the kernels' `// gpubench-compile:` lines repeat it for the
-- NVRTC test. Why these values: docs/kernels/swiglu.md ("Geometry").

local S = {}

S.DEFAULT = { TILES = 1, UNROLL = 8, WARPS = 1, KSPLIT = 2, STAGES = 0, EARLY_RELEASE = 0 }
S.KEYS = { "TILES", "UNROLL", "WARPS", "KSPLIT", "STAGES", "EARLY_RELEASE" }
local LIMIT = { TILES = 4, UNROLL = 16, WARPS = 32, KSPLIT = 8, STAGES = 8, EARLY_RELEASE = 1 }
-- The fused kernel's shared memory: STAGES stages of 16 TILES rows x 64
-- UNROLL bytes per warp and the k-slice sums, within a block's limit (past 48
-- KiB the stages are dynamic shared memory: swiglu_fused.cu).
local SMEM_LIMIT = require("gpubench.kernels").CUDA_BLOCK_SHARED_BYTES
function S.fused_smem_bytes(g)
  local warps = g.WARPS * g.KSPLIT
  local stages = g.STAGES >= 2 and warps * g.STAGES * 16 * g.TILES * 64 * g.UNROLL or 0
  return stages + (g.KSPLIT - 1) * g.WARPS * 4 * g.TILES * 32 * 4
end

local function ceil_div(a, b) return (a + b - 1) // b end

-- geometry(changes) -> the defaults with `changes` (a table {TILES =, ...})
-- applied; nil and a message for an unknown key or a value out of range.
function S.geometry(changes)
  local g = {}
  for k, v in pairs(S.DEFAULT) do g[k] = v end
  for k, v in pairs(changes or {}) do
    if not LIMIT[k] then
      return nil, ("the CUDA SwiGLU kernels have no define %s (they take %s)"):format(tostring(k), table.concat(S.KEYS, ", "))
    end
    if k == "STAGES" then
      if math.tointeger(v) == nil or v < 0 or v == 1 or v > LIMIT[k] then
        return nil, ("STAGES=%s is not 0 (direct loads) or an integer from 2 to %d"):format(tostring(v), LIMIT[k])
      end
    elseif k == "EARLY_RELEASE" then
      if v ~= 0 and v ~= 1 then return nil, ("EARLY_RELEASE=%s is not 0 or 1"):format(tostring(v)) end
    elseif math.tointeger(v) == nil or v < 1 or v > LIMIT[k] then
      return nil, ("%s=%s is not an integer from 1 to %d"):format(k, tostring(v), LIMIT[k])
    end
    g[k] = math.tointeger(v)
  end
  if g.WARPS * g.KSPLIT > 32 then
    return nil, ("WARPS=%d x KSPLIT=%d warps is more than a block's 1024 threads"):format(g.WARPS, g.KSPLIT)
  end
  local smem = S.fused_smem_bytes(g)
  if smem > SMEM_LIMIT then
    return nil, ("the fused kernel's shared memory, %d bytes (STAGES=%d x %d warps x 16 TILES rows x 64 UNROLL bytes, and the k-slice sums), is more than a block's %d")
      :format(smem, g.STAGES, g.WARPS * g.KSPLIT, SMEM_LIMIT)
  end
  return g
end

-- The fused kernel's geometry per shape, the sweeps' picks
-- (docs/kernels/swiglu.md, "Staged loads", "Shape rules"): the weights through
-- shared-memory stages (whole row runs per copy) everywhere: 3 short stages
-- and 4 k slices at N = 6912, 2 short stages and 8 slices at 11008, 2 stages
-- of 4 chunks and 4 slices from 13824. The thresholds lie between the
-- measured shapes. The first rule with n <= max_n applies; DEFAULT (direct
-- loads) is the base that --geometry changes.
S.SHAPE_RULES = {
  { max_n = 8192, changes = { KSPLIT = 4, STAGES = 3, UNROLL = 2 } },
  { max_n = 12288, changes = { KSPLIT = 8, STAGES = 2, UNROLL = 2 } },
  { max_n = math.huge, changes = { KSPLIT = 4, STAGES = 2, UNROLL = 4 } },
}

-- for_shape(n, k) -> the geometry for that shape: the defaults with the
-- first matching rule's changes (a fresh table), and that rule (or nil).
function S.for_shape(n, k)
  for _, rule in ipairs(S.SHAPE_RULES) do
    if n <= rule.max_n then return assert(S.geometry(rule.changes)), rule end
  end
  return assert(S.geometry {}), nil
end

local function spec(name, g, m, per_warp, ksplit)
  local defines = { MT = m, TILES = g.TILES, UNROLL = g.UNROLL, WARPS = g.WARPS }
  if ksplit then defines.KSPLIT, defines.STAGES = g.KSPLIT or 1, g.STAGES or 0 end
  if (g.EARLY_RELEASE or 0) ~= 0 then defines.EARLY_RELEASE = g.EARLY_RELEASE end -- 0 is the kernels' default
  return {
    file = "kernels/cuda/" .. name .. ".cu", entry = name,
    defines = defines,
    block = 32 * g.WARPS * (ksplit and defines.KSPLIT or 1),
    grid = function(rows) return ceil_div(rows, per_warp * g.TILES * g.WARPS) end,
  }
end

-- fused(g, m): grid(N) blocks for N outputs. gemv(g, m): grid(R) for R rows.
function S.fused(g, m) return spec("swiglu_fused", g, m, 8, true) end
function S.gemv(g, m) return spec("swiglu_gemv", g, m, 16, false) end

-- mul(): the elementwise kernel; grid(n, m) covers m x n outputs, 8 per
-- thread when n % 8 == 0.
function S.mul()
  return {
    file = "kernels/cuda/swiglu_mul.cu", entry = "swiglu_mul", block = 256,
    grid = function(n, m) return ceil_div(m * n, (n % 8 == 0 and 8 or 1) * 256) end,
  }
end

return S
