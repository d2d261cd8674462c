-- gpubench.moe_cuda: the CUDA MoE kernels (kernels/cuda/moe_q4k_*.cu), their
-- launch geometry and how each variant of gpubench.moe launches them. The
-- defines go to the compiler and this table is their only copy (the kernels
-- refuse to compile without them; each file's first `gpubench-compile:` line
-- repeats the defaults for the NVRTC test).
--
--   pairs    per_token and batched: the GEMV body of gemv_q4_k.cu per pair
--            (ROWS rows per warp, WARPS warps, STAGES slots, PARTS row parts);
--            the q4_k GEMV's defaults
--   fused    fused_gate_up: the same per pair over two stacks, silu * up
--   grouped  grouped: per present expert GWARPS warps of 16 rows on the
--            tensor cores, GTOK tokens per pass, GSTAGES cp.async stages of
--            weights (docs/kernels/moe.md, "grouped")

local M = {}

local function spec(file, entry, defines, block, rows)
  return { file = "kernels/cuda/" .. file, entry = entry, defines = defines, block = block, rows_per_group = rows }
end

local function gemv_like(file, entry, d)
  return spec(file, entry, d, { 32 * d.WARPS, 1, 1 }, d.ROWS * d.WARPS)
end

M.pairs = gemv_like("moe_q4k_pairs.cu", "moe_q4k_pairs", { ROWS = 14, WARPS = 1, STAGES = 2, PARTS = 2 })
M.fused = gemv_like("moe_q4k_fused.cu", "moe_q4k_fused", { ROWS = 14, WARPS = 1, STAGES = 2, PARTS = 2 })
M.grouped = spec("moe_q4k_grouped.cu", "moe_q4k_grouped", { GWARPS = 4, GSTAGES = 3, GTOK = 4 }, { 32 * 4, 1, 1 }, 16 * 4)

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
    if d[k] == nil then error(("moe_cuda.variant: %s has no define %s"):format(name, tostring(k)), 2) end
    if math.type(v) ~= "integer" or v < 1 then
      error(("moe_cuda.variant: %s=%s is not a positive integer"):format(k, tostring(v)), 2)
    end
    d[k] = v
  end
  if name == "grouped" then
    -- The kernel's MoeGroupedSmem (kernels/cuda/moe_q4k_grouped.cu), summed here so
    -- that a geometry over the 48 KiB of static shared memory is refused before NVRTC.
    local W, S, TK = d.GWARPS, d.GSTAGES, d.GTOK
    local bytes = S * 16 * W * (144 + 16) + 2 * TK * (1024 + 16) + 2 * TK * 4 + W * 16 * 16 * 4 + 1024 // 8 + 4 * TK + 12
    if bytes > 48 * 1024 then
      error(("moe_cuda.variant: grouped GWARPS=%d GSTAGES=%d GTOK=%d needs %d B of shared memory, over the 49152 B "
        .. "of static shared memory (fewer stages, warps or tokens)"):format(W, S, TK, bytes), 2)
    end
    return spec("moe_q4k_grouped.cu", base.entry, d, { 32 * d.GWARPS, 1, 1 }, 16 * d.GWARPS) end
  return gemv_like(base.file:match("[^/]+$"), base.entry, d)
end

local function ceil_div(a, b) return (a + b - 1) // b end

local function u32(v) return require("gpu").u32(v) end
local function u64(v) return require("gpu").u64(v) end

-- Each builder: (kernel_of, shape, m, bufs [, specs]) -> launches of one step.
M.launches = {}

local function pair_launch(kernel_of, s, sh, b, pair0, count)
  return { kernel_of(s), { ceil_div(sh.n, s.rows_per_group), count, 1 }, s.block, b.w, b.x, b.ids, b.y,
           u32(sh.n), u32(sh.k), u32(sh.experts), u64(sh.nb02), u32(sh.top_k), u32(pair0), u32(sh.outer), u32(sh.inner) }
end

function M.launches.batched(kernel_of, sh, m, b, specs)
  return { pair_launch(kernel_of, (specs or M).pairs, sh, b, 0, m * sh.top_k) }
end

function M.launches.per_token(kernel_of, sh, m, b, specs)
  local l = {}
  for t = 0, m - 1 do l[t + 1] = pair_launch(kernel_of, (specs or M).pairs, sh, b, t * sh.top_k, sh.top_k) end
  return l
end

function M.launches.fused_gate_up(kernel_of, sh, m, b, specs)
  local s = (specs or M).fused
  return { { kernel_of(s), { ceil_div(sh.n, s.rows_per_group), m * sh.top_k, 1 }, s.block, b.w, b.up, b.x, b.ids, b.y,
             u32(sh.n), u32(sh.k), u32(sh.experts), u64(sh.nb02), u32(sh.top_k), u32(sh.outer), u32(sh.inner) } }
end

function M.launches.grouped(kernel_of, sh, m, b, specs)
  local g = (specs or M).grouped
  local pairs_ = m * sh.top_k
  return { { kernel_of(g), { ceil_div(sh.n, g.rows_per_group), math.min(sh.experts, pairs_), 1 }, g.block, b.w, b.x,
             b.ids, b.y, u32(sh.n), u32(sh.k), u32(sh.experts), u32(sh.nb01), u64(sh.nb02), u32(sh.top_k),
             u32(pairs_), u32(sh.outer), u32(sh.inner) } }
end

return M
