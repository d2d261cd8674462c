-- gpubench.trials: the A-B-C-C-B-A schedule, the loop that follows it, and
-- the check that a recorded run followed it (what tests/cli/test_swiglu_ab.sh
-- asks of the experiment's JSON).
local t = dofile("tests/lua/harness.lua")
local trials = require "gpubench.trials"

local function names_of(seq)
  local out = {}
  for i, e in ipairs(seq) do out[i] = e.name end
  return out
end

t.test("sequence: each trial is the names, then the names reversed", function()
  local s = trials.sequence({ "A", "B", "C" }, 2)
  t.eq(names_of(s), { "A", "B", "C", "C", "B", "A", "A", "B", "C", "C", "B", "A" })
  t.eq(s[1], { trial = 1, position = 1, name = "A" })
  t.eq(s[6], { trial = 1, position = 6, name = "A" })
  t.eq(s[7], { trial = 2, position = 1, name = "A" })
  t.eq(s[10], { trial = 2, position = 4, name = "C" })
  t.eq(names_of(trials.sequence({ "chain", "fused" }, 1)), { "chain", "fused", "fused", "chain" })
  t.eq(names_of(trials.sequence({ "fused" }, 3)), { "fused", "fused", "fused", "fused", "fused", "fused" })
end)

t.test("sequence: every name has the same mean position in each trial", function()
  local s = trials.sequence({ "A", "B", "C", "D" }, 1)
  local sum = {}
  for _, e in ipairs(s) do sum[e.name] = (sum[e.name] or 0) + e.position end
  t.eq(sum, { A = 9, B = 9, C = 9, D = 9 })
end)

t.test("run: samples per name in the order taken, ran the sequence", function()
  local calls = {}
  local r = trials.run { names = { "A", "B", "C" }, trials = 3, sample = function(name, trial, position)
    calls[#calls + 1] = name
    return { name = name, trial = trial, position = position }
  end }
  t.eq(calls, names_of(trials.sequence({ "A", "B", "C" }, 3)))
  t.eq(r.ran, trials.sequence({ "A", "B", "C" }, 3))
  t.eq(#r.samples.A, 6)
  t.eq(#r.samples.C, 6)
  -- A runs first and last in every trial
  t.eq(r.samples.A[1], { name = "A", trial = 1, position = 1 })
  t.eq(r.samples.A[2], { name = "A", trial = 1, position = 6 })
  t.eq(r.samples.B[2], { name = "B", trial = 1, position = 5 })
  t.eq(r.samples.C[6], { name = "C", trial = 3, position = 4 })
  t.eq(r.samples.C[5], { name = "C", trial = 3, position = 3 })
end)

t.test("run: false is a value, nil and errors stop the run naming where", function()
  local r = trials.run { names = { "A" }, trials = 1, sample = function() return false end }
  t.eq(r.samples.A, { false, false })
  t.errors(function()
    trials.run { names = { "A", "B" }, trials = 2, sample = function(name, trial, pos)
      if name == "B" and trial == 2 and pos == 3 then error("device lost", 0) end
      return 1
    end }
  end, "trials: B, trial 2 position 3: device lost", true)
  t.errors(function()
    trials.run { names = { "A", "B" }, trials = 1, sample = function(name) if name == "B" then return nil end return 1 end }
  end, 'trials: sample("B", 1, 2) returned nothing', true)
end)

t.test("bad arguments are refused with the reason", function()
  t.errors(function() trials.sequence({}, 1) end, "trials.sequence: names must be a non-empty list", true)
  t.errors(function() trials.sequence({ "A", "A" }, 1) end, 'trials.sequence: "A" is named twice', true)
  t.errors(function() trials.sequence({ "A", 3 }, 1) end, "trials.sequence: names[2] is 3, not a name", true)
  t.errors(function() trials.sequence({ "A" }, 0) end, "the trial count must be a positive integer, got 0", true)
  t.errors(function() trials.sequence({ "A" }, 1.5) end, "the trial count must be a positive integer, got 1.5", true)
  t.errors(function() trials.run { names = { "A" }, trials = 1 } end, "trials.run: sample must be a function", true)
  t.errors(function() trials.run(3) end, "trials.run: a table {names =, trials =, sample =} is required", true)
end)

t.test("check: accepts exactly the sequence, names the first difference", function()
  local names = { "vendor", "chain", "fused" }
  t.eq(trials.check(trials.sequence(names, 4), names, 4), true)
  -- plain names are accepted as well as entries
  t.eq(trials.check(names_of(trials.sequence(names, 2)), names, 2), true)
  local ok, why = trials.check(names_of(trials.sequence(names, 2)), names, 3)
  t.eq({ ok, why }, { false, "12 entries recorded, 3 trials of 3 names take 18" })
  -- A-B-C-A-B-C (not mirrored) fails at the fourth entry
  ok, why = trials.check({ "vendor", "chain", "fused", "vendor", "chain", "fused" }, names, 1)
  t.eq({ ok, why }, { false, "entry 4 (trial 1 position 4) is vendor, expected fused" })
  -- an entry whose trial number is off
  local s = trials.sequence(names, 2)
  s[7] = { trial = 1, position = 1, name = "vendor" }
  ok, why = trials.check(s, names, 2)
  t.eq({ ok, why }, { false, "entry 7 says trial 1 position 1, expected trial 2 position 1" })
  t.eq({ trials.check("x", names, 1) }, { false, "the recorded run is not a list" })
end)

t.run()
