-- gpubench.moe and gpubench.moe_bench without a device: the geometries and
-- ferrum's strides, the routings (distinct experts per token, seeded, prefix
-- property, zipf skew, modulo), the edge cases, byte counts, dispatch counts,
-- the cold regime's copies, the plan, the rows (peer, floor, scaling), the
-- FP64 MoE and SwiGLU references against ref.gemv and the formula, and the
-- kernels' compile lines against the geometry tables.

local t = dofile("tests/lua/harness.lua")
local moe = require "gpubench.moe"
local mb = require "gpubench.moe_bench"
local ref = require "gpubench.ref"

t.test("shapes: ferrum's strides and two-stride walks for the three configs", function()
  local q = moe.shape("qwen3_30b_a3b", "gate_up")
  t.eq({ q.experts, q.top_k, q.n, q.k, q.nb01, q.nb02, q.stack_bytes, q.outer, q.inner },
       { 128, 8, 768, 2048, 1152, 884736, 113246208, 2048, 0 })
  local d = moe.shape("qwen3_30b_a3b", "down")
  t.eq({ d.n, d.k, d.nb01, d.nb02, d.outer, d.inner }, { 2048, 768, 432, 884736, 8 * 768, 768 })
  local x = moe.shape("mixtral_8x7b", "gate_up")
  t.eq({ x.experts, x.top_k, x.nb01, x.nb02, x.stack_bytes }, { 8, 2, 2304, 33030144, 264241152 })
  t.eq(moe.shape("mixtral_8x7b", "down").nb01, 14336 // 256 * 144)
  local f = moe.shape("ferrum_subset", "gate_up")
  t.eq({ f.experts, f.top_k, f.n, f.k, f.buffer_bytes }, { 8, 8, 768, 2048, 8 * 884736 + 16 })
  t.eq({ moe.x_rows(q, 5), moe.x_rows(d, 5), moe.x_floats(d, 5) }, { 5, 40, 40 * 768 })
  t.errors(function() moe.shape("llama", "gate_up") end, "moe.shape: unknown config llama", true)
  t.errors(function() moe.shape("qwen3_30b_a3b", "up") end, "unknown projection up (gate_up or down)", true)
  t.errors(function() moe.shape({ experts = 2, top_k = 1, gate_up = { n = 4, k = 300 } }, "gate_up") end,
    "k=300 is not a multiple of 256", true)
  t.errors(function() moe.shape({ experts = 2000, top_k = 1, gate_up = { n = 4, k = 256 } }, "gate_up") end,
    "2000 experts, more than the 1024", true)
end)

local function distinct_per_token(ids, m, top_k, experts)
  for tok = 0, m - 1 do
    local seen = {}
    for s = 1, top_k do
      local e = ids[tok * top_k + s]
      if math.type(e) ~= "integer" or e < 0 or e >= experts or seen[e] then return false end
      seen[e] = true
    end
  end
  return true
end

t.test("uniform routing: distinct experts per token, seeded, fewer tokens a prefix of more", function()
  local a = moe.routing("uniform", 7, 128, 8, { seed = 3 })
  t.eq(#a, 56)
  t.truthy(distinct_per_token(a, 7, 8, 128))
  t.eq(moe.routing("uniform", 7, 128, 8, { seed = 3 }), a, "the same seed, the same ids")
  local b = moe.routing("uniform", 3, 128, 8, { seed = 3 })
  for i = 1, 24 do t.eq(b[i], a[i], "prefix") end
  t.truthy(table.concat(moe.routing("uniform", 7, 128, 8, { seed = 4 }), ",") ~= table.concat(a, ","), "another seed")
  -- every expert equally likely: 4000 tokens of top-2 over 8 experts, each near 1000
  local big = moe.routing("uniform", 4000, 8, 2, { seed = 1 })
  local count = {}
  for _, e in ipairs(big) do count[e] = (count[e] or 0) + 1 end
  for e = 0, 7 do t.truthy(count[e] > 880 and count[e] < 1120, ("expert %d: %d"):format(e, count[e])) end
  t.eq(moe.routing("uniform", 1, 8, 8), moe.routing("uniform", 1, 8, 8, { seed = 1 }), "seed 1 by default")
  t.truthy(distinct_per_token(moe.routing("uniform", 5, 8, 8), 5, 8, 8), "top_k = experts: a permutation per token")
  t.errors(function() moe.routing("uniform", 1, 4, 8) end, "uniform routing picks top_k=8 distinct experts of 4", true)
  t.errors(function() moe.routing("random", 1, 4, 2) end, "unknown routing random (uniform, zipf or modulo)", true)
end)

t.test("zipf routing: distinct per token, skewed towards a seeded ranking; modulo is ferrum's p % E", function()
  local z = moe.routing("zipf", 2000, 128, 8, { seed = 2, zipf_s = 1.2 })
  t.truthy(distinct_per_token(z, 2000, 8, 128))
  local count, top = {}, 0
  for _, e in ipairs(z) do count[e] = (count[e] or 0) + 1; top = math.max(top, count[e]) end
  -- uniform would give each expert 125; the head of a 1.2-zipf is picked by nearly every token
  t.truthy(top > 1500, "most frequent expert: " .. top)
  t.eq(moe.routing("zipf", 50, 128, 8, { seed = 2, zipf_s = 1.2 })[9], z[9], "prefix")
  t.errors(function() moe.routing("zipf", 1, 8, 2, { zipf_s = 0 }) end, "zipf_s must be a finite positive number, got 0", true)
  local m = moe.routing("modulo", 3, 5, 4)
  t.eq(m, { 0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1 })
end)

t.test("edge cases, unique experts, bytes, dispatches, variants per projection", function()
  t.eq(moe.edge("one_expert", 2, 6, 3), { 5, 5, 5, 5, 5, 5 })
  local d = moe.edge("distinct", 2, 6, 3)
  t.eq(moe.unique(d, 6), 6)
  local o = moe.edge("overflow", 3, 6, 3)
  t.truthy(#o == 9 and moe.unique(o, 9) <= 6 and distinct_per_token(o, 3, 3, 6))
  t.errors(function() moe.edge("distinct", 3, 6, 3) end, "distinct needs m * top_k <= experts, got 9 pairs of 6 experts", true)
  t.errors(function() moe.edge("overflow", 2, 6, 3) end, "overflow needs m * top_k > experts", true)
  t.eq(moe.unique({ 3, 1, 3, 7, 1 }, 5), 3)
  t.eq(moe.unique({ 3, 1, 3, 7, 1 }, 2), 2)
  local q = moe.shape("qwen3_30b_a3b", "gate_up")
  t.eq(moe.unique_bytes(q, "grouped", 8), 8 * 884736)
  t.eq(moe.unique_bytes(q, "fused_gate_up", 8), 2 * 8 * 884736, "fused reads gate and up")
  t.eq({ moe.dispatches("cuda", "per_token", 7), moe.dispatches("cuda", "batched", 7),
         moe.dispatches("cuda", "grouped", 7), moe.dispatches("cuda", "fused_gate_up", 7) }, { 7, 1, 1, 1 })
  t.eq(moe.dispatches("vulkan", "grouped", 64), 1)
  t.truthy(moe.applies("fused_gate_up", "gate_up") and not moe.applies("fused_gate_up", "down") and moe.applies("grouped", "down"))
  t.errors(function() moe.check_ids({ 0, 8 }, 2, 8) end, "moe: pair 1 routes to expert 8, the stack has 0..7", true)
  t.eq(moe.ids_string({ 1, -2, 3 }, 2), string.pack("<i4i4", 1, -2))
end)

t.test("the cold regime's copies: the selected experts of a rotation total at least 4x L2, at least 2", function()
  t.eq(mb.copies(10, 100), 40)
  t.eq(mb.copies(33, 100), 13) -- 13 * 33 = 429 >= 400, 12 * 33 = 396 is not
  t.eq(mb.copies(1000, 100), 2)
  local l2 = 60 * 1000 * 1000 -- an H200's 60 MB
  local step = 8 * 884736       -- qwen3 at m = 1: 8 experts of one stack
  local c = mb.copies(step, l2)
  t.truthy(c * step >= 4 * l2 and (c - 1) * step < 4 * l2, tostring(c))
end)

t.test("the plan: cells per variant, projection, regime and m, with the routing's counts", function()
  local list = mb.plan { config = "ferrum_subset", ms = { 1, 2 }, routing = "uniform", routing_seed = 1,
                         projections = { "gate_up", "down" }, regimes = { "cold", "l2" }, variants = moe.VARIANTS }
  -- gate_up: 4 variants, down: 3 (no fused), x 2 regimes x 2 m
  t.eq(#list, (4 + 3) * 2 * 2)
  t.eq(list[1].label, "per_token gate_up cold m=1")
  local fused = 0
  for _, c in ipairs(list) do
    t.eq(c.unique, 8, c.label) -- top-8 of 8: every token selects every expert
    t.eq(c.pairs, 8 * c.m)
    if c.variant == "fused_gate_up" then fused = fused + 1; t.eq(c.projection, "gate_up"); t.eq(c.unique_bytes, 2 * 8 * 884736) end
    t.eq(c.dispatches, nil, "no backend given")
  end
  t.eq(fused, 4)
  local g = mb.plan { config = "qwen3_30b_a3b", ms = { 64 }, routing = "modulo", projections = { "gate_up" },
                      regimes = { "l2" }, variants = { "grouped" }, backend = "cuda" }
  t.eq({ #g, g[1].unique, g[1].dispatches, mb.dispatch_text(g[1]) }, { 1, 128, 1, "1" })
  local u = mb.plan { config = "qwen3_30b_a3b", ms = { 3 }, routing = "uniform", projections = { "gate_up" },
                      regimes = { "l2" }, variants = { "grouped", "per_token" } }
  t.eq(mb.dispatch_text(u[1]), "1", "grouped: one dispatch on both backends")
  t.eq(mb.dispatch_text(u[2]), "3")
end)

t.test("rows: per step and per pair, GB/s over the unique experts, floor, the peer beside l2 rows", function()
  local cell = mb.plan { config = "qwen3_30b_a3b", ms = { 8 }, routing = "uniform", projections = { "gate_up" },
                         regimes = { "l2" }, variants = { "grouped" }, backend = "cuda" }[1]
  local p = { copies = 1, io_bytes = 4 * 8 * 2048 + 4 * 64 * 768, check = { worst_rel = 1e-7 } }
  local r = mb.row(cell, p, { ms = 0.0127 }, { read_gbs = 4500, l2_bytes = 60e6 })
  t.near(r.us_step, 12.7, 1e-9)
  t.near(r.us_pair, 12.7 / 64, 1e-12)
  t.near(r.gbs, cell.unique_bytes / 12.7e-6 / 1e9, 1e-6)
  t.near(r.floor_us, cell.unique_bytes / 4500e3, 1e-9)
  t.near(r.x_floor, 12.7 / r.floor_us, 1e-9)
  t.near(r.vs_peer, 12.7 / 25.4, 1e-12, "llama.cpp's 25.4 us at n = 8")
  t.eq(r.fits, cell.unique_bytes + p.io_bytes < 60e6 and "l2 (L2)" or "l2 (DRAM)")
  t.eq(mb.row(cell, p, {}, { read_gbs = 4500 }).status, "noise")
  t.eq(mb.row(cell, { skip = "too big" }, {}, {}).status, "skipped")
  cell.regime = "cold"
  t.eq(mb.row(cell, { copies = 9, io_bytes = 0, check = {} }, { ms = 1 }, {}).fits, "cold x9")
  t.eq(mb.row(cell, { copies = 1, io_bytes = 0, check = {} }, { ms = 1 }, { flushed = true }).fits, "cold (flush)")
  t.eq(mb.row(cell, { copies = 9, io_bytes = 0, check = {} }, { ms = 1 }, { read_gbs = 1 }).vs_peer, nil, "cold: no peer")
  local list = mb.plan { config = "qwen3_30b_a3b", ms = { 1, 2, 8, 64 }, routing = "uniform", projections = { "gate_up" },
                         regimes = { "cold", "l2" }, variants = { "batched" } }
  local peers = mb.peer_rows(list)
  t.eq(#peers, 3, "m = 1, 8, 64 (the peer has no m = 2)")
  t.eq({ peers[1].m, peers[1].us_step, peers[3].us_step, peers[1].status, peers[1].variant }, { 1, 8.2, 202, "peer", "llama.cpp*" })
  t.eq(#mb.peer_rows(mb.plan { config = "mixtral_8x7b", ms = { 1 }, routing = "uniform", projections = { "gate_up" },
                               regimes = { "l2" }, variants = { "batched" } }), 0, "another geometry: no peer")
end)

t.test("scaling_vs_m1: us per pair over m = 1's, in any order the rows come", function()
  local out = {}
  local sink = { add = function(_, r) out[#out + 1] = r end }
  local s = mb.scaling_sink(sink)
  s:add { variant = "a", regime = "l2", m = 4, us_pair = 2 }   -- held until m = 1
  s:add { variant = "b", regime = "l2", m = 1, us_pair = 5 }
  s:add { variant = "a", regime = "l2", m = 1, us_pair = 4 }
  s:add { variant = "a", regime = "l2", m = 8, us_pair = 1 }
  s:add { variant = "c", regime = "l2", m = 2, us_pair = 1 }   -- never gets an m = 1
  s:finish()
  t.eq(#out, 5)
  local by = {}
  for i, r in ipairs(out) do by[r.variant .. r.m] = { i, r.scaling_vs_m1 } end
  t.eq(by.b1, { 1, 1.0 })
  t.eq(by.a1, { 2, 1.0 })
  t.eq(by.a4, { 3, 0.5 }, "emitted right after its m = 1 row")
  t.eq(by.a8, { 4, 0.25 })
  t.eq(by.c2, { 5, nil })
end)

t.test("ref.moe_gemv: each pair is ref.gemv of its expert and activation row, both walks", function()
  local E, n, k, top_k = 3, 5, 512, 2
  local stack = ref.random_blocks("q4_k", E * n * k // 256, 7)
  local ids = { 2, 0, 1, 2, 0, 0 }
  local ids_s = moe.ids_string(ids)
  for _, walk in ipairs { { outer = k, inner = 0, rows = 3 }, { outer = top_k * k, inner = k, rows = 6 } } do
    local x = ref.random_f32(walk.rows * k, 4)
    local y, a = ref.moe_gemv("q4_k", stack, E, n, k, ids_s, top_k, x, walk.outer, walk.inner)
    t.eq(#y, 8 * 6 * n)
    for p = 0, 5 do
      local e, tok, s = ids[p + 1], p // top_k, p % top_k
      local off = tok * walk.outer + s * walk.inner
      local yr, ar = ref.gemv("q4_k", stack:sub(e * n * 288 + 1, (e + 1) * n * 288), n, k, x:sub(4 * off + 1, 4 * (off + k)))
      for i = 1, n do
        t.near(string.unpack("<d", y, 8 * (p * n + i - 1) + 1), yr[i], 1e-12 * ar[i], ("pair %d row %d"):format(p, i))
        t.near(string.unpack("<d", a, 8 * (p * n + i - 1) + 1), ar[i], 1e-12 * ar[i])
      end
    end
  end
  local x = ref.random_f32(3 * k, 4)
  t.errors(function() ref.moe_gemv("q4_k", stack, E, n, k, moe.ids_string { 0, 3 }, top_k, x, k, 0) end,
    "BAD_ID (pair 1 has expert 3, the stack has 0..2)", true)
  t.errors(function() ref.moe_gemv("q4_k", stack, E, n, k, moe.ids_string { 0, 0, 0, 0, 0, 0, 0, 0 }, top_k, x, k, 0) end,
    "BAD_SIZE (pair 6 reads x[1536 .. 2047], x has 1536 floats)", true)
  t.errors(function() ref.moe_gemv("q4_k", stack:sub(2), E, n, k, ids_s, top_k, x, k, 0) end,
    "a stack of 3 q4_k experts of 5 x 512 takes 4320 bytes, got 4319", true)
  t.errors(function() ref.moe_gemv("q4_k", stack, E, n, k, "abc", top_k, x, k, 0) end,
    "ids must be a non-empty i32 string", true)
end)

t.test("ref.swiglu: silu(g) u, its first-order error scale; check_rows_f64 judges f32 outputs", function()
  local g = { 1.5, -2.0, 0.0, -200.0 }
  local u = { 2.0, 3.0, -1.0, 4.0 }
  local ag, au = { 0.5, 0.25, 1.0, 2.0 }, { 1.0, 2.0, 3.0, 4.0 }
  local function f64(v) local p = {} for i, x in ipairs(v) do p[i] = string.pack("<d", x) end return table.concat(p) end
  local out, scale = ref.swiglu(f64(g), f64(ag), f64(u), f64(au))
  for i = 1, 4 do
    local sig = 1 / (1 + math.exp(-g[i]))
    local silu, dsilu = g[i] * sig, sig * (1 + g[i] * (1 - sig))
    t.near(string.unpack("<d", out, 8 * i - 7), silu * u[i], 1e-15 * math.abs(silu * u[i]) + 1e-300)
    t.near(string.unpack("<d", scale, 8 * i - 7), math.abs(dsilu * u[i]) * ag[i] + math.abs(silu) * au[i]
      + math.abs(g[i] * u[i]) * 2 ^ -96, 1e-15)
  end
  -- g = -200: f32 has no silu(g) (e^200 overflows); +-0 passes by the last term, and only by it
  local y = string.pack("<ffff", 1.5 / (1 + math.exp(-1.5)) * 2, -2 / (1 + math.exp(2)) * 3, 0, 0)
  local ok, worst, rel, failures = ref.check_rows_f64(y, out, scale, 1e-4)
  t.eq({ ok, failures }, { true, 0 })
  local bad = string.pack("<ffff", 1.5 / (1 + math.exp(-1.5)) * 2 * 1.01, -2 / (1 + math.exp(2)) * 3, 0, 0 / 0)
  ok, worst, rel, failures = ref.check_rows_f64(bad, out, scale, 1e-4)
  t.eq({ ok, worst, failures }, { false, 4, 2 }, "a 1 % error and a NaN fail; the NaN is the worst")
  t.errors(function() ref.check_rows_f64(y, out:sub(9), scale, 1e-4) end,
    "ref.check_rows_f64: y_ref is 24 bytes, expected y's length = 4 f64 values (32 bytes)", true)
  t.errors(function() ref.swiglu(f64(g), f64 { 1 }, f64(u), f64(au)) end, "ag is 8 bytes, expected g's length = 4", true)
end)

t.test("each CUDA kernel's first gpubench-compile line repeats moe_cuda.lua's defaults", function()
  local mc = require "gpubench.moe_cuda"
  for _, name in ipairs { "pairs", "fused", "grouped" } do
    local s = mc[name]
    local src = assert(io.open(s.file)):read("a")
    local entries, defs = src:match("^// gpubench%-compile: entry=(%S+) defines=(%S+)\n")
    t.truthy(entries and entries:find(s.entry, 1, true), s.file .. " names " .. s.entry)
    local listed = {}
    for k, v in defs:gmatch("(%w+)=(%d+)") do listed[k] = tonumber(v) end
    t.eq(listed, s.defines, s.file)
    t.eq(s.block[1], name == "grouped" and 32 * s.defines.GWARPS or 32 * s.defines.WARPS)
  end
  t.eq(mc.variant("grouped", { GWARPS = 2 }).rows_per_group, 32)
  t.errors(function() mc.variant("pairs", { GWARPS = 2 }) end, "moe_cuda.variant: pairs has no define GWARPS", true)
  local mv = require "gpubench.moe_vulkan"
  t.eq(mv.variant("grouped", { MOE_NR = 2 }).rows_per_group, 256 // 16 * 2)
  t.eq(mv.variant("grouped", { MOE_T = 32 }).rows_per_group, 256 // 32 * 4)
  t.errors(function() mv.variant("pairs", { MOE_T = 3 }) end, "MOE_T=3 does not divide 256", true)
end)

t.test("moe.spec: the kernel spec each variant's launches take (table, rule, a sweep's geometry)", function()
  local mc, mv = require "gpubench.moe_cuda", require "gpubench.moe_vulkan"
  local q3 = moe.shape("qwen3_30b_a3b", "gate_up")
  local cuda, vk = { backend = "cuda" }, { backend = "vulkan" }
  t.truthy(moe.spec(cuda, "batched", q3, 8) == mc.pairs and moe.spec(cuda, "per_token", q3, 8) == mc.pairs)
  t.truthy(moe.spec(cuda, "fused_gate_up", q3, 8) == mc.fused)
  t.truthy(moe.spec(cuda, "grouped", q3, 32) == mc.grouped_for(q3, 32), "the rule's spec")
  t.truthy(moe.spec(cuda, "grouped", q3, 8) == mc.grouped)
  -- one token: grouped runs batched's step, the pairs kernel (nothing to group), but not under a
  -- --grouped-geometry (the grouped kernel's own A/B)
  t.eq({ moe.kernel_of("grouped", 1), moe.kernel_of("grouped", 2), moe.kernel_of("batched", 1),
         moe.kernel_of("fused_gate_up", 1), moe.kernel_of("per_token", 1) }, { "pairs", "grouped", "pairs", "fused", "pairs" })
  t.truthy(moe.spec(cuda, "grouped", q3, 1) == moe.spec(cuda, "batched", q3, 1), "m = 1: the pairs kernel's spec")
  local v = mv.variant("grouped", { MOE_IDOT = 0, MOE_TC = 3 })
  t.eq(moe.kernel_of("grouped", 1, { grouped = v }), "grouped")
  t.truthy(moe.spec(vk, "grouped", q3, 1, { grouped = v }) == v, "m = 1 with a sweep's geometry: the grouped kernel")
  t.truthy(moe.spec(vk, "grouped", q3, 8, { grouped = v }) == v, "a sweep's geometry")
  t.truthy(moe.spec(vk, "batched", q3, 8, { grouped = v }) == moe.spec(vk, "batched", q3, 8), "the others' picks stay")
  -- Vulkan: the integer path where the device runs it (integer dot products, subgroups >= 8, the shared
  -- memory), else the float one; lane groups of 8 for every kernel from 32 pairs a step (qwen3: m = 4), 2 rows
  -- a lane group for grouped from 32 pairs and pairs from 128 (m = 16)
  local h200 = { backend = "vulkan", integer_dot_product = true, subgroup_size = 32, max_shared_bytes = 49152 }
  local function picks(dev, m)
    local out = {}
    for _, variant in ipairs { "batched", "per_token", "fused_gate_up", "grouped" } do
      local d = moe.spec(dev, variant, q3, m).defines
      out[#out + 1] = ("%s:%s/%d"):format(variant, tostring(d.MOE_IDOT), d.MOE_T)
    end
    return table.concat(out, " ")
  end
  t.eq(picks(h200, 1), "batched:1/32 per_token:1/32 fused_gate_up:1/32 grouped:1/32", "m = 1: grouped runs the pairs kernel")
  t.eq(picks(h200, 2), "batched:1/32 per_token:1/32 fused_gate_up:1/32 grouped:1/16")
  t.eq(picks(h200, 3), "batched:1/32 per_token:1/32 fused_gate_up:1/32 grouped:1/16", "24 pairs: no rule")
  t.eq(picks(h200, 4), "batched:1/8 per_token:1/8 fused_gate_up:1/8 grouped:1/8")
  local function rows(dev, m)
    local out = {}
    for _, variant in ipairs { "batched", "fused_gate_up", "grouped" } do
      out[#out + 1] = ("%s:%d"):format(variant, moe.spec(dev, variant, q3, m).defines.MOE_NR)
    end
    return table.concat(out, " ")
  end
  t.eq({ rows(h200, 1), rows(h200, 4), rows(h200, 15), rows(h200, 16) },
       { "batched:4 fused_gate_up:2 grouped:4", "batched:4 fused_gate_up:2 grouped:2",
         "batched:4 fused_gate_up:2 grouped:2", "batched:2 fused_gate_up:2 grouped:2" })
  t.eq(picks(vk, 2), "batched:0/32 per_token:0/32 fused_gate_up:0/32 grouped:0/16", "no integer dot products")
  local function with(k, v) local d = {} for a, b in pairs(h200) do d[a] = b end d[k] = v return d end
  t.eq(picks(with("subgroup_size", 4), 8), "batched:0/8 per_token:0/8 fused_gate_up:0/8 grouped:0/8")
  t.eq(picks(with("subgroup_size", nil), 2), "batched:0/32 per_token:0/32 fused_gate_up:0/32 grouped:0/16",
    "a device that does not report its subgroup size: the float path")
  -- moe.unmet: the one rule behind the picks and moe.launches' refusals
  local int = moe.spec(h200, "grouped", q3, 2)
  t.eq(moe.unmet(h200, int), nil)
  t.eq(moe.unmet(with("subgroup_size", nil), int),
    "subgroups of 8 or more lanes, and the device does not report its subgroup size")
  t.eq(moe.unmet(with("subgroup_size", 4), int), "subgroups of 8 or more lanes, the device has 4")
  t.eq(moe.unmet(vk, int), "integer dot products (shaderIntegerDotProduct), which the device lacks")
  t.eq(moe.unmet(with("max_shared_bytes", 8192), int),
    ("%d bytes of shared memory, the device has 8192 (fewer MOE_XB or MOE_TC)"):format(int.shared_bytes))
  t.eq(moe.unmet(vk, moe.spec(vk, "grouped", q3, 2)), nil, "the float path asks nothing")
  t.eq(picks(with("max_shared_bytes", 8192), 2), "batched:1/32 per_token:1/32 fused_gate_up:1/32 grouped:0/16",
    "grouped's four rows of x past 8 KiB, the pairs' and fused shaders' one within")
  t.eq({ moe.spec(h200, "grouped", q3, 8).x_rounding, moe.spec(vk, "grouped", q3, 8).x_rounding }, { 32, nil })
  t.truthy(moe.spec(h200, "batched", q3, 8) == moe.spec(h200, "per_token", q3, 12), "one spec per pick")
  t.truthy(moe.spec(h200, "grouped", q3, 2) == mv.grouped, "the table's own where no rule changes it")
end)

t.test("the launch builders of both backends: the kernels' parameter lists, strides u64 on CUDA, u32 on Vulkan", function()
  local sh = { n = 768, k = 2048, experts = 128, nb01 = 1152, nb02 = 884736, top_k = 8, outer = 2048, inner = 0 }
  local bufs = { w = "W", x = "X", ids = "I", y = "Y", up = "U" }
  local function args(l)
    local a = {}
    for j = 4, #l do a[#a + 1] = type(l[j]) == "userdata" and tostring(l[j]) or l[j] end
    return table.concat(a, " ")
  end
  local want = {
    cuda = {
      batched = "W X I Y gpu.u32(768) gpu.u32(2048) gpu.u32(128) gpu.u64(884736) gpu.u32(8) gpu.u32(0) gpu.u32(2048) gpu.u32(0)",
      fused_gate_up = "W U X I Y gpu.u32(768) gpu.u32(2048) gpu.u32(128) gpu.u64(884736) gpu.u32(8) gpu.u32(2048) gpu.u32(0)",
      grouped = "W X I Y gpu.u32(768) gpu.u32(2048) gpu.u32(128) gpu.u32(1152) gpu.u64(884736) gpu.u32(8) gpu.u32(24) gpu.u32(2048) gpu.u32(0)",
    },
    vulkan = {
      batched = "W X I Y gpu.u32(768) gpu.u32(2048) gpu.u32(128) gpu.u32(884736) gpu.u32(8) gpu.u32(0) gpu.u32(2048) gpu.u32(0)",
      fused_gate_up = "W U X I Y gpu.u32(768) gpu.u32(2048) gpu.u32(128) gpu.u32(884736) gpu.u32(8) gpu.u32(2048) gpu.u32(0)",
      grouped = "W X I Y gpu.u32(768) gpu.u32(2048) gpu.u32(128) gpu.u32(884736) gpu.u32(8) gpu.u32(24) gpu.u32(2048) gpu.u32(0)",
    },
  }
  for b, w in pairs(want) do
    local M = require("gpubench.moe_" .. b)
    local kof = function(s) return s end
    for v, text in pairs(w) do
      local ls = M.launches[v](kof, sh, 3, bufs)
      t.eq(#ls, 1, b .. " " .. v)
      t.eq(args(ls[1]), text, b .. " " .. v)
    end
    local per = M.launches.per_token(kof, sh, 3, bufs)
    t.eq(#per, 3, b .. " per_token: a dispatch per token")
    t.eq(tostring(per[3][13]), "gpu.u32(16)", b .. " per_token: token 2 starts at pair 16")
    t.eq(per[3][2][2], 8, b .. " per_token: top_k pairs per dispatch")
    local g = M.launches.grouped(kof, sh, 64, bufs)[1]
    t.eq(g[2][2], 128, b .. " grouped: one block row per expert at most")
  end
end)

t.run()
