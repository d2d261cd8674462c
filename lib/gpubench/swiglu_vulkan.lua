-- gpubench.swiglu_vulkan: launch geometry of the Vulkan SwiGLU kernels
-- (kernels/vulkan/swiglu_fused.comp, swiglu_gemv.comp, swiglu_mul.comp).
--
-- A workgroup of SW_WG invocations owns 2 SW_OUT weight rows: SW_OUT outputs
-- (their gate and up rows) of the fused kernel, 2 SW_OUT rows of the GEMV
-- (swiglu_common.glsl); SW_OUT = 4 loads each x word once for 8 rows instead
-- of 4 (a variant until an A/B on a GPU; docs/kernels/swiglu.md, "The Vulkan
-- kernels"). The shaders refuse to compile without SW_WG, SW_OUT and MT, so
-- this table is the one copy of the geometry. Not tuned: the Vulkan paths are
-- checked on lavapipe in CI.

local S = {}

S.DEFAULT = { SW_WG = 64, SW_OUT = 2 }
S.KEYS = { "SW_WG", "SW_OUT" }
-- Workgroups per dispatch dimension that every Vulkan device accepts.
S.MAX_GROUPS = 65535

local function ceil_div(a, b) return (a + b - 1) // b end

function S.geometry(changes)
  local g = { SW_WG = S.DEFAULT.SW_WG, SW_OUT = S.DEFAULT.SW_OUT }
  for k, v in pairs(changes or {}) do
    local n = math.tointeger(v)
    if k == "SW_WG" then
      if n == nil or n < 32 or n > 1024 or n & (n - 1) ~= 0 then
        return nil, ("SW_WG=%s is not a power of two from 32 to 1024"):format(tostring(v))
      end
    elseif k == "SW_OUT" then
      if n ~= 2 and n ~= 4 then
        return nil, ("SW_OUT=%s is not 2 or 4 (outputs per workgroup, in pairs of a bf16 word)"):format(tostring(v))
      end
    else
      return nil, ("the Vulkan SwiGLU kernels have no define %s (they take SW_WG and SW_OUT)"):format(tostring(k))
    end
    g[k] = n
  end
  return g
end

-- for_shape(n, k) -> the geometry for that shape: the defaults everywhere
-- (no shape rules: the Vulkan kernels are not tuned).
function S.for_shape(n, k) return assert(S.geometry {}), nil end

local function spec(name, g, m, rows_per_group)
  return {
    file = "kernels/vulkan/" .. name .. ".comp", entry = "main",
    defines = { MT = m, SW_WG = g.SW_WG, SW_OUT = g.SW_OUT or S.DEFAULT.SW_OUT }, block = g.SW_WG,
    grid = function(rows) return ceil_div(rows, rows_per_group) end,
  }
end

-- fused: SW_OUT outputs a workgroup; gemv: 2 SW_OUT rows
function S.fused(g, m) return spec("swiglu_fused", g, m, g.SW_OUT or S.DEFAULT.SW_OUT) end
function S.gemv(g, m) return spec("swiglu_gemv", g, m, 2 * (g.SW_OUT or S.DEFAULT.SW_OUT)) end

function S.mul()
  return {
    file = "kernels/vulkan/swiglu_mul.comp", entry = "main", block = 256,
    grid = function(n, m) return ceil_div(ceil_div(m * n, 2), 256) end,
  }
end

return S
