-- The Vulkan q8_0 / q4_0 / q4_k / q5_k / q6_k GEMV on int8 cooperative matrices and f16 / bf16
-- on fp16 ones (GEMV_COOP=1, kernels/vulkan/gemv_*_coop.comp, docs/kernels/vulkan-gemv.md, "Tensor cores through
-- int8 cooperative matrices"): its spec and errors, its compile at every T (without a
-- device, so CI compiles what lavapipe cannot run), its first dispatch (x's signed digits,
-- which lavapipe runs) against a Lua quantizer, the refusal on a device without the
-- matrices, the kernels with emulated matrices (GEMV_COOP=2, lavapipe runs them) and the
-- real ones where the device has them, both against the FP64 oracle.

local t = dofile("tests/lua/harness.lua")
local gemv = require "gpubench.gemv"
local specs = require "gpubench.gemv_vulkan"
local gc = dofile("tests/lua/gemv_check.lua")(t)

local NV_I8 = { m = 16, n = 8, k = 32, a = "s8", b = "s8", c = "s32", d = "s32" }
local ALL = { "q8_0", "q4_0", "q4_k", "q5_k", "q6_k", "f16", "bf16" }
local SUPER = { q4_k = true, q5_k = true, q6_k = true } -- a super-block per step: no COOP_U
local DENSE = { f16 = true, bf16 = true }                -- fp16 matrices, steps of 16
-- k of `few` super-blocks for the k-quants, else of `many` blocks of 32 (steps of 16)
local function k_of(fmt, few, many)
  return SUPER[fmt] and 256 * few or DENSE[fmt] and 16 * many or 32 * many
end

