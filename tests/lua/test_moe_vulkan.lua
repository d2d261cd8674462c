-- The Vulkan mixture-of-experts kernels (kernels/vulkan/moe_q4k_*.comp) through
-- gpubench.moe and gpubench.moe_bench on the device CI has (lavapipe): every
-- variant against the FP64 reference, batched against per_token bit for bit,
-- on ragged shapes, both projections, the routing edge cases and
-- ferrum_subset at m = 1, 2. Criterion: |y - y_ref| <= 1e-4 sum |w x| per
-- output (fused: the SwiGLU bound of ref.swiglu); nothing written past the
-- outputs.

local t = dofile("tests/lua/harness.lua")
local mc = dofile("tests/lua/moe_cases.lua")(t)
local moe = require "gpubench.moe"
local mb = require "gpubench.moe_bench"
local ref = require "gpubench.ref"
local BACKEND = "vulkan"

local SMALL, check_all = mc.SMALL, mc.check_all

for _, proj in ipairs(moe.PROJECTIONS) do
  t.test(("every variant against the reference, uniform routing, m = 1 and 5, %s"):format(proj), function()
    local dev = t.device(BACKEND)
    local sh = moe.shape(SMALL, proj)
    check_all(dev, sh, moe.routing("uniform", 5, sh.experts, sh.top_k, { seed = 2 }), 5, "uniform seed 2")
    check_all(dev, sh, moe.routing("uniform", 1, sh.experts, sh.top_k, { seed = 3 }), 1, "uniform seed 3")
  end)
end

t.test("routing edge cases: every pair on one expert, all experts distinct, more pairs than experts", function()
  mc.edge_cases(t.device(BACKEND))
end)

t.test("grouped over more than one window of 256 ids (90 tokens of top-3)", function()
  local dev = t.device(BACKEND)
  local sh = moe.shape(SMALL, "down")
  local F <close>, g = mb.case(dev, sh, moe.routing("zipf", 90, sh.experts, sh.top_k, { seed = 4 }), 90)
  t.truthy(mb.check(dev, g, "grouped", 90).worst_rel <= mb.TOL)
end)

-- Each geometry d of kernel (grouped, pairs or fused) against the reference at every m of ms on
-- projections projs of SMALL, routed by routing(sh); batched also against per_token, bit for bit.
-- want_rounding: the x_rounding each such spec must declare.
local function check_geometries(kernel, list, projs, routing, ms, want_rounding)
  local mv, fmt = require "gpubench.moe_vulkan", require("gpubench.options").format_defines
  local dev = t.device(BACKEND)
  if want_rounding and (not dev.integer_dot_product or (dev.subgroup_size or 0) < 8) then
    t.skip("no integer dot product or subgroups < 8")
  end
  local variant = ({ pairs = "batched", fused = "fused_gate_up" })[kernel] or kernel
  for _, proj in ipairs(projs) do
    local sh = moe.shape(SMALL, proj)
    local F <close>, g = mb.case(dev, sh, routing(sh), ms[1])
    for _, d in ipairs(list) do
      local specs = { [kernel] = mv.variant(kernel, d) }
      t.eq(specs[kernel].x_rounding, want_rounding)
      for _, m in ipairs(ms) do
        local r = mb.check(dev, g, variant, m, specs)
        t.truthy(r.worst_rel <= mb.TOL and (variant ~= "batched" or r.bit_exact), ("%s %s m=%d"):format(proj, fmt(d, " "), m))
      end
    end
  end
end

