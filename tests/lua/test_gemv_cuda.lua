-- The CUDA GEMV kernels (kernels/cuda/gemv_*.cu) through lib/gpubench/gemv.lua:
-- the geometry table, compilation for sm_90 with NVRTC (no GPU needed), and on a
-- CUDA device the results against the FP64 oracle.
--
-- Criterion (the GEMV contract): per row |y - y_ref| <= 1e-4 * sum_j |w_ij x_j|.
-- Shapes: m = 37 is a multiple of no rows_per_group, so the last block has rows
-- past the end; k = 256 is one tile of the tensor-core path (256 columns) and a
-- partial one of the scalar path (1024 columns), k =
-- 4096 four full ones, k = 5120 the width of the 14336 x 5120 benchmark shape.
--
-- The rest of the CUDA GEMV tests are by kernel family: test_gemv_cuda_tokens.lua
-- (GEMV_TOKENS, the kernel each T runs by default), test_gemv_cuda_i8.lua (the int8
-- tensor-core kernels and XPRE=1), test_gemv_cuda_tc.lua (the f16 tensor-core q8_0 and
-- q4_0 kernels, the dense tensor-core kernels, dynamic shared memory).

local t = dofile("tests/lua/harness.lua")
local gemv = require "gpubench.gemv"
local specs = require "gpubench.gemv_cuda"

local gc = dofile("tests/lua/gemv_check.lua")(t)
local releasing, check, nvrtc_missing = gc.releasing, gc.check, gc.nvrtc_missing
local QUANT = gc.QUANT

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
    gc.compile_sm90(s, fmt, gc.GEMV_PARAMS)
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
      gc.compile_sm90(s, fmt)
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
-- Each format's variant with define `name` = v, which its defines must keep, against
-- the reference: ragged m (29 rows of k = 3072), 300 rows of one tile, and q4_0 and
-- q8_0 rows that are no multiple of 16 bytes (k = 288); seeds seed .. seed + 2.
local function check_switch(dev, formats, name, v, seed)
  for _, fmt in ipairs(formats) do
    local spec = specs.variant(fmt, { [name] = v })
    t.eq(spec.defines[name], v, fmt)
    check(dev, fmt, 29, 3072, seed, spec)
    check(dev, fmt, 300, 256, seed + 1, spec)
    if fmt == "q4_0" or fmt == "q8_0" then check(dev, fmt, 37, 288, seed + 2, spec) end
  end
end

t.test("EARLY_RELEASE=1 variants match the FP64 reference", function()
  local dev = t.device("cuda")
  releasing(dev, function()
    check_switch(dev, gemv.formats, "EARLY_RELEASE", 1, 41)
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

-- XSHARED=0: the integer dot's x in registers instead of each warp's shared slots (gemv_warp.cuh,
-- GbQuantSmem): every quantized format, ragged m, a split k, parts, q8_0/q4_0 rows off 16 bytes.
t.test("XSHARED=0 variants match the FP64 reference; 0 or 1, not passed at 1, the integer dot's only", function()
  t.eq(specs.variant("q4_k", { XSHARED = 1 }).defines.XSHARED, nil, "1 is the kernels' default")
  t.eq({ specs.variant_defines("q6_k").XSHARED, specs.variant_defines("f16").XSHARED }, { 1, nil })
  t.errors(function() specs.variant("q4_k", { XSHARED = 2 }) end, "gemv_cuda.variant: XSHARED=2 is not 0 or 1", true)
  t.errors(function() specs.variant("f16", { XSHARED = 0 }) end, "gemv_cuda.variant: f16 has no define XSHARED", true)
  for _, c in ipairs { { XQ = 0 }, { I8 = 1 }, { MMA = 1, XQ = 0 } } do
    c.XSHARED = 0
    t.errors(function() specs.variant("q4_k", c) end,
      "gemv_cuda.variant: q4_k XSHARED=0 keeps the integer dot's x in registers: it needs XQ=1, MMA=0 and I8=0", true)
  end
  local dev = t.device("cuda")
  releasing(dev, function()
    check_switch(dev, { "q4_0", "q8_0", "q4_k", "q5_k", "q6_k" }, "XSHARED", 0, 51)
    check(dev, "q4_k", 19, 5120, 54, specs.variant("q4_k", { XSHARED = 0, ROWS = 8, WARPS = 2, STAGES = 1, KSPLIT = 5 }))
    check(dev, "q6_k", 45, 4096, 55, specs.variant("q6_k", { XSHARED = 0, ROWS = 16, PARTS = 4, STAGES = 3 }))
  end)
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

t.run()
