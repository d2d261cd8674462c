-- The `gpu` API fuzzer's child: generates random sequences of `gpu` calls with
-- mostly wrong arguments, deterministically from a seed, and runs each call
-- under pcall. A Lua error is the expected outcome of most calls; what counts
-- as a finding is a crash, a sanitizer report, a hang (the runner,
-- tests/fuzz/run_fuzz.sh, watches for those), or an error that is not ours:
-- a non-string error object, or a Lua runtime error ("attempt to index ...")
-- raised inside the library's own code, which means a missing check there.
--
--   gpubench tests/fuzz/gpu_fuzz.lua --seed S [--count N] [--calls M]
--            [--no-debug] [--no-tamper] [--no-reenter] [--hang P] [--quiet] [--verbose]
--   gpubench tests/fuzz/gpu_fuzz.lua --seed S --dump > prog.txt   (the program, one call a line)
--   gpubench tests/fuzz/gpu_fuzz.lua --program prog.txt            (runs a saved or edited program)
--
-- Sequence j of a run uses seed S + j; each prints its calls as it runs them
-- ("S#i: <call>", flushed), so the lines before a crash show the sequence.
-- A sequence is a pure function of its seed and the options: the generator
-- never looks at results, so a seed replays the same calls on any binary.
-- Exit status: 0 clean, 3 a bad error was seen (lines "FUZZ-BAD ..."),
-- 77 no Vulkan device (a failure under CI=true), 2 usage.

local gpu = require "gpu"

local unpack = table.unpack

-- ------------------------------------------------------------------ options
local o = { seed = 1, count = 1, calls = 40, debug = true, tamper = true, reenter = true, hang = 0,
            dump = false, quiet = false, program = nil }
do
  local i = 1
  local function val(name)
    local v = arg[i + 1]
    if v == nil then io.stderr:write("gpu_fuzz: ", name, " needs a value\n"); os.exit(2) end
    i = i + 2
    return v
  end
  while arg[i] do
    local a = arg[i]
    if a == "--seed" then o.seed = math.tointeger(tonumber(val(a)))
    elseif a == "--count" then o.count = math.tointeger(tonumber(val(a)))
    elseif a == "--calls" then o.calls = math.tointeger(tonumber(val(a)))
    elseif a == "--hang" then o.hang = tonumber(val(a))
    elseif a == "--program" then o.program = val(a)
    elseif a == "--no-debug" then o.debug = false; i = i + 1
    elseif a == "--no-tamper" then o.tamper = false; i = i + 1
    elseif a == "--no-reenter" then o.reenter = false; i = i + 1
    elseif a == "--dump" then o.dump = true; i = i + 1
    elseif a == "--quiet" then o.quiet = true; i = i + 1
    elseif a == "--verbose" then o.verbose = true; i = i + 1
    else io.stderr:write("gpu_fuzz: unknown option ", a, "\n"); os.exit(2) end
  end
  if not (o.seed and o.count and o.count >= 1 and o.calls and o.calls >= 1 and o.hang) then
    io.stderr:write("gpu_fuzz: --seed, --count and --calls take integers (count, calls >= 1)\n")
    os.exit(2)
  end
end

