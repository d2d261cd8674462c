-- The CUDA GEMV kernels (kernels/cuda/gemv_*.cu) through lib/gpubench/gemv.lua:
-- the geometry table, compilation for sm_90 with NVRTC (no GPU needed), and on a
-- CUDA device the results against the FP64 oracle.
--
-- Criterion (the GEMV contract): per row |y - y_ref| <= 1e-4 * sum_j |w_ij x_j|.
-- Shapes: m = 37 is a multiple of no rows_per_group, so the last block has rows
-- past the end; k = 256 is one tile of the tensor-core path (256 columns) and a
-- partial one of the scalar path (1024 columns), k =
-- 4096 four full ones, k = 5120 the width of the 14336 x 5120 benchmark shape.

local t = dofile("tests/lua/harness.lua")
local gemv = require "gpubench.gemv"
local specs = require "gpubench.gemv_cuda"

local QUANT = { q4_0 = true, q8_0 = true, q4_k = true, q5_k = true, q6_k = true }

local gc = dofile("tests/lua/gemv_check.lua")(t)
local releasing, check = gc.releasing, gc.check

-- gpu.compile needs NVRTC only; machines without it skip the compile test.
local function nvrtc_missing(msg)
  return msg:find("cannot load NVRTC", 1, true) or msg:find("CUDA backend not built", 1, true)
    or msg:find("NVRTC has no", 1, true)
end

