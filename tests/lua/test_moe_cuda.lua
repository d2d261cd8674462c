-- The CUDA mixture-of-experts kernels (kernels/cuda/moe_q4k_*.cu) through
-- gpubench.moe and gpubench.moe_bench, on a CUDA device (skipped, exit 77,
-- without one; NVRTC compiles every kernel without a GPU in
-- tests/c/test_nvrtc_compile.c). Every variant against the FP64 reference,
-- batched against per_token bit for bit, nothing written past the outputs, on
-- ragged shapes, both projections, the routing edge cases, the grouped
-- kernel's passes and id windows, and the three model geometries. Criterion:
-- |y - y_ref| <= 1e-4 sum |w x| per output (fused: the SwiGLU bound).

local t = dofile("tests/lua/harness.lua")
local mc = dofile("tests/lua/moe_cases.lua")(t)
local moe = require "gpubench.moe"
local mb = require "gpubench.moe_bench"
local BACKEND = "cuda"

local SMALL, check_all = mc.SMALL, mc.check_all
-- 70 experts: the grouped kernel's presence mask spans three words.
local WIDE = { experts = 70, top_k = 4, gate_up = { n = 72, k = 1024 }, down = { n = 136, k = 768 } }

for _, proj in ipairs(moe.PROJECTIONS) do
  t.test(("every variant against the reference, uniform routing, m = 1, 2, 5, %s"):format(proj), function()
    local dev = t.device(BACKEND)
    local sh = moe.shape(SMALL, proj)
    -- one reference for m = 5; m = 1 and 2 check its prefix, and nothing past their outputs
    check_all(dev, sh, moe.routing("uniform", 5, sh.experts, sh.top_k, { seed = 2 }), 5, "small", { 1, 2, 5 })
  end)
end

t.test("grouped rules: GPACK=1 up to 132 blocks, GTOK=8 GSTAGES=2 from 2 pairs per expert, the launch takes them, a sweep's geometry wins", function()
  local S = require "gpubench.moe_cuda"
  local q3, mx = moe.shape("qwen3_30b_a3b", "gate_up"), moe.shape("mixtral_8x7b", "gate_up")
  local function pick(sh, m)
    local s, rule = S.grouped_for(sh, m)
    return { s.defines.GWARPS, s.defines.GSTAGES, s.defines.GTOK, s.defines.GPACK, rule and rule.changes }
  end
  t.eq(pick(q3, 1), { 4, 3, 4, 1, S.GROUPED_RULES[1].changes }, "qwen3 m=1: 8 experts x 12 row tiles")
  t.eq(pick(q3, 2), { 4, 3, 4, 0, nil }, "qwen3 m=2: up to 16 experts x 12 row tiles")
  local q3d = moe.shape("qwen3_30b_a3b", "down")
  t.eq(pick(q3d, 1), { 4, 3, 4, 0, nil }, "qwen3 down m=1: 8 experts x 32 row tiles")
  t.eq(pick(q3, 8), { 4, 3, 4, 0, nil }, "qwen3 m=8: 64 pairs on up to 64 experts")
  t.eq(pick(q3, 16), { 4, 3, 4, 0, nil }, "qwen3 m=16: 128 pairs, 128 experts")
  t.eq(pick(q3, 32), { 4, 2, 8, 0, S.GROUPED_RULES[2].changes }, "qwen3 m=32: 256 pairs over 128 experts")
  t.eq(pick(mx, 1), { 4, 3, 4, 0, nil }, "mixtral m=1: 2 experts x 224 row tiles")
  t.eq(pick(mx, 4), { 4, 3, 4, 0, nil }, "mixtral m=4: 8 pairs, up to 8 experts")
  t.eq(pick(mx, 8), { 4, 2, 8, 0, S.GROUPED_RULES[2].changes }, "mixtral m=8: 16 pairs over 8 experts")
  t.truthy(S.grouped_for(q3, 32) == S.grouped_for(q3, 64), "one spec per rule (the kernel cache's key)")
  local b = { w = "w", x = "x", ids = "ids", y = "y" }
  local spec_of = function(spec) return spec end
  t.eq(S.launches.grouped(spec_of, q3, 64, b)[1][1].defines.GTOK, 8)
  t.eq(S.launches.grouped(spec_of, q3, 8, b)[1][1].defines.GTOK, 4)
  local sweep = { grouped = S.variant("grouped", { GWARPS = 2, GSTAGES = 4 }) }
  t.eq(S.launches.grouped(spec_of, q3, 64, b, sweep)[1][1].defines.GSTAGES, 4, "--grouped-geometry replaces the rule")
end)

t.test("routing edge cases: every pair on one expert, all experts distinct, more pairs than experts", function()
  mc.edge_cases(t.device(BACKEND))
end)

t.test("70 experts, 48 tokens of top-4 (192 ids: the grouped scan's windows of 32), zipf and modulo", function()
  local dev = t.device(BACKEND)
  for _, proj in ipairs(moe.PROJECTIONS) do
    local sh = moe.shape(WIDE, proj)
    check_all(dev, sh, moe.routing("zipf", 48, sh.experts, sh.top_k, { seed = 3, zipf_s = 1.3 }), 48, "zipf", { 7, 48 })
    check_all(dev, sh, moe.routing("modulo", 20, sh.experts, sh.top_k), 20, "modulo")
  end
end)

