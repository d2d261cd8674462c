-- gpubench.swiglu_check: a SwiGLU path's output against the FP64 reference
-- computed from the same bf16 inputs, and the error figures a row reports.
--
-- Why: AstrAI's benchmark reported max_abs, mean_abs and the cosine
-- similarity of each path; a figure alone says how close, not whether the
-- path is right, so each output is also held to a bound derived from how it
-- is computed, and a path with any output outside it is not timed.
--
-- The reference: g = W[n] . x[t] and u = W[N + n] . x[t] in FP64
-- (gpubench.ref.linear over the packed [2N, K] bf16 weight, which also gives
-- s = sqrt(sum_k (w_k x_k)^2) per dot), then r = silu(g) * u in FP64.
-- The bound per output, with docs/LINEAR.md's bound on each dot,
--   E_g = 2^-7 s_g (+ 2^-8 |g| where the path rounds h to bf16), E_u alike,
--   |y - r| <= (2^-8 + 2^-20) |r| + 1.1 |u| E_g + |silu(g)| E_u + 1.1 E_g E_u
--              + 2^-100 (1 + |u|)
-- 2^-8 |r| is y's own bf16 rounding (2^-20 the fp32 silu and product), 1.1
-- bounds |silu'| (1.0998), and the last term covers results below fp32's
-- normal range (silu of g < -88 is -0 in fp32).

local ref = require "gpubench.ref"

local C = {}

local U = 2 ^ -8       -- bf16 unit roundoff
local DOT = 2 ^ -7     -- docs/LINEAR.md: fp32 summation in any order, per s
local LIP = 1.1        -- max |silu'(v)| = 1.0998
local TINY = 2 ^ -100  -- below fp32's normal range

C.TOLERANCE = "|y - r| <= (2^-8 + 2^-20)|r| + 1.1|u|E_g + |silu(g)|E_u + 1.1 E_g E_u + 2^-100(1 + |u|), "
  .. "E = 2^-7 s (+ 2^-8 |dot| where h is rounded to bf16), r = silu(g) u in FP64, s = sqrt(sum (w x)^2)"

local function silu(v) return v / (1 + math.exp(-v)) end

local function f64(s, i) return (string.unpack("<d", s, 8 * i + 1)) end

local function bf16(s, i) -- element i (0-based) of a bf16 string, as a number
  local h = string.unpack("<I2", s, 2 * i + 1)
  return (string.unpack("<f", string.pack("<I4", h << 16)))
end
C.bf16 = bf16

-- reference(w, x, n, k, t) -> {n, k, t, r, s}: the FP64 dots of the packed
-- weight w (a bf16 string [2N, K]) with the t token rows of x (bf16 [t, K]).
function C.reference(w, x, n, k, t)
  if type(ref.linear) ~= "function" then
    error("swiglu: this gpubench has no gpubench.ref.linear (the FP64 Linear reference of docs/LINEAR.md)", 0)
  end
  local r, s = ref.linear("bf16", w, 2 * n, k, x, t)
  return { n = n, k = k, t = t, r = r, s = s }
end

-- expected(R, m, rounds_h) -> {r = {...}, bound = {...}, m =, n =}: the
-- reference and the bound of the first m tokens' outputs, flat index
-- t * N + n + 1; rounds_h for a path that rounds h to bf16.
function C.expected(R, m, rounds_h)
  if m > R.t then error(("swiglu_check: the reference holds %d tokens, %d asked"):format(R.t, m), 2) end
  local n = R.n
  local rr, bb = {}, {}
  local hu = rounds_h and U or 0
  for t = 0, m - 1 do
    local base = t * 2 * n
    for j = 0, n - 1 do
      local g, u = f64(R.r, base + j), f64(R.r, base + n + j)
      local sg, su = f64(R.s, base + j), f64(R.s, base + n + j)
      local eg = DOT * (1 + hu) * sg + hu * math.abs(g)
      local eu = DOT * (1 + hu) * su + hu * math.abs(u)
      local sv = silu(g)
      local r = sv * u
      local i = t * n + j + 1
      rr[i] = r
      bb[i] = (U + 2 ^ -20) * math.abs(r) + LIP * math.abs(u) * eg + math.abs(sv) * eu + LIP * eg * eu
        + TINY * (1 + math.abs(u))
    end
  end
  return { r = rr, bound = bb, m = m, n = n }
end

local function at(i, n, v, r, b) return { t = (i - 1) // n, n = (i - 1) % n, y = v, ref = r, bound = b } end

local function finite(v) return v == v and v ~= math.huge and v ~= -math.huge end

-- compare(y, E) -> figures: y a bf16 string of E.m x E.n outputs (or longer:
-- the rest is ignored). {ok, outputs, failures, nonfinite, max_abs, mean_abs,
-- cosine (NaN when no output is finite), worst_ratio, worst = {t, n, y, ref,
-- bound}, first = {...} | nil};
-- t and n 0-based. A non-finite output fails and is left out of the sums.
function C.compare(y, E)
  local count = E.m * E.n
  if #y < 2 * count then
    error(("swiglu_check: the output has %d bytes, %d outputs take %d"):format(#y, count, 2 * count), 2)
  end
  local out = { outputs = count, failures = 0, nonfinite = 0, max_abs = 0, worst_ratio = 0 }
  local sum_abs, dot, yy, rr2 = 0, 0, 0, 0
  for i = 1, count do
    local v, r, b = bf16(y, i - 1), E.r[i], E.bound[i]
    local ratio, bad
    if not finite(v) then
      out.nonfinite = out.nonfinite + 1
      ratio, bad = math.huge, true
    else
      local e = math.abs(v - r)
      sum_abs = sum_abs + e
      if e > out.max_abs then out.max_abs = e end
      dot, yy, rr2 = dot + v * r, yy + v * v, rr2 + r * r
      ratio = b > 0 and e / b or (e > 0 and math.huge or 0)
      bad = not (e <= b)
    end
    if out.worst == nil or ratio > out.worst_ratio then
      out.worst_ratio = ratio
      out.worst = at(i, E.n, v, r, b)
      out.worst.ratio = ratio
    end
    if bad then
      out.failures = out.failures + 1
      if not out.first then out.first = at(i, E.n, v, r, b) end
    end
  end
  local finite_count = count - out.nonfinite
  out.mean_abs = finite_count > 0 and sum_abs / finite_count or 0 / 0
  if finite_count == 0 then out.cosine = 0 / 0
  elseif yy == 0 and rr2 == 0 then out.cosine = 1.0
  elseif yy == 0 or rr2 == 0 then out.cosine = 0.0
  else out.cosine = dot / math.sqrt(yy * rr2) end
  out.ok = out.failures == 0
  return out
end

-- describe(f) -> one line: "max_abs ..., mean_abs ..., cosine ...", and for a
-- failed check where it failed first.
function C.describe(f)
  local s = ("max_abs %.3g, mean_abs %.3g, cosine %.9f"):format(f.max_abs, f.mean_abs, f.cosine)
  if f.ok then return s end
  local p = f.first
  return ("%s; %d of %d outputs outside the tolerance (%d not finite), the first y[%d, %d] = %.6g against %.6g (bound %.3g)")
    :format(s, f.failures, f.outputs, f.nonfinite, p.t, p.n, p.y, p.ref, p.bound)
end

return C
