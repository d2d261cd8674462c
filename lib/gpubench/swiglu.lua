-- gpubench.swiglu: the SwiGLU call y = silu(x Wg^T) * (x Wu^T) and its three
-- implementations, as experiments/swiglu_ab.lua times them.
--
-- Data (every path reads the same buffers): W, the packed gate/up weight,
-- row-major [2N, K] bf16 (gate rows 0..N-1, up rows N..2N-1); x [M, K] bf16,
-- M = 1..8 tokens; y [M, N] bf16; h [M, 2N] bf16, the unfused paths'
-- intermediate ([gate | up] per token). fp32 accumulation everywhere.
--
-- Paths, and the launches one call makes:
--   vendor  the vendor GEMM (cuBLASLt, dev:vendor_gemm) h = x W^T, then
--           swiglu_mul: 2 launches (CUDA only);
--   chain   our packed GEMV h = x W^T (swiglu_gemv), then swiglu_mul: 2;
--   fused   swiglu_fused: both dot products per output, silu * mul in the
--           epilogue, each weight word read once for all M tokens: 1.
-- Kernels and geometry: gpubench.swiglu_cuda, gpubench.swiglu_vulkan;
-- design: docs/kernels/swiglu.md.

local swiglu = {}

-- The up/gate shapes (N, K) of AstrAI's benchmark.
swiglu.SHAPES = {
  { name = "AstrAI 1B", n = 6912, k = 1536 },
  { name = "LLaMA-2-7B", n = 11008, k = 4096 },
  { name = "LLaMA-2-13B", n = 13824, k = 5120 },
  { name = "LLaMA-3-8B", n = 14336, k = 4096 },
  { name = "GPT-NeoX-20B", n = 24576, k = 6144 },
}

swiglu.MAX_M = 8 -- the mma's token columns (CUDA); the Vulkan kernels share the bound
swiglu.PATHS = { "vendor", "chain", "fused" }
swiglu.LAUNCHES = { vendor = 2, chain = 2, fused = 1 }
swiglu.WHAT = {
  vendor = "cuBLASLt bf16 GEMM h = x W^T over the packed [2N, K] weight, then swiglu_mul",
  chain = "our packed GEMV h = x W^T over [2N, K] (swiglu_gemv, bf16 h), then swiglu_mul",
  fused = "swiglu_fused: gate and up dot products per output row, silu * mul in the epilogue",
}
-- Paths whose h is rounded to bf16 before silu * mul (a wider tolerance).
swiglu.ROUNDS_H = { vendor = true, chain = true, fused = false }

local MAX_DIM = 0x3FFFFFFF -- 2N rows still fit the kernels' u32 and cuBLASLt's int32

-- check_shape(n, k) -> nil | why: N >= 1 and K >= 8 with K % 8 == 0.
function swiglu.check_shape(n, k)
  if math.tointeger(n) == nil or n < 1 or n > MAX_DIM then
    return ("N=%s must be an integer from 1 to %d"):format(tostring(n), MAX_DIM)
  end
  if math.tointeger(k) == nil or k < 8 or k > MAX_DIM then
    return ("K=%s must be an integer from 8 to %d"):format(tostring(k), MAX_DIM)
  end
  if k % 8 ~= 0 then
    return ("K=%d must be a multiple of 8 (rows are read as 16-byte words of 8 bf16)"):format(k)
  end
  return nil
end

-- bytes(n, k, m) -> {weights, x, y, h, moved}: moved = weights + x + y, the
-- bytes a call must move whatever the path (h, the unfused paths' extra
-- traffic, is not counted), so every path's GB/s is over the same bytes.
function swiglu.bytes(n, k, m)
  local b = { weights = 4 * n * k, x = 2 * m * k, y = 2 * m * n, h = 4 * m * n }
  b.moved = b.weights + b.x + b.y
  return b
end

-- alloc(bytes): buffers are allocated rounded up to 256 bytes (the Vulkan
-- kernels write whole 32-bit words).
function swiglu.alloc(bytes) return (bytes + 255) // 256 * 256 end

-- parse_geometry(text) -> {NAME = value}, or nil and why: "TILES=2,UNROLL=4"
-- (gpubench.options.parse_defines).
swiglu.parse_geometry = require("gpubench.options").parse_defines

