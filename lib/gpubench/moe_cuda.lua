-- gpubench.moe_cuda: the CUDA MoE kernels (kernels/cuda/moe_q4k_*.cu), their
-- launch geometry and how each variant of gpubench.moe launches them. The
-- defines go to the compiler and this table is their only copy (the kernels
-- refuse to compile without them; each file's first `gpubench-compile:` line
-- repeats the defaults for the NVRTC test).
--
--   pairs    per_token and batched: the GEMV body of gemv_q4_k.cu per pair
--            (ROWS rows per warp, WARPS warps, STAGES slots, PARTS row parts);
--            the q4_k GEMV's defaults; XSHARED=0 (pairs and fused) keeps x in
--            registers, not in the block's shared memory
--   fused    fused_gate_up: the same per pair over two stacks, silu * up, at
--            its own geometry
--   grouped  grouped: per present expert GWARPS warps of 16 rows on the
--            tensor cores, GTOK tokens per pass, GSTAGES cp.async stages of
--            weights; GPACK=1 (GTOK <= 4) one mma per k-step for x_hi and x_lo
--            together (docs/kernels/moe.md, "grouped")

local M = {}

local function spec(file, entry, defines, block, rows)
  return { file = "kernels/cuda/" .. file, entry = entry, defines = defines, block = block, rows_per_group = rows }
end

local function gemv_like(file, entry, d)
  return spec(file, entry, d, { 32 * d.WARPS, 1, 1 }, d.ROWS * d.WARPS)
end

M.pairs = gemv_like("moe_q4k_pairs.cu", "moe_q4k_pairs", { ROWS = 14, WARPS = 1, STAGES = 2, PARTS = 2 })
-- fused: 8 rows a warp, one part, x in registers (a one-warp block's x slots in shared memory
-- bound its blocks per SM): faster than the pairs geometry at every m of qwen3 and mixtral
-- gate/up in both orders (docs/kernels/moe.md, "x in registers")
M.fused = gemv_like("moe_q4k_fused.cu", "moe_q4k_fused", { ROWS = 8, WARPS = 1, STAGES = 2, PARTS = 1, XSHARED = 0 })
M.grouped = spec("moe_q4k_grouped.cu", "moe_q4k_grouped", { GWARPS = 4, GSTAGES = 3, GTOK = 4, GPACK = 0 },
  { 32 * 4, 1, 1 }, 16 * 4)
local FLAGS = { GPACK = true } -- defines that take 0 or 1

-- grouped is one launch: each block finds its expert's pairs itself.
M.grouped_dispatches = 1

-- variant(name, changes) -> a copy of spec `name` (pairs, fused, grouped) with
-- some defines changed, block and rows to match.
function M.variant(name, changes)
  local base = rawget(M, name)
  if type(base) ~= "table" or not base.file then error(("moe_cuda.variant: unknown kernel %s"):format(tostring(name)), 2) end
  local d = {}
  for k, v in pairs(base.defines) do d[k] = v end
  for k, v in pairs(changes) do
    if k == "XSHARED" and name ~= "grouped" then
      d.XSHARED = require("gpubench.gemv_cuda").xshared(v, "moe_cuda.variant")
      goto next
    end
    if d[k] == nil then error(("moe_cuda.variant: %s has no define %s"):format(name, tostring(k)), 2) end
    if FLAGS[k] then
      if v ~= 0 and v ~= 1 then error(("moe_cuda.variant: %s=%s is not 0 or 1"):format(k, tostring(v)), 2) end
    elseif math.type(v) ~= "integer" or v < 1 then
      error(("moe_cuda.variant: %s=%s is not a positive integer"):format(k, tostring(v)), 2)
    end
    d[k] = v
    ::next::
  end
  if name == "grouped" then
    -- The kernel's MoeGroupedSmem (kernels/cuda/moe_q4k_grouped.cu), summed here so
    -- that a geometry over a block's shared memory is refused before NVRTC (past the
    -- static 48 KiB the kernel takes it as dynamic shared memory).
    local W, S, TK = d.GWARPS, d.GSTAGES, d.GTOK
    if d.GPACK == 1 and TK > 4 then
      error(("moe_cuda.variant: grouped GPACK=1 takes GTOK 1 to 4 (x_hi and x_lo share the mma's 8 columns), not %d")
        :format(TK), 2)
    end
    local bytes = S * 16 * W * (144 + 16) + 2 * TK * (1024 + 16) + 2 * TK * 4 + 2 * 8 * 8 * 4
      + W * 16 * 16 * 4 + 1024 // 8 + 4 * TK + 12
    local limit = require("gpubench.kernels").CUDA_BLOCK_SHARED_BYTES
    if bytes > limit then
      error(("moe_cuda.variant: grouped GWARPS=%d GSTAGES=%d GTOK=%d needs %d B of shared memory, over a block's %d B "
        .. "(fewer stages, warps or tokens)"):format(W, S, TK, bytes, limit), 2)
    end
    return spec("moe_q4k_grouped.cu", base.entry, d, { 32 * d.GWARPS, 1, 1 }, 16 * d.GWARPS) end
  return gemv_like(base.file:match("[^/]+$"), base.entry, d)
end

-- Steps where the sweeps picked another grouped geometry
-- (docs/kernels/moe.md, "Geometry per step", "x_hi and x_lo in one mma"):
-- where the launch has at most one block per SM of the H200 (min(E, pairs) x
-- row tiles of the table's geometry; qwen3 gate/up at m = 1: 96), x_hi and
-- x_lo in one mma (GPACK=1: shorter mma chains where a block waits on them
-- alone; with the SMs full it costs a little); with two or more pairs per
-- expert on average (pairs / min(E, pairs), uniform routing), eight tokens
-- per pass and two stages read each expert's tiles for more of its tokens. The
-- first rule whose max_blocks and min_pairs_per_expert the step meets applies.
M.GROUPED_RULES = {
  { max_blocks = 132, changes = { GPACK = 1 } },
  { min_pairs_per_expert = 2, changes = { GTOK = 8, GSTAGES = 2 } },
}
local ruled = {} -- one spec per rule: gpubench.moe's kernel cache is keyed by spec

-- grouped_for(shape, m) -> the grouped spec a step of m tokens runs, and
-- the rule that picked it (nil: the table's M.grouped).
function M.grouped_for(sh, m)
  local pairs_ = m * sh.top_k
  local present = math.min(sh.experts, pairs_)
  local per_expert = pairs_ / present
  local blocks = present * -(-sh.n // M.grouped.rows_per_group)
  for i, rule in ipairs(M.GROUPED_RULES) do
    if per_expert >= (rule.min_pairs_per_expert or 0) and blocks <= (rule.max_blocks or math.huge) then
      ruled[i] = ruled[i] or M.variant("grouped", rule.changes)
      return ruled[i], rule
    end
  end
  return M.grouped, nil
end

-- The launch builders (gpubench.moe_launch): the expert stride is a u64 (a
-- stack may pass 4 GiB); the grouped kernel also takes the row stride.
local function u32(v) return require("gpu").u32(v) end
local function u64(v) return require("gpu").u64(v) end
M.launches, M.spec_of = require("gpubench.moe_launch")(M, {
  stride = u64,
  rule_for = function(kernel, sh, m) if kernel == "grouped" then return (M.grouped_for(sh, m)) end end,
  grouped_strides = function(sh) return { u32(sh.nb01), u64(sh.nb02) } end,
})

return M
