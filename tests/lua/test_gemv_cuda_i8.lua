-- The CUDA int8 tensor-core GEMV kernels (I8=1: kernels/cuda/gemv_q4_k_i8.cu,
-- q5_k, q6_k, q8_0, q4_0) through lib/gpubench/gemv.lua: their files, entries,
-- geometry and refusals, compilation for sm_90 with NVRTC (no GPU needed), and on
-- a CUDA device the results against the FP64 oracle at every T; then XPRE=1 (x
-- quantized once per call by a first launch, kernels/cuda/gemv_i8_xprep.cu) the
-- same way, and gemv.launches' two launches (on a fake device).
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

-- q8_0 and q4_0 (gemv_b32_i8.cuh): the same kernel shape as q4_k's
-- (docs/kernels/cuda-gemv.md, "The int8 tensor-core q8_0 and q4_0 kernels");
-- the default from T = 2 (q8_0) and 3 (q4_0) with staged weights (test_gemv_cuda_tokens.lua), the integer dot below.
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
    local integer_dot_to = fmt == "q4_0" and 2 or 1 -- the staged int8 kernel from T = 3 (q4_0) and 2 (q8_0)
    for T = 1, integer_dot_to do
      t.eq(gemv.spec("cuda", fmt, 14336, 5120, T).file, "kernels/cuda/gemv_" .. fmt .. ".cu", fmt .. " T=" .. T)
    end
    t.eq(specs.token_changes(fmt, integer_dot_to), {}, fmt)
    t.eq(gemv.spec("cuda", fmt, 14336, 5120, integer_dot_to + 1).file, s.file, fmt)
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
      gc.compile_sm90(s, fmt .. " T=" .. T, gc.GEMV_PARAMS)
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

-- XPRE=1 (gemv_i8_common.cuh, kernels/cuda/gemv_i8_xprep.cu): x quantized
-- once per call by a first launch into a workspace the int8 kernel reads in
-- x's place (docs/kernels/cuda-gemv.md, "x quantized once per call").
local XPREP_WANT = { q4_k = { 0, 0 }, q5_k = { 0, 0 }, q6_k = { 1, 1 }, q8_0 = { 1, 0 }, q4_0 = { 2, 1 } }