t.test("GEMV_COOP=1: the spec, its first dispatch, the device requirement and the errors", function()
  for fmt, code in pairs { q8_0 = 1, q4_0 = 2 } do
    local s = specs.variant(fmt, { GEMV_COOP = 1, GEMV_TOKENS = 5 })
    t.eq({ s.file, s.entry, s.block[1], s.rows_per_group }, { "kernels/vulkan/gemv_b32_coop.comp", "main", 256, 64 }, fmt)
    t.eq(s.defines, { GEMV_COOP = 1, COOP_FMT = code, COOP_WR = 4, COOP_KS = 2, COOP_U = 4, GEMV_TOKENS = 5 }, fmt)
    t.eq(s.shared_bytes, 8 * 4 * 16 * (48 + 4) + 512 + 8 * 512, fmt .. ": stages and their d, indices, the slices' sums")
    t.eq(s.x_rounding, 32, fmt)
    t.eq({ s.prep.spec.file, s.prep.spec.defines }, { "kernels/vulkan/gemv_idot_xprep.comp", { GEMV_TOKENS = 5, XPREP_COOP = 1 } }, fmt)
    t.eq(s.prep.grid(5120), { 40, 1, 1 }, fmt .. ": 160 blocks x 8 tokens x 8 invocations")
    t.eq(s.prep.bytes(5120), 80 * 8 * 160, fmt .. ": records for 8 tokens")
    t.eq(gemv.grid(s, 129, 256), { 3, 1, 1 }, fmt .. ": ceil(129 / 64)")
    t.truthy(specs.variant(fmt, { GEMV_COOP = 1, GEMV_TOKENS = 5, COOP_WR = 4 }) == s,
      fmt .. ": one spec table per configuration (the kernel cache's key)")
    local w = specs.variant(fmt, { GEMV_COOP = 1, COOP_WR = 2, COOP_KS = 4, COOP_U = 2, GEMV_TOKENS = 8 })
    t.eq({ w.block[1], w.rows_per_group, w.defines.COOP_U }, { 256, 32, 2 }, fmt)
    local d = specs.variant_defines(fmt)
    t.eq({ d.GEMV_COOP, d.COOP_WR, d.COOP_KS, d.COOP_U }, { 0, 4, 2, 4 }, fmt .. ": a grid may name them")
    t.errors(function() specs.variant(fmt, { GEMV_COOP = 1, GEMV_IDOT = 1 }) end,
      ("gemv_vulkan.variant: %s GEMV_COOP=1 or 2 is its own kernel: it takes COOP_WR, COOP_KS, COOP_U and GEMV_TOKENS, not GEMV_IDOT"):format(fmt), true)
    t.errors(function() specs.variant(fmt, { COOP_WR = 2 }) end,
      ("gemv_vulkan.variant: %s COOP_WR is the cooperative-matrix kernel's: it needs GEMV_COOP=1"):format(fmt), true)
    t.errors(function() specs.variant(fmt, { GEMV_COOP = 3 }) end, "gemv_vulkan.variant: GEMV_COOP=3 is not 0, 1 or 2", true)
    local emu = specs.variant(fmt, { GEMV_COOP = 2, GEMV_TOKENS = 5 })
    t.eq(emu.defines, { GEMV_COOP = 2, COOP_EMULATE = 1, COOP_FMT = code, COOP_WR = 4, COOP_KS = 2, COOP_U = 4, GEMV_TOKENS = 5 },
      fmt .. ": the emulation")
    t.eq({ emu.file, emu.requires, emu.prep.spec == s.prep.spec }, { s.file, nil, true }, fmt .. ": any device, the same prep")
    t.errors(function() specs.variant(fmt, { GEMV_COOP = 1, COOP_KS = 0 }) end,
      "gemv_vulkan.variant: COOP_KS=0 is not a positive integer", true)
    t.errors(function() specs.variant(fmt, { GEMV_COOP = 1, COOP_WR = 16, COOP_KS = 4 }) end,
      "gemv_vulkan.variant: COOP_WR=16 x COOP_KS=4 subgroups of 32 are more than a workgroup's 1024 invocations", true)
    t.errors(function() specs.variant(fmt, { GEMV_COOP = 1, COOP_U = 9 }) end, "gemv_vulkan.variant: COOP_U=9 is not in 1..8", true)
    local ok = gc.vulkan_fake { name = "nv", cooperative_matrix = "nv", cooperative_matrix_shapes = { NV_I8 } }
    t.eq({ s.requires(ok) }, { true })
    t.eq({ s.requires(gc.vulkan_fake { name = "lvp", cooperative_matrix = false }) },
      { false, "GEMV_COOP=1 needs VK_NV_cooperative_matrix, which lvp does not offer" })
    t.eq({ s.requires(gc.vulkan_fake { name = "nv", cooperative_matrix = "nv", cooperative_matrix_shapes = {
      { m = 16, n = 16, k = 16, a = "f16", b = "f16", c = "f32", d = "f32" } } }) },
      { false, "GEMV_COOP=1 needs 16x8x32 s8 x s8 + s32 cooperative matrices, which nv does not list" })
    t.eq({ s.requires(gc.vulkan_fake { name = "nv", cooperative_matrix = "nv", cooperative_matrix_shapes = { NV_I8 },
      subgroup_size = 64 }) }, { false, "GEMV_COOP=1 needs subgroups of 32; nv reports 64" })
    t.eq({ s.requires(gc.vulkan_fake { name = "nv", cooperative_matrix = "nv", cooperative_matrix_shapes = { NV_I8 },
      max_shared_bytes = 16384 }) }, { false, ("GEMV_COOP=1 needs %d bytes of shared memory; nv allows 16384"):format(s.shared_bytes) })
  end
  -- the k-quants: their own files, a super-block per step (no COOP_U), two staged sub-blocks
  -- (q4_k, q5_k: a pair; q6_k: one sub-block's halves)
  for fmt, code in pairs { q4_k = 3, q5_k = 4, q6_k = 5 } do
    local k4 = specs.variant(fmt, { GEMV_COOP = 1, GEMV_TOKENS = 8 })
    t.eq({ k4.file, k4.block[1], k4.rows_per_group },
      { code == 5 and "kernels/vulkan/gemv_q6_k_coop.comp" or "kernels/vulkan/gemv_q4k_q5k_coop.comp", 256, 64 }, fmt)
    t.eq(k4.defines, { GEMV_COOP = 1, COOP_FMT = code, COOP_WR = 4, COOP_KS = 2, GEMV_TOKENS = 8 }, fmt)
    t.eq(k4.shared_bytes, 8 * (code == 5 and 2 * 16 * 48 + 16 * 8 or 2 * 16 * (48 + 8)) + 512 + 8 * 512, fmt)
    t.eq(k4.prep.spec.defines, { GEMV_TOKENS = 8, XPREP_COOP = 1 }, fmt)
    t.eq(specs.variant_defines(fmt).COOP_U, nil, fmt)
    t.errors(function() specs.variant(fmt, { GEMV_COOP = 1, COOP_U = 2 }) end,
      ("gemv_vulkan.variant: %s has no define COOP_U (GEMV_T, GEMV_NR, GEMV_WG, GEMV_TOKENS, GEMV_IDOT, GEMV_XB, GEMV_GRID, GEMV_XPRE%s, GEMV_COOP, COOP_WR, COOP_KS)")
        :format(fmt, (fmt == "q4_k" or fmt == "q5_k") and ", GEMV_KHALF, GEMV_KPF" or ", GEMV_KPF"), true)
    t.errors(function() specs.variant(fmt, { GEMV_COOP = 1, GEMV_XPRE = 1 }) end,
      ("gemv_vulkan.variant: %s GEMV_COOP=1 or 2 is its own kernel: it takes COOP_WR, COOP_KS and GEMV_TOKENS, not GEMV_XPRE"):format(fmt), true)
  end
  -- f16, bf16: fp16 products, their own first dispatch (one workgroup a token), k in steps of 16
  for fmt, code in pairs { f16 = 6, bf16 = 7 } do
    local d = specs.variant(fmt, { GEMV_COOP = 1, GEMV_TOKENS = 3, COOP_U = 2 })
    t.eq({ d.file, d.block[1], d.rows_per_group, d.k_multiple, d.x_rounding },
      { "kernels/vulkan/gemv_dense_coop.comp", 256, 64, 16, nil }, fmt)
    t.eq(d.defines, { GEMV_COOP = 1, COOP_FMT = code, COOP_WR = 4, COOP_KS = 2, COOP_U = 2, GEMV_TOKENS = 3 }, fmt)
    t.eq(d.shared_bytes, 8 * 2 * 16 * 48 + 512 + 8 * 512, fmt)
    t.eq({ d.prep.spec.file, d.prep.spec.defines, d.prep.grid(4096), d.prep.bytes(4096) },
      { "kernels/vulkan/gemv_dense_coop_xprep.comp", { GEMV_TOKENS = 3 }, { 8, 1, 1 }, 32 + 32 * 4096 }, fmt)
    t.eq({ d.requires(gc.vulkan_fake { name = "nv", cooperative_matrix = "nv", cooperative_matrix_shapes = { NV_I8 } }) },
      { false, "GEMV_COOP=1 needs 16x8x16 f16 x f16 + f32 cooperative matrices, which nv does not list" }, fmt)
    t.eq({ d.requires(gc.vulkan_fake { name = "nv", cooperative_matrix = "nv", cooperative_matrix_shapes = {
      { m = 16, n = 8, k = 16, a = "f16", b = "f16", c = "f32", d = "f32" } } }) }, { true }, fmt)
  end
  -- f16 with A loaded from W itself (COOP_DIRECT=1): no stage, whole groups of 16 rows
  local dd = specs.variant("f16", { GEMV_COOP = 1, GEMV_TOKENS = 3, COOP_DIRECT = 1 })
  t.eq(dd.defines, { GEMV_COOP = 1, COOP_FMT = 6, COOP_WR = 4, COOP_KS = 2, COOP_U = 1, COOP_DIRECT = 1, GEMV_TOKENS = 3 })
  t.eq({ dd.shared_bytes, dd.m_multiple, dd.k_multiple }, { 512 + 8 * 512, 16, 16 }, "f16 COOP_DIRECT=1: no stage")
  t.truthy(specs.variant("f16", { GEMV_COOP = 1, GEMV_TOKENS = 3, COOP_DIRECT = 1, COOP_U = 4 }) == dd,
    "f16 COOP_DIRECT=1: COOP_U is not read, one spec")
  t.eq(specs.variant("f16", { GEMV_COOP = 1, GEMV_TOKENS = 3, COOP_DIRECT = 0 }).defines.COOP_DIRECT, nil)
  t.eq(specs.variant_defines("f16").COOP_DIRECT, 0, "a grid may name it")
  t.eq(specs.variant_defines("bf16").COOP_DIRECT, nil)
  t.errors(function() specs.variant("f16", { GEMV_COOP = 1, COOP_DIRECT = 2 }) end,
    "gemv_vulkan.variant: COOP_DIRECT=2 is not 0 or 1", true)
  t.errors(function() specs.variant("bf16", { GEMV_COOP = 1, COOP_DIRECT = 1 }) end,
    "gemv_vulkan.variant: bf16 has no define COOP_DIRECT (GEMV_T, GEMV_NR, GEMV_WG, GEMV_TOKENS, GEMV_COOP, COOP_WR, COOP_KS, COOP_U, COOP_REG, COOP_RT, COOP_PF)", true)
  t.errors(function() specs.variant("f16", { COOP_DIRECT = 1 }) end,
    "gemv_vulkan.variant: f16 COOP_DIRECT is the cooperative-matrix kernel's: it needs GEMV_COOP=1", true)
  for _, fmt in ipairs { "f16", "bf16" } do -- A's components from registers
    local r = specs.variant(fmt, { GEMV_COOP = 1, GEMV_TOKENS = 8, COOP_REG = 1, COOP_U = 2 })
    t.eq(r.defines.COOP_REG, 1, fmt)
    t.eq(r.shared_bytes, 512 + 8 * 512 + 512, fmt .. " COOP_REG=1: indices, the slices' sums, A's indices")
    t.eq(specs.variant(fmt, { GEMV_COOP = 2, GEMV_TOKENS = 8, COOP_REG = 1, COOP_U = 2 }).shared_bytes,
      8 * 1536 + 512 + 8 * 512, fmt .. " COOP_REG=1 emulated: each subgroup's A and B in 384 floats")
    t.eq(specs.variant_defines(fmt).COOP_REG, 0, fmt)
    t.errors(function() specs.variant(fmt, { GEMV_COOP = 1, COOP_REG = 4 }) end, "gemv_vulkan.variant: COOP_REG=4 is not 0, 1, 2 or 3", true)
    -- COOP_REG=3: W in B, its own kernel and first dispatch, units of 64 k, tiles of 8 rows
    local b = specs.variant(fmt, { GEMV_COOP = 1, GEMV_TOKENS = 8, COOP_REG = 3, COOP_RT = 2, COOP_WR = 2, COOP_KS = 4 })
    t.eq({ b.file, b.prep.spec.file, b.prep.grid(4096)[1], b.prep.grid(4160)[1], b.block[1], b.rows_per_group, b.k_multiple },
      { "kernels/vulkan/gemv_dense_wideb.comp", "kernels/vulkan/gemv_dense_wideb_xprep.comp", 8, 16, 256, 32, 64 }, fmt)
    t.eq(b.defines.COOP_RT, 2, fmt .. " COOP_REG=3")
    t.eq(b.prep.bytes(4096), specs.variant(fmt, { GEMV_COOP = 1, GEMV_TOKENS = 8 }).prep.bytes(4096), "the same workspace size")
    t.errors(function() specs.variant(fmt, { GEMV_COOP = 1, COOP_REG = 3, COOP_PF = 1 }) end,
      "gemv_vulkan.variant: COOP_PF=1 is COOP_REG=2's (the next units loaded while these are multiplied)", true)
    -- COOP_REG=2: its own kernel and first dispatch, units of 32 k, COOP_RT tiles of 16 rows a subgroup
    local w = specs.variant(fmt, { GEMV_COOP = 1, GEMV_TOKENS = 8, COOP_REG = 2, COOP_RT = 2, COOP_WR = 2, COOP_KS = 4 })
    t.eq({ w.file, w.prep.spec.file, w.prep.grid(4096)[1], w.block[1], w.rows_per_group, w.k_multiple },
      { "kernels/vulkan/gemv_dense_wide.comp", "kernels/vulkan/gemv_dense_wide_xprep.comp", 16, 256, 64, 32 }, fmt)
    t.eq(w.defines, { GEMV_COOP = 1, COOP_FMT = fmt == "f16" and 6 or 7, COOP_WR = 2, COOP_KS = 4, COOP_U = 4, COOP_RT = 2,
      GEMV_TOKENS = 8 }, fmt .. " COOP_REG=2")
    t.eq(w.shared_bytes, 512 + 8 * 512 * 2 + 512, fmt .. " COOP_REG=2: indices, two tiles' slices' sums, A's indices")
    t.eq(w.prep.bytes(4096), specs.variant(fmt, { GEMV_COOP = 1, GEMV_TOKENS = 8 }).prep.bytes(4096), "the same workspace size")
    t.truthy(specs.variant(fmt, { GEMV_COOP = 1, GEMV_TOKENS = 8, COOP_REG = 2 }).defines.COOP_RT == 1, fmt .. " COOP_RT's default")
    t.eq(specs.variant_defines(fmt).COOP_RT, 1, fmt)
    t.errors(function() specs.variant(fmt, { GEMV_COOP = 1, COOP_REG = 1, COOP_RT = 2 }) end,
      "gemv_vulkan.variant: COOP_RT=2 is COOP_REG=2's and 3's (row tiles a subgroup): the other kernels have one", true)
    t.errors(function() specs.variant(fmt, { GEMV_COOP = 1, COOP_REG = 2, COOP_RT = 5 }) end,
      "gemv_vulkan.variant: COOP_RT=5 is not in 1..4", true)
    t.errors(function() specs.variant(fmt, { GEMV_COOP = 1, COOP_REG = 2, COOP_RT = 0 }) end,
      "gemv_vulkan.variant: COOP_RT=0 is not a positive integer", true)
    t.eq(specs.variant(fmt, { GEMV_COOP = 1, COOP_REG = 2, COOP_PF = 1 }).defines.COOP_PF, 1, fmt)
    t.eq(specs.variant(fmt, { GEMV_COOP = 1, COOP_REG = 2, COOP_PF = 0 }).defines.COOP_PF, nil, fmt .. ": 0 is not passed")
    t.eq(specs.variant_defines(fmt).COOP_PF, 0, fmt)
    t.errors(function() specs.variant(fmt, { GEMV_COOP = 1, COOP_PF = 1 }) end,
      "gemv_vulkan.variant: COOP_PF=1 is COOP_REG=2's (the next units loaded while these are multiplied)", true)
    t.errors(function() specs.variant(fmt, { GEMV_COOP = 1, COOP_REG = 2, COOP_PF = 2 }) end,
      "gemv_vulkan.variant: COOP_PF=2 is not 0 or 1", true)
  end
  t.errors(function() specs.variant("f16", { GEMV_COOP = 1, COOP_REG = 1, COOP_DIRECT = 1 }) end,
    "gemv_vulkan.variant: COOP_DIRECT=1 and COOP_REG=1 are two ways to fill A: name one", true)
  t.errors(function() specs.variant("f16", { GEMV_COOP = 1, COOP_REG = 2, COOP_DIRECT = 1 }) end,
    "gemv_vulkan.variant: COOP_DIRECT=1 and COOP_REG=2 are two ways to fill A: name one", true)
  -- q8_0 with W in B (COOP_REG=3): its own kernel and first dispatch (x's records in A's order),
  -- units of 8 blocks (k a multiple of 256), tiles of 8 rows, COOP_U not read
  local q = specs.variant("q8_0", { GEMV_COOP = 1, GEMV_TOKENS = 5, COOP_REG = 3, COOP_RT = 2, COOP_WR = 2, COOP_KS = 4 })
  t.eq({ q.file, q.block[1], q.rows_per_group, q.k_multiple, q.x_rounding },
    { "kernels/vulkan/gemv_b32_wideb.comp", 256, 32, 256, 32 })
  t.eq(q.defines, { GEMV_COOP = 1, COOP_FMT = 1, COOP_WR = 2, COOP_KS = 4, COOP_RT = 2, GEMV_TOKENS = 5 })
  t.eq(q.shared_bytes, 8 * 2176 * 2 + 512 + 8 * 512 * 2 + 512, "stages of 2 tiles, indices, the slices' sums, the probe")
  t.eq({ q.prep.spec.file, q.prep.spec.defines, q.prep.grid(5120), q.prep.bytes(5120) },
    { "kernels/vulkan/gemv_idot_xprep.comp", { GEMV_TOKENS = 5, XPREP_COOP = 2 }, { 40, 1, 1 }, 80 * 8 * 160 })
  t.truthy(specs.variant("q8_0", { GEMV_COOP = 1, GEMV_TOKENS = 5, COOP_REG = 3, COOP_RT = 2, COOP_WR = 2, COOP_KS = 4,
    COOP_U = 3 }) == q, "COOP_U is not read: one spec")
  t.eq(specs.variant("q8_0", { GEMV_COOP = 2, GEMV_TOKENS = 5, COOP_REG = 3 }).shared_bytes,
    8 * (2176 + 3072) + 512 + 8 * 512, "emulated: each subgroup's A and B in 768 ints, no probe")
  t.eq({ specs.variant_defines("q8_0").COOP_REG, specs.variant_defines("q8_0").COOP_RT, specs.variant_defines("q8_0").COOP_PF },
    { 0, 1, nil })
  for _, reg in ipairs { 1, 2 } do
    t.errors(function() specs.variant("q8_0", { GEMV_COOP = 1, COOP_REG = reg }) end,
      ("gemv_vulkan.variant: q8_0 COOP_REG=%d: its kernels are the staged one (0) and W in B (3)"):format(reg), true)
  end
  t.errors(function() specs.variant("q8_0", { GEMV_COOP = 1, COOP_RT = 2 }) end,
    "gemv_vulkan.variant: COOP_RT=2 is COOP_REG=2's and 3's (row tiles a subgroup): the other kernels have one", true)
  t.errors(function() specs.variant("q8_0", { GEMV_COOP = 1, COOP_REG = 3, COOP_PF = 1 }) end,
    "gemv_vulkan.variant: q8_0 has no define COOP_PF", false)
  -- q4_0's W in B: the same kernel with 18-byte blocks (8 rows x 144 bytes a tile staged)
  local q4 = specs.variant("q4_0", { GEMV_COOP = 1, GEMV_TOKENS = 5, COOP_REG = 3, COOP_RT = 2, COOP_WR = 2, COOP_KS = 4 })
  t.eq({ q4.file, q4.rows_per_group, q4.k_multiple, q4.defines.COOP_FMT, q4.prep.spec == q.prep.spec },
    { "kernels/vulkan/gemv_b32_wideb.comp", 32, 256, 2, true })
  t.eq(q4.shared_bytes, 8 * 1152 * 2 + 512 + 8 * 512 * 2 + 512, "q4_0: stages of 2 tiles of 1152 bytes")
  t.errors(function() specs.variant("q4_k", { GEMV_COOP = 1, COOP_REG = 3 }) end,
    "gemv_vulkan.variant: q4_k has no define COOP_REG", false)
  -- f32: W in B only, its own k order in the first dispatch (WIDEB_F32), two uvec4s a row and unit
  local f = specs.variant("f32", { GEMV_COOP = 1, GEMV_TOKENS = 6, COOP_REG = 3, COOP_RT = 2, COOP_WR = 2, COOP_KS = 4, COOP_U = 1 })
  t.eq({ f.file, f.block[1], f.rows_per_group, f.k_multiple, f.x_rounding },
    { "kernels/vulkan/gemv_dense_wideb.comp", 256, 32, 64, nil })
  t.eq(f.defines, { GEMV_COOP = 1, COOP_FMT = 8, COOP_WR = 2, COOP_KS = 4, COOP_U = 1, COOP_RT = 2, GEMV_TOKENS = 6 })
  t.eq({ f.prep.spec.file, f.prep.spec.defines }, { "kernels/vulkan/gemv_dense_wideb_xprep.comp", { GEMV_TOKENS = 6, WIDEB_F32 = 1 } })
  t.truthy(f.prep ~= specs.variant("f16", { GEMV_COOP = 1, GEMV_TOKENS = 6, COOP_REG = 3 }).prep, "not f16's first dispatch")
  t.eq(f.prep.bytes(4096), specs.variant("f16", { GEMV_COOP = 1, GEMV_TOKENS = 6, COOP_REG = 3 }).prep.bytes(4096), "its size")
  t.errors(function() specs.variant("f32", { GEMV_COOP = 1 }) end,
    "gemv_vulkan.variant: f32 GEMV_COOP=1 or 2 is W in B only: it needs COOP_REG=3, got 0", true)
  t.errors(function() specs.variant("f32", { GEMV_COOP = 2, COOP_REG = 2 }) end,
    "gemv_vulkan.variant: f32 GEMV_COOP=1 or 2 is W in B only: it needs COOP_REG=3, got 2", true)
  t.errors(function() specs.variant("f32", { GEMV_COOP = 1, COOP_REG = 3, COOP_PF = 1 }) end,
    "gemv_vulkan.variant: f32 has no define COOP_PF", false)
  t.errors(function() specs.variant("f32", { GEMV_COOP = 1, COOP_REG = 3, COOP_DIRECT = 1 }) end,
    "gemv_vulkan.variant: f32 has no define COOP_DIRECT", false)
end)

t.test("for_device: f16 and bf16 from T = 5, f32 from T = 6, on W in B where the device has the fp16 matrices and k fits", function()
  local NV_F16 = { m = 16, n = 8, k = 16, a = "f16", b = "f16", c = "f32", d = "f32" }
  local nv = gc.vulkan_fake { name = "nv", cooperative_matrix = "nv", cooperative_matrix_shapes = { NV_I8, NV_F16 } }
  for _, fmt in ipairs { "f16", "bf16" } do
    for tokens = 5, 8 do
      local s = specs.for_device(nv, fmt, 14336, 5120, tokens)
      t.truthy(s == specs.variant(fmt, { GEMV_COOP = 1, COOP_REG = 3, COOP_WR = 2, COOP_KS = 4, COOP_U = 2, COOP_RT = 4,
        GEMV_TOKENS = tokens }), ("%s T=%d: the rule's spec, the one a grid names"):format(fmt, tokens))
      t.eq({ s.file, s.rows_per_group, s.defines.GEMV_TOKENS }, { "kernels/vulkan/gemv_dense_wideb.comp", 64, tokens })
      t.truthy(gemv.spec_for(nv, fmt, 14336, 5120, tokens) == s, fmt .. ": spec_for takes it")
    end
    for tokens = 1, 4 do
      t.eq(specs.for_device(nv, fmt, 14336, 5120, tokens), nil, ("%s T=%d: the scalar kernel"):format(fmt, tokens))
    end
    t.eq(specs.for_device(nv, fmt, 14336, 5120 + 32, 8), nil, fmt .. ": k not a multiple of 64")
    t.eq(specs.for_device(gc.vulkan_fake { name = "lvp" }, fmt, 14336, 5120, 8), nil, fmt .. ": no matrices")
    t.eq(specs.for_device(gc.vulkan_fake { name = "nv", cooperative_matrix = "nv", cooperative_matrix_shapes = { NV_I8 } },
      fmt, 14336, 5120, 8), nil, fmt .. ": no fp16 ones")
    t.eq(specs.for_device(gc.vulkan_fake { name = "nv", cooperative_matrix = "nv", cooperative_matrix_shapes = { NV_F16 },
      subgroup_size = 64 }, fmt, 14336, 5120, 8), nil, fmt .. ": subgroups of 64")
  end
  for tokens = 6, 8 do
    local s = specs.for_device(nv, "f32", 14336, 5120, tokens)
    t.truthy(s == specs.variant("f32", { GEMV_COOP = 1, COOP_REG = 3, COOP_WR = 1, COOP_KS = 4, COOP_U = 1, COOP_RT = 2,
      GEMV_TOKENS = tokens }), ("f32 T=%d: the rule's spec"):format(tokens))
    t.eq({ s.file, s.rows_per_group, s.defines.COOP_FMT, s.precision }, { "kernels/vulkan/gemv_dense_wideb.comp", 16, 8,
      "x and W each as f16 hi + lo (about 22 bits; |w| < 256)" })
  end
  for tokens = 1, 5 do t.eq(specs.for_device(nv, "f32", 14336, 5120, tokens), nil, ("f32 T=%d: the FMA kernel"):format(tokens)) end
  t.eq(specs.for_device(nv, "f32", 14336, 5120 + 32, 8), nil, "f32: k not a multiple of 64")
end)

t.test("f16 COOP_DIRECT=1 refuses m that is not a multiple of 16, COOP_REG=2 k not of 32, 3 not of 64 (q8_0's not of 256), naming them", function()
  local dev = t.device("vulkan")
  local s = specs.variant("f16", { GEMV_COOP = 2, GEMV_TOKENS = 2, COOP_DIRECT = 1 })
  gc.releasing(dev, function()
  local w <close> = dev:buffer(gemv.buffer_bytes("f16", 48, 64))
  local x <close> = dev:buffer(2 * 64 * 4)
  local y <close> = dev:buffer(2 * 48 * 4)
  t.errors(function() gemv.launches(dev, "f16", w, x, y, 40, 64, 2, s) end,
    "gemv.launches: this f16 kernel needs m to be a multiple of 16, got m=40", true)
  t.eq(#gemv.launches(dev, "f16", w, x, y, 48, 64, 2, s), 2, "m = 48: the prep and the GEMV")
  -- COOP_REG=2 reads units of 32 k: k = 48 refused (the other dense kernels take it), any m
  local wide = specs.variant("f16", { GEMV_COOP = 2, GEMV_TOKENS = 2, COOP_REG = 2 })
  t.errors(function() gemv.launches(dev, "f16", w, x, y, 40, 48, 2, wide) end,
    "gemv.launches: f16 needs k to be a multiple of 32, got k=48", true)
  t.eq(#gemv.launches(dev, "f16", w, x, y, 40, 48, 2, specs.variant("f16", { GEMV_COOP = 2, GEMV_TOKENS = 2 })),
    2, "k = 48 with the staged kernel")
  t.eq(#gemv.launches(dev, "f16", w, x, y, 40, 64, 2, wide), 2, "COOP_REG=2, m = 40, k = 64")
  local wideb = specs.variant("f16", { GEMV_COOP = 2, GEMV_TOKENS = 2, COOP_REG = 3 })
  t.errors(function() gemv.launches(dev, "f16", w, x, y, 40, 32, 2, wideb) end,
    "gemv.launches: f16 needs k to be a multiple of 64, got k=32", true)
  t.eq(#gemv.launches(dev, "f16", w, x, y, 40, 64, 2, wideb), 2, "COOP_REG=3, m = 40, k = 64")
  -- q8_0's W in B reads units of 8 blocks from 16-byte aligned rows: k a multiple of 256
  local q8 = specs.variant("q8_0", { GEMV_COOP = 2, GEMV_TOKENS = 2, COOP_REG = 3 })
  local wq <close> = dev:buffer(gemv.buffer_bytes("q8_0", 40, 256))
  local xq <close> = dev:buffer(2 * 256 * 4)
  t.errors(function() gemv.launches(dev, "q8_0", wq, xq, y, 40, 224, 2, q8) end,
    "gemv.launches: q8_0 needs k to be a multiple of 256, got k=224", true)
  t.eq(#gemv.launches(dev, "q8_0", wq, xq, y, 40, 256, 2, q8), 2, "q8_0 COOP_REG=3, m = 40, k = 256")
  end)
end)

t.test("GEMV_COOP=1, its emulation (2) and its first dispatch compile for Vulkan 1.2 at every T without warnings", function()
  local gpu = t.gpu
  if not gpu then t.skip("no gpu module (stock interpreter)") end
  -- and the layout probe (tools/coop_layout_probe.lua), which only a device with the matrices runs
  local probe = gpu.compile { backend = "vulkan", file = "kernels/vulkan/coop_layout_probe.comp", target = "vulkan1.2" }
  t.eq(probe.params, { "buffer" }, "coop_layout_probe.comp")
  for _, fmt in ipairs(ALL) do
    for T = 1, 8 do
      local s = specs.variant(fmt, { GEMV_COOP = T % 2 + 1, GEMV_TOKENS = T, COOP_U = not SUPER[fmt] and T % 4 + 1 or nil,
        COOP_KS = T % 3 + 1 })
      local direct = fmt == "f16" and specs.variant(fmt, { GEMV_COOP = T % 2 + 1, GEMV_TOKENS = T, COOP_DIRECT = 1 }) or nil
      local reg = DENSE[fmt] and specs.variant(fmt, { GEMV_COOP = T % 2 + 1, GEMV_TOKENS = T, COOP_REG = 1, COOP_U = T % 4 + 1 })
        or nil
      -- COOP_REG=2 at every COOP_RT, both modes, and its first dispatch
      local wide = DENSE[fmt] and specs.variant(fmt, { GEMV_COOP = T % 2 + 1, GEMV_TOKENS = T, COOP_REG = 2, COOP_U = T % 3 + 1,
        COOP_RT = T % 4 + 1, COOP_PF = T // 2 % 2 }) or nil
      local wide_prep = wide and wide.prep.spec or nil
      local wideb = DENSE[fmt] and specs.variant(fmt, { GEMV_COOP = T % 2 + 1, GEMV_TOKENS = T, COOP_REG = 3, COOP_U = T % 3 + 1,
        COOP_RT = (T + 1) % 4 + 1 }) or nil
      local wideb_prep = wideb and wideb.prep.spec or nil
      if fmt == "q8_0" or fmt == "q4_0" then -- their W in B, both modes, 1 and 2 tiles
        wideb = specs.variant(fmt, { GEMV_COOP = T % 2 + 1, GEMV_TOKENS = T, COOP_REG = 3, COOP_RT = T % 2 + 1 })
        wideb_prep = wideb.prep.spec
      end
      -- f32's W in B (its only cooperative-matrix kernel) with q8_0's
      local f32 = fmt == "q8_0" and specs.variant("f32", { GEMV_COOP = T % 2 + 1, GEMV_TOKENS = T, COOP_REG = 3,
        COOP_U = T % 3 + 1, COOP_RT = T % 4 + 1 }) or nil
      local f32_prep = f32 and f32.prep.spec or nil
      for _, sp in ipairs { s, s.prep.spec, direct, reg, wide, wide_prep, wideb, wideb_prep, f32, f32_prep } do
        local c = gpu.compile { backend = "vulkan", file = sp.file, target = "vulkan1.2", defines = sp.defines }
        local label = ("%s T=%d %s%s"):format(fmt, T, sp.file, sp == direct and " COOP_DIRECT=1" or sp == reg and " COOP_REG=1" or "")
        local prep = sp == s.prep.spec or sp == wide_prep or sp == wideb_prep or sp == f32_prep
        t.eq(c.params, not prep and { "buffer", "buffer", "buffer", "u32", "u32" } or { "buffer", "buffer", "u32" }, label)
        t.truthy(c.log == nil or c.log == "", label .. " warnings: " .. tostring(c.log))
      end
    end
  end
end)

-- What the kernel's B columns hold, by a Lua model of idot_quant.glsl with IDOT_BALANCED:
-- s_b = amax / 32639 (as the f32 product the shader forms), xq = round half even, both
-- digits signed bytes, the sum of xq; records for 8 tokens, zeros past T.
local function quantize_block(v)
  local amax = 0.0
  for i = 1, 32 do amax = math.max(amax, math.abs(v[i])) end
  local f32 = function(x) return (string.unpack("<f", string.pack("<f", x))) end
  local inv = amax > 0 and math.min(f32(32639.0 / amax), 3.0e38) or 0.0
  local h, l, sum = {}, {}, 0
  for i = 1, 32 do
    local p = f32(v[i] * inv)
    local q = math.floor(p + 0.5)
    if q - p == 0.5 and q % 2 ~= 0 then q = q - 1 end -- to even
    q = math.max(-32639, math.min(32639, q))
    local lo = ((q + 128) & 255) - 128
    h[i], l[i], sum = (q - lo) // 256, lo, sum + q
  end
  return h, l, f32(amax * f32(1.0 / 32639.0)), sum
end

-- A record's 32 high and 32 low digits: XPREP_COOP=1 keeps them in k order; 2 (q8_0's W in B)
-- as A's fragments take them, uvec4 q = (high word q, high word 4 + q, low word q, low word 4 + q)
local function record_digits(out, o, mode)
  local words = {}
  for w = 0, 15 do words[w] = out:sub(o + 4 * w + 1, o + 4 * w + 4) end
  if mode == 2 then
    local at = {}
    for w = 0, 7 do
      at[w] = words[4 * (w % 4) + w // 4]
      at[8 + w] = words[4 * (w % 4) + w // 4 + 2]
    end
    words = at
  end
  local flat = table.concat(words, "", 0, 15)
  return { string.unpack(("<" .. ("b"):rep(32)), flat) }, { string.unpack(("<" .. ("b"):rep(32)), flat, 33) }
end

t.test("XPREP_COOP=1 and 2: x's signed digits, s_b and sums for 8 tokens, zeros past T (lavapipe runs it)", function()
  local dev = gc.idot_device()
  local ref = require "gpubench.ref"
  gc.releasing(dev, function()
    for _, mode in ipairs { 1, 2 } do
    for _, T in ipairs { 1, 3, 8 } do
      local k = 96 -- three blocks
      local s = specs.variant("q8_0", { GEMV_COOP = 1, GEMV_TOKENS = T, COOP_REG = mode == 2 and 3 or 0 })
      t.eq(s.prep.spec.defines.XPREP_COOP, mode)
      local x = {}
      for r = 1, T do x[r] = ref.random_f32(k, 700 + r) end
      -- a block of zeros and one whose amax is hit exactly by two values of opposite sign
      local v1 = { string.unpack(("<" .. ("f"):rep(k)), x[1]) }
      for i = 33, 64 do v1[i] = 0.0 end
      v1[65], v1[66] = 3.5, -3.5
      x[1] = string.pack(("<" .. ("f"):rep(k)), table.unpack(v1, 1, k))
      local xb <close> = dev:buffer(4 * k * T)
      local ws <close> = dev:buffer(s.prep.bytes(k))
      xb:upload(table.concat(x))
      ws:fill(0xA5) -- garbage: every record must be written
      local kern = gemv.kernel(dev, "q8_0", s.prep.spec)
      kern:launch(s.prep.grid(k), s.prep.spec.block, xb, ws, require("gpu").u32(k))
      local out = ws:download()
      for tok = 1, 8 do
        local vals = tok <= T and { string.unpack(("<" .. ("f"):rep(k)), x[tok]) } or nil
        for b = 1, 3 do
          local o = 80 * ((tok - 1) * 3 + (b - 1))
          local what = ("XPREP_COOP=%d T=%d token %d block %d"):format(mode, T, tok, b)
          local hs, ls = record_digits(out, o, mode)
          local sb, sum = string.unpack("<fi4", out, o + 65)
          if vals then
            local v = {}
            for i = 1, 32 do v[i] = vals[32 * (b - 1) + i] end
            local h, l, want_sb, want_sum = quantize_block(v)
            t.eq({ table.unpack(hs, 1, 32) }, h, what .. " high digits")
            t.eq({ table.unpack(ls, 1, 32) }, l, what .. " low digits")
            t.eq(sb, want_sb, what .. " s_b")
            t.eq(sum, want_sum, what .. " sum of xq")
          else
            local zeros = {}
            for i = 1, 32 do zeros[i] = 0 end
            t.eq({ { table.unpack(hs, 1, 32) }, { table.unpack(ls, 1, 32) } }, { zeros, zeros }, what)
            t.eq({ sb, sum }, { 0.0, 0 }, what)
          end
        end
      end
    end
    end
  end)
end)

-- Where the dense first dispatches put token tok's (1..8) value i (1..k) of hi (lo: part 2), as
-- a 1-based byte position in the workspace: gemv_dense_coop_xprep.comp's rows (8 of hi, then 8
-- of lo, past 32 bytes of scales), or gemv_dense_wide_xprep.comp's lanes (COOP_REG=2: unit c,
-- lane 4 g + p, hi and lo uvec4s side by side; word w holds tokens 2 p, 2 p + 1 at k = 32 c
-- + 8 (g // 2) + 4 (w // 2) + 2 (w % 2) + g % 2)
-- gemv_dense_wideb_xprep.comp's byte of unit c, token tok, lane q, step j, word sh + 2 (part - 1), half b
local function wideb_at(c, tok, q, j, sh, b, part)
  return 1 + 16 * (2 + 4 * (32 * c + 4 * (tok - 1) + q) + j) + 4 * (sh + 2 * (part - 1)) + 2 * b
end

local PREP_AT = {
  rows = function(k, tok, i, part) return 33 + ((part - 1) * 8 + tok - 1) * 2 * k + 2 * (i - 1) end,
  lanes = function(_, tok, i, part)
    local kk = i - 1
    local c, r = kk // 32, kk % 32
    local g, w = 2 * (r // 8) + r % 2, 2 * ((r % 8) // 4) + (r % 4) // 2
    local lane = 4 * g + (tok - 1) // 2
    return 1 + 16 * (2 + 2 * (32 * c + lane) + part - 1) + 4 * w + 2 * ((tok - 1) % 2)
  end,
  -- gemv_dense_wideb_xprep.comp's (COOP_REG=3): unit c of 64 k, lane 4 (tok - 1) + q, uvec4 j;
  -- word sh + 2 (part - 1), half b holds k = 64 c + 16 q + 8 b + 2 j + sh
  steps = function(_, tok, i, part)
    local c, r = (i - 1) // 64, (i - 1) % 64
    return wideb_at(c, tok, r // 16, (r % 8) // 2, r % 2, (r % 16) // 8, part)
  end,
  -- the same for f32 weights (WIDEB_F32=1): word sh + 2 (part - 1), half b holds k = 64 c + 32 sh + 8 q + 4 b + j
  stepsf = function(_, tok, i, part)
    local c, r = (i - 1) // 64, (i - 1) % 64
    return wideb_at(c, tok, (r % 32) // 8, r % 4, r // 32, (r % 8) // 4, part)
  end,
}

-- 2^-23: f16's rounding of lo (2^-24 when to nearest; packHalf2x16's rounding is the implementation's)
t.test("the dense first dispatches: s_t a power of two >= each row's amax, hi + lo = x / s_t to 2^-23, zeros past T", function()
  local dev = gc.idot_device()
  local ref = require "gpubench.ref"
  gc.releasing(dev, function()
    local T, k = 3, 4160 -- 130 units of 32 (65 of 64): two slices of each wide dispatch, the second partial
    local rows = {}
    for r = 1, T do
      local v = { string.unpack(("<" .. ("f"):rep(k)), ref.random_f32(k, 730 + r)) }
      for i = 1, k do v[i] = v[i] * 1000.0 ^ (r - 2) end -- row 1 small, row 3 large
      rows[r] = v
    end
    rows[2][5] = 4.0 -- an amax that is itself a power of two
    for i = 1, k do if i ~= 5 then rows[2][i] = rows[2][i] / 1000.0 end end
    local xs = {}
    for r = 1, T do xs[r] = string.pack(("<" .. ("f"):rep(k)), table.unpack(rows[r], 1, k)) end
    local function half(u) -- an f16's bits as a number
      local e, f = (u >> 10) & 31, u & 1023
      local v = e == 0 and f * 2.0 ^ -24 or (1024 + f) * 2.0 ^ (e - 25)
      assert(e ~= 31, "an f16 Inf or NaN")
      return (u >> 15) == 1 and -v or v
    end
    for _, case in ipairs { { 1, PREP_AT.rows }, { 2, PREP_AT.lanes }, { 3, PREP_AT.steps }, { 3, PREP_AT.stepsf, "f32" } } do
      local s = specs.variant(case[3] or "f16", { GEMV_COOP = 1, GEMV_TOKENS = T, COOP_REG = case[1] })
      local what = s.prep.spec.file:match("[%w_]+%.comp") .. (case[3] and " (f32)" or "")
      local xb <close> = dev:buffer(4 * k * T)
      local ws <close> = dev:buffer(s.prep.bytes(k))
      xb:upload(table.concat(xs))
      ws:fill(0xA5)
      gemv.kernel(dev, case[3] or "f16", s.prep.spec):launch(s.prep.grid(k), s.prep.spec.block, xb, ws, require("gpu").u32(k))
      local out = ws:download()
      local scales = { string.unpack("<ffffffff", out, 1) }
      local seen = {}
      local function value(tok, i, part)
        local at = case[2](k, tok, i, part)
        t.truthy(not seen[at], ("%s: token %d value %d part %d shares byte %d"):format(what, tok, i, part, at))
        seen[at] = true
        return half(string.unpack("<I2", out, at))
      end
      for tok = 1, 8 do
        local hi, lo = {}, {}
        for i = 1, k do hi[i], lo[i] = value(tok, i, 1), value(tok, i, 2) end
        local st = scales[tok]
        if tok <= T then
          local amax = 0.0
          for i = 1, k do amax = math.max(amax, math.abs(rows[tok][i])) end
          local e = math.log(st, 2)
          t.truthy(e == math.floor(e) and st >= amax and st / 2 < amax, ("%s token %d: s_t %g for amax %g"):format(what,
            tok, st, amax))
          for i = 1, k do
            local want = rows[tok][i] / st
            t.truthy(math.abs(hi[i] + lo[i] - want) <= 2.0 ^ -23, ("%s token %d value %d: %g + %g against %g"):format(what,
              tok, i, hi[i], lo[i], want))
          end
        else
          local z = {}
          for i = 1, k do z[i] = 0.0 end
          t.eq({ hi, lo, st }, { z, z, 1.0 }, ("%s token %d past T"):format(what, tok))
        end
      end
      -- every byte past the scales is one value's: nothing left as the fill
      t.eq(#out, 32 + 2 * 8 * k * 2, what .. ": the workspace's size")
      local count = 0
      for _ in pairs(seen) do count = count + 1 end
      t.eq(count, 2 * 8 * k, what .. ": values placed")
    end
  end)
end)

t.test("GEMV_COOP=1 on a device without int8 cooperative matrices: refused with what it lacks", function()
  local dev = t.device("vulkan")
  if dev.cooperative_matrix == "nv" then t.skip("the device has cooperative matrices: the oracle test below runs") end
  gc.releasing(dev, function()
    local s = specs.variant("q8_0", { GEMV_COOP = 1, GEMV_TOKENS = 2 })
    local wb <close> = dev:buffer(gemv.buffer_bytes("q8_0", 16, 64))
    local xb <close> = dev:buffer(4 * 64 * 2)
    local yb <close> = dev:buffer(4 * 16 * 2)
    t.errors(function() gemv.launches(dev, "q8_0", wb, xb, yb, 16, 64, s) end,
      ("gemv.launches: q8_0: GEMV_COOP=1 needs VK_NV_cooperative_matrix, which %s does not offer"):format(dev.name), true)
  end)
end)

-- The kernels' own arithmetic (staging, nibbles, scales, records, slices, the row guard,
-- the reduction) through the emulated matrices in a scrambled layout: lavapipe runs it.
-- Small shapes (every emulated product is 32 steps per component); T = 1, 3, 8; ragged m;
-- k whose blocks the slices and COOP_U do not divide; geometries with 1 and 4 slices.
t.test("GEMV_COOP=2 (the emulated matrices): q8_0, q4_0, q4_k, q5_k, q6_k, f16, bf16 and f32 (W in B) against the FP64 oracle", function()
  local dev = t.device("vulkan")
  gc.releasing(dev, function()
    for i, fmt in ipairs(ALL) do
      for _, T in ipairs { 1, 3, 8 } do
        local v = specs.variant(fmt, { GEMV_COOP = 2, GEMV_TOKENS = T })
        gc.check_tokens(dev, fmt, 37 + 16 * T, k_of(fmt, 3, 11), T, 1000 + 10 * i + T, v)
      end
      for _, g in ipairs { { 1, 1, 3 }, { 2, 4, 2 } } do
        local v = specs.variant(fmt, { GEMV_COOP = 2, COOP_WR = g[1], COOP_KS = g[2], COOP_U = not SUPER[fmt] and g[3] or nil,
          GEMV_TOKENS = 8 })
        gc.check_tokens(dev, fmt, 50, k_of(fmt, 5, 13), 8, 1100 + 10 * i + g[1], v)
      end
    end
    -- f16 and bf16 with A's components from registers (pairs in a scrambled layout): ragged m,
    -- k whose steps the slices and COOP_U do not divide
    for _, fmt in ipairs { "f16", "bf16" } do
      for _, T in ipairs { 1, 3, 8 } do
        local v = specs.variant(fmt, { GEMV_COOP = 2, GEMV_TOKENS = T, COOP_REG = 1, COOP_KS = 1 + T % 3, COOP_U = 1 + T % 4 })
        gc.check_tokens(dev, fmt, 37 + 16 * T, 16 * 13, T, 1250 + T, v)
      end
    end
    -- COOP_REG=2 (NVIDIA's layout emulated): ragged m, units of 32 k that the slices and COOP_U
    -- do not divide, 1 to 4 tiles a subgroup
    for _, fmt in ipairs { "f16", "bf16" } do
      for i, T in ipairs { 1, 3, 8 } do
        local v = specs.variant(fmt, { GEMV_COOP = 2, GEMV_TOKENS = T, COOP_REG = 2, COOP_KS = 1 + T % 3, COOP_U = 1 + T % 4,
          COOP_RT = i + (T == 8 and 1 or 0), COOP_WR = 3 - i % 2, COOP_PF = (i + (fmt == "f16" and 0 or 1)) % 2 })
        gc.check_tokens(dev, fmt, 37 + 16 * T, T == 1 and 32 * 37 or 32 * 7, T, 1270 + T, v) -- T = 1: two prep slices
      end
    end
    -- COOP_REG=3 (W in B): ragged m, units of 64 k that the slices and COOP_U do not divide,
    -- 1 to 4 tiles of 8 rows; T = 1: two prep slices
    for _, fmt in ipairs { "f16", "bf16" } do
      for i, T in ipairs { 1, 3, 8 } do
        local v = specs.variant(fmt, { GEMV_COOP = 2, GEMV_TOKENS = T, COOP_REG = 3, COOP_KS = 1 + T % 3, COOP_U = 1 + T % 4,
          COOP_RT = i + (T == 8 and 1 or 0), COOP_WR = 3 - i % 2 })
        gc.check_tokens(dev, fmt, 21 + 16 * T, T == 1 and 64 * 67 or 64 * 7, T, 1280 + T, v)
      end
    end
    -- f32 with W in B (hi + lo of each weight): ragged m, units the slices and COOP_U do not divide,
    -- 1 to 4 tiles; then weights 1 + 2^-12 and positive x, which hi alone (1) misses by 2.4e-4 of
    -- sum |w x|, past the oracle's 1e-4 (the random-data oracle alone does not see it)
    for i, T in ipairs { 1, 3, 8 } do
      local v = specs.variant("f32", { GEMV_COOP = 2, GEMV_TOKENS = T, COOP_REG = 3, COOP_KS = 1 + T % 3, COOP_U = 1 + T % 4,
        COOP_RT = i + (T == 8 and 1 or 0), COOP_WR = 3 - i % 2 })
      gc.check_tokens(dev, "f32", 21 + 16 * T, T == 1 and 64 * 67 or 64 * 7, T, 1380 + T, v)
    end
    -- the same for x: all x = 1 + 2^-12 and w = 1, whose x / s_t has hi 0.5 and lo 2^-13, so a
    -- kernel that drops the result's low rows (x's lo) is off by 2.4e-4 too: f32's and f16's W in B
    local m, k, T = 24, 256, 3
    for _, c in ipairs {
      { "f32", string.pack("<f", 1 + 2 ^ -12), function(i, tk) return 0.5 + ((i * 37 + tk * 11) % 64) / 128.0 end,
        1 + 2 ^ -12, "w = 1 + 2^-12" },
      { "f32", string.pack("<f", 1), function() return 1 + 2 ^ -12 end, 1, "x = 1 + 2^-12" },
      { "f16", string.pack("<I2", 0x3C00), function() return 1 + 2 ^ -12 end, 1, "x = 1 + 2^-12" },
    } do
      local fmt, wv = c[1], c[4]
      local v = specs.variant(fmt, { GEMV_COOP = 2, GEMV_TOKENS = T, COOP_REG = 3, COOP_WR = 1, COOP_KS = 2, COOP_U = 1 })
      local xs, sums = {}, {}
      for tk = 1, T do
        sums[tk] = 0.0
        for i = 1, k do
          local xv = c[3](i, tk) -- exact in f32, positive
          xs[#xs + 1] = xv
          sums[tk] = sums[tk] + xv
        end
      end
      local y = gemv.run(dev, fmt, c[2]:rep(m * k), m, k, string.pack(("<" .. ("f"):rep(#xs)), table.unpack(xs)), T, v)
      local worst = 0.0
      for tk = 1, T do
        for r = 1, m do worst = math.max(worst, math.abs(y[(tk - 1) * m + r] - wv * sums[tk]) / (wv * sums[tk])) end
      end
      t.truthy(worst < 1e-6, ("%s W in B, %s: worst relative error %g (hi alone: 2.4e-4)"):format(fmt, c[5], worst))
    end
    -- q8_0 and q4_0 with W in B (COOP_REG=3, NVIDIA's layouts emulated): ragged m, units of 8
    -- blocks that the slices do not divide (and slices with none), 1 and 2 tiles of 8 rows
    for f, fmt in ipairs { "q8_0", "q4_0" } do
      for i, T in ipairs { 1, 3, 8 } do
        local v = specs.variant(fmt, { GEMV_COOP = 2, GEMV_TOKENS = T, COOP_REG = 3, COOP_KS = 1 + (T + f) % 3,
          COOP_RT = 1 + (i + f) % 2, COOP_WR = 3 - i % 2 })
        gc.check_tokens(dev, fmt, 13 + 16 * T, T == 1 and 256 * 5 or 256 * (T // 2), T, 1290 + 10 * f + T, v)
      end
    end
    -- f16 with A from W itself: whole row groups; k whose steps the slices do not divide
    for _, T in ipairs { 1, 3, 8 } do
      local v = specs.variant("f16", { GEMV_COOP = 2, GEMV_TOKENS = T, COOP_DIRECT = 1, COOP_KS = 2 + T % 2 })
      gc.check_tokens(dev, "f16", 48 + 16 * (T % 3), 16 * 11, T, 1200 + T, v)
    end
  end)
end)

-- T = 1..8, ragged m (a partial row group), k whose blocks do not divide by the slices
-- or by COOP_U, and several geometries.
t.test("GEMV_COOP=1: the five quantized formats, f16 and bf16 against the FP64 oracle at every T, ragged m and k", function()
  local dev = t.device("vulkan")
  local ok, why = specs.variant("q8_0", { GEMV_COOP = 1 }).requires(dev)
  if not ok then t.skip(why) end
  gc.releasing(dev, function()
    for i, fmt in ipairs(ALL) do
      -- the dense formats need fp16 matrices besides the int8 ones this test asked for
      if not DENSE[fmt] or specs.variant(fmt, { GEMV_COOP = 1 }).requires(dev) then
        for T = 1, 8 do
          local v = specs.variant(fmt, { GEMV_COOP = 1, GEMV_TOKENS = T })
          -- k: blocks (super-blocks, steps of 16) that the 2 slices and COOP_U = 4 do not divide
          gc.check_tokens(dev, fmt, 37 + 30 * T, k_of(fmt, 3 + T, 37 + T), T, 800 + 10 * i + T, v)
        end
        for _, g in ipairs { { 1, 1, 1 }, { 2, 4, 3 }, { 8, 1, 8 }, { 4, 4, 2 } } do
          local v = specs.variant(fmt, { GEMV_COOP = 1, COOP_WR = g[1], COOP_KS = g[2], COOP_U = not SUPER[fmt] and g[3] or nil,
            GEMV_TOKENS = 8 })
          gc.check_tokens(dev, fmt, 200, SUPER[fmt] and 256 * 5 or 1024 + 96, 8, 900 + g[1] * 16 + g[2] * 4 + g[3], v)
        end
        if DENSE[fmt] then -- A's components from registers: ragged m, several geometries
          for T = 1, 8 do
            local v = specs.variant(fmt, { GEMV_COOP = 1, GEMV_TOKENS = T, COOP_REG = 1, COOP_KS = T % 3 + 1, COOP_U = T % 4 + 1,
              COOP_WR = T % 2 == 1 and 4 or 2 })
            gc.check_tokens(dev, fmt, 37 + 30 * T, 16 * (37 + T), T, 1400 + 10 * i + T, v)
          end
        end
        if fmt == "f16" then -- A from W itself: m a multiple of 16
          for T = 1, 8 do
            local v = specs.variant(fmt, { GEMV_COOP = 1, GEMV_TOKENS = T, COOP_DIRECT = 1, COOP_KS = T % 3 + 1 })
            gc.check_tokens(dev, fmt, 16 * (3 + T), 16 * (37 + T), T, 1300 + T, v)
          end
        end
      end
    end
  end)
end)

-- The wide kernels' loads assume NVIDIA's layout: on another (the emulation scrambled,
-- FRAG_MMA_LAYOUT=0) every y is NaN, which no oracle check passes, never a wrong number.
t.test("COOP_REG=2 and 3 (f16, f32, q8_0) on another fragment layout: every y NaN; on NVIDIA's, right", function()
  local dev = t.device("vulkan")
  local ref = require "gpubench.ref"
  -- each kernel built with the emulation in another layout (FRAG_MMA_LAYOUT=0: f16's scrambled,
  -- q8_0's rows and columns rotated by one), then as built, against the oracle
  local cases = {
    { "f16", { COOP_REG = 2, COOP_U = 1 }, 128, { 77, 78, 79 }, "COOP_REG=2, scrambled layout" },
    { "f16", { COOP_REG = 3, COOP_U = 1 }, 128, { 77, 78, 79 }, "COOP_REG=3, scrambled layout" },
    { "q8_0", { COOP_REG = 3 }, 256, { 87, 88, 89 }, "q8_0 COOP_REG=3, another layout" },
    { "f32", { COOP_REG = 3, COOP_U = 1 }, 128, { 97, 98, 99 }, "f32 COOP_REG=3, scrambled layout" },
  }
  gc.releasing(dev, function()
    for _, c in ipairs(cases) do
      local fmt, k, seeds, m = c[1], c[3], c[4], 19
      local changes = { GEMV_COOP = 2, GEMV_TOKENS = 3, COOP_WR = 1, COOP_KS = 1 }
      for name, v in pairs(c[2]) do changes[name] = v end
      local s = specs.variant(fmt, changes)
      local d = {}
      for name, v in pairs(s.defines) do d[name] = v end
      d.FRAG_MMA_LAYOUT = 0
      local w = ref.random_blocks(fmt, m * k // gemv.format(fmt).qk, seeds[1])
      local y = gemv.run(dev, fmt, w, m, k, ref.random_f32(3 * k, seeds[2]), 3, setmetatable({ defines = d }, { __index = s }))
      local nan = 0
      for i = 1, #y do if y[i] ~= y[i] then nan = nan + 1 end end
      t.eq({ #y, nan }, { 3 * m, 3 * m }, c[5] .. ": every output NaN")
      gc.check_tokens(dev, fmt, m, k, 3, seeds[3], s)
    end
  end)
end)

-- COOP_REG=2 on its own (the one to run after a kernel change: scripts/gpu-session.sh wide)
t.test("COOP_REG=2 and 3: f16 and bf16 (and f32's, q8_0's, q4_0's 3) against the FP64 oracle at every T, ragged m, units the slices do not divide", function()
  local dev = t.device("vulkan")
  local ok, why = specs.variant("f16", { GEMV_COOP = 1, COOP_REG = 2 }).requires(dev)
  if not ok then t.skip(why) end
  gc.releasing(dev, function()
    for i, fmt in ipairs { "f16", "bf16" } do
      for T = 1, 8 do
        local v = specs.variant(fmt, { GEMV_COOP = 1, GEMV_TOKENS = T, COOP_REG = 2, COOP_KS = T % 3 + 1, COOP_U = T % 4 + 1,
          COOP_WR = T % 2 == 1 and 4 or 2, COOP_RT = (T - 1) % 4 + 1, COOP_PF = (T + i) % 2 })
        gc.check_tokens(dev, fmt, 37 + 30 * T, 32 * (19 + 5 * T), T, 1500 + 10 * i + T, v) -- from T = 3, two prep slices
        local b = specs.variant(fmt, { GEMV_COOP = 1, GEMV_TOKENS = T, COOP_REG = 3, COOP_KS = T % 3 + 1, COOP_U = T % 4 + 1,
          COOP_WR = T % 2 == 1 and 4 or 2, COOP_RT = T % 4 + 1 })
        gc.check_tokens(dev, fmt, 29 + 30 * T, 64 * (60 + 3 * T), T, 1600 + 10 * i + T, b) -- from T = 2, two prep slices
      end
    end
    for T = 1, 8 do -- f32 W in B
      local f = specs.variant("f32", { GEMV_COOP = 1, GEMV_TOKENS = T, COOP_REG = 3, COOP_KS = T % 3 + 1, COOP_U = T % 2 + 1,
        COOP_WR = T % 2 == 1 and 2 or 1, COOP_RT = (T + 1) % 4 + 1 })
      gc.check_tokens(dev, "f32", 29 + 30 * T, 64 * (60 + 3 * T), T, 1800 + T, f)
    end
    -- q8_0 and q4_0 W in B (their int8 matrices: the device check above asked for fp16 ones)
    if specs.variant("q8_0", { GEMV_COOP = 1, COOP_REG = 3 }).requires(dev) then
      for f, fmt in ipairs { "q8_0", "q4_0" } do
        for T = 1, 8 do
          local b = specs.variant(fmt, { GEMV_COOP = 1, GEMV_TOKENS = T, COOP_REG = 3, COOP_KS = T % 3 + 1,
            COOP_WR = T % 2 == 1 and 2 or 1, COOP_RT = T % 4 + 1 }) -- at most 6 subgroups of 4 tiles: 48 KiB
          gc.check_tokens(dev, fmt, 29 + 30 * T, 256 * (17 + T), T, 1700 + 10 * f + T, b)
        end
      end
    end
  end)
end)

t.run()