-- geometry_text(g [, sep]) -> "KSPLIT=4,TILES=1,...": a geometry's defines,
-- sorted (a cache key and the notes' text; gpubench.options.format_defines).
swiglu.geometry_text = require("gpubench.options").format_defines

-- specs(backend) -> the backend's geometry module.
function swiglu.specs(backend)
  if backend == "cuda" then return require "gpubench.swiglu_cuda" end
  if backend == "vulkan" then return require "gpubench.swiglu_vulkan" end
  error(("swiglu: no SwiGLU kernels for backend %s"):format(tostring(backend)), 2)
end

-- device_geometry(dev, n, k, m) -> the geometry dev's features select for m rows of x at
-- N x K (the backend's for_device: Vulkan's W in B from its rule's M), or nil.
function swiglu.device_geometry(dev, n, k, m)
  local S = swiglu.specs(dev.backend)
  return S.for_device and S.for_device(dev, n, k, m) or nil
end

-- check_launch(backend, n, m, geometry [, k]) -> nil | why: grids the backend cannot launch,
-- or a K the geometry's kernels cannot read (their k_multiple: SW_WB=1's units of 64).
function swiglu.check_launch(backend, n, m, geometry, k)
  if backend ~= "vulkan" then return nil end
  local S = swiglu.specs(backend)
  local km = S.fused(geometry, m).k_multiple
  if k and km and k % km ~= 0 then
    return ("K=%d must be a multiple of %d for %s (the kernels read units of %d k)"):format(k, km,
      swiglu.geometry_text(geometry), km)
  end
  for _, s in ipairs { { "swiglu_fused", S.fused(geometry, m).grid(n) }, { "swiglu_gemv", S.gemv(geometry, m).grid(2 * n) },
                       { "swiglu_mul", S.mul().grid(n, m) } } do
    if s[2] > S.MAX_GROUPS then
      return ("N=%d needs %d workgroups of %s, more than the %d a Vulkan dispatch dimension is sure to take")
        :format(n, s[2], s[1], S.MAX_GROUPS)
    end
  end
  return nil
end

-- check_device(dev, geometry) -> nil | why: what the geometry's kernels need that dev
-- lacks (SW_COOP=1: NV cooperative matrices), said before any device work.
function swiglu.check_device(dev, geometry)
  local S = swiglu.specs(dev.backend)
  for _, spec in ipairs { S.fused(geometry, 1), S.gemv(geometry, 1) } do
    if spec.requires then
      local ok, why = spec.requires(dev)
      if not ok then return why end
    end
  end
  return nil
end

-- kernels(dev, m, geometry) -> {fused =, gemv =, mul =}, each {kernel =, spec =}:
-- compiled for m tokens (the mul kernel takes m at launch).
function swiglu.kernels(dev, m, geometry, mul)
  local S = swiglu.specs(dev.backend)
  local root = require("gpubench.kernels").root()
  local why = swiglu.check_device(dev, geometry)
  if why then error(("swiglu.kernels: %s"):format(why), 2) end
  local function load(spec)
    return { spec = spec, kernel = dev:kernel { file = root .. "/" .. spec.file, entry = spec.entry, defines = spec.defines } }
  end
  local out = { fused = load(S.fused(geometry, m)), gemv = load(S.gemv(geometry, m)) }
  out.mul = mul or load(S.mul())
  return out
end

-- launches(path, ks, b, n, k, m [, vendor]) -> the launches of one call over
-- buffers b = {W =, x =, h =, y =}; vendor: dev:vendor_gemm's kernel.
function swiglu.launches(path, ks, b, n, k, m, vendor)
  for _, name in ipairs { "fused", "gemv" } do
    local km = ks[name] and ks[name].spec.k_multiple
    if km and k % km ~= 0 then
      error(("swiglu.launches: K=%d must be a multiple of %d for %s (units of %d k)"):format(k, km, ks[name].spec.file, km), 2)
    end
  end
  local mul = { ks.mul.kernel, ks.mul.spec.grid(n, m), ks.mul.spec.block, b.h, b.y, n, m }
  if path == "fused" then
    local f = ks.fused
    return { { f.kernel, f.spec.grid(n), f.spec.block, b.W, b.x, b.y, n, k } }
  elseif path == "chain" then
    local g = ks.gemv
    return { { g.kernel, g.spec.grid(2 * n), g.spec.block, b.W, b.x, b.h, 2 * n, k }, mul }
  elseif path == "vendor" then
    if not vendor then error("swiglu.launches: the vendor path needs the vendor GEMM", 2) end
    return { { vendor, 1, 1, b.W, b.x, b.h }, mul }
  end
  error(("swiglu.launches: unknown path %s"):format(tostring(path)), 2)
end

return swiglu