t.test("the model geometries: qwen3_30b_a3b at m = 4, ferrum_subset at m = 2, mixtral_8x7b at m = 1", function()
  local dev = t.device(BACKEND)
  for _, c in ipairs { { "qwen3_30b_a3b", 4 }, { "ferrum_subset", 2 }, { "mixtral_8x7b", 1 } } do
    for _, proj in ipairs(moe.PROJECTIONS) do
      local sh = moe.shape(c[1], proj)
      check_all(dev, sh, moe.routing("uniform", c[2], sh.experts, sh.top_k, { seed = 8 }), c[2], c[1])
    end
  end
end)

t.test("the checks catch a wrong kernel: weights changed after the reference fail it", function()
  mc.wrong_kernel_fails(t.device(BACKEND), { "batched", "grouped", "fused_gate_up" })
end)

t.test("grouped geometries of the compile lines: GWARPS 1, 2, 4, GSTAGES 2 to 4, GTOK 4 and 8 (4, 3, 8: dynamic shared memory), x_hi and x_lo in one mma (GPACK=1)", function()
  local mc = require "gpubench.moe_cuda"
  t.eq(mc.variant("grouped", { GWARPS = 4, GSTAGES = 3, GTOK = 8 }).defines.GSTAGES, 3, "52204 B: past the static 48 KiB")
  t.errors(function() mc.variant("grouped", { GWARPS = 16, GSTAGES = 8, GTOK = 8 }) end,
    "moe_cuda.variant: grouped GWARPS=16 GSTAGES=8 GTOK=8 needs 361452 B of shared memory, over a block's 232448 B", true)
  t.errors(function() mc.variant("grouped", { GPACK = 2 }) end, "moe_cuda.variant: GPACK=2 is not 0 or 1", true)
  t.errors(function() mc.variant("grouped", { GPACK = 1, GTOK = 8 }) end,
    "moe_cuda.variant: grouped GPACK=1 takes GTOK 1 to 4 (x_hi and x_lo share the mma's 8 columns), not 8", true)
  t.errors(function() mc.variant("grouped", { GTOK = 0 }) end, "moe_cuda.variant: GTOK=0 is not a positive integer", true)
  local dev = t.device(BACKEND)
  local sh = moe.shape(WIDE, "gate_up")
  local F <close>, g = mb.case(dev, sh, moe.edge("overflow", 30, sh.experts, sh.top_k), 30)
  for _, d in ipairs { { GWARPS = 2, GSTAGES = 4, GTOK = 8 }, { GWARPS = 2, GSTAGES = 3, GTOK = 8 },
                       { GWARPS = 4, GSTAGES = 2, GTOK = 8 }, { GWARPS = 1, GSTAGES = 4, GTOK = 4 },
                       { GWARPS = 4, GSTAGES = 3, GTOK = 8 }, { GPACK = 1 }, { GPACK = 1, GTOK = 2 }, { GPACK = 0, GTOK = 4 } } do
    local specs = { grouped = mc.variant("grouped", d) }
    t.truthy(mb.check(dev, g, "grouped", 30, specs).worst_rel <= mb.TOL)
  end
end)

t.test("pairs and fused with x in registers (XSHARED=0): batched, per_token and fused_gate_up against the reference, batched == per_token bit for bit, ragged n, more pairs than experts", function()
  local S = require "gpubench.moe_cuda"
  t.errors(function() S.variant("pairs", { XSHARED = 2 }) end, "moe_cuda.variant: XSHARED=2 is not 0 or 1", true)
  t.eq(S.variant("pairs", { XSHARED = 1 }).defines.XSHARED, nil, "1: the default, not passed")
  local dev = t.device(BACKEND)
  for _, d in ipairs { { XSHARED = 0 }, { XSHARED = 0, ROWS = 8, PARTS = 1 } } do
    local specs = { pairs = S.variant("pairs", d), fused = S.variant("fused", d) }
    for _, proj in ipairs(moe.PROJECTIONS) do
      for _, case in ipairs { { mc.SMALL, 5 }, { WIDE, 30 } } do
        local sh, m = moe.shape(case[1], proj), case[2]
        local F <close>, g = mb.case(dev, sh, moe.routing("uniform", m, sh.experts, sh.top_k, { seed = 4 }), m)
        local c = mb.check(dev, g, "batched", m, specs)
        t.truthy(c.worst_rel <= mb.TOL, ("XSHARED=0 %s n=%d m=%d"):format(proj, sh.n, m))
        t.eq(c.bit_exact, true, ("XSHARED=0 %s m=%d: batched == per_token"):format(proj, m))
        if moe.applies("fused_gate_up", proj) then
          t.truthy(mb.check(dev, g, "fused_gate_up", m, specs).worst_rel <= mb.TOL, ("XSHARED=0 fused m=%d"):format(m))
        end
      end
    end
  end
end)

t.run()