-- The float path (MOE_IDOT=0): what a device without integer dot products runs (rule_for's fallback).
t.test("grouped float path (MOE_IDOT=0): MOE_NR 2 and 6, MOE_TC 8 and 3, MOE_T 32 and 8", function()
  local mv = require "gpubench.moe_vulkan"
  t.errors(function() mv.variant("grouped", { MOE_TC = 0 }) end, "moe_vulkan.variant: MOE_TC=0 is not a positive integer", true)
  check_geometries("grouped", { { MOE_IDOT = 0 }, { MOE_IDOT = 0, MOE_NR = 2 }, { MOE_IDOT = 0, MOE_NR = 6, MOE_TC = 8 },
                               { MOE_IDOT = 0, MOE_TC = 3 }, { MOE_IDOT = 0, MOE_T = 32, MOE_TC = 8 },
                               { MOE_IDOT = 0, MOE_T = 8 } }, { "gate_up" },
    function(sh) return moe.routing("zipf", 40, sh.experts, sh.top_k, { seed = 5 }) end, { 40 })
end)

t.test("batched and per_token float path (MOE_IDOT=0): MOE_T 64 and 16, bit for bit alike, both projections", function()
  check_geometries("pairs", { { MOE_IDOT = 0 }, { MOE_IDOT = 0, MOE_T = 16 } }, moe.PROJECTIONS,
    function(sh) return moe.routing("uniform", 5, sh.experts, sh.top_k, { seed = 14 }) end, { 5, 1 })
end)

t.test("the pick per step and device: the integer path where the device runs it, else the float one", function()
  local mv = require "gpubench.moe_vulkan"
  local dev = t.device(BACKEND)
  local sh = moe.shape(SMALL, "gate_up")
  local can = dev.integer_dot_product and (dev.subgroup_size or 0) >= 8
  local lacking = setmetatable({ integer_dot_product = false }, { __index = function(_, k) return dev[k] end })
  for _, variant in ipairs { "batched", "per_token", "grouped", "fused_gate_up" } do
    t.eq(moe.spec(dev, variant, sh, 1).defines.MOE_IDOT, can and 1 or 0, variant .. " on " .. dev.name)
    t.eq(moe.spec(lacking, variant, sh, 1).defines.MOE_IDOT, 0, variant .. " without integer dot products")
  end
  -- lane groups of 8 from 32 pairs a step (top-3: m = 11), on either path; grouped's 2 rows a lane group
  -- from there, the pairs shader's from 128 pairs (m = 43)
  local function geo(variant, m) local d = moe.spec(dev, variant, sh, m).defines return d.MOE_T .. "/" .. d.MOE_NR end
  t.eq({ geo("batched", 10), geo("batched", 11), geo("batched", 42), geo("batched", 43), geo("fused_gate_up", 10),
         geo("fused_gate_up", 11), geo("grouped", 10), geo("grouped", 11) },
       { "32/4", "8/4", "8/4", "8/2", "32/2", "8/2", "16/4", "8/2" })
  t.truthy(moe.spec(dev, "per_token", sh, 11) == moe.spec(dev, "batched", sh, 11), "per_token runs batched's spec")
  -- the fallback with the rule's lane groups runs, checked, batched bit for bit per_token
  local F <close>, g = mb.case(dev, sh, moe.routing("uniform", 11, sh.experts, sh.top_k, { seed = 15 }), 11)
  for _, variant in ipairs { "batched", "grouped" } do
    local kernel = variant == "grouped" and "grouped" or "pairs"
    local specs = { [kernel] = moe.spec(lacking, variant, sh, 11) }
    t.eq({ specs[kernel].defines.MOE_IDOT, specs[kernel].defines.MOE_T }, { 0, 8 }, variant)
    local r = mb.check(dev, g, variant, 11, specs)
    t.truthy(r.worst_rel <= mb.TOL and (variant ~= "batched" or r.bit_exact), variant .. " float fallback")
  end
  t.eq(mv.variant("pairs", { MOE_IDOT = 0 }).x_rounding, nil, "the float path rounds nothing")
end)

-- The integer path (MOE_IDOT=1): x rounded to int16 per 32 values, checked with that rounding in
-- the bound (spec.x_rounding); x whole (MOE_XB = 64 >= k / 32) and in slices of 8 blocks, ragged
-- passes (MOE_TC = 3), other row splits; more than one window of ids; both projections.
t.test("grouped integer path (MOE_IDOT=1): x whole and in slices, MOE_TC 4 and 3, MOE_NR 2, both projections", function()
  check_geometries("grouped", { { MOE_IDOT = 1 }, { MOE_IDOT = 1, MOE_XB = 8 }, { MOE_IDOT = 1, MOE_XB = 8, MOE_TC = 3 },
                               { MOE_IDOT = 1, MOE_NR = 2, MOE_T = 32 }, { MOE_IDOT = 1, MOE_NR = 2, MOE_T = 8 } }, moe.PROJECTIONS,
    function(sh) return moe.routing("zipf", 90, sh.experts, sh.top_k, { seed = 6 }) end, { 90, 7, 1 }, 32)
end)

t.test("fused_gate_up float path (MOE_IDOT=0): MOE_T 32, 16 and 8, MOE_NR 4", function()
  check_geometries("fused", { { MOE_IDOT = 0 }, { MOE_IDOT = 0, MOE_T = 16 }, { MOE_IDOT = 0, MOE_T = 8, MOE_NR = 4 } }, { "gate_up" },
    function(sh) return moe.routing("uniform", 5, sh.experts, sh.top_k, { seed = 13 }) end, { 5, 1 })
end)

-- The fused shader's integer path: x quantized once per pair for the gate and up rows, checked
-- against the SwiGLU bound over both stacks' absdots, each with what x's rounding moves.
t.test("fused_gate_up integer path (MOE_IDOT=1): x whole and in slices, MOE_T 16 and 8, MOE_NR 3", function()
  local mv = require "gpubench.moe_vulkan"
  t.eq({ mv.fused.defines.MOE_IDOT, mv.fused.x_rounding }, { 1, 32 }, "the table's")
  t.eq(mv.variant("fused", { MOE_IDOT = 1 }).shared_bytes, 64 * 2 * 2 * 4 + 72 * 64, "two sums per row, one row of x")
  check_geometries("fused", { { MOE_IDOT = 1 }, { MOE_IDOT = 1, MOE_XB = 8, MOE_T = 16 }, { MOE_IDOT = 1, MOE_NR = 3 },
                             { MOE_IDOT = 1, MOE_T = 8 } },
    { "gate_up" }, function(sh) return moe.routing("uniform", 7, sh.experts, sh.top_k, { seed = 16 }) end, { 7, 1 }, 32)
  -- up's weights changed after the reference: the check must see the up half of the integer path
  local dev = t.device(BACKEND)
  if not dev.integer_dot_product or (dev.subgroup_size or 0) < 8 then t.skip("no integer dot product or subgroups < 8") end
  local sh = moe.shape(SMALL, "gate_up")
  local F <close>, g = mb.case(dev, sh, moe.routing("uniform", 3, sh.experts, sh.top_k, { seed = 17 }), 3)
  g.stacks.up[1]:upload(ref.random_blocks("q4_k", sh.stack_bytes // moe.BLOCK_BYTES, 98))
  t.errors(function() mb.check(dev, g, "fused_gate_up", 3, { fused = mv.variant("fused", { MOE_IDOT = 1 }) }) end,
    "the vulkan fused_gate_up kernel is wrong at m=3", true)
end)

t.test("batched and per_token integer path (MOE_IDOT=1): x whole and in slices, bit for bit alike, both projections", function()
  check_geometries("pairs", { { MOE_IDOT = 1 }, { MOE_IDOT = 1, MOE_XB = 8, MOE_T = 16 }, { MOE_IDOT = 1, MOE_NR = 3 },
                             { MOE_IDOT = 1, MOE_T = 8, MOE_NR = 2 } },
    moe.PROJECTIONS, function(sh) return moe.routing("uniform", 5, sh.experts, sh.top_k, { seed = 12 }) end, { 5, 1 }, 32)
end)

t.test("grouped integer path: the rounded bound is not loose (a wrong kernel fails it), and what a device lacks is named", function()
  local mv = require "gpubench.moe_vulkan"
  t.errors(function() mv.variant("grouped", { MOE_IDOT = 2 }) end, "moe_vulkan.variant: MOE_IDOT=2 is not 0 or 1", true)
  t.errors(function() mv.variant("grouped", { MOE_XB = 12 }) end,
    "moe_vulkan.variant: MOE_XB=12 is not a multiple of 8 (whole super-blocks of x per slice)", true)
  t.eq(mv.variant("grouped", { MOE_IDOT = 1 }).shared_bytes, 128 + 1024 + 8 + 64 * 16 * 4 + 72 * 64 * 4)
  t.eq(mv.variant("grouped", { MOE_IDOT = 0 }).x_rounding, nil, "the float path rounds nothing")
  local dev = t.device(BACKEND)
  if not dev.integer_dot_product or (dev.subgroup_size or 0) < 8 then t.skip("no integer dot product or subgroups < 8") end
  local sh = moe.shape(SMALL, "gate_up")
  local specs = { grouped = mv.variant("grouped", { MOE_IDOT = 1, MOE_XB = 8 }) }
  local F <close>, g = mb.case(dev, sh, moe.routing("uniform", 4, sh.experts, sh.top_k, { seed = 9 }), 4)
  -- another stack of the same shape: the kernel then computes other weights than the reference's
  local other = ref.random_blocks("q4_k", sh.stack_bytes // moe.BLOCK_BYTES, 99)
  g.stacks.w[1]:upload(other)
  t.errors(function() mb.check(dev, g, "grouped", 4, specs) end, "the vulkan grouped kernel is wrong at m=4", true)
  local b = { w = g.stacks.w[1], x = g.x, ids = g.ids, y = g.y }
  local function lacking(over)
    local fake = setmetatable(over, { __index = function(_, k) return dev[k] end })
    return function() moe.launches(fake, "grouped", sh, 4, b, specs) end
  end
  t.errors(lacking { integer_dot_product = false },
    "moe.launches: moe_q4k_grouped.comp (MOE_IDOT=1,MOE_NR=4,MOE_T=16,MOE_TC=4,MOE_XB=8) needs integer dot products "
    .. "(shaderIntegerDotProduct), which " .. dev.name .. " lacks", true)
  t.errors(lacking { subgroup_size = 4 }, "needs subgroups of 8 or more lanes, " .. dev.name .. " has 4", true)
  t.errors(lacking { max_shared_bytes = 4096 }, "needs 7560 bytes of shared memory, " .. dev.name .. " has 4096", true)
end)

t.test("ferrum_subset (8 experts, top-8, 768 x 2048 / 2048 x 768) at m = 1 and 2", function()
  local dev = t.device(BACKEND)
  for _, proj in ipairs(moe.PROJECTIONS) do
    local sh = moe.shape("ferrum_subset", proj)
    check_all(dev, sh, moe.routing("modulo", 2, sh.experts, sh.top_k), 2, "ferrum_subset")
  end
end)

t.test("the checks catch a wrong kernel: weights changed after the reference fail it", function()
  mc.wrong_kernel_fails(t.device(BACKEND), { "batched", "grouped" })
end)

t.test("bit-exact equality is a real check: another lane split changes the bits", function()
  local dev = t.device(BACKEND)
  local sh = moe.shape(SMALL, "gate_up")
  local F <close>, g = mb.case(dev, sh, moe.routing("uniform", 2, sh.experts, sh.top_k, { seed = 7 }), 2)
  local mv = require "gpubench.moe_vulkan"
  local function out(specs)
    local b = { w = g.stacks.w[1], x = g.x, ids = g.ids, y = g.y }
    g.y:fill("\xff")
    for _, l in ipairs(moe.launches(dev, "batched", sh, 2, b, specs)) do l[1]:launch(table.unpack(l, 2)) end
    return g.y:download(0, 4 * 2 * sh.top_k * sh.n)
  end
  t.truthy(out(nil) ~= out({ pairs = mv.variant("pairs", { MOE_T = 4 }) }), "MOE_T = 64 and 4 sum in other orders")
end)

t.test("bad ids and shapes are refused before any launch, naming the problem", function()
  local dev = t.device(BACKEND)
  local sh = moe.shape(SMALL, "gate_up")
  t.errors(function() mb.case(dev, sh, { 0, 1, 6 }, 1) end, "moe: pair 2 routes to expert 6, the stack has 0..5", true)
  local F <close>, g = mb.case(dev, sh, moe.routing("uniform", 1, sh.experts, sh.top_k), 1)
  t.errors(function() moe.launches(dev, "batched", sh, 2, { w = g.stacks.w[1], x = g.x, ids = g.ids, y = g.y }) end,
    "moe.launches: x buffer is 2048 bytes, batched needs 4096", true)
  t.errors(function() moe.launches(dev, "fused_gate_up", moe.shape(SMALL, "down"), 1, {}) end,
    "moe.launches: fused_gate_up applies to the gate_up projection only", true)
end)

t.run()
