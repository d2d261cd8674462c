-- gpubench.kernels: where a named kernel's source lives for a device.
--
-- Why: an experiment names a kernel ("copy") and must get the same kernel
-- contract on every backend (kernels/cuda/copy.cu, entry "copy";
-- kernels/vulkan/copy.comp, entry "main"), found from any working directory:
-- paths are resolved against the gpubench root, not the shell's cwd.

local kernels = {}

-- The shared memory one CUDA block may have: sm_90's opt-in maximum, 227
-- KiB. Specs refuse more before NVRTC; past the static
-- 48 KiB a kernel takes dynamic shared memory (kernels/cuda/dynamic_shared.cuh),
-- and the host refuses a part with less, naming its limit.
kernels.CUDA_BLOCK_SHARED_BYTES = 227 * 1024

-- root() -> the gpubench root: gpu.root() when the host exposes it, else the
-- folder above lib/ that this module was loaded from.
function kernels.root()
  local ok, gpu = pcall(require, "gpu")
  if ok and type(gpu) == "table" then
    local r = gpu.root
    if type(r) == "function" then r = r() end
    if type(r) == "string" and r ~= "" then return r end
  end
  local here = package.searchpath("gpubench.kernels", package.path)
  if here then
    local root = here:match("^(.*)/lib/gpubench/kernels%.lua$")
    if root then return root ~= "" and root or "/" end
    if here:match("^lib/gpubench/kernels%.lua$") or here:match("^%./lib/gpubench/kernels%.lua$") then
      return "."
    end
  end
  return "."
end

local EXT = { cuda = "cu", vulkan = "comp" }

-- source(backend, name) -> {file =, entry =} for dev:kernel. CUDA entries are
-- the kernel's name; GLSL compute shaders enter at main.
function kernels.source(backend, name)
  local ext = EXT[backend]
  if not ext then error(("kernels.source: unknown backend %q"):format(tostring(backend)), 2) end
  return {
    file = ("%s/kernels/%s/%s.%s"):format(kernels.root(), backend, name, ext),
    entry = backend == "cuda" and name or "main",
  }
end

-- load(dev, name [, extra]) -> dev:kernel{...} for the named kernel; extra
-- fields (defines, params) are passed through.
function kernels.load(dev, name, extra)
  local spec = kernels.source(dev.backend, name)
  for k, v in pairs(extra or {}) do spec[k] = v end
  return dev:kernel(spec)
end

-- cache() -> a per-device cache of compiled kernels, c.get(dev, spec)
-- compiling {file, entry, defines} once per device and spec table, and
-- c.release([dev]) freeing those of dev (all devices when nil). Weak device
-- keys, so a device that is collected takes its entries with it.
function kernels.cache()
  local per_dev = setmetatable({}, { __mode = "k" })
  local c = {}
  function c.get(dev, spec)
    local per = per_dev[dev]
    if not per then per = {}; per_dev[dev] = per end
    local k = per[spec]
    if not k then
      k = dev:kernel { file = spec.file, entry = spec.entry, defines = spec.defines }
      per[spec] = k
    end
    return k
  end
  function c.release(dev)
    local devs = {}
    if dev then devs[1] = dev else for d in pairs(per_dev) do devs[#devs + 1] = d end end
    for _, d in ipairs(devs) do
      for _, k in pairs(per_dev[d] or {}) do k:free() end
      per_dev[d] = nil
    end
  end
  return c
end

-- grid(dev [, per_sm = 4]) -> workgroups for a grid-stride kernel: per_sm per
-- SM (CU) when the count is known, else 1024.
function kernels.grid(dev, per_sm)
  local sm = dev.sm_count or 0
  if sm > 0 then return sm * (per_sm or 4) end
  return 1024
end

-- read_launch(dev, k, src [, bytes]) -> launch, out: the pure-read kernel k
-- (kernels.load(dev, "read")) reading src's first bytes (default: all of
-- it) once in 16-byte loads, blocks of 256 over kernels.grid(dev); out is
-- the zero-filled buffer it stores to, one u32 per thread, only when its
-- fold equals the sentinel, which an all-zero buffer never gives. The
-- caller closes out.
local READ_BLOCK, READ_SENTINEL = 256, 0xA5A5A5A5
function kernels.read_launch(dev, k, src, bytes)
  local grid = kernels.grid(dev)
  local out = dev:buffer(grid * READ_BLOCK * 4)
  out:fill("\0")
  return { k, grid, READ_BLOCK, src, out, (bytes or src.size) // 16, READ_SENTINEL }, out
end

return kernels
