-- gpubench.moe_vulkan: the Vulkan MoE kernels (kernels/vulkan/moe_q4k_*.comp),
-- their launch geometry and how each variant of gpubench.moe launches them.
-- Workgroups of 256 invocations in lane groups of MOE_T lanes, MOE_NR rows per
-- lane group (gemv_vulkan.lua's scheme; the q4_k GEMV's defaults for pairs),
-- MOE_TC tokens per pass of the grouped shader. The defines are the only copy.

local M = {}

local WG = 256

local function spec(file, defines)
  return { file = "kernels/vulkan/" .. file, entry = "main", defines = defines, block = { WG, 1, 1 },
           rows_per_group = (WG // defines.MOE_T) * defines.MOE_NR }
end

M.pairs = spec("moe_q4k_pairs.comp", { MOE_T = 64, MOE_NR = 4 })
M.fused = spec("moe_q4k_fused.comp", { MOE_T = 64, MOE_NR = 2 })
M.grouped = spec("moe_q4k_grouped.comp", { MOE_T = 32, MOE_NR = 2, MOE_TC = 8 })

-- grouped is one dispatch: the shader finds its expert's pairs itself.
M.grouped_dispatches = 1

-- The shaders address words with 32-bit indices: a stack below 64 GiB.
M.MAX_STACK_BYTES = (1 << 36) - 64

function M.variant(name, changes)
  local base = rawget(M, name)
  if type(base) ~= "table" or not base.file then error(("moe_vulkan.variant: unknown kernel %s"):format(tostring(name)), 2) end
  local d = {}
  for k, v in pairs(base.defines) do d[k] = v end
  for k, v in pairs(changes) do
    if d[k] == nil then error(("moe_vulkan.variant: %s has no define %s"):format(name, tostring(k)), 2) end
    if math.type(v) ~= "integer" or v < 1 then
      error(("moe_vulkan.variant: %s=%s is not a positive integer"):format(k, tostring(v)), 2)
    end
    d[k] = v
  end
  if WG % d.MOE_T ~= 0 then error(("moe_vulkan.variant: MOE_T=%d does not divide %d"):format(d.MOE_T, WG), 2) end
  return spec(base.file:match("[^/]+$"), d)
end

local function ceil_div(a, b) return (a + b - 1) // b end
local function u32(v) return require("gpu").u32(v) end

M.launches = {}

local function pair_launch(kernel_of, s, sh, b, pair0, count)
  return { kernel_of(s), { ceil_div(sh.n, s.rows_per_group), count, 1 }, s.block, b.w, b.x, b.ids, b.y,
           u32(sh.n), u32(sh.k), u32(sh.experts), u32(sh.nb02), u32(sh.top_k), u32(pair0), u32(sh.outer), u32(sh.inner) }
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
             u32(sh.n), u32(sh.k), u32(sh.experts), u32(sh.nb02), u32(sh.top_k), u32(sh.outer), u32(sh.inner) } }
end

function M.launches.grouped(kernel_of, sh, m, b, specs)
  local g = (specs or M).grouped
  local pairs_ = m * sh.top_k
  return { { kernel_of(g), { ceil_div(sh.n, g.rows_per_group), math.min(sh.experts, pairs_), 1 }, g.block, b.w, b.x,
             b.ids, b.y, u32(sh.n), u32(sh.k), u32(sh.experts), u32(sh.nb02), u32(sh.top_k), u32(pairs_),
             u32(sh.outer), u32(sh.inner) } }
end

return M
