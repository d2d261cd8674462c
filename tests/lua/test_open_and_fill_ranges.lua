-- Argument ranges of gpu.open and the half-open range of buf:fill_random's
-- uniform draws, on the Vulkan device (lavapipe here).

local t = dofile("tests/lua/harness.lua")
local gpu = t.gpu

t.test("gpu.open: an index beyond int range is an error, not another device", function()
  if not gpu then t.skip("no gpu module") end
  -- 2^32 used to wrap to device 0 through the int cast, and 2^32 + 1 to device 1.
  t.errors(function() gpu.open { backend = "vulkan", index = 1 << 32 } end,
           "index must be a non-negative integer up to 2147483647", true)
  t.errors(function() gpu.open { backend = "vulkan", index = (1 << 32) + 1 } end,
           "index must be a non-negative integer up to 2147483647", true)
end)

-- Counts the elements of a download that fall outside [lo, hi).
local function outside(s, fmt, size, decode, lo, hi)
  local bad, n = 0, #s // size
  for i = 1, n do
    local v = decode(string.unpack(fmt, s, size * (i - 1) + 1))
    if not (v >= lo and v < hi) then bad = bad + 1 end
  end
  return bad, n
end

local function f16(h)
  local sign = (h & 0x8000) ~= 0 and -1 or 1
  local e, m = (h >> 10) & 0x1f, h & 0x3ff
  if e == 0 then return sign * m * 2.0 ^ -24 end
  if e == 31 then return sign * math.huge end
  return sign * (1 + m / 1024) * 2.0 ^ (e - 15)
end
local function bf16(h) return string.unpack("<f", string.pack("<I4", h << 16)) end

t.test("fill_random uniform: every element in [lo, hi) after rounding to the dtype", function()
  local dev = t.device("vulkan")
  local n = 1 << 16
  local b <close> = dev:buffer(4 * n)
  -- Before the fix, 6 f16 and 123 bf16 elements of these fills equalled hi:
  -- the draw is below hi in double, the rounding to the element type is not.
  for _, case in ipairs {
    { "f16", -1, 1 }, { "bf16", 0, 1 }, { "f16", -3, -0.5 }, { "bf16", -1, 0 },
  } do
    local dtype, lo, hi = case[1], case[2], case[3]
    b:fill_random { dtype = dtype, dist = "uniform", lo = lo, hi = hi, seed = 1, n = n }
    local bad = outside(b:download(0, 2 * n), "<I2", 2, dtype == "f16" and f16 or bf16, lo, hi)
    t.eq(bad, 0, ("%s over [%g, %g): elements outside"):format(dtype, lo, hi))
  end
  -- f32 over a range only a few ulps wide, where rounding up to hi is common.
  local lo, hi = 1.0, 1.0 + 4 * 2.0 ^ -23
  b:fill_random { dtype = "f32", dist = "uniform", lo = lo, hi = hi, seed = 7, n = n }
  local bad = outside(b:download(), "<f", 4, function(v) return v end, lo, hi)
  t.eq(bad, 0, "f32 over a 4-ulp range: elements outside")
  -- lo == hi is a constant fill, not an error and not a value below lo.
  b:fill_random { dtype = "f16", dist = "uniform", lo = 0.5, hi = 0.5, seed = 1, n = 4 }
  t.eq(b:download(0, 8), string.rep(string.pack("<I2", 0x3800), 4))
end)

t.run()
