-- gpubench.rng: a small seeded pseudo-random generator (splitmix64) for the
-- library's own randomness: shuffled cell orders and bootstrap resampling.
--
-- Why not math.random: its sequence differs between Lua builds and it is
-- global state that a script (or another module) may reseed at any time, so a
-- "shuffle with seed 7" would not be the same order twice. A benchmark whose
-- order cannot be reproduced cannot have its positional effects checked (seed
-- 000's defect 2). Lua 5.4 integer arithmetic wraps modulo 2^64 and >> is a
-- logical shift, so this sequence is identical on every platform.

local rng = {}
rng.__index = rng

local function mix(z)
  z = (z ~ (z >> 30)) * -4658895280553007687   -- 0xBF58476D1CE4E5B9
  z = (z ~ (z >> 27)) * -7723592293110705685   -- 0x94D049BB133111EB
  return z ~ (z >> 31)
end

-- new(seed): seed is any integer (or integral float); the same seed gives the
-- same sequence.
function rng.new(seed)
  if seed == nil then seed = 1 end
  local s = math.tointeger(seed)
  if s == nil then
    error(("rng seed must be an integer, got %s"):format(tostring(seed)), 2)
  end
  return setmetatable({ state = s }, rng)
end

-- Next 64-bit value (a Lua integer, any sign).
function rng:next64()
  self.state = self.state + -7046029254386353131 -- 0x9E3779B97F4A7C15
  return mix(self.state)
end

-- Uniform float in [0, 1) with 53 random bits.
function rng:float()
  return (self:next64() >> 11) * (1.0 / 9007199254740992.0)
end

-- Uniform integer in [1, n].
function rng:int(n)
  return math.floor(self:float() * n) + 1
end

return rng
