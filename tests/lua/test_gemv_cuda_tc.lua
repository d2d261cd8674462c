-- The CUDA tensor-core GEMV kernels of T rows of x through lib/gpubench/gemv.lua:
-- the f16 tensor-core q8_0 and q4_0 kernels (TC=1: kernels/cuda/gemv_q8_0_tc.cu,
-- gemv_q4_0_tc.cu) and the dense bf16 and f16 ones (MMA=1: gemv_bf16_tc.cu,
-- gemv_f16_tc.cu): their files, entries, geometry and refusals, compilation for
-- sm_90 with NVRTC (no GPU needed), stages past 48 KiB as dynamic shared memory
-- (read from the CUBIN), and on a CUDA device the results against the FP64 oracle
-- at every T.
--
-- Criterion (the GEMV contract): per row |y - y_ref| <= 1e-4 * sum_j |w_ij x_j|
-- (gemv_check.lua's check_tokens, every row of y against the FP64 reference of its
-- own x row). The spec table, the scalar kernels and their variants are
-- test_gemv_cuda.lua's.

local t = dofile("tests/lua/harness.lua")
local gemv = require "gpubench.gemv"
local specs = require "gpubench.gemv_cuda"

local gc = dofile("tests/lua/gemv_check.lua")(t)
local releasing = gc.releasing

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
  -- no T's default: the int8 kernel with staged weights beat it at every T from 2 (test_gemv_cuda_tokens.lua)
  for T = 1, 8 do t.truthy(gemv.spec("cuda", "q8_0", 14336, 5120, T).defines.TC ~= 1, "T=" .. T) end
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
t.test("the f16 tensor-core q4_0 kernel (TC=1): its own file and entry, 36-byte pairs in its stages", function()
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
  -- no T's default: the int8 kernel with staged weights beat it from T = 3, the integer dot at 2
  for T = 1, 8 do t.truthy(gemv.spec("cuda", "q4_0", 14336, 5120, T).defines.TC ~= 1, "T=" .. T) end
end)

t.test("the f16 tensor-core q8_0 kernel compiles for sm_90 at every T", function()
  local gpu = t.gpu
  if not gpu or not gpu.compile then t.skip("no gpu module") end
  for T = 1, 8 do
    local s = specs.variant("q8_0", { TC = 1, TILES = T % 2 + 1, STAGES = T % 3 == 0 and 0 or 2,
      INTERLEAVE = T % 3 == 0 and 1 or (T % 2 + 1) * 2 % 6, GEMV_TOKENS = T })
    gc.compile_sm90(s, "T=" .. T, gc.GEMV_PARAMS)
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
    local r = gc.compile_sm90(s, fmt)
    return r and r.dynamic_shared
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
      gc.compile_sm90(s, fmt .. " T=" .. T, gc.GEMV_PARAMS)
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
