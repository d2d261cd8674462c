-- gpubench.swiglu_vulkan: launch geometry of the Vulkan SwiGLU kernels
-- (kernels/vulkan/swiglu_fused.comp, swiglu_gemv.comp, swiglu_mul.comp).
--
-- A workgroup of SW_WG invocations owns 4 weight rows: 2 outputs (their gate
-- and up rows) of the fused kernel, 4 rows of the GEMV (swiglu_common.glsl).
-- The shaders refuse to compile without SW_WG and MT, so this table is the one
-- copy of the geometry. Not tuned: the Vulkan paths are checked on lavapipe in
-- CI; docs/kernels/swiglu.md.

local S = {}

S.DEFAULT = { SW_WG = 64 }
S.KEYS = { "SW_WG" }
-- Workgroups per dispatch dimension that every Vulkan device accepts.
S.MAX_GROUPS = 65535

local function ceil_div(a, b) return (a + b - 1) // b end

function S.geometry(changes)
  local g = { SW_WG = S.DEFAULT.SW_WG }
  for k, v in pairs(changes or {}) do
    if k ~= "SW_WG" then
      return nil, ("the Vulkan SwiGLU kernels have no define %s (they take SW_WG)"):format(tostring(k))
    end
    v = math.tointeger(v)
    if v == nil or v < 32 or v > 1024 or v & (v - 1) ~= 0 then
      return nil, ("SW_WG=%s is not a power of two from 32 to 1024"):format(tostring(v))
    end
    g.SW_WG = v
  end
  return g
end

-- for_shape(n, k) -> the geometry for that shape: the defaults everywhere
-- (no shape rules: the Vulkan kernels are not tuned).
function S.for_shape(n, k) return assert(S.geometry {}), nil end

local function spec(name, g, m, rows_per_group)
  return {
    file = "kernels/vulkan/" .. name .. ".comp", entry = "main",
    defines = { MT = m, SW_WG = g.SW_WG }, block = g.SW_WG,
    grid = function(rows) return ceil_div(rows, rows_per_group) end,
  }
end

function S.fused(g, m) return spec("swiglu_fused", g, m, 2) end
function S.gemv(g, m) return spec("swiglu_gemv", g, m, 4) end

function S.mul()
  return {
    file = "kernels/vulkan/swiglu_mul.comp", entry = "main", block = 256,
    grid = function(n, m) return ceil_div(ceil_div(m * n, 2), 256) end,
  }
end

return S
