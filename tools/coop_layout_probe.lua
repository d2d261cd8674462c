-- tools/coop_layout_probe.lua: the components' elements of the fp16 cooperative-matrix
-- types (16x16 A, 16x8 B, 16x8 fp32 C) and of the int8 ones (16x32 s8 A, 32x8 s8 B, 16x8 s32
-- C) on a Vulkan device with VK_NV_cooperative_matrix, read from index matrices
-- (kernels/vulkan/coop_layout_probe.comp): what coop_frag.glsl and gemv_dense_wide*.comp
-- assume of them checked against what the driver does.
--   gpubench --backend vulkan tools/coop_layout_probe.lua
local gpu = require "gpu"
local dev = gpu.open { backend = "vulkan" }
if dev.cooperative_matrix ~= "nv" then
  io.stderr:write(("coop_layout_probe: %s has no VK_NV_cooperative_matrix\n"):format(dev.name))
  os.exit(2)
end
local root = require("gpubench.kernels").root()
local k <close> = dev:kernel { file = root .. "/kernels/vulkan/coop_layout_probe.comp" }
local LANE = 160 -- uints a lane writes
local out <close> = dev:buffer(32 * LANE * 4)
k:launch(1, 32, out)
local raw = out:download(0, 32 * LANE * 4)
local function at(i) return string.unpack("<I4", raw, 4 * i + 1) end
-- a type whose components hold their element index (row * cols + col)
local function show(name, base, cols)
  print(("%s (length %d): lane: (row,col) of each component"):format(name, at(base)))
  for l = 0, 31 do
    local n, parts = at(l * LANE + base), {}
    for e = 0, math.min(n, 15) - 1 do
      local p = at(l * LANE + base + 1 + e)
      parts[#parts + 1] = ("(%d,%d)"):format(p // cols, p % cols)
    end
    print(("  %2d: %s"):format(l, table.concat(parts, " ")))
  end
end
-- an int8 type loaded twice: components holding their row at base + 1.., their column at base + 17..
local function show2(name, base)
  print(("%s (length %d): lane: (row,col) of each component"):format(name, at(base)))
  for l = 0, 31 do
    local n, parts = at(l * LANE + base), {}
    for e = 0, math.min(n, 16) - 1 do
      parts[#parts + 1] = ("(%d,%d)"):format(at(l * LANE + base + 1 + e), at(l * LANE + base + 17 + e))
    end
    print(("  %2d: %s"):format(l, table.concat(parts, " ")))
  end
end
print(("fp16 cooperative-matrix layouts on %s"):format(dev.name))
show("A 16x16 f16", 0, 16)
show("B 16x8 f16 (row = k)", 16, 8)
show("C 16x8 f32", 32, 8)
print(("int8 cooperative-matrix layouts on %s"):format(dev.name))
show2("A 16x32 s8", 48)
show2("B 32x8 s8 (row = k)", 81)
show("C 16x8 s32", 114, 8)
