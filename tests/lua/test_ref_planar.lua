-- tests/lua/test_ref_planar.lua: the planar formats and the Linear reference
-- through gpubench.ref (bindings/l_ref.c). The bit-level decoding is pinned by
-- tests/c/test_ref_planar.c; here the binding's argument checks, the
-- generator's properties and ref.linear against a sum computed in Lua from
-- ref.planar_dequantize, on ragged shapes.
local t = dofile("tests/lua/harness.lua")
local ref = require "gpubench.ref"

local QTYPES = { "q4", "q5", "q6", "w8", "nvfp4", "bf16" }

local function floats(s, fmt, size)
  local v, at = {}, 1
  for i = 1, #s // size do v[i], at = string.unpack(fmt, s, at) end
  return v
end
local function f32s(s) return floats(s, "<f", 4) end
local function f64s(s) return floats(s, "<d", 8) end
-- bf16 bits widen to f32 by a 16-bit shift.
local function bf16s(s)
  local v = floats(s, "<I2", 2)
  for i = 1, #v do v[i] = string.unpack("<f", string.pack("<I4", v[i] << 16)) end
  return v
end
-- Round a number to bf16 bits, nearest even, through f32 (as an fp32 kernel would).
local function to_bf16(x)
  local u = string.unpack("<I4", string.pack("<f", x))
  return ((u + 0x7fff + ((u >> 16) & 1)) >> 16) & 0xffff
end
local function pack_bf16(list)
  local parts = {}
  for i, x in ipairs(list) do parts[i] = string.pack("<I2", to_bf16(x)) end
  return table.concat(parts)
end

t.test("planar formats table, names, k_pad and weight bytes", function()
  t.eq(ref.planar_names, { "Q4G64_F16S", "Q5G64_F16S", "Q6G64_F16S", "W8G32_F16S", "NVFP4", "BF16" })
  t.eq(ref.planar_formats.Q4G64_F16S,
    { name = "Q4G64_F16S", qtype = "q4", group = 64, k_pad = 128, group_bytes = 34, bits = 4.25, zero_code = 8 })
  t.eq(ref.planar_formats.NVFP4,
    { name = "NVFP4", qtype = "nvfp4", group = 16, k_pad = 128, group_bytes = 9, bits = 4.5, zero_code = 0 })
  t.eq(ref.planar_formats.BF16,
    { name = "BF16", qtype = "bf16", group = 1, k_pad = 1, group_bytes = 2, bits = 16.0, zero_code = 0 })
  -- The table name and the qtype name the same format.
  for i, q in ipairs(QTYPES) do
    local name = ref.planar_names[i]
    t.eq(ref.planar_formats[name].qtype, q)
    t.eq(ref.planar_weight_bytes(q, 37, 200), ref.planar_weight_bytes(name, 37, 200), q)
    t.eq(ref.planar_weight_bytes(ref.planar_formats[name], 3, 5), ref.planar_weight_bytes(q, 3, 5), q)
  end
  t.eq(ref.k_pad("q4", 200), 256)
  t.eq(ref.k_pad("Q6G64_F16S", 128), 128)
  t.eq(ref.k_pad("nvfp4", 1), 128)
  t.eq(ref.k_pad("bf16", 200), 200)
  -- docs/FORMATS.md: Q4G64_F16S at 4096 x 5120 is 11 141 120 bytes.
  t.eq(ref.planar_weight_bytes("q4", 4096, 5120), 11141120)
  -- N=37, K=200 (K_pad 256): groups per row times bytes per group, times N.
  local want = { q4 = 4 * 34, q5 = 4 * 42, q6 = 4 * 50, w8 = 8 * 34, nvfp4 = 16 * 9, bf16 = 400 }
  for _, q in ipairs(QTYPES) do t.eq(ref.planar_weight_bytes(q, 37, 200), 37 * want[q], q) end
  -- The planes back to back, each starting 16-byte aligned.
  t.eq(ref.planar_planes("q5", 37, 200), {
    { name = "codes", offset = 0, row_bytes = 128, bytes = 37 * 128 },
    { name = "high", offset = 37 * 128, row_bytes = 32, bytes = 37 * 32 },
    { name = "scales", offset = 37 * 160, row_bytes = 8, bytes = 37 * 8 },
  })
  t.eq(ref.planar_planes("bf16", 2, 3), { { name = "values", offset = 0, row_bytes = 6, bytes = 12 } })
end)