local function flags()
  local f = {}
  if not o.debug then f[#f + 1] = "--no-debug" end
  if not o.tamper then f[#f + 1] = "--no-tamper" end
  if not o.reenter then f[#f + 1] = "--no-reenter" end
  if o.hang ~= 0 then f[#f + 1] = "--hang " .. o.hang end
  return table.concat(f, " ")
end

-- ------------------------------------------------------------------ the PRNG
-- splitmix64 on Lua's 64-bit integers (wrapping arithmetic, logical shifts):
-- the same numbers on every machine, and math.random's state is never touched.
local function new_rng(seed)
  local s = seed * 0x2545F4914F6CDD1D + 0x1234567
  local R = {}
  local function nxt()
    s = s + 0x9E3779B97F4A7C15
    local z = s
    z = (z ~ (z >> 30)) * 0xBF58476D1CE4E5B9
    z = (z ~ (z >> 27)) * 0x94D049BB133111EB
    return z ~ (z >> 31)
  end
  function R.int(a, b) return a + (nxt() >> 1) % (b - a + 1) end
  function R.chance(p) return ((nxt() >> 11) * 2.0 ^ -53) < p end
  function R.pick(t) return t[R.int(1, #t)] end
  -- weighted choice over {{w, value}, ...}
  function R.wpick(t)
    local sum = 0
    for _, e in ipairs(t) do sum = sum + e[1] end
    local x = R.int(1, sum)
    for _, e in ipairs(t) do
      x = x - e[1]
      if x <= 0 then return e[2] end
    end
    return t[#t][2]
  end
  return R
end

-- The shaders and the generator live in files of their own beside this one.
local here = (debug.getinfo(1, "S").source:match("^@(.*/)") or "./")
local function part(name, ...)
  local chunk = assert(loadfile(here .. name, "t"))
  return chunk(...)
end
local shaders = part("fuzz_shaders.lua")
local SRC, K = shaders.SRC, shaders.K
local generate = part("fuzz_generator.lua", {
  o = o, new_rng = new_rng, SRC = SRC, K = K, BAD_SRC = shaders.BAD_SRC, BAD_FILES = shaders.BAD_FILES,
  B = shaders.B, U = shaders.U, I = shaders.I, F = shaders.F, W = shaders.W,
})

-- ------------------------------------------------------------------ running
local function die(msg) io.stderr:write("gpu_fuzz: ", msg, "\n"); io.stderr:flush(); os.exit(2) end

-- The methods and metatables, read once (before any sequence can swap them).
local REG = debug.getregistry()
local MT, M, SAVED = {}, {}, {}
for _, n in ipairs { "device", "buffer", "kernel", "timer", "batch", "scalar" } do
  local mt = REG["gpu." .. n]
  if type(mt) ~= "table" then die("no metatable gpu." .. n .. " in the registry") end
  MT[n] = mt
  local idx = mt.__index
  local methods = idx
  if type(idx) == "function" then methods = select(2, debug.getupvalue(idx, 1)) end
  local m = {}
  for k, v in pairs(methods or {}) do m[k] = v end
  m.free = m.free or mt.__gc
  M[n] = m
  SAVED[n] = {}
  for k, v in pairs(mt) do SAVED[n][k] = v end
end
local function restore_metatables()
  for n, fields in pairs(SAVED) do
    local mt = MT[n]
    for k in pairs(mt) do mt[k] = nil end
    for k, v in pairs(fields) do mt[k] = v end
    REG["gpu." .. n] = mt
  end
end

local FZ_ERR = setmetatable({}, { __name = "FZ_ERR", __tostring = function() return "FZ_ERR (the fuzzer's own error object)" end })

-- The environment every statement of a sequence runs in.
local function new_env()
  local O = {}
  local env = {
    O = O, gpu = gpu, M = M, MT = MT, SRC = SRC, FZ_ERR = FZ_ERR,
    -- a table whose every field read raises our error object
    FZ_BADIDX = setmetatable({}, { __index = function() error(FZ_ERR) end }),
    -- a table whose fields answer differently on every read
    FZ_LIAR = (function()
      local n = 0
      return setmetatable({}, { __index = function(_, k)
        n = n + 1
        local v = { "vulkan", 0, 1.5, "x", 64, {}, true, "f32", 2 ^ 40, -1 }
        return v[n % #v + 1]
      end, __len = function() return 3 end })
    end)(),
    FZ_NAMED = setmetatable({}, { __name = "gpu.buffer" }), -- a table that claims a gpu type name
    FZ_HUGELEN = setmetatable({ 1, 2, 3 }, { __len = function() return 2 ^ 40 end }),
    FZ_STR = setmetatable({}, { __tostring = function() return "s" end }),
    -- base, with an __index that releases the objects given (the library
    -- reads its argument tables with lua_getfield / lua_geti, which call it)
    FZ_FREEING = function(base, ...)
      local victims = table.pack(...)
      return setmetatable(base, { __index = function()
        for i = 1, victims.n do
          local v = victims[i]
          pcall(function() v:free() end)
        end
        return nil
      end })
    end,
    -- the same, answering ret
    FZ_FREEING_RET = function(ret, base, ...)
      local victims = table.pack(...)
      return setmetatable(base, { __index = function()
        for i = 1, victims.n do
          local v = victims[i]
          pcall(function() v:free() end)
        end
        return ret
      end })
    end,
    -- n garbage tables whose finalizers release obj
    FZ_BOMB = function(victim, n)
      for _ = 1, n do
        setmetatable({}, { __gc = function() pcall(function() victim:free() end) end })
      end
    end,
    -- a table of n copies of v (and the fields of extra)
    FZ_MANY = function(v, n, extra)
      local t = extra or {}
      for i = 1, n do t[i] = v end
      return t
    end,
  }
  return setmetatable(env, { __index = _G }), O
end

-- The error a call raised, judged: nil when it is an ordinary error of ours,
-- else a description of what is wrong with it.
local function judge(err)
  if rawequal(err, FZ_ERR) then return nil end
  if type(err) ~= "string" then
    return "a non-string error object (" .. type(err) .. ": " .. tostring(err) .. ")"
  end
  -- Runtime errors of the statement's own code carry its position ("fz:1:"
  -- then "attempt to index a nil value (field 'b3')"); the same error raised
  -- inside a C function of the library has no position.
  if err:find("attempt to ", 1, true) and not err:match("^fz:%d+: attempt to ") then
    return "a Lua runtime error from inside the library: " .. err
  end
  if err:find("unknown error", 1, true) or err:find("(null)", 1, true) then
    return "an error without a proper message: " .. err
  end
  return nil
end

local stats = { seqs = 0, calls = 0, ok = 0, errors = 0, bad = 0 }
local baseline = gpu.live()

local function say(s)
  if not o.quiet then io.stdout:write(s, "\n"); io.stdout:flush() end
end

local function run_sequence(label, stmts, replay, tame)
  stats.seqs = stats.seqs + 1
  io.stdout:write(("=== seq %s: %d calls%s (replay: %s)\n"):format(label, #stmts, tame and ", tame" or "", replay))
  io.stdout:flush()
  local env, O = new_env()
  local broke, weird = false, false
  for i, s in ipairs(stmts) do
    say(("%s#%d: %s"):format(label, i, s))
    if s:find("debug%.") or s:find("^MT%.") then weird = true end
    local f, cerr = load(s, "=fz", "t", env)
    if not f then
      stats.bad = stats.bad + 1
      io.stdout:write(("FUZZ-BAD %s#%d: the generator made a statement that does not compile: %s\n"):format(label, i, cerr))
    else
      stats.calls = stats.calls + 1
      local ok, err = pcall(f)
      if ok then stats.ok = stats.ok + 1 end
      if o.verbose then say(ok and "  -> ok" or "  -> error: " .. tostring(err):sub(1, 200):gsub("\n", " ")) end
      if not ok then
        stats.errors = stats.errors + 1
        local bad = judge(err)
        if type(err) == "string" and (err:find("GPUBENCH_TIMEOUT", 1, true) or err:find("can no longer be used", 1, true)) then
          broke = true
        end
        if bad then
          stats.bad = stats.bad + 1
          io.stdout:write(("FUZZ-BAD %s#%d: %s\n  call: %s\n  replay: %s\n"):format(label, i, bad, s, replay))
          io.stdout:flush()
        end
      end
    end
  end
  -- Drop the sequence's objects; with no debug-library or metatable games and
  -- no broken device, every C object must be gone after a full collection.
  for k in pairs(O) do O[k] = nil end
  env = nil
  collectgarbage(); collectgarbage()
  restore_metatables()
  collectgarbage(); collectgarbage()
  if not weird and not broke then
    local now = gpu.live()
    local diff = {}
    for k, v in pairs(now) do
      if v ~= baseline[k] then diff[#diff + 1] = ("%s %d -> %d"):format(k, baseline[k], v) end
    end
    if #diff > 0 then
      table.sort(diff)
      stats.bad = stats.bad + 1
      io.stdout:write(("FUZZ-BAD %s: live objects left after the sequence and a full collection: %s\n  replay: %s\n")
                      :format(label, table.concat(diff, ", "), replay))
      baseline = now
    end
  else
    baseline = gpu.live()
  end
end

-- Self-check: the kernels the generator relies on reflect the parameters it assumes.
local function self_check()
  for _, kd in ipairs(K) do
    local t = { backend = "vulkan" }
    if kd.file then t.file = kd.file else t.source = SRC[kd.src] end
    if kd.defines then t.defines = load("return " .. kd.defines)() end
    if kd.include_dirs then t.include_dirs = kd.include_dirs end
    local ok, r = pcall(gpu.compile, t)
    if not ok then die("self-check: kernel " .. kd.name .. " does not compile: " .. tostring(r)) end
    if table.concat(r.params, ",") ~= table.concat(kd.params, ",") then
      die(("self-check: kernel %s reflects (%s), the generator assumes (%s)"):format(
        kd.name, table.concat(r.params, ","), table.concat(kd.params, ",")))
    end
  end
end

if o.dump then
  for _, s in ipairs(generate(o.seed, o.calls)) do print(s) end
  os.exit(0)
end

-- A Vulkan device is needed (lavapipe suffices).
do
  local ok, d = pcall(gpu.open, { backend = "vulkan" })
  if not ok then
    io.stdout:write("gpu_fuzz: no Vulkan device: ", tostring(d), "\n")
    os.exit(os.getenv("CI") == "true" and 1 or 77)
  end
  d:free()
end
if warn then warn("@on") end -- errors in __gc show up as warnings
self_check()

local t0 = gpu.clock()
if o.program then
  local f = io.open(o.program) or die("cannot open " .. o.program)
  local stmts = {}
  for line in f:lines() do
    if line:match("%S") and not line:match("^%s*%-%-") then stmts[#stmts + 1] = line end
  end
  f:close()
  run_sequence(o.program, stmts, "gpubench tests/fuzz/gpu_fuzz.lua --program " .. o.program)
else
  for j = 0, o.count - 1 do
    local seed = o.seed + j
    local replay = ("gpubench tests/fuzz/gpu_fuzz.lua --seed %d --count 1 --calls %d %s"):format(seed, o.calls, flags())
    local stmts, tame = generate(seed, o.calls)
    run_sequence(tostring(seed), stmts, replay, tame)
  end
end
io.stdout:write(("gpu_fuzz: %d sequences, %d calls (%d returned, %d raised errors, %d bad) in %.1f s; git %s\n"):format(
  stats.seqs, stats.calls, stats.ok, stats.errors, stats.bad, gpu.clock() - t0, gpu.git))
io.stdout:flush()
-- Ends through gpubench's own exit path, not os.exit: it closes the Lua state
-- and, when the watchdog broke a device, leaves without the exit handlers
-- (cli/main.c), as any script would.
if stats.bad > 0 then error({ gpubench_exit = 3 }, 0) end