t.test("XPRE=1, 2: the int8 kernel with a first launch (its file, defines, grid and workspace bytes); refused elsewhere", function()
  for fmt, want in pairs(XPREP_WANT) do
    local s = specs.variant(fmt, { I8 = 1, XPRE = 1, WARPS = 4, KSPLIT = 3, GEMV_TOKENS = 5 })
    t.eq(s.defines, { I8 = 1, WARPS = 4, KSPLIT = 3, PREFETCH = 0, XPRE = 1, GEMV_TOKENS = 5 }, fmt)
    local p = s.prep
    t.eq({ p.spec.file, p.spec.entry, p.spec.block[1] }, { "kernels/cuda/gemv_i8_xprep.cu", "gemv_i8_xprep", 256 }, fmt)
    t.eq(p.spec.defines, { XP_SX = want[1], XP_PERM = want[2], XP_FRAG = 0, GEMV_TOKENS = 5 }, fmt)
    -- k = 5120: 20 chunks x 8 runs x 5 rows of x = 800 threads; 21 chunks (7 steps of 3) of 640 x 5 bytes
    t.eq(p.grid(5120), { 4, 1, 1 }, fmt)
    t.eq(p.bytes(5120), 21 * 640 * 5, fmt)
    t.eq(p.bytes(256), 3 * 640 * 5, fmt .. ": one chunk padded to a step of 3")
    t.eq(specs.variant(fmt, { I8 = 1, XPRE = 1, KSPLIT = 4, GEMV_TOKENS = 8 }).prep.bytes(5120), 20 * 640 * 8, fmt)
    -- XPRE=2, the fragment order: 4 threads per (chunk, run, row of x), blocks of 64 (3200 threads, 50 blocks);
    -- 4608 bytes a chunk at every T
    local f2 = specs.variant(fmt, { I8 = 1, XPRE = 2, WARPS = 4, KSPLIT = 3, GEMV_TOKENS = 5 })
    t.eq(f2.defines.XPRE, 2, fmt)
    t.eq({ f2.prep.spec.block[1], f2.prep.spec.defines }, { 64, { XP_SX = want[1], XP_PERM = want[2], XP_FRAG = 1, GEMV_TOKENS = 5 } }, fmt)
    t.eq({ f2.prep.grid(5120), f2.prep.bytes(5120), f2.prep.bytes(256) }, { { 50, 1, 1 }, 21 * 4608, 3 * 4608 }, fmt)
    t.eq(specs.variant(fmt, { I8 = 1, XPRE = 2, KSPLIT = 4, GEMV_TOKENS = 1 }).prep.grid(5120), { 10, 1, 1 }, fmt)
    t.truthy(f2.prep.spec ~= p.spec, fmt .. ": the two preps are two kernels")
    t.truthy(specs.variant(fmt, { I8 = 1, XPRE = 1, WARPS = 1, GEMV_TOKENS = 5 }).prep.spec == p.spec,
      fmt .. ": one prep spec table per defines (the kernel cache's key)")
    t.eq(specs.variant(fmt, { I8 = 1, XPRE = 0, GEMV_TOKENS = 5 }).prep, nil, fmt)
    t.eq(specs.variant_defines(fmt).XPRE, 0, fmt .. ": a grid may name XPRE")
    t.errors(function() specs.variant(fmt, { XPRE = 1 }) end,
      ("gemv_cuda.variant: %s XPRE is the int8 kernel's: it needs I8=1"):format(fmt), true)
    t.errors(function() specs.variant(fmt, { I8 = 1, XPRE = 3 }) end, "gemv_cuda.variant: XPRE=3 is not 0, 1 or 2", true)
    -- I8_GUARD: passed only at 0 (the kernels' default 1 keeps the default's compile and cache key)
    t.eq(specs.variant(fmt, { I8 = 1, I8_GUARD = 0, XPRE = 2, GEMV_TOKENS = 4 }).defines.I8_GUARD, 0, fmt)
    t.eq(specs.variant(fmt, { I8 = 1, I8_GUARD = 1, GEMV_TOKENS = 4 }).defines.I8_GUARD, nil, fmt)
    t.eq(specs.variant_defines(fmt).I8_GUARD, 1, fmt .. ": a grid may name I8_GUARD")
    t.errors(function() specs.variant(fmt, { I8_GUARD = 0 }) end,
      ("gemv_cuda.variant: %s I8_GUARD is the int8 kernel's: it needs I8=1"):format(fmt), true)
    t.errors(function() specs.variant(fmt, { I8 = 1, I8_GUARD = 2 }) end, "gemv_cuda.variant: I8_GUARD=2 is not 0 or 1", true)
    t.eq(specs.variant_defines(fmt).STAGED, 0, fmt .. ": a grid may name STAGED")
    if fmt ~= "q6_k" then
      -- the weights through a ring per warp: passed only above 0, with XPRE=2 and no prefetch, within 48 KiB
      local st = specs.variant(fmt, { I8 = 1, XPRE = 2, STAGED = 2, WARPS = 2, KSPLIT = 2, GEMV_TOKENS = 8 })
      t.eq({ st.defines.STAGED, st.defines.XPRE, st.block[1] }, { 2, 2, 128 }, fmt)
      t.eq(specs.variant(fmt, { I8 = 1, XPRE = 2, STAGED = 0 }).defines.STAGED, nil, fmt)
      t.errors(function() specs.variant(fmt, { I8 = 1, XPRE = 1, STAGED = 2 }) end,
        ("gemv_cuda.variant: %s STAGED=2 needs XPRE=2 and PREFETCH=0"):format(fmt), true)
      t.errors(function() specs.variant(fmt, { I8 = 1, XPRE = 2, STAGED = 5 }) end,
        "gemv_cuda.variant: STAGED=5 is not 0, 2, 3 or 4", true)
      -- q4_k 8 warps x 3 stages x 16 rows x 160 bytes + 3 x 2 x 512 bytes of sums: ptxas's 64512 for that line
      local bytes = 8 * 3 * 16 * ({ q4_k = 160, q5_k = 224, q8_0 = 288, q4_0 = 160 })[fmt] + 3072
      t.eq(fmt ~= "q4_k" or bytes == 64512, true)
      t.errors(function() specs.variant(fmt, { I8 = 1, XPRE = 2, STAGED = 3, WARPS = 2, KSPLIT = 4 }) end,
        ("gemv_cuda.variant: %s STAGED=3 WARPS=2 KSPLIT=4 needs %d bytes of shared memory, more than 48 KiB"):format(fmt, bytes),
        true)
    else
      t.errors(function() specs.variant(fmt, { I8 = 1, XPRE = 2, STAGED = 2 }) end,
        ("gemv_cuda.variant: %s has no staged int8 kernel (STAGED: q4_k, q5_k, q8_0, q4_0): its chunks are no whole "
          .. "number of 16-byte copies"):format(fmt), true)
    end
  end
  t.errors(function() specs.variant("bf16", { XPRE = 1 }) end, "gemv_cuda.variant: bf16 has no define XPRE", true)
  -- every (XP_SX, XP_PERM) the formats use has a compile line of the prep (the NVRTC test compiles them)
  local src = assert(io.open("kernels/cuda/gemv_i8_xprep.cu")):read("a")
  for fmt, want in pairs(XPREP_WANT) do
    for frag = 0, 1 do
      t.truthy(src:find(("// gpubench%%-compile: entry=gemv_i8_xprep defines=XP_SX=%d,XP_PERM=%d,XP_FRAG=%d,GEMV_TOKENS=%%d")
        :format(want[1], want[2], frag)), fmt .. ": a compile line of its prep, XP_FRAG=" .. frag)
    end
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
      t.truthy(not ok and tostring(e):find("^[^:]*test_gemv_cuda_i8%.lua:%d+: gemv%."), tostring(e)) -- the path as the test was run
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

t.test("XPRE=1 and 2 kernels and their prep compile for sm_90 at every T", function()
  local gpu = t.gpu
  if not gpu or not gpu.compile then t.skip("no gpu module") end
  local preps = {}
  for fmt in pairs(XPREP_WANT) do
    for _, tx in ipairs { { 1, 1 }, { 4, 1 }, { 8, 1 }, { 1, 2 }, { 3, 2 }, { 8, 2 } } do
      local T = tx[1]
      local s = specs.variant(fmt, { I8 = 1, XPRE = tx[2], WARPS = 4, KSPLIT = 2, GEMV_TOKENS = T })
      for _, c in ipairs { s, s.prep.spec } do
        if not preps[c] then
          preps[c] = true
          gc.compile_sm90(c, fmt .. " T=" .. T .. " " .. c.entry, c == s and gc.GEMV_PARAMS or { "buffer", "buffer", "u32" })
        end
      end
    end
  end
end)

t.test("XPRE=1 and 2 int8 kernels match the FP64 reference at every T", function()
  local dev = t.device("cuda")
  releasing(dev, function()
    -- geometries (WARPS, KSPLIT, PREFETCH); 1280 columns are 5 chunks: steps of 2 or 4 read the workspace's pad.
    -- Each T takes two of the four per XPRE (every geometry at four T), XPRE=2 after XPRE=1 reusing the workspace
    -- the shared layout wrote (stale rows past T); then XPRE=2 without the epilogue's guard past T (I8_GUARD=0)
    -- and (not q6_k) its weights staged through 2 to 4 stages per warp (STAGED, no prefetch: W2 S2 up to 3
    -- stages, W1 S2 at 4 and for q8_0's 288-byte rows, within 48 KiB)
    local geos = { { 1, 1, 0 }, { 4, 2, 0 }, { 4, 4, 1 }, { 2, 3, 0 } }
    for i, fmt in ipairs { "q4_k", "q5_k", "q6_k", "q8_0", "q4_0" } do
      for T = 1, 8 do
        local vs = { { geos[T % 4 + 1], 1 }, { geos[(T + 1) % 4 + 1], 1 }, { geos[(T + 2) % 4 + 1], 2 },
          { geos[(T + 3) % 4 + 1], 2 }, { geos[T % 4 + 1], 2, I8_GUARD = 0 } }
        if fmt ~= "q6_k" then
          local stg = T % 3 + 2
          vs[#vs + 1] = { (stg == 4 or fmt == "q8_0") and { 1, 2, 0 } or { 2, 2, 0 }, 2, STAGED = stg }
        end
        for _, v in ipairs(vs) do
          local spec = specs.variant(fmt, { I8 = 1, XPRE = v[2], WARPS = v[1][1], KSPLIT = v[1][2], PREFETCH = v[1][3],
            GEMV_TOKENS = T, I8_GUARD = v.I8_GUARD or 1, STAGED = v.STAGED or 0 })
          local seed = 401 + 40 * i + T
          gc.check_tokens(dev, fmt, 29, 3072, T, seed, spec)
          gc.check_tokens(dev, fmt, 70, 1280, T, seed + 10, spec)
          gc.check_tokens(dev, fmt, 37, 5120, T, seed + 20, spec)
        end
      end
    end
  end)
end)

t.run()
