-- The CUDA GEMV kernels (kernels/cuda/gemv_*.cu) at GEMV_TOKENS = T rows of x
-- through lib/gpubench/gemv.lua: the define in every entry and gpubench-compile
-- line, compilation for sm_90 with NVRTC (no GPU needed), the kernel each format
-- runs by default at each T, and on a CUDA device every row of y against the FP64
-- oracle (the scalar path, the tensor-core path, magic decode, split-K, x in
-- shared memory).
--
-- Criterion (the GEMV contract): per row |y - y_ref| <= 1e-4 * sum_j |w_ij x_j|
-- (gemv_check.lua's check_tokens, every row of y against the FP64 reference of its
-- own x row). The spec table, the scalar kernels and their variants are
-- test_gemv_cuda.lua's.

local t = dofile("tests/lua/harness.lua")
local gemv = require "gpubench.gemv"
local specs = require "gpubench.gemv_cuda"

local gc = dofile("tests/lua/gemv_check.lua")(t)
local releasing, nvrtc_missing = gc.releasing, gc.nvrtc_missing
local QUANT = gc.QUANT

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
      gc.compile_sm90(s, fmt, gc.GEMV_PARAMS)
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

t.test("the T-row defaults: the int8 kernel with x in fragment order, unguarded or staged where that won; the integer dot elsewhere", function()
  -- per format and T: the int8 kernel's defines besides I8 = 1, XPRE = 2, PREFETCH = 0 and GEMV_TOKENS
  -- (W: WARPS, S: KSPLIT, g0: I8_GUARD = 0, STAGED = n), or nothing: the integer dot (the entry's file)
  local function i8(w, s, more)
    local d = { WARPS = w, KSPLIT = s }
    for k, v in pairs(more or {}) do d[k] = v end
    return d
  end
  local g0 = { I8_GUARD = 0 }
  local want = {
    q4_k = { [3] = i8(7, 4, g0), [4] = i8(7, 4, g0), [5] = i8(7, 4, g0), [6] = i8(7, 4, g0), [7] = i8(7, 4),
      [8] = i8(7, 4) },
    q5_k = { [5] = i8(2, 4), [7] = i8(1, 2, { STAGED = 4, I8_GUARD = 0 }) },
    q6_k = { [6] = i8(8, 4, g0), [7] = i8(8, 4, g0), [8] = i8(4, 2, { PREFETCH = 1 }) },
    q8_0 = {},
    q4_0 = {},
  }
  for T = 2, 8 do
    if T ~= 5 and T ~= 7 then want.q5_k[T] = i8(2, 2, { STAGED = 2, I8_GUARD = 0 }) end
    want.q8_0[T] = i8(1, 2, { STAGED = 3, I8_GUARD = 0 })
    if T >= 3 then want.q4_0[T] = i8(2, 2, { STAGED = 4, I8_GUARD = 0 }) end
  end
  for fmt, by_t in pairs(want) do
    for T = 1, 8 do
      local s, w, what = gemv.spec("cuda", fmt, 14336, 5120, T), by_t[T], fmt .. " T=" .. T
      if w then
        local d = { I8 = 1, XPRE = 2, PREFETCH = 0, GEMV_TOKENS = T }
        for k, v in pairs(w) do d[k] = v end
        t.eq(s.file, "kernels/cuda/gemv_" .. fmt .. "_i8.cu", what)
        t.eq(s.defines, d, what)
        t.truthy(s.prep and s.prep.spec.entry == "gemv_i8_xprep", what .. ": the prep launch")
        t.eq(s.prep.spec.defines.XP_FRAG, 1, what .. ": the prep writes the fragment order")
        t.truthy(gemv.spec("cuda", fmt, T) == s, "the same spec without a shape (the kernel cache's key)")
      else
        t.eq(s.file, "kernels/cuda/gemv_" .. fmt .. ".cu", what)
        t.eq(s.defines.I8, 0, what)
      end
    end
  end
  t.eq(specs.token_changes("q6_k", 5), {})
  t.eq(specs.token_changes("q4_k", 4), { I8 = 1, XPRE = 2, WARPS = 7, KSPLIT = 4, PREFETCH = 0, I8_GUARD = 0 })
  t.eq(specs.token_changes("q5_k", 4), { I8 = 1, XPRE = 2, WARPS = 2, KSPLIT = 2, PREFETCH = 0, STAGED = 2, I8_GUARD = 0 })
  -- q6_k's shape rule (BULK=1 at 14336 x 5120) stays below T = 6 and gives way to the int8 kernel from 6
  t.eq(gemv.spec("cuda", "q6_k", 14336, 5120, 5).defines.BULK, 1)
  t.eq(gemv.spec("cuda", "q6_k", 14336, 5120, 6).defines.BULK, nil)
  t.errors(function() specs.token_changes("q9", 8) end, "gemv_cuda.token_changes: unknown format q9", true)
end)

t.run()
