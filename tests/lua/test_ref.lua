-- tests/lua/test_ref.lua: the gpubench.ref module's API and its error messages.
-- The bit-level decoding of every format is pinned by tests/c/test_ref_dequant.c;
-- here each function is exercised through Lua with values worked out by hand.
local t = dofile("tests/lua/harness.lua")
local ref = require "gpubench.ref"

-- Small helpers for hand-written test data (a few values, not bulk work).
local function f32s(...) return string.pack("<" .. ("f"):rep(select("#", ...)), ...) end
local function floats(s)
  local v = table.pack(string.unpack("<" .. ("f"):rep(#s // 4), s))
  v[v.n], v.n = nil, nil -- drop unpack's trailing position
  return v
end

t.test("formats table and names", function()
  t.eq(ref.format_names, { "f32", "f16", "bf16", "q4_0", "q8_0", "q4_k", "q5_k", "q6_k" })
  t.eq(ref.formats.q4_k, { name = "q4_k", qk = 256, block_bytes = 144, bits = 4.5, layout = "blocks" })
  t.eq(ref.formats.q4_0, { name = "q4_0", qk = 32, block_bytes = 18, bits = 4.5, layout = "blocks" })
  t.eq(ref.formats.q6_k.bits, 6.5625)
  t.eq(ref.formats.q5_k.block_bytes, 176)
  t.eq(ref.formats.q8_0.bits, 8.5)
  t.eq(ref.formats.bf16.bits, 16.0)
  local n = 0
  for name, f in pairs(ref.formats) do
    n = n + 1
    t.eq(f.name, name)
  end
  t.eq(n, #ref.format_names)
end)

t.test("row_bytes and its errors", function()
  t.eq(ref.row_bytes("q4_k", 1024), 576)
  t.eq(ref.row_bytes(ref.formats.q6_k, 2816), 2310) -- a format table works as well as a name
  t.eq(ref.row_bytes("f32", 3), 12)
  t.eq(ref.row_bytes("q8_0", 1024), 1088)
  local msg = t.errors(function() ref.row_bytes("q4_k", 100) end, "BAD_K")
  t.truthy(msg:find("q4_k", 1, true) and msg:find("k=100", 1, true) and msg:find("qk=256", 1, true), msg)
  t.errors(function() ref.row_bytes("q9", 32) end, "no format named 'q9'; known: f32, f16", true)
  t.errors(function() ref.row_bytes("q4_0", 0) end, "ref.row_bytes: k must be a positive integer, got 0", true)
  t.errors(function() ref.row_bytes("q4_0", 1.5) end, "k must be a positive integer", true)
  t.errors(function() ref.row_bytes(nil, 32) end, "ref.row_bytes: fmt must be a format name (a string), got nil", true)
end)

t.test("random_blocks: sizes, determinism, scales", function()
  for _, name in ipairs(ref.format_names) do
    t.eq(#ref.random_blocks(name, 3, 1), 3 * ref.formats[name].block_bytes, name)
  end
  local a, b = ref.random_blocks("q4_k", 16, 5), ref.random_blocks("q4_k", 16, 5)
  t.truthy(a == b, "same seed, same bytes")
  t.truthy(a ~= ref.random_blocks("q4_k", 16, 6), "different seed, different bytes")
  -- q6_k's d is its last two bytes; q4_0's d its first two: both in [2^-12, 2^-3).
  local q6 = ref.random_blocks("q6_k", 1, 9)
  local d6 = string.unpack("<I2", q6, 209) & 0x7fff
  t.truthy(d6 >= 0x0C00 and d6 < 0x3000, ("q6_k d bits %04x"):format(d6))
  local d4 = string.unpack("<I2", ref.random_blocks("q4_0", 1, 9)) & 0x7fff
  t.truthy(d4 >= 0x0C00 and d4 < 0x3000, ("q4_0 d bits %04x"):format(d4))
  t.errors(function() ref.random_blocks("q4_k", 0, 1) end, "ref.random_blocks: nblocks must be a positive integer, got 0", true)
  t.errors(function() ref.random_blocks("q4_k", 2, "x") end, "ref.random_blocks: seed must be an integer, got string", true)
  t.errors(function() ref.random_blocks("q2_k", 2, 1) end, "UNKNOWN_FORMAT", true)
end)

t.test("random_f32: sizes, determinism, distributions", function()
  local n = ref.random_f32(16, 3)
  t.eq(#n, 64)
  t.truthy(n == ref.random_f32(16, 3, "normal"), "normal is the default")
  local u = ref.random_f32(16, 3, "uniform")
  t.truthy(u ~= n, "uniform differs from normal")
  local big = 0
  for _, v in ipairs(floats(u)) do
    t.truthy(v >= -1 and v < 1, "uniform value in [-1, 1): " .. v)
  end
  for _, v in ipairs(floats(n)) do
    if math.abs(v) > 1 then big = big + 1 end
  end
  t.truthy(big > 0, "16 normal draws all within [-1, 1]")
  t.errors(function() ref.random_f32(4, 1, "gauss") end, "ref.random_f32: dist must be 'normal' or 'uniform', got 'gauss'", true)
  t.errors(function() ref.random_f32(-4, 1) end, "ref.random_f32: n must be a positive integer", true)
end)

t.test("dequantize hand-built blocks", function()
  -- q4_0: d = 0.5; qs[j] = j | (15-j) << 4: element j is (j-8)/2, element 16+j is (7-j)/2.
  local qs = {}
  for j = 0, 15 do qs[#qs + 1] = j | ((15 - j) << 4) end
  local blk = string.pack("<I2", 0x3800) .. string.char(table.unpack(qs))
  local v = floats(ref.dequantize("q4_0", blk))
  t.eq(#v, 32)
  t.eq({ v[1], v[2], v[16], v[17], v[18], v[32] }, { -4.0, -3.5, 3.5, 3.5, 3.0, -4.0 })
  -- q8_0: d = -1.5, bytes -128, 127, -1 then zeros.
  local q8 = string.pack("<I2i1i1i1", 0xbe00, -128, 127, -1) .. ("\0"):rep(29)
  local w = floats(ref.dequantize("q8_0", q8))
  t.eq({ w[1], w[2], w[3], w[4] }, { 192.0, -190.5, 1.5, 0.0 })
  -- f16 and bf16 widen exactly, subnormals kept.
  t.eq(floats(ref.dequantize("f16", string.pack("<I2I2I2", 0x3c00, 0x0001, 0xc000))), { 1.0, 2.0 ^ -24, -2.0 })
  t.eq(floats(ref.dequantize("bf16", string.pack("<I2I2", 0x4049, 0xbf00))), { 3.140625, -0.5 })
  t.eq(ref.dequantize("q4_k", ""), "")
  t.errors(function() ref.dequantize("q4_0", ("\0"):rep(19)) end,
    "dequantize failed: BAD_SIZE (q4_0: 19 bytes is not a whole number of 18-byte blocks)", true)
  t.errors(function() ref.dequantize("q4_0", 5) end, "ref.dequantize: bytes must be a string of bytes, got number", true)
end)

t.test("gemv_tokens: every row of x is ref.gemv's bits for that row; its errors", function()
  for _, fmt in ipairs { "q4_k", "q6_k", "f16", "q8_0" } do
    local m, k, T = 37, 512, 5
    local w = ref.random_blocks(fmt, m * k // ref.formats[fmt].qk, 3)
    local xs = ref.random_f32(T * k, 4)
    local all = ref.gemv_tokens(fmt, w, m, k, xs, T)
    t.eq(#all, T, fmt)
    for tk = 1, T do
      local y, a = ref.gemv(fmt, w, m, k, xs:sub(4 * k * (tk - 1) + 1, 4 * k * tk))
      t.eq(all[tk][1], y, fmt .. " token " .. tk .. " y")
      t.eq(all[tk][2], a, fmt .. " token " .. tk .. " absdot")
    end
  end
  local W = f32s(1, 2, 3, -4, 5, -6)
  t.eq(ref.gemv_tokens("f32", W, 2, 3, f32s(0.5, -1, 2, 1, 1, 1), 2), { { { 4.5, -19.0 }, { 8.5, 19.0 } }, { { 6.0, -5.0 }, { 6.0, 15.0 } } })
  t.errors(function() ref.gemv_tokens("f32", W, 2, 3, f32s(1, 2, 3), 2) end,
    "ref.gemv_tokens: xs is 12 bytes, expected tokens*k=2*3 f32 values", true)
  t.errors(function() ref.gemv_tokens("f32", W .. "\0\0\0\0", 2, 3, f32s(1, 2, 3), 1) end,
    "ref.gemv_tokens: weights are 28 bytes, but f32 m=2 k=3 takes 24 bytes", true)
  t.errors(function() ref.gemv_tokens("f32", W, 2, 3, f32s(1, 2, 3), 0) end, "tokens", true)
end)

t.test("gemv by hand and its errors", function()
  -- W = [[1, 2, 3], [-4, 5, -6]], x = [0.5, -1, 2]: y = [4.5, -19], absdot = [8.5, 19].
  local W = f32s(1, 2, 3, -4, 5, -6)
  local y, a = ref.gemv("f32", W, 2, 3, { 0.5, -1, 2 })
  t.eq(y, { 4.5, -19.0 })
  t.eq(a, { 8.5, 19.0 })
  local y2, a2 = ref.gemv("f32", W, 2, 3, f32s(0.5, -1, 2))
  t.eq(y2, y)
  t.eq(a2, a)
  -- q4_0, d = 0.25, qs all 0x9a: elements 0..15 are 0.5, 16..31 are 0.25.
  local q = string.pack("<I2", 0x3400) .. ("\x9a"):rep(16)
  local ones = {}
  for j = 1, 32 do ones[j] = (j % 2 == 1) and 1 or -1 end
  local yq, aq = ref.gemv("q4_0", q, 1, 32, ones)
  t.eq(yq, { 0.0 })
  t.eq(aq, { 12.0 })

  t.errors(function() ref.gemv("f32", W .. "\0\0\0\0", 2, 3, { 1, 2, 3 }) end,
    "ref.gemv: weights are 28 bytes, but f32 m=2 k=3 takes 24 bytes", true)
  t.errors(function() ref.gemv("f32", W, 2, 3, f32s(1, 2)) end,
    "ref.gemv: x is 8 bytes, expected k=3 f32 values (12 bytes)", true)
  t.errors(function() ref.gemv("f32", W, 2, 3, { 1, 2 }) end, "ref.gemv: x has 2 entries, expected 3", true)
  t.errors(function() ref.gemv("f32", W, 2, 3, { 1, "2", 3 }) end, "ref.gemv: x[2] is a string, expected a number", true)
  t.errors(function() ref.gemv("f32", W, 2, 3, true) end, "ref.gemv: x must be an f32 string or a table of numbers, got boolean", true)
  t.errors(function() ref.gemv("q4_0", q, 1, 33, ones) end, "k=33 is not a multiple of qk=32", true)
  t.errors(function() ref.gemv("f32", W, 0, 3, { 1, 2, 3 }) end, "ref.gemv: m must be a positive integer, got 0", true)
end)

t.test("check_rows", function()
  local yref, absdot = { 4.5, -19.0 }, { 8.5, 19.0 }
  local ok, row, rel, fails = ref.check_rows(f32s(4.5, -19.0), yref, absdot, 1e-4)
  t.eq({ ok, row, rel, fails }, { true, 1, 0.0, 0 })
  -- Row 2 off by 0.01 against absdot 19: relative 5.3e-4 > 1e-4.
  ok, row, rel, fails = ref.check_rows(f32s(4.5, -19.01), yref, absdot, 1e-4)
  t.eq({ ok, row, fails }, { false, 2, 1 })
  t.near(rel, 0.01 / 19, 1e-7)
  -- NaN never passes; it is the worst row, with an infinite error.
  ok, row, rel, fails = ref.check_rows(f32s(0 / 0, -19.0), yref, absdot, 1e-4)
  t.eq({ ok, row, rel, fails }, { false, 1, math.huge, 1 })
  -- absdot 0: the absolute error is used.
  ok, row, rel, fails = ref.check_rows(f32s(0.5), { 0.0 }, { 0.0 }, 0.25)
  t.eq({ ok, row, rel, fails }, { false, 1, 0.5, 1 })

  t.errors(function() ref.check_rows(("\0"):rep(7), yref, absdot, 1e-4) end,
    "ref.check_rows: y must be a non-empty f32 string (a multiple of 4 bytes), got 7 bytes", true)
  t.errors(function() ref.check_rows(f32s(1, 2), { 1 }, absdot, 1e-4) end,
    "ref.check_rows: y_ref has 1 entries, expected 2", true)
  t.errors(function() ref.check_rows(f32s(1, 2), yref, { 1, false }, 1e-4) end,
    "ref.check_rows: absdot[2] is a boolean, expected a number", true)
  t.errors(function() ref.check_rows(f32s(1, 2), yref, absdot, -1) end,
    "ref.check_rows: tol must be a finite non-negative number", true)
  t.errors(function() ref.check_rows(f32s(1, 2), yref, absdot, 0 / 0) end,
    "ref.check_rows: tol must be a finite non-negative number", true)
end)

t.test("random q4_k matrix: gemv, dequantize and check_rows agree", function()
  local m, k = 8, 512
  local w = ref.random_blocks("q4_k", m * k // 256, 11)
  local x = ref.random_f32(k, 12)
  local y, absdot = ref.gemv("q4_k", w, m, k, x)
  t.eq(#y, m)
  -- The same weights as f32 (the reference dequantization) give the same sums.
  local wf = ref.dequantize("q4_k", w)
  t.eq(#wf, m * k * 4)
  local yf, af = ref.gemv("f32", wf, m, k, x)
  t.eq(yf, y)
  t.eq(af, absdot)
  -- y rounded to f32 passes a tight check; y shifted by 1e-3 of absdot fails every row.
  local y32 = f32s(table.unpack(y))
  local ok, _, rel, fails = ref.check_rows(y32, y, absdot, 1e-6)
  t.truthy(ok and fails == 0 and rel < 1e-6, ("rounded y: rel %g"):format(rel))
  local shifted = {}
  for i = 1, m do shifted[i] = y[i] + 1e-3 * absdot[i] end
  ok, _, rel, fails = ref.check_rows(f32s(table.unpack(shifted)), y, absdot, 1e-4)
  t.eq({ ok, fails }, { false, m })
  t.near(rel, 1e-3, 1e-5)
end)

t.run()
