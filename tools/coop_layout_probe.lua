-- tools/coop_layout_probe.lua: the components' elements of the fp16 cooperative-matrix
-- types (16x16 A, 16x8 B, 16x8 fp32 C) on a Vulkan device with VK_NV_cooperative_matrix,
-- read from index matrices (kernels/vulkan/coop_layout_probe.comp): what coop_frag.glsl
-- assumes of them (pairs of k) checked against what the driver does.
--   gpubench --backend vulkan tools/coop_layout_probe.lua
local gpu = require "gpu"
local dev = gpu.open { backend = "vulkan" }
if dev.cooperative_matrix ~= "nv" then
  io.stderr:write(("coop_layout_probe: %s has no VK_NV_cooperative_matrix\n"):format(dev.name))
  os.exit(2)
end
local root = require("gpubench.kernels").root()
local k <close> = dev:kernel { file = root .. "/kernels/vulkan/coop_layout_probe.comp" }
local out <close> = dev:buffer(32 * 64 * 4)
k:launch(1, 32, out)
local raw = out:download(0, 32 * 64 * 4)
local function at(i) return string.unpack("<I4", raw, 4 * i + 1) end
local function show(name, base, cols)
  print(("%s (length %d): lane: (row,col) of each component"):format(name, at(base)))
  for l = 0, 31 do
    local n, parts = at(l * 64 + base), {}
    for e = 0, math.min(n, 15) - 1 do
      local p = at(l * 64 + base + 1 + e)
      parts[#parts + 1] = ("(%d,%d)"):format(p // cols, p % cols)
    end
    print(("  %2d: %s"):format(l, table.concat(parts, " ")))
  end
end
print(("fp16 cooperative-matrix layouts on %s"):format(dev.name))
show("A 16x16 f16", 0, 16)
show("B 16x8 f16 (row = k)", 16, 8)
show("C 16x8 f32", 32, 8)
