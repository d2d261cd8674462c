-- gpubench.gemv_bench.prepare: a checked, timeable GEMV cell (on lavapipe in
-- CI: small shapes). The cell is verified against the FP64 oracle before it
-- is returned; rotation gives every call its own weight copy; round_bytes
-- sizes the weight buffers for tools/placement_probe.lua.

local t = dofile("tests/lua/harness.lua")
local gemv = require "gpubench.gemv"
local gemv_bench = require "gpubench.gemv_bench"
local bench = require "gpubench.bench"

local releasing = dofile("tests/lua/gemv_check.lua")(t).releasing -- frees the compiled kernels

local function weight_buffer(cell, i) return cell.launches[i][4] end -- kern, grid, block, w, x, y, m, k

t.test("prepare: one verified cell, its buffers freed by close", function()
  local dev = t.device("vulkan")
  releasing(dev, function()
    local cell <close> = gemv_bench.prepare(dev, "q4_0", 8, 64)
    t.eq(cell.check.ok, true)
    t.eq(cell.copies, 1)
    t.eq(#cell.launches, 1)
    t.eq(weight_buffer(cell, 1).size, gemv.buffer_bytes("q4_0", 8, 64))
    t.eq(cell.working_set, gemv.buffer_bytes("q4_0", 8, 64) + 4 * 64 + 4 * 8)
    cell:close()
    t.eq(#cell.buffers, 0, "close frees every buffer")
    cell:close() -- twice is harmless
  end)
end)

t.test("round_bytes: weight buffers rounded up, the cell still verified", function()
  local dev = t.device("vulkan")
  releasing(dev, function()
    local cell <close> = gemv_bench.prepare(dev, "q8_0", 5, 96, { round_bytes = 4096 })
    t.eq(cell.check.ok, true)
    t.eq(weight_buffer(cell, 1).size, 4096)
    local big <close> = gemv_bench.prepare(dev, "f16", 40, 128, { round_bytes = 4096 })
    t.eq(weight_buffer(big, 1).size, 12288) -- 10240 + 16 bytes rounded up
  end)
end)

t.test("rotate: one weight copy per launch, totalling >= 4 x the given L2", function()
  local dev = t.device("vulkan")
  releasing(dev, function()
    local bytes = gemv.buffer_bytes("q4_k", 4, 256)
    local cell <close> = gemv_bench.prepare(dev, "q4_k", 4, 256, { rotate = true, l2_bytes = 2 * bytes })
    t.truthy(cell.copies * bytes >= 4 * 2 * bytes, "copies cover 4 x L2")
    t.eq(#cell.launches, cell.copies)
    local seen = {}
    for i = 1, cell.copies do
      local w = weight_buffer(cell, i)
      t.truthy(not seen[w], "launch " .. i .. " has its own weight copy")
      seen[w] = true
    end
  end)
end)


-- A stand-in for dev that forwards every method and counts the calls by name.
local function counting(dev)
  local calls = setmetatable({}, { __index = function() return 0 end })
  local proxy = setmetatable({}, { __index = function(_, name)
    local v = dev[name]
    if type(v) ~= "function" then return v end
    return function(_, ...)
      calls[name] = calls[name] + 1
      return v(dev, ...)
    end
  end })
  return proxy, calls
end

-- The policy itself (flush, settle, runners, repeats, arming) is tested on a
-- synthetic clock in test_bench.lua; here, that a GEMV cell times through it.
t.test("time: a GEMV cell times through gpubench.bench (one flush, every runner, then armed)", function()
  local dev = t.device("vulkan")
  releasing(dev, function()
    local cell <close> = gemv_bench.prepare(dev, "q4_0", 8, 64)
    local proxy, calls = counting(dev)
    cell.dev = proxy
    local ok, err = pcall(function()
      local d, n = cell:time(4, { settle_ms = 1 })
      t.eq(calls.flush_l2, 1, "one flush per timing")
      t.eq(n, 4)
      t.truthy(d.ms == nil or d.ms > 0, "a positive time or noise")
      t.eq(#d.runners, bench.policy.runners, "every runner's median")
      t.eq(calls.batch, 2 * bench.policy.runners, "n and 2n per runner")
      cell:arm(4)
      cell:time(4, { settle_ms = 1 })
      t.eq(calls.batch, 4 * bench.policy.runners, "the armed batches, built once, served the timing")
      local row = gemv_bench.row(cell, d, n, { read_gbs = 10, l2_bytes = 0 })
      t.eq({ row.kernel, row.m, row.k, row.fits, row.status }, { "q4_0", 8, 64, "?", d.ms and "ok" or "noise" })
      t.eq(row.pct_peak, nil, "no percentage of an unknown peak")
    end)
    cell.dev = dev
    if not ok then error(err, 0) end
  end)
end)

t.test("prepare_or_skip: weights larger than the device's largest buffer are skipped, not allocated", function()
  local fake = { max_buffer_bytes = 1024 }
  local p = gemv_bench.prepare_or_skip(fake, "f32", 64, 64)
  t.truthy(p.skip:find("exceed the device's largest buffer", 1, true), p.skip)
  local row = gemv_bench.measure(p, 10)
  t.eq({ row.kernel, row.status, row.note }, { "f32", "skipped", p.skip })
  t.eq(row.ms, nil)
end)

t.test("variant_notes: a note for every cell whose shape runs another variant", function()
  local notes = gemv_bench.variant_notes("cuda", {
    { label = "q6_k big", fmt = "q6_k", m = 64, k = 5120 },
    { label = "q6_k small", fmt = "q6_k", m = 64, k = 1024 },
  })
  t.eq(#notes, 1)
  t.truthy(notes[1]:find("q6_k big: the kernel with BULK=1", 1, true), notes[1])
end)

t.test("variant_notes: a cell whose kernel the device's rule picks gets device_notes' note, not the T-row rule's", function()
  local nv = { backend = "vulkan", name = "nv", integer_dot_product = true, subgroup_size = 32, max_shared_bytes = 49152,
               sm_count = 132, cooperative_matrix = "nv",
               cooperative_matrix_shapes = { { m = 16, n = 8, k = 16, a = "f16", b = "f16", c = "f32", d = "f32" } } }
  local cells = { { label = "f16", fmt = "f16", m = 14336, k = 5120 }, { label = "f32", fmt = "f32", m = 14336, k = 5120 } }
  local token_note = "* %s at T=8: the kernel with GEMV_NR=8,GEMV_T=16, the variant that measured faster at this T (gemv_vulkan.token_changes)"
  t.eq(gemv_bench.variant_notes("vulkan", cells, 8), { token_note:format("f16"), token_note:format("f32") }, "no device")
  t.eq(gemv_bench.variant_notes("vulkan", cells, 8, nv), {}, "f16 and f32 run the device's kernels")
  t.eq(gemv_bench.variant_notes("vulkan", cells, 5, nv),
    { (token_note:gsub("T=8", "T=5")):format("f32") }, "T = 5: f32 the T-row rule's")
  local d = gemv_bench.device_notes(nv, cells, 8)
  t.eq(#d, 2)
  t.truthy(d[1]:find("* f16: the kernel with COOP_FMT=6,COOP_KS=4,COOP_RT=4,COOP_U=2,COOP_WR=2,GEMV_COOP=1,GEMV_TOKENS=8, "
    .. "which this device's features select (gemv_vulkan.for_device), x as f16 hi + lo (about 22 bits); two launches a call",
    1, true), d[1])
  t.truthy(d[2]:find("* f32: the kernel with COOP_FMT=8,COOP_KS=4,COOP_RT=2,COOP_U=1,COOP_WR=1,GEMV_COOP=1,GEMV_TOKENS=8, "
    .. "which this device's features select (gemv_vulkan.for_device), x and W each as f16 hi + lo (about 22 bits; "
    .. "|w| < 256); two launches a call", 1, true), d[2])
end)

t.test("variant_notes at T > 1: the T-row rule's kernel named once per format", function()
  local cells = {
    { label = "q4_k a", fmt = "q4_k", m = 64, k = 5120 },
    { label = "q4_k b", fmt = "q4_k", m = 128, k = 5120 },
    { label = "q5_k a", fmt = "q5_k", m = 64, k = 5120 },
  }
  local notes = gemv_bench.variant_notes("cuda", cells, 8)
  local function note(fmt, T, defines)
    return "* " .. fmt .. " at T=" .. T .. ": the kernel with " .. defines .. ", the variant that measured faster "
      .. "at this T (gemv_cuda.token_changes); two launches a call, x quantized in the first, both timed"
  end
  t.eq(notes, { note("q4_k", 8, "I8=1,KSPLIT=4,PREFETCH=0,WARPS=7,XPRE=2"), note("q5_k", 8, "I8=1,I8_GUARD=0,KSPLIT=2,PREFETCH=0,STAGED=2,WARPS=2,XPRE=2") },
    "q4_k's two cells: one note")
  t.eq(gemv_bench.variant_notes("cuda", { { label = "q6_k", fmt = "q6_k", m = 64, k = 5120 } }, 8),
    { note("q6_k", 8, "I8=1,KSPLIT=2,PREFETCH=1,WARPS=4,XPRE=2") })
  t.eq(gemv_bench.variant_notes("cuda", { { label = "f32", fmt = "f32", m = 64, k = 5120 } }, 8),
    { "* f32 at T=8: the kernel with ROWS=2, the variant that measured faster at this T (gemv_cuda.token_changes)" },
    "one launch: no second clause")
  t.eq(gemv_bench.variant_notes("cuda", { cells[1] }, 2), {}, "below the rule's T (q4_k's from 3)")
  t.eq(gemv_bench.variant_notes("vulkan", cells, 8), {}, "Vulkan has no T-row rule")
  local big = { { label = "q6_k big", fmt = "q6_k", m = 64, k = 5120 } }
  local q6 = gemv_bench.variant_notes("cuda", big, 5)
  t.eq(#q6, 1, "the shape rule still applies at T > 1 (gemv.spec adds its changes)")
  t.truthy(q6[1]:find("q6_k big: the kernel with BULK=1", 1, true), q6[1])
  for _, T in ipairs { 6, 8 } do -- q6_k's int8 rules
    local q6t = gemv_bench.variant_notes("cuda", big, T)
    t.eq(#q6t, 1, "from T = 6 the int8 kernel, which leaves the shape's BULK out: one note, the T rule's")
    t.truthy(q6t[1]:find(("q6_k at T=%d: the kernel with I8=1"):format(T), 1, true), q6t[1])
  end
end)

t.test("x_rounding_errors: per block of B values amax / 32767 * (1/2 + 2^-6), a short last block, zeros", function()
  local x = string.pack("<ffffffffff", 1, -3, 0.5, 2, 0, 0, 0, 0, -0.25, 0.125)
  local e = { string.unpack("<ffffffffff", gemv_bench.x_rounding_errors(x, 4)) }
  local function eb(amax) return (string.unpack("<f", string.pack("<f", amax / 32767 * (0.5 + 2.0 ^ -6)))) end
  for i = 1, 4 do t.eq(e[i], eb(3), ("block 1, value %d"):format(i)) end
  for i = 5, 8 do t.eq(e[i], 0.0, ("block 2 (zeros), value %d"):format(i)) end
  t.eq({ e[9], e[10] }, { eb(0.25), eb(0.25) }, "the short last block")
  t.eq(#gemv_bench.x_rounding_errors(x, 4), #x)
end)

t.test("check: every token row against the oracle; the x and y sizes must fit the tokens", function()
  local ref = require "gpubench.ref"
  local m, k = 6, 64
  local w = ref.random_blocks("q8_0", m * k // 32, 5)
  local xs = ref.random_f32(2 * k, 6)
  local parts = {}
  for tk = 0, 1 do
    local y = ref.gemv("q8_0", w, m, k, xs:sub(4 * k * tk + 1, 4 * k * (tk + 1)))
    for _, v in ipairs(y) do parts[#parts + 1] = string.pack("<f", v) end
  end
  local ys = table.concat(parts)
  local c = gemv_bench.check("q8_0", w, m, k, xs, ys, 2)
  t.eq({ c.ok, c.failures }, { true, 0 }, "the oracle's own y (rounded to f32) passes")
  local bad = ys:sub(1, 4 * (m + 2)) .. string.pack("<f", 1e6) .. ys:sub(4 * (m + 3) + 1)
  local c2 = gemv_bench.check("q8_0", w, m, k, xs, bad, 2)
  t.eq({ c2.ok, c2.failures, c2.worst_token, c2.worst_row }, { false, 1, 2, 3 }, "token 2, row 3 is named")
  t.errors(function() gemv_bench.check("q8_0", w, m, k, xs, ys:sub(5), 2) end,
    "gemv_bench.check: 2 tokens of m=6 k=64 need 512 bytes of x and 48 of y, got 512 and 44", true)
  -- refs: the first check keeps each token's oracle, a later one uses it
  local refs = {}
  t.truthy(gemv_bench.check("q8_0", w, m, k, xs, ys, 2, refs).ok)
  t.eq(#refs, 2, "both tokens' oracles kept")
  t.eq(#refs[1][1], m)
  for i = 1, m do refs[2][1][i] = refs[2][1][i] + 1e3 end -- a kept oracle that disagrees with y
  local c3 = gemv_bench.check("q8_0", w, m, k, xs, ys, 2, refs)
  t.eq({ c3.ok, c3.failures, c3.worst_token }, { false, m, 2 }, "the kept oracle is the one compared against")
end)

t.run()