t.test("argument errors name the function, the argument and the rule", function()
  t.errors(function() ref.planar_random("q3", 4, 128, 1) end,
    "planar format lookup failed: UNKNOWN_FORMAT (no planar format named 'q3'; known: Q4G64_F16S (q4), "
      .. "Q5G64_F16S (q5), Q6G64_F16S (q6), W8G32_F16S (w8), NVFP4 (nvfp4), BF16 (bf16))", true)
  t.errors(function() ref.planar_random("q4_0", 4, 128, 1) end, "no planar format named 'q4_0'", true)
  t.errors(function() ref.planar_random(nil, 4, 128, 1) end,
    "ref.planar_random: fmt must be a planar format name (a string), got nil", true)
  t.errors(function() ref.planar_random("q4", 0, 128, 1) end, "ref.planar_random: n must be a positive integer, got 0", true)
  t.errors(function() ref.planar_random("q4", 4, 1.5, 1) end, "ref.planar_random: k must be a positive integer, got 1.5", true)
  t.errors(function() ref.planar_random("q4", 4, 128, "x") end, "ref.planar_random: seed must be an integer, got string", true)
  t.errors(function() ref.k_pad("q4", 0) end, "ref.k_pad: k must be a positive integer, got 0", true)
  t.errors(function() ref.planar_weight_bytes("w8", -1, 5) end,
    "ref.planar_weight_bytes: n must be a positive integer, got -1", true)
  t.errors(function() ref.planar_weight_bytes("q6", 1 << 62, 1024) end, "matrix_bytes failed: OVERFLOW", true)

  local w = ref.planar_random("q4", 4, 128, 1)
  t.eq(#w, 272)
  t.errors(function() ref.planar_dequantize("q4", w:sub(2), 4, 128) end,
    "ref.planar_dequantize: weights are 271 bytes, but Q4G64_F16S n=4 k=128 takes 272 bytes", true)
  t.errors(function() ref.planar_dequantize("q4", w .. "\0", 4, 128) end,
    "ref.planar_dequantize: weights are 273 bytes, but Q4G64_F16S n=4 k=128 takes 272 bytes", true)
  t.errors(function() ref.planar_dequantize("q4", 272, 4, 128) end,
    "ref.planar_dequantize: weights must be a string of bytes, got number", true)
  t.errors(function() ref.planar_dequantize("nvfp4", ref.planar_random("nvfp4", 4, 128, 1), 4, 128, "x") end,
    "ref.planar_dequantize: gscale must be a finite number, got string", true)
  t.errors(function() ref.planar_dequantize("nvfp4", ref.planar_random("nvfp4", 4, 128, 1), 4, 128, math.huge) end,
    "ref.planar_dequantize: gscale must be a finite number (an fp32), got inf", true)
  t.errors(function() ref.planar_dequantize("nvfp4", ref.planar_random("nvfp4", 4, 128, 1), 4, 128, 1e39) end,
    "ref.planar_dequantize: gscale must be a finite number (an fp32), got 1e+39", true)

  local x = ref.random_bf16(200, 2)
  local w2 = ref.planar_random("q5", 2, 200, 1)
  t.errors(function() ref.linear("q5", w2, 2, 200, x:sub(3), 1) end,
    "ref.linear: x is 398 bytes, expected t=1 x k=200 = 200 bf16 values (400 bytes)", true)
  t.errors(function() ref.linear("q5", w2, 2, 200, x, 2) end,
    "ref.linear: x is 400 bytes, expected t=2 x k=200 = 400 bf16 values (800 bytes)", true)
  t.errors(function() ref.linear("q5", w2, 2, 200, x, 0) end, "ref.linear: t must be a positive integer, got 0", true)
  t.errors(function() ref.linear("q5", w2, 2, 200, { 1, 2 }, 1) end,
    "ref.linear: x must be a string of bytes, got table", true)
  t.errors(function() ref.linear("q5", w2, 3, 200, x, 1) end,
    "ref.linear: weights are 336 bytes, but Q5G64_F16S n=3 k=200 takes 504 bytes", true)
  t.errors(function() ref.linear("q5", w2, 2, 200, x, 1, 0 / 0) end, "ref.linear: gscale must be a finite number", true)

  local r, s = ref.linear("q5", w2, 2, 200, x, 1)
  local y = string.pack("<I2I2", 0, 0)
  t.errors(function() ref.check_linear(y, r:sub(9), s, 1, 2) end,
    "ref.check_linear: r is 8 bytes, expected t=1 x n=2 = 2 f64 values (16 bytes)", true)
  t.errors(function() ref.check_linear(y, r, s .. s, 1, 2) end,
    "ref.check_linear: s is 32 bytes, expected t=1 x n=2 = 2 f64 values (16 bytes)", true)
  t.errors(function() ref.check_linear(y .. y, r, s, 1, 2) end,
    "ref.check_linear: y is 8 bytes, expected t=1 x n=2 = 2 bf16 values (4 bytes)", true)
  t.errors(function() ref.check_linear(y, r, s, 1, 0) end, "ref.check_linear: n must be a positive integer, got 0", true)
  t.errors(function() ref.check_linear(y, r, s, 1, 2, "fp8") end,
    'ref.check_linear: weights must be "exact" or "bf16", got fp8', true)
  t.errors(function() ref.check_linear(y, r, s, 1, 2, 2) end,
    'ref.check_linear: weights must be "exact" or "bf16", got number', true)
  t.errors(function() ref.random_bf16(0, 1) end, "ref.random_bf16: n must be a positive integer, got 0", true)
  t.errors(function() ref.random_bf16(4, 1, "gauss") end,
    "ref.random_bf16: dist must be 'normal' or 'uniform', got 'gauss'", true)
end)

t.test("planar_random: sizes, determinism, valid scales", function()
  for _, q in ipairs(QTYPES) do
    local a = ref.planar_random(q, 37, 200, 5)
    t.eq(#a, ref.planar_weight_bytes(q, 37, 200), q)
    t.truthy(a == ref.planar_random(q, 37, 200, 5), q .. ": same seed, same bytes")
    t.truthy(a ~= ref.planar_random(q, 37, 200, 6), q .. ": another seed, other bytes")
    -- Every decoded weight is finite: no NaN or infinite scale, whatever the seed.
    for seed = 1, 3 do
      for i, v in ipairs(f32s(ref.planar_dequantize(q, ref.planar_random(q, 37, 200, seed), 37, 200, 0.5))) do
        if v ~= v or v == math.huge or v == -math.huge then
          error(("%s seed %d: weight %d is %s"):format(q, seed, i, tostring(v)))
        end
      end
    end
  end
  -- The scale planes read directly: NVFP4 E4M3 bytes never negative or 0x7F (NaN);
  -- fp16 scales of the _F16S formats in [2^-12, 2^-3), or +0 in a group of padding only.
  local planes = ref.planar_planes("nvfp4", 37, 200)
  local w = ref.planar_random("nvfp4", 37, 200, 9)
  local sc = w:sub(planes[2].offset + 1, planes[2].offset + planes[2].bytes)
  local top = 0
  for i = 1, #sc do
    local b = sc:byte(i)
    t.truthy(b < 0x7F, ("nvfp4 scale byte %d is 0x%02x"):format(i, b))
    if b == 0x7E then top = top + 1 end
  end
  for _, q in ipairs { "Q4G64_F16S", "Q5G64_F16S", "Q6G64_F16S", "W8G32_F16S" } do
    local p = ref.planar_planes(q, 37, 200)
    local ws = ref.planar_random(q, 37, 200, 9)
    local last = p[#p]
    local per_row, group = last.row_bytes // 2, ref.planar_formats[q].group
    for j = 0, 37 * per_row - 1 do
      local m = string.unpack("<I2", ws, last.offset + 2 * j + 1) & 0x7fff
      local padding_only = (j % per_row) * group >= 200
      if padding_only then
        t.eq(m, 0, q .. " padding scale")
      else
        t.truthy(m >= 0x0C00 and m < 0x3000, ("%s scale %d bits %04x"):format(q, j, m))
      end
    end
  end
end)

t.test("planar_random: K = 200 is K = 256 with the padding overwritten", function()
  -- Every position is drawn, padding included, so the data columns do not depend on K
  -- within one K_pad: a kernel test can shrink K without changing the weights it keeps.
  for _, q in ipairs { "q4", "q5", "q6", "w8", "nvfp4" } do
    local a = f32s(ref.planar_dequantize(q, ref.planar_random(q, 3, 200, 4), 3, 200, 2.0))
    local b = f32s(ref.planar_dequantize(q, ref.planar_random(q, 3, 256, 4), 3, 256, 2.0))
    local differ = 0
    for n = 0, 2 do
      for i = 1, 200 do
        if a[n * 200 + i] ~= b[n * 256 + i] then differ = differ + 1 end
      end
    end
    t.eq(differ, 0, q)
    t.eq(#a, 600, q)
  end
end)

t.test("random_bf16: sizes, determinism, distributions", function()
  local x = ref.random_bf16(64, 3)
  t.eq(#x, 128)
  t.truthy(x == ref.random_bf16(64, 3, "normal"), "normal is the default")
  t.truthy(x ~= ref.random_bf16(64, 4), "another seed")
  local big = 0
  for _, v in ipairs(bf16s(x)) do
    t.truthy(v == v and math.abs(v) < 8, "a normal draw: " .. v)
    if math.abs(v) > 1 then big = big + 1 end
  end
  t.truthy(big > 0 and big < 40, "64 normal draws with " .. big .. " beyond 1")
  for _, v in ipairs(bf16s(ref.random_bf16(64, 3, "uniform"))) do
    t.truthy(v >= -1 and v < 1, "uniform value in [-1, 1): " .. v)
  end
end)

-- r and s computed here from the dequantized weights (products of an f32 and a bf16
-- are exact in double; the plain sum differs from the compensated one by a few ulps).
local function lua_linear(wf, xf, n, k, tt)
  local r, s = {}, {}
  for ti = 0, tt - 1 do
    for ni = 0, n - 1 do
      local sum, sq = 0.0, 0.0
      for j = 1, k do
        local p = wf[ni * k + j] * xf[ti * k + j]
        sum, sq = sum + p, sq + p * p
      end
      r[ti * n + ni + 1], s[ti * n + ni + 1] = sum, math.sqrt(sq)
    end
  end
  return r, s
end

t.test("linear against a Lua sum over planar_dequantize (N=37, K=200, T=1, 3, 17)", function()
  local n, k = 37, 200
  for fi, q in ipairs(QTYPES) do
    local w = ref.planar_random(q, n, k, 100 + fi)
    local g = q == "nvfp4" and 0.75 or 1.0
    local wf = f32s(ref.planar_dequantize(q, w, n, k, g))
    for _, tt in ipairs { 1, 3, 17 } do
      local x = ref.random_bf16(tt * k, 200 + tt)
      local r, s = ref.linear(q, w, n, k, x, tt, g)
      t.eq(#r, tt * n * 8)
      t.eq(#s, tt * n * 8)
      local rv, sv = f64s(r), f64s(s)
      local lr, ls = lua_linear(wf, bf16s(x), n, k, tt)
      for i = 1, tt * n do
        -- A plain double sum of K terms is within K * 2^-53 * sum|p| <= 1e-12 * s of the exact one.
        t.near(rv[i], lr[i], 1e-12 * ls[i], ("%s T=%d output %d: r"):format(q, tt, i))
        t.near(sv[i], ls[i], 1e-12 * ls[i], ("%s T=%d output %d: s"):format(q, tt, i))
        t.truthy(sv[i] > 0, ("%s T=%d output %d: s is 0"):format(q, tt, i))
      end
    end
    -- The tensor scale is NVFP4's alone.
    if q ~= "nvfp4" then
      local x = ref.random_bf16(k, 1)
      t.truthy(ref.linear(q, w, n, k, x, 1, 3.0) == ref.linear(q, w, n, k, x, 1), q .. " ignores gscale")
    else
      local x = ref.random_bf16(k, 1)
      local r1, r2 = f64s(ref.linear(q, w, n, k, x, 1, 1.0)), f64s(ref.linear(q, w, n, k, x, 1, 2.0))
      for i = 1, n do t.near(r2[i], 2 * r1[i], 1e-12 * math.abs(r1[i]) + 1e-300, "nvfp4 gscale doubles r") end
    end
  end
end)

t.test("check_linear: bf16(r) passes, injected errors are counted exactly", function()
  local n, k, tt = 37, 200, 3
  local w = ref.planar_random("q6", n, k, 8)
  local r, s = ref.linear("q6", w, n, k, ref.random_bf16(tt * k, 9), tt)
  local rv, sv = f64s(r), f64s(s)
  local y = {}
  for i = 1, tt * n do y[i] = rv[i] end
  local c = ref.check_linear(pack_bf16(y), r, s, tt, n)
  t.eq({ c.ok, c.failures, c.first }, { true, 0, nil })
  t.truthy(c.worst <= 0.5, "bf16 rounding of r uses at most half the bound: " .. c.worst)
  -- Three bounds off at (t=1, n=4) and (t=2, n=36) (0-based, as in y[t*N + n]);
  -- half a bound off at (t=0, n=0) still passes.
  local function bound(i) return 2 ^ -8 * math.abs(rv[i]) + 2 ^ -7 * sv[i] end
  local a, b = 1 * n + 5, 2 * n + 37
  y[a] = rv[a] + 3 * bound(a)
  y[b] = rv[b] - 3 * bound(b)
  y[1] = rv[1] - 0.5 * bound(1)
  local yb = pack_bf16(y)
  c = ref.check_linear(yb, r, s, tt, n)
  t.eq({ c.ok, c.failures, c.first.t, c.first.n }, { false, 2, 1, 4 })
  t.eq(c.first.ref, rv[a])
  t.eq(c.first.y, bf16s(yb)[a])
  t.near(c.first.bound, bound(a), 1e-15 * bound(a))
  t.truthy(c.worst > 2.5 and c.worst < 3.5, "worst ratio " .. c.worst)
  t.truthy((c.worst_at.t == 1 and c.worst_at.n == 4) or (c.worst_at.t == 2 and c.worst_at.n == 36),
    ("worst at (%d, %d)"):format(c.worst_at.t, c.worst_at.n))
  -- Weights rounded to bf16 (the vendor's): the s term is 2^-6 s, so an error halfway between
  -- the two bounds passes it (at an output with |r| < s, where y's own bf16 rounding, at most
  -- 2^-9 |y|, stays inside the gap of 2^-8 s) and 3 of the wider bound still fails.
  local function wide(i) return 2 ^ -8 * math.abs(rv[i]) + 2 ^ -6 * sv[i] end
  y[1], y[a] = rv[1], rv[a]
  a = nil
  for i = 1, n do if math.abs(rv[i]) < sv[i] then a = i break end end
  t.truthy(a, "an output with |r| < s in the first row")
  y[a] = rv[a] + (bound(a) + wide(a)) / 2
  y[b] = rv[b] - 3 * wide(b)
  c = ref.check_linear(pack_bf16(y), r, s, tt, n, "bf16")
  t.eq({ c.ok, c.failures, c.first.t, c.first.n }, { false, 1, 2, 36 })
  t.near(c.first.bound, wide(b), 1e-15 * wide(b))
  t.truthy(c.worst > 2.5 and c.worst < 3.5, "worst ratio " .. c.worst)
  t.eq(ref.check_linear(pack_bf16(y), r, s, tt, n, "exact").failures, 2)
  -- A NaN y fails with an infinite ratio.
  c = ref.check_linear(string.pack("<I2", 0x7fc0) .. yb:sub(3), r, s, tt, n)
  t.eq({ c.failures, c.worst, c.worst_at, c.first.t, c.first.n }, { 3, math.huge, { t = 0, n = 0 }, 0, 0 })
end)

t.run()
