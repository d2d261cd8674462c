-- gpubench.swiglu_check: the FP64 SwiGLU reference and the per-output bound,
-- on the CPU: against dots computed here from the same bf16 values, a
-- correctly rounded output passes, and a dropped word, a perturbed output, a
-- NaN or an unwritten output fail at the right place.
local t = dofile("tests/lua/harness.lua")
local check = require "gpubench.swiglu_check"
local ref = require "gpubench.ref"
local swiglu = require "gpubench.swiglu"

if type(ref.linear) ~= "function" or type(ref.random_bf16) ~= "function" then
  t.test("gpubench.ref has linear and random_bf16", function() t.skip("this build's gpubench.ref lacks them") end)
  t.run()
end

local bf16 = check.bf16

-- The bf16 nearest v (ties to even), through the f32 nearest v.
local function round_bf16(v)
  local u = string.unpack("<I4", string.pack("<f", v))
  if (u & 0x7FFFFFFF) > 0x7F800000 then return 0 / 0 end
  u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF
  return (string.unpack("<f", string.pack("<I4", u << 16)))
end

local function pack_bf16(values)
  local parts = {}
  for i, v in ipairs(values) do
    local u = string.unpack("<I4", string.pack("<f", v))
    parts[i] = string.pack("<I2", u >> 16) -- v is a bf16 value already: exact
  end
  return table.concat(parts)
end

local function silu(v) return v / (1 + math.exp(-v)) end

