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

-- SW_COOP = 1: the kernels on fp16 cooperative matrices filled from registers
-- (kernels/vulkan/swiglu_coop.comp, docs/kernels/swiglu.md, "Cooperative matrices
-- filled from registers"): SW_WR tiles of 16 rows (8 outputs) x SW_KS slices of K a
-- workgroup, SW_U steps of 16 k loaded ahead; the device needs VK_NV_cooperative_matrix
-- with 16x8x16 f16 products into f32 and subgroups of 32 (`requires`). SW_COOP = 2: the
-- same kernels with the matrices emulated, which any device runs (the tests' path).
-- SW_WB = 1 (with SW_COOP): W in B (kernels/vulkan/swiglu_wideb.comp, docs/kernels/swiglu.md,
-- "W in B"): tiles of 8 weight rows (4 outputs' gate and up rows), SW_U units of 64 k, K a
-- multiple of 64.
S.DEFAULT = { SW_WG = 64, SW_OUT = 2, SW_COOP = 0, SW_WR = 4, SW_KS = 2, SW_U = 2, SW_WB = 0 }
S.KEYS = { "SW_WG", "SW_OUT", "SW_COOP", "SW_WR", "SW_KS", "SW_U", "SW_WB" }
local SCALAR = { SW_WG = true, SW_OUT = true }
local COOP = { SW_WR = true, SW_KS = true, SW_U = true, SW_WB = true }
-- Workgroups per dispatch dimension that every Vulkan device accepts.
S.MAX_GROUPS = 65535

local function ceil_div(a, b) return (a + b - 1) // b end

function S.geometry(changes)
  local g = {}
  for k, v in pairs(S.DEFAULT) do g[k] = v end
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
    elseif k == "SW_COOP" then
      if n ~= 0 and n ~= 1 and n ~= 2 then
        return nil, ("SW_COOP=%s is not 0 (scalar), 1 (cooperative matrices) or 2 (emulated)"):format(tostring(v))
      end
    elseif k == "SW_WB" then
      if n ~= 0 and n ~= 1 then return nil, ("SW_WB=%s is not 0 or 1 (W in B)"):format(tostring(v)) end
    elseif k == "SW_U" then
      if n == nil or n < 1 or n > 8 then return nil, ("SW_U=%s is not an integer from 1 to 8"):format(tostring(v)) end
    elseif k == "SW_WR" or k == "SW_KS" then
      if n == nil or n < 1 then return nil, ("%s=%s is not a positive integer"):format(k, tostring(v)) end
    else
      return nil, ("the Vulkan SwiGLU kernels have no define %s (they take %s)"):format(tostring(k),
        table.concat(S.KEYS, ", "))
    end
    g[k] = n
  end
  local coop = g.SW_COOP >= 1
  for k, v in pairs(changes or {}) do
    if (coop and SCALAR[k] or not coop and COOP[k]) and math.tointeger(v) ~= S.DEFAULT[k] then
      return nil, ("%s is the %s kernels' (SW_COOP=%d)"):format(k, coop and "scalar" or "cooperative-matrix", g.SW_COOP)
    end
  end
  if coop and g.SW_WR * g.SW_KS > 32 then
    return nil, ("SW_WR=%d x SW_KS=%d subgroups of 32 are more than a workgroup's 1024 invocations"):format(g.SW_WR, g.SW_KS)
  end
  -- only what the picked kernels read (the geometry is printed with the results)
  for k in pairs(coop and SCALAR or COOP) do g[k] = nil end
  if g.SW_WB == 0 then g.SW_WB = nil end -- the default: not printed with the results
  if not coop then g.SW_COOP = nil end
  return g
end

-- for_shape(n, k) -> the geometry for that shape: the defaults everywhere
-- (no shape rules; for_device's rule by M is the one pick).
function S.for_shape(n, k) return assert(S.geometry {}), nil end

-- the device check of GEMV_COOP=1's dense kernels (fp16 products into f32, subgroups of 32)
local requires = require("gpubench.gemv_vulkan").coop_requires("SW_COOP=1", nil, true)

-- From min_m rows of x, W in B (SW_COOP=1, SW_WB=1 at DEFAULT's SW_WR, SW_KS, SW_U) where the
-- device passes the fp16 matrices' check and K is a multiple of 64: from there both paths'
-- kernels beat the scalar ones in both orders (docs/kernels/swiglu.md, "W in B").
S.DEVICE_RULE = { min_m = 7, changes = { SW_COOP = 1, SW_WB = 1 } }

-- for_device(dev, n, k, m) -> the geometry dev's features select for m rows of x at N x K,
-- or nil (the shape's).
function S.for_device(dev, n, k, m)
  if m < S.DEVICE_RULE.min_m or math.type(k) ~= "integer" then return nil end
  local g = assert(S.geometry(S.DEVICE_RULE.changes))
  if k % S.fused(g, m).k_multiple ~= 0 or not requires(dev) then return nil end
  return g
end

local function spec(name, g, m, rows_per_group)
  if g.SW_COOP then
    local chain = name == "swiglu_gemv" and 1 or 0
    local defines = { MT = m, SW_WR = g.SW_WR, SW_KS = g.SW_KS, SW_U = g.SW_U, SW_CHAIN = chain }
    if g.SW_COOP == 2 then defines.COOP_EMULATE = 1 end
    local wb = (g.SW_WB or 0) == 1
    -- a tile is 16 rows: 8 outputs' gate and up rows (fused), or 16 rows (chain); W in B: 8 rows
    local per_group = (chain == 1 and 16 or 8) * g.SW_WR // (wb and 2 or 1)
    return {
      file = "kernels/vulkan/" .. (wb and "swiglu_wideb" or "swiglu_coop") .. ".comp", entry = "main",
      defines = defines, block = 32 * g.SW_WR * g.SW_KS,
      grid = function(rows) return ceil_div(rows, per_group) end,
      requires = g.SW_COOP == 1 and requires or nil,
      k_multiple = wb and 64 or nil, -- units of 64 k
    }
  end
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