t.test("spec table: every format, block and rows_per_group from the defines", function()
  for _, fmt in ipairs(gemv.formats) do
    local s = gemv.spec("cuda", fmt)
    t.eq(s, specs[fmt], fmt)
    t.eq(s.file, "kernels/cuda/gemv_" .. fmt .. ".cu", fmt)
    t.eq(s.entry, "gemv_" .. fmt, fmt)
    -- quantized kernels: KSPLIT warps per row group, 1 (no split-K) by default
    t.eq(s.defines.KSPLIT, QUANT[fmt] and 1 or nil, fmt)
    t.eq(s.block, { 32 * s.defines.WARPS, 1, 1 }, fmt)
    t.eq(s.rows_per_group, s.defines.ROWS * s.defines.WARPS, fmt)
    t.eq(gemv.grid(s, 37, 256), { (37 + s.rows_per_group - 1) // s.rows_per_group, 1, 1 }, fmt)
    -- quantized kernels stage tiles (STAGES), dense ones unroll loads (UNROLL)
    t.truthy(QUANT[fmt] and s.defines.STAGES >= 2 or not QUANT[fmt] and s.defines.UNROLL >= 1, fmt)
  end
end)

t.test("the first gpubench-compile line of each kernel repeats the table's defaults", function()
  for _, fmt in ipairs(gemv.formats) do
    local s = specs[fmt]
    local src = assert(io.open(s.file)):read("a")
    local first = src:match("^// gpubench%-compile: entry=(%S+) defines=(%S+)\n")
    t.eq(first, s.entry, s.file .. ": first gpubench-compile line names the entry")
    local listed = {}
    for name, value in src:match("^// gpubench%-compile: %S+ defines=(%S+)"):gmatch("([%w_]+)=(%d+)") do
      listed[name] = tonumber(value)
    end
    t.eq(listed, s.defines, s.file .. ": first gpubench-compile line has the table's defines")
    t.truthy(not src:find("#ifndef ROWS", 1, true), s.file .. ": no second copy of the defaults")
  end
end)

-- for_shape: q6_k with bulk copies at k >= 4096 up to 65535 rows (measured faster at 14336 x
-- 5120, slower at 131072 x 5120 and every LFM2 shape); q4_k with 16-row warps from 65536 rows.
t.test("for_shape: the variant a shape measured faster with, one spec table per rule; gemv.spec with a shape", function()
  local big = specs.for_shape("q6_k", 14336, 5120)
  t.eq(big.defines.BULK, 1)
  t.eq(big.defines.ROWS, specs.q6_k.defines.ROWS, "only BULK changes")
  t.truthy(specs.for_shape("q6_k", 7, 4096) == big, "the same table again (the compiled-kernel cache's key)")
  t.truthy(specs.for_shape("q6_k", 14336, 2816) == specs.q6_k, "k = 2816: the table's entry")
  t.truthy(specs.for_shape("q6_k", 65536, 1024) == specs.q6_k)
  t.truthy(specs.for_shape("q4_k", 14336, 5120) == specs.q4_k, "no rule for q4_k at 14336 rows")
  local tall = specs.for_shape("q4_k", 131072, 5120)
  t.eq({ tall.defines.ROWS, tall.rows_per_group, tall.defines.PARTS }, { 16, 16, specs.q4_k.defines.PARTS },
    "q4_k from 65536 rows: 16-row warps")
  t.truthy(specs.for_shape("q4_k", 65536, 256) == tall and specs.for_shape("q4_k", 65535, 5120) == specs.q4_k)
  t.truthy(specs.for_shape("q6_k", 131072, 5120) == specs.q6_k, "q6_k from 65536 rows: the entry (BULK=0)")
  t.truthy(specs.for_shape("q6_k", 65535, 5120) == big)
  t.eq(specs.shape_changes("q4_k", 131072, 5120), { ROWS = 16 })
  t.eq(specs.shape_changes("q6_k", 1, 8192), { BULK = 1 })
  t.eq(specs.shape_changes("q6_k", 1, 1024), {})
  t.eq(specs.shape_changes("q6_k", 1, 8192, { MMA = 1 }), {}, "a tensor-core sweep leaves the scalar-path rule out")
  t.eq(specs.shape_changes("q6_k", 1, 8192, { MMA = 1, BULK = 1 }), { BULK = 1 }, "... unless it names BULK itself")
  t.eq(specs.shape_changes("q6_k", 1, 8192, { MMA = 0 }), { BULK = 1 })
  t.eq(specs.shape_changes("q6_k", 1, 8192, { I8 = 1, GEMV_TOKENS = 8 }), {}, "nor does an int8 one")
  t.eq(specs.variant("q6_k", specs.shape_changes("q6_k", 1, 8192, { I8 = 1 })).file, "kernels/cuda/gemv_q6_k.cu",
    "the rule alone keeps the scalar kernel")
  local mma = specs.shape_changes("q6_k", 1, 8192, { MMA = 1, XQ = 0 })
  mma.MMA, mma.XQ = 1, 0
  t.eq(specs.variant("q6_k", mma).defines.BULK, 0, "and the variant it gives with MMA=1 is valid")
  t.truthy(gemv.spec("cuda", "q6_k", 14336, 5120) == big, "gemv.spec with a shape asks for_shape")
  t.truthy(gemv.spec("cuda", "q6_k") == specs.q6_k, "... and without one gives the table")
  t.eq(gemv.shape_variant("cuda", "q6_k", 14336, 5120), "BULK=1", "what gemv_table notes for such a cell")
  t.eq(gemv.shape_variant("cuda", "q6_k", 2816, 1024), nil)
  t.eq(gemv.shape_variant("cuda", "q6_k", 14336, 5120, 4), "BULK=1", "at T = 4 too")
  t.eq(gemv.shape_variant("cuda", "q6_k", 14336, 5120, 8), nil, "not at T = 8: the int8 kernel has no BULK")
  t.eq(gemv.shape_variant("vulkan", "q6_k", 14336, 5120), nil, "Vulkan has no shape rules")
  t.errors(function() specs.for_shape("q3_k", 1, 256) end, "gemv_cuda.for_shape: unknown format q3_k", true)
  t.errors(function() specs.for_shape("q6_k", 1, 256.5) end, "gemv_cuda.for_shape: k must be an integer, got 256.5", true)
end)

t.test("a kernel compiled without its geometry defines is refused, naming the table", function()
  local gpu = t.gpu
  if not gpu or not gpu.compile then t.skip("no gpu module") end
  for _, fmt in ipairs { "q4_0", "f32" } do
    local s = specs[fmt]
    local ok, err = pcall(gpu.compile, { backend = "cuda", file = s.file, entry = s.entry, target = "sm_90" })
    if not ok and nvrtc_missing(t.error_text(err)) then t.skip("NVRTC not available") end
    t.eq(ok, false, fmt .. " compiled without defines")
    t.truthy(t.error_text(err):find("defaults: lib/gpubench/gemv_cuda.lua", 1, true), t.error_text(err))
  end
end)

t.test("variant: other defines, geometry to match, errors name the problem", function()
  local v = specs.variant("q4_k", { ROWS = 2, WARPS = 4, STAGES = 3 })
  t.eq(v.block, { 128, 1, 1 })
  t.eq(v.rows_per_group, 8)
  t.eq(v.defines, { XQ = 1, MMA = 0, SUBN = 1, ROWS = 2, WARPS = 4, STAGES = 3, KSPLIT = 1, PARTS = 2, BULK = 0, I8 = 0, GEMV_TOKENS = 1 })
  t.eq(v.file, specs.q4_k.file)
  t.eq(specs.q4_k.defines.ROWS, 14, "the default is unchanged")
  for _, fmt in ipairs { "q4_0", "q8_0", "q4_k", "q5_k", "q6_k" } do
    t.eq({ specs[fmt].defines.MMA, specs[fmt].defines.XQ }, { 0, 1 }, fmt .. ": the default is the (measured faster) integer dot")
  end
  t.eq(specs.variant("q6_k", { WARPS = 3, SUBN = 0 }).rows_per_group, 42) -- default: ROWS = 14
  t.errors(function() specs.variant("q4_0", { MMA = 1, XQ = 0, ROWS = 8 }) end,
    "gemv_cuda.variant: q4_0 with MMA=1 computes 16 rows per warp (ROWS=8 given", true)
  t.errors(function() specs.variant("q4_0", { MMA = 1 }) end,
    "gemv_cuda.variant: q4_0 XQ=1 (integer dot) is a scalar-path decode: it needs MMA=0", true)
  t.errors(function() specs.variant("q4_k", { XQ = 3 }) end, "gemv_cuda.variant: XQ=3 is not 0 or 1", true)
  t.errors(function() specs.variant("q4_0", { MMA = 2 }) end, "gemv_cuda.variant: MMA=2 is not 0 or 1", true)
  t.errors(function() specs.variant("f32", { MMA = 1 }) end, "gemv_cuda.variant: f32 has no define MMA", true)
  t.eq(specs.variant("f16", { UNROLL = 4 }).defines, { ROWS = 4, WARPS = 2, UNROLL = 4, MMA = 0, GEMV_TOKENS = 1 })
  t.errors(function() specs.variant("q3_k", {}) end, "gemv_cuda.variant: unknown format q3_k", true)
  t.errors(function() specs.variant("q4_0", { UNROLL = 2 }) end, "gemv_cuda.variant: q4_0 has no define UNROLL", true)
  t.errors(function() specs.variant("f32", { STAGES = 2 }) end, "gemv_cuda.variant: f32 has no define STAGES", true)
  t.errors(function() specs.variant("q8_0", { ROWS = 0 }) end, "gemv_cuda.variant: ROWS=0 is not a positive integer", true)
  t.errors(function() specs.variant("q8_0", { ROWS = 2.5 }) end, "ROWS=2.5 is not a positive integer", true)
  t.errors(function() specs.variant("f32", { WARPS = 33 }) end,
    "gemv_cuda.variant: WARPS=33 is more than a block's 1024 threads", true)
  t.errors(function() specs.variant("q6_k", 3) end, "changes must be a table of defines, got number", true)
  -- bulk copies: the scalar path's switch, off in the table (for_shape turns it on where it measured faster)
  t.eq({ specs.q6_k.defines.BULK, specs.q4_k.defines.BULK, specs.q4_0.defines.BULK }, { 0, 0, 0 })
  t.eq(specs.variant("q4_k", { BULK = 1 }).defines.BULK, 1)
  t.eq(specs.variant("q6_k", { MMA = 1, XQ = 0 }).defines.BULK, 0, "the tensor-core path turns it off unless asked")
  t.errors(function() specs.variant("q6_k", { BULK = 2 }) end, "gemv_cuda.variant: BULK=2 is not 0 or 1", true)
  t.errors(function() specs.variant("q6_k", { MMA = 1, XQ = 0, BULK = 1 }) end,
    "gemv_cuda.variant: q6_k BULK=1 (bulk copies) is for the scalar path: it needs MMA=0", true)
  t.errors(function() specs.variant("f16", { BULK = 1 }) end, "gemv_cuda.variant: f16 has no define BULK", true)
  -- split-K: KSPLIT warps per row group; block grows, rows_per_group does not
  local sk = specs.variant("q4_k", { ROWS = 4, WARPS = 2, KSPLIT = 5, STAGES = 1 })
  t.eq(sk.block, { 320, 1, 1 })
  t.eq(sk.rows_per_group, 8)
  t.eq(sk.defines, { XQ = 1, MMA = 0, SUBN = 1, ROWS = 4, WARPS = 2, STAGES = 1, KSPLIT = 5, PARTS = 2, BULK = 0, I8 = 0, GEMV_TOKENS = 1 })
  t.eq(specs.variant("q4_0", { ROWS = 8, WARPS = 1, KSPLIT = 3 }).block, { 96, 1, 1 })
  t.errors(function() specs.variant("q4_0", { MMA = 1, XQ = 0, KSPLIT = 2 }) end,
    "gemv_cuda.variant: q4_0 with MMA=1 (the tensor-core path) has no split-K: KSPLIT must be 1 (KSPLIT=2 given", true)
  t.errors(function() specs.variant("q4_k", { STAGES = 1 }) end,
    "gemv_cuda.variant: q4_k STAGES=1 leaves no tile in flight: STAGES must be at least 2 (1 only with KSPLIT > 1)", true)
  t.errors(function() specs.variant("q5_k", { WARPS = 8, KSPLIT = 5 }) end,
    "gemv_cuda.variant: WARPS=8 x KSPLIT=5 warps is more than a block's 1024 threads", true)
  t.errors(function() specs.variant("q6_k", { KSPLIT = 0 }) end, "gemv_cuda.variant: KSPLIT=0 is not a positive integer", true)
  t.errors(function() specs.variant("f32", { KSPLIT = 2 }) end, "gemv_cuda.variant: f32 has no define KSPLIT", true)
  -- row parts: ROWS / PARTS rows per staging slot, scalar path only
  for _, fmt in ipairs { "q4_0", "q8_0", "q4_k", "q5_k", "q6_k" } do
    local d = specs[fmt].defines
    t.eq({ d.ROWS, d.STAGES, d.PARTS }, fmt == "q8_0" and { 16, 2, 4 } or { 14, 2, 2 }, fmt .. ": the measured default")
  end
  t.eq(specs.variant("q4_k", { ROWS = 16, PARTS = 8 }).rows_per_group, 16, "parts do not change the rows per warp")
  t.eq(specs.variant("q4_k", { PARTS = 7 }).rows_per_group, 14)
  t.eq(specs.variant("q4_k", { PARTS = 1, STAGES = 3 }).defines.PARTS, 1)
  t.errors(function() specs.variant("q4_k", { PARTS = 3 }) end,
    "gemv_cuda.variant: q4_k PARTS=3 does not divide ROWS=14 (a part is ROWS / PARTS rows of a tile)", true)
  t.errors(function() specs.variant("q6_k", { ROWS = 8, PARTS = 16 }) end, "PARTS=16 does not divide ROWS=8", true)
  t.errors(function() specs.variant("q8_0", { PARTS = 0 }) end, "gemv_cuda.variant: PARTS=0 is not a positive integer", true)
  t.errors(function() specs.variant("f16", { PARTS = 2 }) end, "gemv_cuda.variant: f16 has no define PARTS", true)
  -- the tensor-core path: 16 rows, whole tiles; asked for without ROWS or PARTS, it gets them
  t.eq(specs.variant("q4_0", { MMA = 1, XQ = 0 }).defines.PARTS, 1)
  t.eq(specs.variant("q4_k", { MMA = 1, XQ = 0, WARPS = 2 }).rows_per_group, 32)
  t.errors(function() specs.variant("q4_0", { MMA = 1, XQ = 0, PARTS = 2 }) end,
    "gemv_cuda.variant: q4_0 with MMA=1 (the tensor-core path) stages whole tiles: PARTS must be 1 (PARTS=2 given", true)
end)

t.test("every kernel compiles for sm_90 with NVRTC and takes (buffer, buffer, buffer, u32, u32)", function()
  local gpu = t.gpu
  if not gpu or not gpu.compile then t.skip("no gpu module") end
  for _, fmt in ipairs(gemv.formats) do
    local s = specs[fmt]
    local ok, r = pcall(gpu.compile, { backend = "cuda", file = s.file, entry = s.entry,
      defines = s.defines, target = "sm_90" })
    if not ok and nvrtc_missing(t.error_text(r)) then t.skip("NVRTC not available: " .. t.error_text(r)) end
    t.truthy(ok, fmt .. ": " .. t.error_text(r))
    t.eq(r.params, { "buffer", "buffer", "buffer", "u32", "u32" }, fmt)
  end
  -- A geometry whose staging does not fit static shared memory is refused at compile time.
  local big = specs.variant("q8_0", { WARPS = 2, STAGES = 4, PARTS = 1 })
  t.errors(function()
    gpu.compile { backend = "cuda", file = big.file, entry = big.entry, defines = big.defines, target = "sm_90" }
  end, "exceed the 48 KiB of static shared memory", true)
  -- ... counting every slice's warp: 10 warps of 8 rows x 2 q4_k slots (> 100 KB)
  local wide = specs.variant("q4_k", { ROWS = 8, WARPS = 2, KSPLIT = 5, PARTS = 1 })
  t.errors(function()
    gpu.compile { backend = "cuda", file = wide.file, entry = wide.entry, defines = wide.defines, target = "sm_90" }
  end, "WARPS * KSPLIT * STAGES * ROWS / PARTS staging slots exceed the 48 KiB", true)
  -- ... and parts count: 16 slots of 2 of 16 q8_0 rows fit, 16 of 4 do not
  local ring = specs.variant("q8_0", { STAGES = 16, PARTS = 8 })
  t.truthy(gpu.compile { backend = "cuda", file = ring.file, entry = ring.entry, defines = ring.defines, target = "sm_90" })
  ring = specs.variant("q8_0", { STAGES = 16, PARTS = 4 })
  t.errors(function()
    gpu.compile { backend = "cuda", file = ring.file, entry = ring.entry, defines = ring.defines, target = "sm_90" }
  end, "staging slots exceed the 48 KiB", true)
  -- The tensor-core path refuses split-K in the kernel too (defines given by hand).
  local d = {}
  for k2, v in pairs(specs.q4_0.defines) do d[k2] = v end
  d.MMA, d.XQ, d.KSPLIT = 1, 0, 2
  t.errors(function()
    gpu.compile { backend = "cuda", file = specs.q4_0.file, entry = specs.q4_0.entry, defines = d, target = "sm_90" }
  end, "MMA=1 (the tensor-core path) has no split-K: KSPLIT must be 1", true)
  d.KSPLIT, d.PARTS = 1, 2
  t.errors(function()
    gpu.compile { backend = "cuda", file = specs.q4_0.file, entry = specs.q4_0.entry, defines = d, target = "sm_90" }
  end, "MMA=1 (the tensor-core path) stages whole tiles: PARTS must be 1", true)
end)

for _, fmt in ipairs(gemv.formats) do
  t.test(fmt .. ": m=37 k=256, m=70 k=4096 and m=19 k=5120 match the FP64 reference", function()
    local dev = t.device("cuda")
    releasing(dev, function()
      check(dev, fmt, 37, 256, 11)
      check(dev, fmt, 70, 4096, 12)
      check(dev, fmt, 19, 5120, 13)
    end)
  end)
end

-- k that is no multiple of 256 or of a 1024-column tile: q4_0 rows of 9 blocks
-- (162 bytes) start 2 bytes into a 16-byte word on every other row; dense rows
-- end in the kernels' remainder loop.
t.test("k not a multiple of 256 (dense: 8, 264, 1000; q4_0, q8_0: 32, 288, 1056)", function()
  local dev = t.device("cuda")
  releasing(dev, function()
    for _, fmt in ipairs { "f32", "f16", "bf16" } do
      check(dev, fmt, 5, 8, 21)
      check(dev, fmt, 19, 264, 22)
      check(dev, fmt, 23, 1000, 23)
    end
    for _, fmt in ipairs { "q4_0", "q8_0" } do
      check(dev, fmt, 1, 32, 24)
      check(dev, fmt, 19, 288, 25)
      check(dev, fmt, 33, 1056, 26)
    end
  end)
end)

-- Other geometries of the same sources: more rows per warp, several warps per
-- block, deeper staging (the other gpubench-compile lines).
-- Quantized formats: the tensor-core path (MMA=1) with the HSUB2 decode
-- (SUBN=0) and with subnormal codes, the scalar path's f32 magic decode
-- (XQ=0), and the integer dot (the default) in other geometries and with
-- split-K (KSPLIT > 1; at k = 3072, three tiles: with KSPLIT = 2 one slice
-- has two tiles, the other one; with KSPLIT = 5 two slices have none, as do
-- most slices at k = 256), and row parts (PARTS: 1 = whole tiles, the
-- previous default; rings of 1 to 16 slots, parts of 1 to 8 rows).
local VARIANTS = {
  f32 = { { ROWS = 1, WARPS = 4, UNROLL = 4 } },
  f16 = { { ROWS = 8, WARPS = 1, UNROLL = 1 } },
  bf16 = { { ROWS = 3, WARPS = 8, UNROLL = 3 } },
  q4_0 = { { MMA = 1, XQ = 0, SUBN = 0, WARPS = 1, STAGES = 3 }, { MMA = 1, XQ = 0, WARPS = 4, STAGES = 4 },
           { XQ = 0, ROWS = 3, WARPS = 2, STAGES = 3, PARTS = 1 }, { XQ = 0, ROWS = 8, WARPS = 1, STAGES = 2, KSPLIT = 3 },
           { ROWS = 5, WARPS = 2, STAGES = 3, PARTS = 1 }, { ROWS = 8, WARPS = 1, STAGES = 2, KSPLIT = 3 },
           { ROWS = 16, STAGES = 3, PARTS = 4 }, { PARTS = 1 } },
  q8_0 = { { MMA = 1, XQ = 0, SUBN = 0, WARPS = 4, STAGES = 2 }, { XQ = 0, ROWS = 8, WARPS = 1, STAGES = 3 },
           { XQ = 0, ROWS = 4, WARPS = 2, STAGES = 2, KSPLIT = 2 }, { ROWS = 8, WARPS = 1, STAGES = 3 },
           { ROWS = 4, WARPS = 2, STAGES = 2, KSPLIT = 2 }, { ROWS = 12, STAGES = 5, PARTS = 3 }, { PARTS = 1 } },
  q4_k = { { MMA = 1, XQ = 0, SUBN = 0, WARPS = 2, STAGES = 2 }, { XQ = 0, ROWS = 2, WARPS = 4, STAGES = 4 },
           { XQ = 0, ROWS = 8, WARPS = 1, STAGES = 1, KSPLIT = 5 }, { ROWS = 3, WARPS = 3, STAGES = 3, PARTS = 1 },
           { ROWS = 8, WARPS = 1, STAGES = 1, KSPLIT = 5 }, { ROWS = 16, STAGES = 1, KSPLIT = 2, PARTS = 4 }, { ROWS = 14, STAGES = 3, PARTS = 7 }, { PARTS = 1 } },
  q5_k = { { MMA = 1, XQ = 0, SUBN = 0, WARPS = 2, STAGES = 4 }, { XQ = 0, ROWS = 4, WARPS = 2, STAGES = 3 },
           { XQ = 0, ROWS = 4, WARPS = 1, STAGES = 2, KSPLIT = 5 }, { ROWS = 7, WARPS = 2, STAGES = 2, PARTS = 1 },
           { ROWS = 4, WARPS = 1, STAGES = 2, KSPLIT = 5 }, { XQ = 0, ROWS = 6, STAGES = 2, PARTS = 3 }, { PARTS = 1 } },
  q6_k = { { MMA = 1, XQ = 0, SUBN = 0, WARPS = 4, STAGES = 2 }, { XQ = 0, ROWS = 4, WARPS = 1, STAGES = 3 },
           { XQ = 0, ROWS = 4, WARPS = 2, STAGES = 2, KSPLIT = 2 }, { ROWS = 6, WARPS = 1, STAGES = 3 },
           { ROWS = 4, WARPS = 2, STAGES = 2, KSPLIT = 2 }, { ROWS = 16, STAGES = 6, PARTS = 16 }, { ROWS = 16 }, { PARTS = 1 } },
}

-- Compiled here too, so CI (NVRTC, no GPU) catches a variant that no longer
-- fits shared memory after a default changed, before a GPU run does.
t.test("every variant geometry compiles for sm_90", function()
  local gpu = t.gpu
  if not gpu or not gpu.compile then t.skip("no gpu module") end
  for _, fmt in ipairs(gemv.formats) do
    for _, changes in ipairs(VARIANTS[fmt]) do
      local s = specs.variant(fmt, changes)
      local ok, r = pcall(gpu.compile, { backend = "cuda", file = s.file, entry = s.entry,
        defines = s.defines, target = "sm_90" })
      if not ok and nvrtc_missing(t.error_text(r)) then t.skip("NVRTC not available: " .. t.error_text(r)) end
      t.truthy(ok, fmt .. ": " .. t.error_text(r))
    end
  end
end)

t.test("variant geometries match the FP64 reference", function()
  local dev = t.device("cuda")
  releasing(dev, function()
    for _, fmt in ipairs(gemv.formats) do
      for _, changes in ipairs(VARIANTS[fmt]) do
        local spec = specs.variant(fmt, changes)
        check(dev, fmt, 29, 3072, 31, spec)
        check(dev, fmt, 5, 256, 32, spec) -- fewer rows than one group: most warps have none
        if changes.KSPLIT then check(dev, fmt, 19, 5120, 33, spec) end -- k = 5120: five tiles
      end
    end
  end)
end)

-- EARLY_RELEASE=1: an overlapping next launch released at the block's start rather
-- than by its exit (kernels/cuda/launch_overlap.cuh): every format, rows that are no
-- multiple of 16 bytes (q4_0, q8_0 at k = 288), ragged m, a split k, the tensor-core path.
t.test("EARLY_RELEASE=1 variants match the FP64 reference", function()
  local dev = t.device("cuda")
  releasing(dev, function()
    for _, fmt in ipairs(gemv.formats) do
      local spec = specs.variant(fmt, { EARLY_RELEASE = 1 })
      t.eq(spec.defines.EARLY_RELEASE, 1, fmt)
      check(dev, fmt, 29, 3072, 41, spec)
      check(dev, fmt, 300, 256, 42, spec)
      if fmt == "q4_0" or fmt == "q8_0" then check(dev, fmt, 37, 288, 43, spec) end
    end
    check(dev, "q4_k", 19, 5120, 44, specs.variant("q4_k", { EARLY_RELEASE = 1, ROWS = 8, WARPS = 1, STAGES = 1, KSPLIT = 5 }))
    check(dev, "q4_0", 37, 1024, 45, specs.variant("q4_0", { EARLY_RELEASE = 1, MMA = 1, XQ = 0, WARPS = 4, STAGES = 4 }))
  end)
end)

t.test("EARLY_RELEASE: 0 or 1, not passed at 0, not the int8 kernel's", function()
  t.eq(specs.variant("q4_0", { EARLY_RELEASE = 0 }).defines.EARLY_RELEASE, nil, "0 is the kernels' default")
  t.eq(specs.variant_defines("bf16").EARLY_RELEASE, 0, "a variant define every format takes")
  t.errors(function() specs.variant("q4_0", { EARLY_RELEASE = 2 }) end, "gemv_cuda.variant: EARLY_RELEASE=2 is not 0 or 1", true)
  t.errors(function() specs.variant("q4_k", { I8 = 1, EARLY_RELEASE = 1 }) end,
    "gemv_cuda.variant: q4_k EARLY_RELEASE is the scalar and FMA kernels' (not the int8 kernel's)", true)
end)

t.test("a launch by hand equals gemv.run, and rows past m are not written", function()
  local dev = t.device("cuda")
  local ref = require "gpubench.ref"
  releasing(dev, function()
    -- every default, and split-K (whose slice 0 writes y after the block barrier)
    local cases = {}
    -- at k = 3072 (three tiles) every slice has a tile
    for _, fmt in ipairs(gemv.formats) do cases[#cases + 1] = { fmt, specs[fmt], 1024 } end
    cases[#cases + 1] = { "q4_k", specs.variant("q4_k", { MMA = 0, ROWS = 8, WARPS = 2, STAGES = 1, KSPLIT = 2 }), 3072 }
    cases[#cases + 1] = { "q4_0", specs.variant("q4_0", { MMA = 0, ROWS = 8, WARPS = 1, STAGES = 2, KSPLIT = 3 }), 3072 }
    for _, case in ipairs(cases) do
      local fmt, s, k = case[1], case[2], case[3]
      local m = 21
      local f = gemv.format(fmt)
      local w = ref.random_blocks(fmt, m * k // f.qk, 61)
      local x = ref.random_f32(k, 62)
      local _, want = gemv.run(dev, fmt, w, m, k, x, s)
      local wb <close> = dev:buffer(gemv.buffer_bytes(fmt, m, k))
      local xb <close> = dev:buffer(4 * k)
      local yb <close> = dev:buffer(4 * (m + 16))
      wb:fill(0)
      wb:upload(w)
      xb:upload(x)
      yb:fill(0xFF) -- NaN everywhere: a row the kernel skips cannot pass, and past m must stay so
      local kern, grid, block, a1, a2, a3, a4, a5 = gemv.launch_args(dev, fmt, wb, xb, yb, m, k, s)
      t.eq(grid, { (m + s.rows_per_group - 1) // s.rows_per_group, 1, 1 }, fmt)
      t.eq(block, s.block, fmt)
      t.eq(kern.params, { "buffer", "buffer", "buffer", "u32", "u32" }, fmt)
      kern:launch(grid, block, a1, a2, a3, a4, a5)
      t.eq(yb:download(0, 4 * m), want, fmt)
      t.eq(yb:download(4 * m), ("\xFF"):rep(4 * 16), fmt .. ": bytes past y[m-1] untouched")
    end
  end)
end)

t.test("the benchmark shape 14336 x 5120 matches the FP64 reference (q4_0, q4_k, q6_k)", function()
  local dev = t.device("cuda")
  releasing(dev, function()
    for _, fmt in ipairs { "q4_0", "q4_k", "q6_k" } do check(dev, fmt, 14336, 5120, 71) end
  end)
end)

-- ---------------------------------------------------------------- multi-token kernels
-- GEMV_TOKENS = T: y[T, m] = x[T, k] . W^T, each weight read once for the T
-- rows of x (docs/kernels/cuda-gemv.md, "Multi-token kernels").

t.test("GEMV_TOKENS: 1 in every entry; variant takes 1..8 with the entry's geometry and refuses others", function()
  for _, fmt in ipairs(gemv.formats) do
    local s = specs[fmt]
    t.eq(s.defines.GEMV_TOKENS, 1, fmt)
    for _, T in ipairs { 1, 2, 3, 8 } do
      local v = specs.variant(fmt, { GEMV_TOKENS = T })
      t.eq(v.defines.GEMV_TOKENS, T, fmt)
      t.eq({ v.block, v.rows_per_group, v.file, v.entry }, { s.block, s.rows_per_group, s.file, s.entry }, fmt .. " T=" .. T)
      t.eq(gemv.grid(v, 37, 256), gemv.grid(s, 37, 256), fmt .. ": the grid is still ceil(m / rows_per_group)")
    end
    for _, bad in ipairs { 0, 9, -1, 2.5, "2", true } do
      t.errors(function() specs.variant(fmt, { GEMV_TOKENS = bad }) end,
        ("gemv_cuda.variant: GEMV_TOKENS=%s must be an integer in 1..8"):format(tostring(bad)), true)
    end
  end
  t.eq(specs.variant("q4_k", { MMA = 1, XQ = 0, GEMV_TOKENS = 8 }).defines.GEMV_TOKENS, 8, "with the tensor-core path")
  t.eq(specs.q4_k.defines.GEMV_TOKENS, 1, "the default is unchanged")
end)

t.test("every kernel has gpubench-compile lines at GEMV_TOKENS = 2 and 8, and every line names GEMV_TOKENS", function()
  for _, fmt in ipairs(gemv.formats) do
    local src = assert(io.open(specs[fmt].file)):read("a")
    local seen, lines = {}, 0
    for defs in src:gmatch("// gpubench%-compile: %S+ defines=(%S+)") do
      lines = lines + 1
      local T = defs:match("GEMV_TOKENS=(%d+)")
      t.truthy(T, specs[fmt].file .. ": a line without GEMV_TOKENS: " .. defs)
      if T then seen[tonumber(T)] = true end
    end
    t.truthy(lines >= 4, fmt)
    t.truthy(seen[1] and seen[2] and seen[8], specs[fmt].file .. ": lines at GEMV_TOKENS = 1, 2 and 8")
  end
end)

t.test("a kernel compiled without GEMV_TOKENS, or with 9, is refused", function()
  local gpu = t.gpu
  if not gpu or not gpu.compile then t.skip("no gpu module") end
  for _, fmt in ipairs { "q4_0", "f16" } do
    local s = specs[fmt]
    local d = {}
    for name, v in pairs(s.defines) do d[name] = v end
    d.GEMV_TOKENS = nil
    local ok, err = pcall(gpu.compile, { backend = "cuda", file = s.file, entry = s.entry, defines = d, target = "sm_90" })
    if not ok and nvrtc_missing(t.error_text(err)) then t.skip("NVRTC not available") end
    t.eq(ok, false, fmt .. " compiled without GEMV_TOKENS")
    t.truthy(t.error_text(err):find("take the number of x rows from -DGEMV_TOKENS", 1, true), t.error_text(err))
    d.GEMV_TOKENS = 9
    t.errors(function()
      gpu.compile { backend = "cuda", file = s.file, entry = s.entry, defines = d, target = "sm_90" }
    end, "GEMV_TOKENS must be 1..8", true)
  end
end)

-- Through the Lua table: the defaults at T = 8, the tensor-core path at T = 3
-- (one partial B fragment) and 8 (two), the magic decode with split-K at 8
-- and q6_k's bulk copies at 8 (test_nvrtc_compile compiles the T > 1
-- gpubench-compile lines; a file holds at most 16, so q6_k has only two).
t.test("every kernel compiles for sm_90 at GEMV_TOKENS = 8 (and the tensor-core path at 3)", function()
  local gpu = t.gpu
  if not gpu or not gpu.compile then t.skip("no gpu module") end
  for _, fmt in ipairs(gemv.formats) do
    local list = { { GEMV_TOKENS = 8 } }
    if QUANT[fmt] then
      list[#list + 1] = { MMA = 1, XQ = 0, GEMV_TOKENS = 3 }
      list[#list + 1] = { MMA = 1, XQ = 0, GEMV_TOKENS = 8 }
      list[#list + 1] = { XQ = 0, ROWS = 8, PARTS = 1, KSPLIT = 2, GEMV_TOKENS = 8 }
    end
    if fmt == "q6_k" then list[#list + 1] = { BULK = 1, GEMV_TOKENS = 8 } end
    for _, changes in ipairs(list) do
      local s = specs.variant(fmt, changes)
      local ok, r = pcall(gpu.compile, { backend = "cuda", file = s.file, entry = s.entry,
        defines = s.defines, target = "sm_90" })
      if not ok and nvrtc_missing(t.error_text(r)) then t.skip("NVRTC not available: " .. t.error_text(r)) end
      t.truthy(ok, fmt .. ": " .. t.error_text(r))
      if ok then t.eq(r.params, { "buffer", "buffer", "buffer", "u32", "u32" }, fmt) end
    end
  end
end)

-- gc.check_tokens: T distinct rows of x (each its own seed, row t scaled by
-- 4^t so that the rows' magnitudes differ), every row of y against the FP64
-- reference of its own x row.
for _, fmt in ipairs(gemv.formats) do
  t.test(fmt .. ": T = 1, 2, 3 and 8 x rows match the FP64 reference row by row", function()
    local dev = t.device("cuda")
    releasing(dev, function()
      for _, T in ipairs { 1, 2, 3, 8 } do
        gc.check_tokens(dev, fmt, 37, 256, T, 81 + T)
        gc.check_tokens(dev, fmt, 70, 4096, T, 91 + T)
        gc.check_tokens(dev, fmt, 19, 5120, T, 101 + T)
      end
    end)
  end)
end

-- The T > 1 variants of the other paths: the tensor-core path (SUBN 1 and 0),
-- the magic decode, split-K (whose reduction holds T arrays), x through
-- shared memory (4 rows per warp: the x slots of T tiles fit).
t.test("multi-token variants (tensor-core path, magic decode, split-K, x in shared memory) match the FP64 reference", function()
  local dev = t.device("cuda")
  releasing(dev, function()
    for _, fmt in ipairs { "q4_0", "q8_0", "q4_k", "q5_k", "q6_k" } do
      for _, T in ipairs { 2, 3, 8 } do
        for _, changes in ipairs {
          { MMA = 1, XQ = 0, WARPS = 2, STAGES = 2 }, { MMA = 1, XQ = 0, SUBN = 0, STAGES = 3 },
          { XQ = 0, ROWS = 8, PARTS = 1 }, { ROWS = 8, STAGES = 1, KSPLIT = 3, PARTS = 1 }, { ROWS = 4, PARTS = 1 },
        } do
          local c = { GEMV_TOKENS = T }
          for name, v in pairs(changes) do c[name] = v end
          local spec = specs.variant(fmt, c)
          gc.check_tokens(dev, fmt, 29, 3072, T, 111 + T, spec)
          gc.check_tokens(dev, fmt, 5, 256, T, 121 + T, spec)
        end
      end
    end
  end)
end)

for _, fmt in ipairs { "q4_k", "q5_k", "q6_k" } do
  t.test("the int8 tensor-core " .. fmt .. " kernel (I8=1): its own file, entry and geometry; refused elsewhere", function()
    local s = specs.variant(fmt, { I8 = 1, WARPS = 4, GEMV_TOKENS = 8 })
    t.eq({ s.file, s.entry, s.rows_per_group, s.block[1] },
      { "kernels/cuda/gemv_" .. fmt .. "_i8.cu", "gemv_" .. fmt .. "_i8", 64, 128 })
    t.eq(s.defines, { I8 = 1, WARPS = 4, KSPLIT = 1, PREFETCH = 0, XPRE = 0, GEMV_TOKENS = 8 })
    t.eq(gemv.grid(s, 129, 256), { 3, 1, 1 }, "ceil(129 / 64) blocks")
    local ks = specs.variant(fmt, { I8 = 1, WARPS = 2, KSPLIT = 4, PREFETCH = 1, GEMV_TOKENS = 3 })
    t.eq({ ks.rows_per_group, ks.block[1] }, { 32, 256 }, "KSPLIT slices share the rows: 4 x 2 warps of 16 rows")
    t.eq(ks.defines, { I8 = 1, WARPS = 2, KSPLIT = 4, PREFETCH = 1, XPRE = 0, GEMV_TOKENS = 3 })
    t.errors(function() specs.variant(fmt, { PREFETCH = 1 }) end,
      "gemv_cuda.variant: " .. fmt .. " PREFETCH is the int8 kernel's: it needs I8=1", true)
    t.errors(function() specs.variant(fmt, { I8 = 1, PREFETCH = 2 }) end, "gemv_cuda.variant: PREFETCH=2 is not 0 or 1", true)
    t.eq(specs.variant_defines(fmt).PREFETCH, 0, "a grid may name PREFETCH for " .. fmt)
    t.eq(specs.variant_defines(fmt).ROWS, 14)
    t.errors(function() specs.variant(fmt, { I8 = 1, WARPS = 8, KSPLIT = 8 }) end,
      "gemv_cuda.variant: WARPS=8 KSPLIT=8 is more than a block's 1024 threads", true)
    t.errors(function() specs.variant(fmt, { I8 = 1, MMA = 1, XQ = 0 }) end,
      "gemv_cuda.variant: " .. fmt .. " I8=1 is its own kernel: MMA and BULK must stay 0", true)
    t.errors(function() specs.variant(fmt, { I8 = 2 }) end, "gemv_cuda.variant: I8=2 is not 0 or 1", true)
    t.eq(specs.variant(fmt, { I8 = 0 }).file, "kernels/cuda/gemv_" .. fmt .. ".cu")
    local src = assert(io.open(s.file)):read("a")
    local seen = {}
    for defs in src:gmatch("// gpubench%-compile: entry=gemv_" .. fmt .. "_i8 defines=(%S+)") do
      t.truthy(defs:find("I8=1", 1, true), "every line names I8=1: " .. defs)
      seen[tonumber(defs:match("GEMV_TOKENS=(%d+)"))] = true
    end
    t.truthy(seen[1] and seen[3] and seen[8], "lines at GEMV_TOKENS = 1, 3 and 8")
  end)
end

t.test("the int8 kernel is the quantized formats' only", function()
  for _, fmt in ipairs { "f32", "f16", "bf16" } do
    t.errors(function() specs.variant(fmt, { PREFETCH = 1 }) end, "gemv_cuda.variant: " .. fmt .. " has no define PREFETCH", true)
    t.eq(specs.variant_defines(fmt).PREFETCH, nil, fmt)
    t.errors(function() specs.variant(fmt, { I8 = 1 }) end, "gemv_cuda.variant: " .. fmt .. " has no define I8", true)
  end
  t.eq(specs.variant_defines("nope"), nil)
  t.errors(function() specs.variant("q6_k", { I8 = 1, BULK = 1 }) end,
    "gemv_cuda.variant: q6_k I8=1 is its own kernel: MMA and BULK must stay 0", true)
end)

t.test("bf16 and f16 from 3 rows of x run the dense tensor-core kernel by default", function()
  for _, fmt in ipairs { "bf16", "f16" } do
    for T = 1, 8 do
      local s = gemv.spec("cuda", fmt, 14336, 5120, T)
      if T >= 3 then
        t.eq(s.file, "kernels/cuda/gemv_" .. fmt .. "_tc.cu", fmt .. " T=" .. T)
        t.eq(s.defines, specs.variant(fmt, { MMA = 1, GEMV_TOKENS = T }).defines, fmt)
        t.truthy(gemv.spec("cuda", fmt, T) == s, "the same spec without a shape (the kernel cache's key)")
      else
        t.eq(s.file, "kernels/cuda/gemv_" .. fmt .. ".cu", fmt .. " T=" .. T)
      end
    end
    t.eq(specs.token_changes(fmt, 3), { MMA = 1 }, fmt)
    t.eq(specs.token_changes(fmt, 2), {}, fmt)
  end
  t.eq(gemv.spec("cuda", "f32", 8).file, "kernels/cuda/gemv_f32.cu")
end)

t.test("f32: UNROLL=1 at T = 4 and ROWS=2 at T = 8 (the T they were measured faster at), the entry's elsewhere", function()
  for T = 1, 8 do
    local want = T == 4 and { UNROLL = 1 } or T == 8 and { ROWS = 2 } or {}
    t.eq(specs.token_changes("f32", T), want, "T=" .. T)
    local s = gemv.spec("cuda", "f32", 14336, 5120, T)
    t.eq({ s.defines.ROWS, s.defines.UNROLL, s.defines.GEMV_TOKENS }, { T == 8 and 2 or 4, T == 4 and 1 or 2, T }, "T=" .. T)
    t.eq(s.rows_per_group, s.defines.ROWS * s.defines.WARPS, "T=" .. T)
  end
end)

t.test("q4_k from 5 rows of x, q5_k at 3 and from 5, q6_k at 8 run the int8 kernel by default, q8_0 from 4 and q4_0 from 3 the f16 one", function()
  for fmt, from in pairs { q4_k = 5, q5_k = 5, q6_k = 8, q8_0 = 4, q4_0 = 3 } do
    for T = 1, 8 do
      local s = gemv.spec("cuda", fmt, 14336, 5120, T)
      if T >= from or (fmt == "q5_k" and T == 3) then
        if fmt == "q8_0" or fmt == "q4_0" then
          t.eq(s.file, "kernels/cuda/gemv_" .. fmt .. "_tc.cu", fmt .. " T=" .. T)
          t.eq(s.defines, { TC = 1, WARPS = 1, KSPLIT = fmt == "q4_0" and 4 or 2, TILES = 2, UNROLL = 4, STAGES = 2,
            INTERLEAVE = 2, GEMV_TOKENS = T }, fmt)
        else
          t.eq(s.file, "kernels/cuda/gemv_" .. fmt .. "_i8.cu", fmt .. " T=" .. T)
          t.eq(s.defines, { I8 = 1, WARPS = 4, KSPLIT = 2, PREFETCH = 0, XPRE = 0, GEMV_TOKENS = T }, fmt)
        end
        t.truthy(gemv.spec("cuda", fmt, T) == s, "the same spec without a shape (the kernel cache's key)")
      else
        t.eq(s.file, "kernels/cuda/gemv_" .. fmt .. ".cu", fmt .. " T=" .. T)
      end
    end
  end
  t.eq(gemv.spec("cuda", "q6_k", 7).file, "kernels/cuda/gemv_q6_k.cu")
  t.eq(specs.token_changes("q6_k", 7), {})
  -- q6_k's shape rule (BULK=1 at 14336 x 5120) stays below T = 8 and gives way to the int8 kernel at 8
  t.eq(gemv.spec("cuda", "q6_k", 14336, 5120, 7).defines.BULK, 1)
  t.errors(function() specs.token_changes("q9", 8) end, "gemv_cuda.token_changes: unknown format q9", true)
end)

-- q8_0 and q4_0 (gemv_b32_i8.cuh): the same kernel shape as q4_k's
-- (docs/kernels/cuda-gemv.md, "The int8 tensor-core q8_0 and q4_0 kernels");
-- the default from T = 4 (the test above), the integer dot below.
t.test("the int8 tensor-core q8_0 and q4_0 kernels (I8=1): their own files, entries and geometry", function()
  for _, fmt in ipairs { "q8_0", "q4_0" } do
    local s = specs.variant(fmt, { I8 = 1, WARPS = 4, KSPLIT = 2, GEMV_TOKENS = 8 })
    t.eq({ s.file, s.entry, s.rows_per_group, s.block[1] },
      { "kernels/cuda/gemv_" .. fmt .. "_i8.cu", "gemv_" .. fmt .. "_i8", 64, 256 }, fmt)
    t.eq(s.defines, { I8 = 1, WARPS = 4, KSPLIT = 2, PREFETCH = 0, XPRE = 0, GEMV_TOKENS = 8 }, fmt)
    t.eq(gemv.grid(s, 129, 256), { 3, 1, 1 }, fmt .. ": ceil(129 / 64) blocks")
    t.eq(specs.variant(fmt, { I8 = 1, WARPS = 2, KSPLIT = 4, PREFETCH = 1, GEMV_TOKENS = 3 }).defines,
      { I8 = 1, WARPS = 2, KSPLIT = 4, PREFETCH = 1, XPRE = 0, GEMV_TOKENS = 3 }, fmt)
    t.eq(specs[fmt].defines.I8, 0, fmt .. ": the entry is the integer dot")
    t.eq(specs.variant_defines(fmt).PREFETCH, 0, fmt .. ": a grid may name PREFETCH")
    t.errors(function() specs.variant(fmt, { PREFETCH = 1 }) end,
      ("gemv_cuda.variant: %s PREFETCH is the int8 kernel's: it needs I8=1"):format(fmt), true)
    t.errors(function() specs.variant(fmt, { I8 = 1, MMA = 1, XQ = 0 }) end,
      ("gemv_cuda.variant: %s I8=1 is its own kernel: MMA and BULK must stay 0"):format(fmt), true)
    t.eq(specs.variant(fmt, { I8 = 0 }).file, "kernels/cuda/gemv_" .. fmt .. ".cu", fmt)
    local integer_dot_to = fmt == "q4_0" and 2 or 3 -- q4_0 from T = 3 and q8_0 from 4: the f16 tensor-core kernel
    for T = 1, integer_dot_to do
      t.eq(gemv.spec("cuda", fmt, 14336, 5120, T).file, "kernels/cuda/gemv_" .. fmt .. ".cu", fmt .. " T=" .. T)
    end
    t.eq(specs.token_changes(fmt, integer_dot_to), {}, fmt)
    t.eq(specs.token_changes(fmt, 4), { TC = 1 }, fmt)
    local src = assert(io.open(s.file)):read("a")
    local seen, lines = {}, 0
    for defs in src:gmatch("// gpubench%-compile: entry=gemv_" .. fmt .. "_i8 defines=(%S+)") do
      lines = lines + 1
      t.truthy(defs:find("I8=1", 1, true), "every line names I8=1: " .. defs)
      seen[tonumber(defs:match("GEMV_TOKENS=(%d+)"))] = true
    end
    t.truthy(lines >= 6, fmt .. ": gpubench-compile lines at several geometries")
    t.truthy(seen[1] and seen[2] and seen[8], fmt .. ": lines at GEMV_TOKENS = 1, 2 and 8")
  end
end)

t.test("the int8 tensor-core q4_k, q5_k, q6_k, q8_0 and q4_0 kernels compile for sm_90 at every T", function()
  local gpu = t.gpu
  if not gpu or not gpu.compile then t.skip("no gpu module") end
  for _, fmt in ipairs { "q4_k", "q5_k", "q6_k", "q8_0", "q4_0" } do
    for T = 1, 8 do
      local s = specs.variant(fmt, { I8 = 1, WARPS = 4, KSPLIT = 2, GEMV_TOKENS = T })
      local ok, r = pcall(gpu.compile, { backend = "cuda", file = s.file, entry = s.entry, defines = s.defines, target = "sm_90" })
      if not ok and nvrtc_missing(t.error_text(r)) then t.skip("NVRTC not available: " .. t.error_text(r)) end
      t.truthy(ok, fmt .. " T=" .. T .. ": " .. t.error_text(r))
      if ok then t.eq(r.params, { "buffer", "buffer", "buffer", "u32", "u32" }, fmt) end
    end
  end
end)

t.test("the int8 tensor-core q8_0 and q4_0 kernels match the FP64 reference at every T", function()
  local dev = t.device("cuda")
  releasing(dev, function()
    -- (WARPS, KSPLIT, PREFETCH) as for q4_k; 1280 columns are 5 chunks of 256 (steps with missing ones)
    for _, fmt in ipairs { "q8_0", "q4_0" } do
      for T = 1, 8 do
        for _, g in ipairs { { 1, 1, 0 }, { 4, 2, 0 }, { 4, 4, 1 }, { 2, 8, 0 } } do
          local spec = specs.variant(fmt, { I8 = 1, WARPS = g[1], KSPLIT = g[2], PREFETCH = g[3], GEMV_TOKENS = T })
          gc.check_tokens(dev, fmt, 29, 3072, T, 161 + T, spec)
          gc.check_tokens(dev, fmt, 5, 256, T, 171 + T, spec)
          gc.check_tokens(dev, fmt, 70, 1280, T, 181 + T, spec)
          gc.check_tokens(dev, fmt, 37, 5120, T, 191 + T, spec)
        end
      end
    end
  end)
end)

-- XPRE=1 (gemv_i8_common.cuh, kernels/cuda/gemv_i8_xprep.cu): x quantized
-- once per call by a first launch into a workspace the int8 kernel reads in
-- x's place (docs/kernels/cuda-gemv.md, "x quantized once per call").
local XPREP_WANT = { q4_k = { 0, 0 }, q5_k = { 0, 0 }, q6_k = { 1, 1 }, q8_0 = { 1, 0 }, q4_0 = { 2, 1 } }

t.test("XPRE=1: the int8 kernel with a first launch (its file, defines, grid and workspace bytes); refused elsewhere", function()
  for fmt, want in pairs(XPREP_WANT) do
    local s = specs.variant(fmt, { I8 = 1, XPRE = 1, WARPS = 4, KSPLIT = 3, GEMV_TOKENS = 5 })
    t.eq(s.defines, { I8 = 1, WARPS = 4, KSPLIT = 3, PREFETCH = 0, XPRE = 1, GEMV_TOKENS = 5 }, fmt)
    local p = s.prep
    t.eq({ p.spec.file, p.spec.entry, p.spec.block[1] }, { "kernels/cuda/gemv_i8_xprep.cu", "gemv_i8_xprep", 256 }, fmt)
    t.eq(p.spec.defines, { XP_SX = want[1], XP_PERM = want[2], GEMV_TOKENS = 5 }, fmt)
    -- k = 5120: 20 chunks x 8 runs x 5 rows of x = 800 threads; 21 chunks (7 steps of 3) of 640 x 5 bytes
    t.eq(p.grid(5120), { 4, 1, 1 }, fmt)
    t.eq(p.bytes(5120), 21 * 640 * 5, fmt)
    t.eq(p.bytes(256), 3 * 640 * 5, fmt .. ": one chunk padded to a step of 3")
    t.eq(specs.variant(fmt, { I8 = 1, XPRE = 1, KSPLIT = 4, GEMV_TOKENS = 8 }).prep.bytes(5120), 20 * 640 * 8, fmt)
    t.truthy(specs.variant(fmt, { I8 = 1, XPRE = 1, WARPS = 1, GEMV_TOKENS = 5 }).prep.spec == p.spec,
      fmt .. ": one prep spec table per defines (the kernel cache's key)")
    t.eq(specs.variant(fmt, { I8 = 1, XPRE = 0, GEMV_TOKENS = 5 }).prep, nil, fmt)
    t.eq(specs.variant_defines(fmt).XPRE, 0, fmt .. ": a grid may name XPRE")
    t.errors(function() specs.variant(fmt, { XPRE = 1 }) end,
      ("gemv_cuda.variant: %s XPRE is the int8 kernel's: it needs I8=1"):format(fmt), true)
    t.errors(function() specs.variant(fmt, { I8 = 1, XPRE = 2 }) end, "gemv_cuda.variant: XPRE=2 is not 0 or 1", true)
  end
  t.errors(function() specs.variant("bf16", { XPRE = 1 }) end, "gemv_cuda.variant: bf16 has no define XPRE", true)
  -- every (XP_SX, XP_PERM) the formats use has a compile line of the prep (the NVRTC test compiles them)
  local src = assert(io.open("kernels/cuda/gemv_i8_xprep.cu")):read("a")
  for fmt, want in pairs(XPREP_WANT) do
    t.truthy(src:find(("// gpubench%%-compile: entry=gemv_i8_xprep defines=XP_SX=%d,XP_PERM=%d,GEMV_TOKENS=%%d")
      :format(want[1], want[2])), fmt .. ": a compile line of its prep")
  end
end)


t.test("gemv.launches: XPRE=1 is the prep launch, then the kernel reading the workspace in x's place", function()
  local dev, made, freed = dofile("tests/lua/fake_device.lua")("cuda") -- gemv.launches' workspace without a GPU
  local m, k, T = 100, 5120, 8
  local w, x, y = { size = gemv.buffer_bytes("q4_k", m, k) }, { size = 4 * k * T }, { size = 4 * m * T }
  local spec = specs.variant("q4_k", { I8 = 1, XPRE = 1, WARPS = 4, KSPLIT = 2, GEMV_TOKENS = T })
  local ls = gemv.launches(dev, "q4_k", w, x, y, m, k, T, spec)
  t.eq(#ls, 2)
  local ws = made[1]
  t.truthy(#made == 1 and ws.size >= 20 * 640 * T, "one workspace of 20 chunks of 640 T bytes")
  t.eq({ ls[1][1].entry, ls[1][2][1], ls[1][3][1], #ls[1] }, { "gemv_i8_xprep", 5, 256, 6 })
  t.truthy(ls[1][4] == x and ls[1][5] == ws, "the prep reads x into the workspace")
  t.eq(tostring(ls[1][6]), "gpu.u32(5120)")
  t.eq({ ls[2][1].entry, ls[2][2][1], ls[2][3][1], #ls[2] }, { "gemv_q4_k_i8", 2, 256, 8 })
  t.truthy(ls[2][4] == w and ls[2][5] == ws and ls[2][6] == y, "the kernel reads the workspace where x was")
  t.eq({ tostring(ls[2][7]), tostring(ls[2][8]) }, { "gpu.u32(100)", "gpu.u32(5120)" })
  t.eq(ls[2][1].defines.XPRE, 1)
  t.errors(function() gemv.launch_args(dev, "q4_k", w, x, y, m, k, T, spec) end,
    "gemv.launch_args: the q4_k kernel gemv_q4_k_i8 (GEMV_TOKENS=8,I8=1,KSPLIT=2,PREFETCH=0,WARPS=4,XPRE=1) is two launches, "
    .. "x's quantization first: use gemv.launches", true)
  -- bad input is reported at the caller's line, by both
  for _, fn in ipairs { gemv.launches, gemv.launch_args } do
    for _, args in ipairs { { m, 100, T }, { 0, k, T }, { m, k, 9 } } do
      local ok, e = pcall(function()
        local r = fn(dev, "q4_k", w, x, y, args[1], args[2], args[3]) -- not a tail call: this line is the caller
        return r
      end)
      t.truthy(not ok and tostring(e):find("^[^:]*test_gemv_cuda%.lua:%d+: gemv%."), tostring(e)) -- the path as the test was run
    end
  end
  -- the same checks as launch_args: a short x buffer is refused before anything is made
  t.errors(function() gemv.launches(dev, "q4_k", w, { size = 4 * k }, y, m, k, T, spec) end,
    "gemv.launches: x buffer is 20480 bytes, q4_k m=100 k=5120 tokens=8 needs 163840", true)
  -- a kernel without a prep: one launch, launch_args' own; the workspace is reused, grown and freed
  local one = gemv.launches(dev, "q4_k", w, x, y, m, k, T, specs.variant("q4_k", { I8 = 1, GEMV_TOKENS = T }))
  t.eq(#one, 1)
  t.truthy(one[1][5] == x, "XPRE=0 reads x itself")
  gemv.launches(dev, "q4_k", w, x, y, m, 2560, T, spec)
  t.eq(#made, 1, "a smaller call reuses the workspace")
  local big = { size = gemv.buffer_bytes("q4_k", m, 10240) }
  gemv.launches(dev, "q4_k", big, { size = 4 * 10240 * T }, y, m, 10240, T, spec)
  t.truthy(#made == 2 and made[2].size >= 40 * 640 * T, "a larger one grows it")
  t.truthy(not ws.freed and ls[2][5] == ws, "the smaller one is retired, not freed: the launches built with it stay valid")
  gemv.release(dev)
  t.eq(freed.n, 2)
end)

t.test("XPRE=1 kernels and their prep compile for sm_90 at every T", function()
  local gpu = t.gpu
  if not gpu or not gpu.compile then t.skip("no gpu module") end
  local preps = {}
  for fmt in pairs(XPREP_WANT) do
    for _, T in ipairs { 1, 4, 8 } do
      local s = specs.variant(fmt, { I8 = 1, XPRE = 1, WARPS = 4, KSPLIT = 2, GEMV_TOKENS = T })
      for _, c in ipairs { s, s.prep.spec } do
        if not preps[c] then
          preps[c] = true
          local ok, r = pcall(gpu.compile, { backend = "cuda", file = c.file, entry = c.entry, defines = c.defines, target = "sm_90" })
          if not ok and nvrtc_missing(t.error_text(r)) then t.skip("NVRTC not available: " .. t.error_text(r)) end
          t.truthy(ok, fmt .. " T=" .. T .. " " .. c.entry .. ": " .. t.error_text(r))
          if ok then
            t.eq(r.params, c == s and { "buffer", "buffer", "buffer", "u32", "u32" } or { "buffer", "buffer", "u32" }, c.entry)
          end
        end
      end
    end
  end
end)

t.test("XPRE=1 int8 kernels match the FP64 reference at every T", function()
  local dev = t.device("cuda")
  releasing(dev, function()
    -- (WARPS, KSPLIT, PREFETCH); 1280 columns are 5 chunks: steps of 2 or 4 read the workspace's pad
    for i, fmt in ipairs { "q4_k", "q5_k", "q6_k", "q8_0", "q4_0" } do
      for T = 1, 8 do
        for _, g in ipairs { { 1, 1, 0 }, { 4, 2, 0 }, { 4, 4, 1 }, { 2, 3, 0 } } do
          local spec = specs.variant(fmt, { I8 = 1, XPRE = 1, WARPS = g[1], KSPLIT = g[2], PREFETCH = g[3], GEMV_TOKENS = T })
          local seed = 401 + 40 * i + T
          gc.check_tokens(dev, fmt, 29, 3072, T, seed, spec)
          gc.check_tokens(dev, fmt, 70, 1280, T, seed + 10, spec)
          gc.check_tokens(dev, fmt, 37, 5120, T, seed + 20, spec)
        end
      end
    end
  end)
end)

-- q8_0 (gemv_b32_tc.cuh): the f16 tensor-core kernel, warps independent
-- (docs/kernels/cuda-gemv.md, "The f16 tensor-core q8_0 kernel").
t.test("the f16 tensor-core q8_0 kernel (TC=1): its own file, entry and geometry; refused elsewhere", function()
  local s = specs.variant("q8_0", { TC = 1, GEMV_TOKENS = 8 })
  t.eq({ s.file, s.entry, s.rows_per_group, s.block[1] }, { "kernels/cuda/gemv_q8_0_tc.cu", "gemv_q8_0_tc", 32, 64 })
  t.eq(s.defines, { TC = 1, WARPS = 1, KSPLIT = 2, TILES = 2, UNROLL = 4, STAGES = 2, INTERLEAVE = 2, GEMV_TOKENS = 8 })
  local g = specs.variant("q8_0", { TC = 1, I8 = 0, WARPS = 2, KSPLIT = 4, TILES = 3, UNROLL = 1, STAGES = 0, GEMV_TOKENS = 3 })
  t.eq(g.defines, { TC = 1, WARPS = 2, KSPLIT = 4, TILES = 3, UNROLL = 1, STAGES = 0, INTERLEAVE = 1, GEMV_TOKENS = 3 })
  t.eq(specs.variant("q8_0", { TC = 1, TILES = 1, UNROLL = 8, INTERLEAVE = 4 }).defines.INTERLEAVE, 4)
  t.eq(specs.variant("q8_0", { TC = 1, STAGES = 0, UNROLL = 2 }).defines.INTERLEAVE, 1, "direct loads read no stage")
  t.eq({ g.rows_per_group, g.block[1] }, { 96, 256 })
  t.eq(gemv.grid(g, 97, 256), { 2, 1, 1 }, "ceil(97 / 96) blocks")
  t.eq(specs.q8_0.defines.TC, 0, "the entry is the integer dot")
  -- from T = 4 the entry's T-row kernel is this one, at QTC_BEST's geometry
  t.eq(specs.token_changes("q8_0", 3), {})
  for T = 4, 8 do
    t.eq(specs.token_changes("q8_0", T), { TC = 1 }, "T=" .. T)
    local d = gemv.spec("cuda", "q8_0", 14336, 5120, T)
    t.eq({ d.file, d.defines.GEMV_TOKENS, d.defines.TILES, d.defines.INTERLEAVE }, { s.file, T, 2, 2 }, "T=" .. T)
  end
  t.eq(specs.variant("q8_0", { TC = 0 }).file, "kernels/cuda/gemv_q8_0.cu")
  local known = specs.variant_defines("q8_0")
  t.eq({ known.TC, known.TILES, known.UNROLL, known.INTERLEAVE, known.DYNAMIC }, { 0, 2, 4, 2, 0 }, "a grid may name TC's defines")
  t.errors(function() specs.variant("q8_0", { TC = 1, I8 = 1 }) end,
    "gemv_cuda.variant: q8_0 TC=1 (the f16 tensor-core kernel) takes WARPS, KSPLIT, TILES, UNROLL, STAGES, INTERLEAVE and GEMV_TOKENS, not I8", true)
  t.errors(function() specs.variant("q8_0", { TC = 1, INTERLEAVE = 3 }) end,
    "gemv_cuda.variant: INTERLEAVE=3 is not 1, 2 or 4 pairs of blocks read together", true)
  t.errors(function() specs.variant("q8_0", { TC = 1, INTERLEAVE = 2, STAGES = 0 }) end,
    "gemv_cuda.variant: INTERLEAVE=2 reads a shared-memory stage: it needs STAGES >= 2 (direct loads: UNROLL)", true)
  t.errors(function() specs.variant("q8_0", { TC = 1, ROWS = 4 }) end, "and GEMV_TOKENS, not ROWS", true)
  t.errors(function() specs.variant("q8_0", { TC = 1, STAGES = 1 }) end,
    "gemv_cuda.variant: STAGES=1 is 0 (direct loads) or 2..8 (shared-memory stages)", true)
  t.errors(function() specs.variant("q8_0", { TC = 1, STAGES = 2, UNROLL = 2 }) end,
    "gemv_cuda.variant: STAGES=2 stages whole groups of 4 pairs of blocks: UNROLL=2 must be a multiple of 4", true)
  -- Past the static 48 KiB the stages are dynamic shared memory, up to a block's 227 KiB.
  t.eq(specs.variant("q8_0", { TC = 1, WARPS = 4, KSPLIT = 2, STAGES = 2 }).defines.WARPS, 4)
  t.errors(function() specs.variant("q8_0", { TC = 1, WARPS = 4, KSPLIT = 2, UNROLL = 8, STAGES = 4 }) end,
    "gemv_cuda.variant: WARPS=4 KSPLIT=2 TILES=2 UNROLL=8 STAGES=4 needs 577536 bytes of shared memory, more than a block's 232448", true)
  t.errors(function() specs.variant("q8_0", { TC = 1, TILES = 5 }) end, "gemv_cuda.variant: TILES=5 is more than 4 row tiles of 16 per warp", true)
  t.errors(function() specs.variant("q8_0", { TC = 1, UNROLL = 9 }) end, "gemv_cuda.variant: UNROLL=9 is more than 8 pairs of blocks in flight", true)
  t.errors(function() specs.variant("q8_0", { TC = 1, UNROLL = 0, STAGES = 0 }) end, "gemv_cuda.variant: UNROLL=0 is not a positive integer", true)
  t.errors(function() specs.variant("q8_0", { TC = 1, WARPS = 8, KSPLIT = 8 }) end,
    "gemv_cuda.variant: WARPS=8 KSPLIT=8 is more than a block's 1024 threads", true)
  t.errors(function() specs.variant("q8_0", { TC = 1, GEMV_TOKENS = 9 }) end,
    "gemv_cuda.variant: GEMV_TOKENS=9 must be an integer in 1..8", true)
  t.errors(function() specs.variant("q8_0", { TC = 2 }) end, "gemv_cuda.variant: TC=2 is not 0 or 1", true)
  t.errors(function() specs.variant("q4_k", { TC = 1 }) end, "gemv_cuda.variant: q4_k has no define TC", true)
  local src = assert(io.open(s.file)):read("a")
  local seen, lines = {}, 0
  for defs in src:gmatch("// gpubench%-compile: entry=gemv_q8_0_tc defines=(%S+)") do
    lines = lines + 1
    t.truthy(defs:find("TC=1", 1, true) and defs:find("INTERLEAVE=", 1, true), "every line names TC=1 and INTERLEAVE: " .. defs)
    seen[tonumber(defs:match("GEMV_TOKENS=(%d+)"))] = true
  end
  t.truthy(lines >= 6 and seen[1] and seen[2] and seen[8], "gpubench-compile lines at several geometries and T = 1, 2, 8")
end)

-- q4_0 runs the same loop over GbTcQ4_0's 36-byte pairs of blocks.
t.test("the f16 tensor-core q4_0 kernel (TC=1): its own file and entry, 36-byte pairs in its stages; the rule from T = 4", function()
  local s = specs.variant("q4_0", { TC = 1, GEMV_TOKENS = 8 })
  t.eq({ s.file, s.entry, s.rows_per_group, s.block[1] }, { "kernels/cuda/gemv_q4_0_tc.cu", "gemv_q4_0_tc", 32, 128 })
  t.eq(s.defines, { TC = 1, WARPS = 1, KSPLIT = 4, TILES = 2, UNROLL = 4, STAGES = 2, INTERLEAVE = 2, GEMV_TOKENS = 8 })
  local first = {}
  for name, value in assert(io.open(s.file)):read("a"):match("^// gpubench%-compile: %S+ defines=(%S+)"):gmatch("([%w_]+)=(%d+)") do
    first[name] = tonumber(value)
  end
  t.eq(first, s.defines, "the first gpubench-compile line is the default geometry at T = 8")
  t.eq(specs.q4_0.defines.TC, 0, "the entry is the integer dot")
  -- 16 rows x 2 tiles x (36 x 8 + 16) bytes x 4 stages x 8 warps: past a block's 227 KiB; q8_0's pairs take it at 4 stages of 4
  t.errors(function() specs.variant("q4_0", { TC = 1, WARPS = 4, KSPLIT = 2, UNROLL = 8, STAGES = 4 }) end,
    "gemv_cuda.variant: WARPS=4 KSPLIT=2 TILES=2 UNROLL=8 STAGES=4 needs 315392 bytes of shared memory, more than a block's 232448", true)
  t.eq(specs.variant("q4_0", { TC = 1, WARPS = 4, KSPLIT = 2, UNROLL = 4, STAGES = 4 }).defines.STAGES, 4)
  t.eq(specs.token_changes("q4_0", 2), {}, "T = 2 keeps the integer dot")
  t.eq(specs.token_changes("q4_0", 3), { TC = 1 })
  t.eq(specs.token_changes("q4_0", 8), { TC = 1 })
end)

t.test("the f16 tensor-core q8_0 kernel compiles for sm_90 at every T", function()
  local gpu = t.gpu
  if not gpu or not gpu.compile then t.skip("no gpu module") end
  for T = 1, 8 do
    local s = specs.variant("q8_0", { TC = 1, TILES = T % 2 + 1, STAGES = T % 3 == 0 and 0 or 2,
      INTERLEAVE = T % 3 == 0 and 1 or (T % 2 + 1) * 2 % 6, GEMV_TOKENS = T })
    local ok, r = pcall(gpu.compile, { backend = "cuda", file = s.file, entry = s.entry, defines = s.defines, target = "sm_90" })
    if not ok and nvrtc_missing(t.error_text(r)) then t.skip("NVRTC not available: " .. t.error_text(r)) end
    t.truthy(ok, "T=" .. T .. ": " .. t.error_text(r))
    if ok then t.eq(r.params, { "buffer", "buffer", "buffer", "u32", "u32" }) end
  end
end)

-- The oracle's geometries (WARPS, KSPLIT, TILES, UNROLL, STAGES, INTERLEAVE): slices past the end (256 columns =
-- 4 pairs over 8), ragged m, direct and staged, a partial last stage (1280 columns = 20 pairs in stages of 8),
-- pairs read two and four at a time. The CPU test below checks that the table takes every one: a GPU test is the
-- wrong place to find that out.
-- The last is past the static 48 KiB (73728 bytes of dynamic shared memory).
local QTC_ORACLE_GEOMETRIES = { { 1, 1, 1, 1, 0, 1 }, { 4, 2, 1, 2, 0, 1 }, { 2, 8, 2, 4, 0, 1 }, { 1, 2, 2, 4, 2, 2 },
  { 1, 1, 1, 8, 3, 1 }, { 1, 2, 1, 8, 2, 4 }, { 1, 4, 2, 4, 2, 2 } }
local function qtc_changes(g, T)
  return { TC = 1, WARPS = g[1], KSPLIT = g[2], TILES = g[3], UNROLL = g[4], STAGES = g[5], INTERLEAVE = g[6], GEMV_TOKENS = T }
end

t.test("the f16 tensor-core q8_0 and q4_0 oracle's geometries are all valid variants at every T", function()
  for _, fmt in ipairs { "q8_0", "q4_0" } do
    for T = 1, 8 do
      for _, g in ipairs(QTC_ORACLE_GEOMETRIES) do
        local ok, err = pcall(specs.variant, fmt, qtc_changes(g, T))
        t.truthy(ok, ("%s T=%d {%s}: %s"):format(fmt, T, table.concat(g, ","), tostring(err)))
      end
    end
  end
end)

t.test("tensor-core stages past 48 KiB are dynamic shared memory of exactly their bytes (read from the CUBIN)", function()
  local gpu = t.gpu
  if not gpu or not gpu.compile then t.skip("no gpu module") end
  local function dynamic(fmt, changes)
    local s = specs.variant(fmt, changes)
    local ok, r = pcall(gpu.compile, { backend = "cuda", file = s.file, entry = s.entry, defines = s.defines, target = "sm_90" })
    if not ok and nvrtc_missing(t.error_text(r)) then t.skip("NVRTC not available: " .. t.error_text(r)) end
    t.truthy(ok, fmt .. ": " .. t.error_text(r))
    return r.dynamic_shared
  end
  -- 4 warps x 2 stages x 16 x 2 rows x (68 x 4 + 16) bytes; QTC_BEST's 36864 + 1024 stay static
  t.eq(dynamic("q8_0", qtc_changes({ 1, 4, 2, 4, 2, 2 }, 8)), 4 * 2 * 16 * 2 * (68 * 4 + 16))
  t.eq(dynamic("q8_0", qtc_changes({ 1, 2, 2, 4, 2, 2 }, 8)), 0)
  -- q4_0's QTC_BEST, 4 slices of 2 tiles: 4 x 2 stages x 16 x 2 x (36 x 4 + 16) + 3 x 1024 bytes, static
  t.eq(dynamic("q4_0", { TC = 1, GEMV_TOKENS = 8 }), 0)
  -- 8 warps x 2 stages x 16 rows x 64 x 4 bytes, and 2 KiB of k-slice sums beside them
  t.eq(dynamic("bf16", { MMA = 1, WARPS = 4, KSPLIT = 2, TILES = 1, UNROLL = 4, STAGES = 2, GEMV_TOKENS = 8 }), 8 * 2 * 16 * 64 * 4)
  t.eq(dynamic("bf16", specs.variant("bf16", { GEMV_TOKENS = 8 }).defines), 0)
  -- DYNAMIC=1: the same stages dynamic although they fit (to A/B the mechanism); QTC_BEST's 36864 bytes
  t.eq(dynamic("q8_0", { TC = 1, GEMV_TOKENS = 8, DYNAMIC = 1 }), 2 * 2 * 16 * 2 * (68 * 4 + 16))
  t.eq(dynamic("bf16", { MMA = 1, GEMV_TOKENS = 8, DYNAMIC = 1 }), 2 * 2 * 16 * 2 * 64 * 4)
  t.errors(function() specs.variant("q8_0", { TC = 1, STAGES = 0, UNROLL = 2, DYNAMIC = 1 }) end,
    "gemv_cuda.variant: DYNAMIC=1 places shared-memory stages: it needs STAGES >= 2", true)
  t.errors(function() specs.variant("bf16", { MMA = 1, DYNAMIC = 2 }) end, "gemv_cuda.variant: DYNAMIC=2 is not 0 or 1", true)
  t.errors(function() specs.variant("q4_k", { DYNAMIC = 1 }) end, "q4_k has no define DYNAMIC", true)
end)

for _, fmt in ipairs { "q8_0", "q4_0" } do
  t.test("the f16 tensor-core " .. fmt .. " kernel matches the FP64 reference at every T", function()
    local dev = t.device("cuda")
    releasing(dev, function()
      for T = 1, 8 do
        for _, g in ipairs(QTC_ORACLE_GEOMETRIES) do
          local spec = specs.variant(fmt, qtc_changes(g, T))
          gc.check_tokens(dev, fmt, 29, 3072, T, 201 + T, spec)
          gc.check_tokens(dev, fmt, 5, 256, T, 211 + T, spec)
          gc.check_tokens(dev, fmt, 70, 1280, T, 221 + T, spec)
          gc.check_tokens(dev, fmt, 37, 5120, T, 231 + T, spec)
        end
      end
    end)
  end)
end

-- (q6_k: 1280 columns make rows of 1050 bytes, so super-blocks and rows start at 2 mod 4)
for i, fmt in ipairs { "q4_k", "q5_k", "q6_k" } do
  t.test("the int8 tensor-core " .. fmt .. " kernel matches the FP64 reference at every T", function()
    local dev = t.device("cuda")
    releasing(dev, function()
      -- (WARPS, KSPLIT, PREFETCH): 3072 columns are 12 super-blocks, 1280 are 5 (steps with missing ones)
      for T = 1, 8 do
        for _, g in ipairs { { 1, 1, 0 }, { 4, 1, 0 }, { 4, 4, 1 }, { 2, 8, 0 } } do
          local spec = specs.variant(fmt, { I8 = 1, WARPS = g[1], KSPLIT = g[2], PREFETCH = g[3], GEMV_TOKENS = T })
          local seed = 131 + 60 * (i - 1) + T
          gc.check_tokens(dev, fmt, 29, 3072, T, seed, spec)
          gc.check_tokens(dev, fmt, 5, 256, T, seed + 10, spec)
          gc.check_tokens(dev, fmt, 70, 1280, T, seed + 20, spec)
        end
      end
    end)
  end)
end

-- bf16 and f16 (gemv_dense_tc.cuh): the dense tensor-core kernel for T rows of x
t.test("the dense tensor-core kernels (MMA=1): their own files, entries and geometry; refused elsewhere", function()
  for _, fmt in ipairs { "bf16", "f16" } do
    t.eq(specs[fmt].defines.MMA, 0, fmt .. ": the entry is the FMA kernel")
    local s = specs.variant(fmt, { MMA = 1, WARPS = 4, KSPLIT = 2, TILES = 1, UNROLL = 4, STAGES = 0, GEMV_TOKENS = 8 })
    t.eq({ s.file, s.entry, s.rows_per_group, s.block[1] },
      { "kernels/cuda/gemv_" .. fmt .. "_tc.cu", "gemv_" .. fmt .. "_tc", 64, 256 }, fmt)
    t.eq(s.defines, { MMA = 1, WARPS = 4, KSPLIT = 2, TILES = 1, UNROLL = 4, STAGES = 0, GEMV_TOKENS = 8 }, fmt)
    -- MMA=1 alone: the fastest geometry measured, which the first gpubench-compile line repeats at T = 8
    local best = specs.variant(fmt, { MMA = 1, GEMV_TOKENS = 8 })
    local ks = fmt == "bf16" and 2 or 4
    t.eq(best.defines, { MMA = 1, WARPS = 1, KSPLIT = ks, TILES = 2, UNROLL = fmt == "bf16" and 4 or 2, STAGES = 2, GEMV_TOKENS = 8 }, fmt)
    t.eq({ best.rows_per_group, best.block[1] }, { 32, 32 * ks }, fmt)
    local first = {}
    for name, value in assert(io.open(best.file)):read("a"):match("^// gpubench%-compile: %S+ defines=(%S+)"):gmatch("([%w_]+)=(%d+)") do
      first[name] = tonumber(value)
    end
    t.eq(first, best.defines, best.file .. ": the first gpubench-compile line is the default geometry at T = 8")
    local tl = specs.variant(fmt, { MMA = 1, WARPS = 2, KSPLIT = 2, TILES = 2, UNROLL = 2, STAGES = 2 })
    t.eq({ tl.rows_per_group, tl.block[1], tl.defines.TILES }, { 64, 128, 2 }, fmt)
    t.errors(function() specs.variant(fmt, { MMA = 1, TILES = 5 }) end,
      "gemv_cuda.variant: TILES=5 is more than 4 row tiles of 16 per warp", true)
    t.errors(function() specs.variant(fmt, { TILES = 2 }) end,
      "gemv_cuda.variant: " .. fmt .. " TILES=2 is the tensor-core kernel's (the FMA kernel has ROWS): it needs MMA=1", true)
    t.eq(specs.variant(fmt, { MMA = 1, WARPS = 1, KSPLIT = 4, TILES = 1, UNROLL = 4, STAGES = 2 }).defines.STAGES, 2, fmt)
    t.errors(function() specs.variant(fmt, { MMA = 1, STAGES = 1 }) end,
      "gemv_cuda.variant: STAGES=1 is 0 (direct loads) or 2..8 (shared-memory stages)", true)
    t.eq(specs.variant(fmt, { MMA = 1, WARPS = 4, KSPLIT = 2, TILES = 1, UNROLL = 4, STAGES = 2 }).defines.WARPS, 4, fmt)
    t.errors(function() specs.variant(fmt, { MMA = 1, WARPS = 8, KSPLIT = 2, TILES = 2, UNROLL = 4, STAGES = 4 }) end,
      "gemv_cuda.variant: WARPS=8 KSPLIT=2 TILES=2 UNROLL=4 STAGES=4 needs 532480 bytes of shared memory, more than a block's 232448", true)
    local g = specs.variant(fmt, { MMA = 1, WARPS = 2, KSPLIT = 8, TILES = 1, UNROLL = 1, STAGES = 0, GEMV_TOKENS = 3 })
    t.eq({ g.rows_per_group, g.block[1] }, { 32, 512 }, fmt)
    t.eq(gemv.grid(g, 37, 256), { 2, 1, 1 }, fmt)
    t.eq(specs.variant(fmt, { MMA = 0 }).file, "kernels/cuda/gemv_" .. fmt .. ".cu", fmt)
    t.errors(function() specs.variant(fmt, { MMA = 1, ROWS = 8 }) end,
      ("gemv_cuda.variant: %s MMA=1 (the tensor-core kernel) takes WARPS, KSPLIT, TILES, UNROLL, STAGES and GEMV_TOKENS, not ROWS"):format(fmt), true)
    t.errors(function() specs.variant(fmt, { MMA = 1, WARPS = 8, KSPLIT = 8 }) end,
      "gemv_cuda.variant: WARPS=8 KSPLIT=8 is more than a block's 1024 threads", true)
    t.errors(function() specs.variant(fmt, { MMA = 1, KSPLIT = 0 }) end, "gemv_cuda.variant: KSPLIT=0 is not a positive integer", true)
    t.errors(function() specs.variant(fmt, { MMA = 1, GEMV_TOKENS = 9 }) end,
      "gemv_cuda.variant: GEMV_TOKENS=9 must be an integer in 1..8", true)
    t.errors(function() specs.variant(fmt, { MMA = 2 }) end, "gemv_cuda.variant: MMA=2 is not 0 or 1", true)
    t.errors(function() specs.variant(fmt, { KSPLIT = 2 }) end,
      "gemv_cuda.variant: " .. fmt .. " KSPLIT=2 splits k in the tensor-core kernel only: it needs MMA=1", true)
    t.eq(specs.variant(fmt, { KSPLIT = 1, UNROLL = 4 }).defines, { ROWS = 4, WARPS = 2, UNROLL = 4, MMA = 0, GEMV_TOKENS = 1 },
      fmt .. ": KSPLIT=1 is the FMA kernel's (a sweep over both kernels names it)")
    t.eq({ specs.variant_defines(fmt).KSPLIT, specs.variant_defines(fmt).STAGES, specs.variant_defines(fmt).TILES }, { 1, 0, 1 }, fmt)
    t.errors(function() specs.variant(fmt, { STAGES = 2 }) end,
      "gemv_cuda.variant: " .. fmt .. " STAGES=2 stages weights in the tensor-core kernel only: it needs MMA=1", true)
    t.eq(specs.variant(fmt, { STAGES = 0 }).file, "kernels/cuda/gemv_" .. fmt .. ".cu", fmt)
    local src = assert(io.open(s.file)):read("a")
    local lines, seen = 0, {}
    for defs in src:gmatch("// gpubench%-compile: entry=gemv_" .. fmt .. "_tc defines=(%S+)") do
      lines = lines + 1
      t.truthy(defs:find("MMA=1", 1, true), "every line names MMA=1: " .. defs)
      seen[tonumber(defs:match("GEMV_TOKENS=(%d+)"))] = true
    end
    for T = 1, 8 do t.truthy(seen[T], fmt .. ": a gpubench-compile line at GEMV_TOKENS = " .. T) end
  end
  t.errors(function() specs.variant("f32", { MMA = 1 }) end, "gemv_cuda.variant: f32 has no define MMA", true)
end)

t.test("the dense tensor-core kernels compile for sm_90 at every T, and the FMA kernel refuses MMA=1", function()
  local gpu = t.gpu
  if not gpu or not gpu.compile then t.skip("no gpu module") end
  for _, fmt in ipairs { "bf16", "f16" } do
    for T = 1, 8 do
      local s = specs.variant(fmt, { MMA = 1, GEMV_TOKENS = T })
      local ok, r = pcall(gpu.compile, { backend = "cuda", file = s.file, entry = s.entry, defines = s.defines, target = "sm_90" })
      if not ok and nvrtc_missing(t.error_text(r)) then t.skip("NVRTC not available: " .. t.error_text(r)) end
      t.truthy(ok, fmt .. " T=" .. T .. ": " .. t.error_text(r))
      if ok then t.eq(r.params, { "buffer", "buffer", "buffer", "u32", "u32" }, fmt) end
    end
    local d = {}
    for name, v in pairs(specs[fmt].defines) do d[name] = v end
    d.MMA = 1
    t.errors(function()
      gpu.compile { backend = "cuda", file = specs[fmt].file, entry = specs[fmt].entry, defines = d, target = "sm_90" }
    end, "gemv_" .. fmt .. " is the FMA kernel: -DMMA=0", true)
  end
end)

t.test("the dense tensor-core kernels match the FP64 reference at every T", function()
  local dev = t.device("cuda")
  releasing(dev, function()
    -- k = 1032 ends in a partial chunk of 32 (and, staged, a partial stage), 5120 is the benchmark's width
    for _, fmt in ipairs { "bf16", "f16" } do
      for T = 1, 8 do
        -- (WARPS, KSPLIT, UNROLL, STAGES, TILES, at this T)
        for _, g in ipairs { { 1, 1, 1, 0, 1 }, { 4, 2, 4, 0, 1 }, { 2, 8, 8, 0, 1, T == 3 or T == 8 }, { 1, 4, 4, 2, 1 },
          { 2, 3, 2, 3, 1, T % 2 == 1 }, { 1, 2, 2, 3, 2 }, { 2, 1, 1, 0, 3, T % 3 == 0 },
          { 4, 2, 4, 2, 1, T == 2 or T == 8 } } do -- the last: 64 KiB of dynamic shared memory
          if g[6] == false then goto next end
          local spec = specs.variant(fmt, { MMA = 1, WARPS = g[1], KSPLIT = g[2], UNROLL = g[3], STAGES = g[4], TILES = g[5],
            GEMV_TOKENS = T })
          gc.check_tokens(dev, fmt, 37, 256, T, 201 + T, spec)
          gc.check_tokens(dev, fmt, 70, 1032, T, 211 + T, spec)
          gc.check_tokens(dev, fmt, 29, 5120, T, 221 + T, spec)
          ::next::
        end
      end
    end
  end)
end)

t.run()