-- A problem with its outputs computed here: g, u per (t, n) in FP64, and
-- y = bf16(silu(g) u); drop = {t, n, word} leaves one 8-element word out of g.
local function problem(n, k, m, seed, drop)
  local w, x = ref.random_bf16(2 * n * k, seed), ref.random_bf16(m * k, seed + 1)
  local R = check.reference(w, x, n, k, m)
  local ys = {}
  for tt = 0, m - 1 do
    for j = 0, n - 1 do
      local g, u = 0, 0
      for c = 0, k - 1 do
        local xv = bf16(x, tt * k + c)
        if not (drop and drop.t == tt and drop.n == j and c // 8 == drop.word) then
          g = g + bf16(w, j * k + c) * xv
        end
        u = u + bf16(w, (n + j) * k + c) * xv
      end
      ys[#ys + 1] = round_bf16(silu(g) * u)
    end
  end
  return R, pack_bf16(ys), ys
end

t.test("the reference's dots are the FP64 dots of the same bf16 values", function()
  local n, k, m = 5, 24, 3
  local w, x = ref.random_bf16(2 * n * k, 7), ref.random_bf16(m * k, 8)
  local R = check.reference(w, x, n, k, m)
  t.eq({ R.n, R.k, R.t, #R.r, #R.s }, { n, k, m, 8 * m * 2 * n, 8 * m * 2 * n })
  for tt = 0, m - 1 do
    for row = 0, 2 * n - 1 do
      local d, sq = 0, 0
      for c = 0, k - 1 do
        local p = bf16(w, row * k + c) * bf16(x, tt * k + c)
        d, sq = d + p, sq + p * p
      end
      local i = tt * 2 * n + row
      t.near(string.unpack("<d", R.r, 8 * i + 1), d, 1e-12 * math.sqrt(sq) + 1e-300)
      t.near(string.unpack("<d", R.s, 8 * i + 1), math.sqrt(sq), 1e-12 * math.sqrt(sq))
    end
  end
end)

t.test("a correctly rounded output passes with its figures", function()
  local n, k, m = 7, 64, 2
  local R, y, ys = problem(n, k, m, 11)
  local E = check.expected(R, m, false)
  local f = check.compare(y, E)
  t.eq({ f.ok, f.failures, f.nonfinite, f.outputs }, { true, 0, 0, n * m })
  t.truthy(f.cosine > 1 - 1e-4 and f.cosine <= 1 + 1e-12, "cosine " .. f.cosine)
  local max = 0
  for i, v in ipairs(ys) do max = math.max(max, math.abs(v - E.r[i])) end
  t.near(f.max_abs, max, 1e-12)
  t.truthy(f.mean_abs <= f.max_abs and f.worst_ratio <= 1, "figures")
  t.eq(check.describe(f), ("max_abs %.3g, mean_abs %.3g, cosine %.9f"):format(f.max_abs, f.mean_abs, f.cosine))
  -- only the first m tokens are read; a longer buffer is fine, a shorter one refused
  t.eq(check.compare(y .. "\0\0\0\0", E).ok, true)
  t.errors(function() check.compare(y:sub(3), E) end, "the output has 26 bytes, 14 outputs take 28", true)
  t.errors(function() check.expected(R, m + 1, false) end, "the reference holds 2 tokens, 3 asked", true)
end)

t.test("a dropped 8-element word of one gate dot fails at that output", function()
  local n, k, m = 6, 256, 3
  local R, y = problem(n, k, m, 21, { t = 2, n = 4, word = 9 })
  local f = check.compare(y, check.expected(R, m, false))
  t.eq({ f.ok, f.failures }, { false, 1 })
  t.eq({ f.first.t, f.first.n, f.worst.t, f.worst.n }, { 2, 4, 2, 4 })
  t.truthy(f.worst_ratio > 1, "ratio " .. f.worst_ratio)
  t.truthy(check.describe(f):find("1 of 18 outputs outside the tolerance (0 not finite), the first y[2, 4] = ", 1, true),
    check.describe(f))
end)

t.test("NaN, infinite and unwritten outputs fail and stay out of the sums", function()
  local n, k, m = 4, 32, 2
  local R, _, ys = problem(n, k, m, 31)
  local E = check.expected(R, m, true)
  ys[3] = 0 / 0
  ys[6] = math.huge
  local f = check.compare(pack_bf16(ys), E)
  t.eq({ f.ok, f.failures, f.nonfinite }, { false, 2, 2 })
  t.eq({ f.first.t, f.first.n }, { 0, 2 })
  t.eq(f.worst_ratio, math.huge)
  t.truthy(f.max_abs == f.max_abs and f.mean_abs == f.mean_abs, "finite sums")
  -- a buffer poisoned with 0xFF bytes and never written: every output NaN
  local g = check.compare(("\255"):rep(2 * n * m), E)
  t.eq({ g.failures, g.nonfinite }, { n * m, n * m })
  t.truthy(g.cosine ~= g.cosine and g.mean_abs ~= g.mean_abs, "no finite output: no cosine, no mean")
end)

t.test("an output just outside its bound fails, just inside passes", function()
  local n, k, m = 3, 40, 1
  local R = problem(n, k, m, 41)
  local E = check.expected(R, m, false)
  -- the reference rounded to bf16, and the same with output 2 moved by 3 bounds
  local inside, outside = {}, {}
  for i = 1, n * m do inside[i] = round_bf16(E.r[i]); outside[i] = inside[i] end
  outside[2] = round_bf16(E.r[2] + 3 * E.bound[2])
  t.eq(check.compare(pack_bf16(inside), E).ok, true)
  local f = check.compare(pack_bf16(outside), E)
  t.eq({ f.ok, f.failures, f.first.n }, { false, 1, 1 })
end)

t.test("h rounded to bf16 widens the bound; tiny results have an absolute floor", function()
  local n, k, m = 8, 48, 2
  local R = problem(n, k, m, 51)
  local a, b = check.expected(R, m, false), check.expected(R, m, true)
  for i = 1, n * m do t.truthy(b.bound[i] > a.bound[i], "output " .. i) end
  -- silu(-200) * u is about 1e-85 in FP64 and -0 in fp32: within the floor
  local g, u = -200, 3
  local Rt = { n = 1, k = 8, t = 1, r = string.pack("<dd", g, u), s = string.pack("<dd", 1, 1) }
  local E = check.expected(Rt, 1, false)
  t.truthy(math.abs(E.r[1]) < 1e-80, "reference " .. E.r[1])
  t.eq(check.compare(pack_bf16 { -0.0 }, E).ok, true)
  t.eq(check.compare(pack_bf16 { -1.0 }, E).ok, false)
end)

t.test("the chain's rounding of h to bf16 stays inside its bound", function()
  -- y = bf16(silu(bf16(g)) * bf16(u)), what swiglu_mul computes from h
  local n, k, m = 16, 512, 4
  local w, x = ref.random_bf16(2 * n * k, 61), ref.random_bf16(m * k, 62)
  local R = check.reference(w, x, n, k, m)
  local ys = {}
  for tt = 0, m - 1 do
    for j = 0, n - 1 do
      local g = round_bf16(string.unpack("<d", R.r, 8 * (tt * 2 * n + j) + 1))
      local u = round_bf16(string.unpack("<d", R.r, 8 * (tt * 2 * n + n + j) + 1))
      ys[#ys + 1] = round_bf16(silu(g) * u)
    end
  end
  t.eq(check.compare(pack_bf16(ys), check.expected(R, m, true)).ok, true)
  t.eq(swiglu.ROUNDS_H, { vendor = true, chain = true, fused = false })
end)

t.run()
