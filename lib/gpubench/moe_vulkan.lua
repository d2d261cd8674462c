-- gpubench.moe_vulkan: the Vulkan MoE kernels (kernels/vulkan/moe_q4k_*.comp),
-- their launch geometry and how each variant of gpubench.moe launches them.
-- Workgroups of 256 invocations in lane groups of MOE_T lanes, MOE_NR rows per
-- lane group (gemv_vulkan.lua's scheme; the q4_k GEMV's defaults for pairs),
-- MOE_TC tokens per pass of the grouped shader. The defines are the only copy.

local M = {}

local WG = 256

-- A shader's shared memory (moe_common.glsl, moe_idot.glsl, the grouped
-- shader's own): the reduction scratch, on the integer path MOE_XB blocks of
-- x per row of x (16 words of bytes, a scale, a sum), and the grouped
-- shader's presence mask and pair list. sums_per_row: 2 for the fused shader
-- (gate and up).
local function shared_bytes(d, sums_per_row)
  local rows_x = d.MOE_TC or 1
  local bytes = (WG // 4) * d.MOE_NR * sums_per_row * rows_x * 4
  if d.MOE_IDOT == 1 then bytes = bytes + 72 * d.MOE_XB * rows_x end
  if d.MOE_TC then bytes = bytes + 1024 // 8 + 4 * WG + 8 end
  return bytes
end

local function spec(file, defines)
  local s = { file = "kernels/vulkan/" .. file, entry = "main", defines = defines, block = { WG, 1, 1 },
              rows_per_group = (WG // defines.MOE_T) * defines.MOE_NR }
  if defines.MOE_IDOT then
    s.shared_bytes = shared_bytes(defines, file == "moe_q4k_fused.comp" and 2 or 1)
    if defines.MOE_IDOT == 1 then
      -- the integer path: x rounded to int16 per 32 values (the check's bound takes it), and
      -- what moe.launches asks of the device
      s.x_rounding, s.needs_integer_dot, s.min_subgroup = 32, true, 8
    end
  end
  return s
end

-- The integer path (MOE_IDOT=1) is the table's for every shader, the A/Bs' pick
-- over the float one; rule_for falls back to MOE_IDOT=0 on a device that cannot
-- run it. The geometries are the sweeps' picks at m = 1. Evidence:
-- docs/kernels/moe.md, "The integer path", "Geometry of the integer shaders".
M.pairs = spec("moe_q4k_pairs.comp", { MOE_T = 32, MOE_NR = 4, MOE_IDOT = 1, MOE_XB = 64 })
M.fused = spec("moe_q4k_fused.comp", { MOE_T = 32, MOE_NR = 2, MOE_IDOT = 1, MOE_XB = 64 })
M.grouped = spec("moe_q4k_grouped.comp", { MOE_T = 16, MOE_NR = 4, MOE_TC = 4, MOE_IDOT = 1, MOE_XB = 64 })

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
    if k == "MOE_IDOT" then
      if v ~= 0 and v ~= 1 then error(("moe_vulkan.variant: MOE_IDOT=%s is not 0 or 1"):format(tostring(v)), 2) end
    elseif math.type(v) ~= "integer" or v < 1 then
      error(("moe_vulkan.variant: %s=%s is not a positive integer"):format(k, tostring(v)), 2)
    end
    d[k] = v
  end
  if WG % d.MOE_T ~= 0 then error(("moe_vulkan.variant: MOE_T=%d does not divide %d"):format(d.MOE_T, WG), 2) end
  if d.MOE_XB and d.MOE_XB % 8 ~= 0 then
    error(("moe_vulkan.variant: MOE_XB=%d is not a multiple of 8 (whole super-blocks of x per slice)"):format(d.MOE_XB), 2)
  end
  return spec(base.file:match("[^/]+$"), d)
end

-- Steps where the sweeps picked another geometry (docs/kernels/moe.md,
-- "Geometry of the integer shaders"): lane groups of 8, and 2 rows a lane group
-- for grouped (the table's 64 rows a workgroup) and for pairs, where a step has
-- min_pairs or more pairs (m top_k; min_pairs lies between the step sizes
-- swept, not at a measured edge). Every rule whose kernel and min_pairs the
-- step meets applies, in order.
M.STEP_RULES = {
  { kernels = { pairs = true, fused = true, grouped = true }, min_pairs = 32, changes = { MOE_T = 8 } },
  { kernels = { grouped = true }, min_pairs = 32, changes = { MOE_NR = 2 } },
  { kernels = { pairs = true }, min_pairs = 128, changes = { MOE_NR = 2 } },
}

local picked = {} -- one spec per kernel and changes: gpubench.moe's kernel cache is keyed by spec
local function pick(kernel, changes)
  if not next(changes) then return M[kernel] end
  local key = kernel .. ":" .. require("gpubench.options").format_defines(changes)
  picked[key] = picked[key] or M.variant(kernel, changes)
  return picked[key]
end

-- rule_for(kernel, shape, m, dev) -> the spec of kernel ("pairs", "fused",
-- "grouped") a step of m tokens runs on dev: the table's with the step's
-- rules applied, on the float path where dev cannot run the integer one.
function M.rule_for(kernel, sh, m, dev)
  local changes = {}
  for _, rule in ipairs(M.STEP_RULES) do
    if rule.kernels[kernel] and m * sh.top_k >= rule.min_pairs then
      for k, v in pairs(rule.changes) do changes[k] = v end
    end
  end
  local s = pick(kernel, changes)
  if s.needs_integer_dot and (not dev or require("gpubench.moe").unmet(dev, s)) then
    changes.MOE_IDOT = 0
    s = pick(kernel, changes)
  end
  return s
end

-- The launch builders (gpubench.moe_launch): 32-bit strides (the shaders
-- address a stack with 32-bit offsets, MAX_STACK_BYTES).
local function u32(v) return require("gpu").u32(v) end
M.launches, M.spec_of = require("gpubench.moe_launch")(M, {
  stride = u32,
  rule_for = M.rule_for,
  grouped_strides = function(sh) return { u32(sh.nb02) } end,
})

return M
