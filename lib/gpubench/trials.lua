-- gpubench.trials: A/B/C comparisons run as trials in mirrored order.
--
-- Why: AstrAI's SwiGLU benchmark compared three implementations of one call
-- in trials ordered A-B-C-C-B-A, so that a drift during the run (clocks,
-- temperature) charges every variant the same mean position. Here that
-- schedule is one function, the loop that follows it another, and a check
-- that a recorded run followed it a third, so an output file can be tested
-- for its order and not only for its numbers.
--
--   local ran = trials.sequence({ "A", "B", "C" }, 2)  -- A B C C B A A B C C B A
--   local r = trials.run { names = { "A", "B", "C" }, trials = 10,
--                          sample = function(name, trial, position) return ms end }
--   r.samples.A  -- A's samples in the order they were taken
--   local ok, why = trials.check(r.ran, { "A", "B", "C" }, 10)

local order = require "gpubench.order"

local trials = {}

local function check_names(names, who)
  if type(names) ~= "table" or #names == 0 then
    error(("trials.%s: names must be a non-empty list"):format(who), 3)
  end
  local seen = {}
  for i, n in ipairs(names) do
    if type(n) ~= "string" or n == "" then
      error(("trials.%s: names[%d] is %s, not a name"):format(who, i, tostring(n)), 3)
    end
    if seen[n] then error(("trials.%s: %q is named twice"):format(who, n), 3) end
    seen[n] = true
  end
end

local function check_count(count, who)
  if math.tointeger(count) == nil or count < 1 then
    error(("trials.%s: the trial count must be a positive integer, got %s"):format(who, tostring(count)), 3)
  end
end

-- sequence(names, count) -> {{trial =, position =, name =}, ...}: count
-- trials, each the names in order and then in reverse (order.mirrored), so
-- every name runs 2 x count times.
function trials.sequence(names, count)
  check_names(names, "sequence")
  check_count(count, "sequence")
  local out = {}
  for trial = 1, count do
    for position, name in ipairs(order.mirrored(names)) do
      out[#out + 1] = { trial = trial, position = position, name = name }
    end
  end
  return out
end

-- run{names =, trials =, sample = function(name, trial, position) -> value}
--   -> {samples = {[name] = {value, ...}}, ran = sequence}
-- Calls sample once per entry of sequence(names, trials), in that order;
-- a value may be anything but nil (a number, a table of details, false for
-- "no number"). An error in a sample stops the run and names where it was.
function trials.run(o)
  if type(o) ~= "table" then error("trials.run: a table {names =, trials =, sample =} is required", 2) end
  check_names(o.names, "run")
  check_count(o.trials, "run")
  if type(o.sample) ~= "function" then error("trials.run: sample must be a function", 2) end
  local seq = trials.sequence(o.names, o.trials)
  local samples = {}
  for _, n in ipairs(o.names) do samples[n] = {} end
  for _, e in ipairs(seq) do
    local ok, v = pcall(o.sample, e.name, e.trial, e.position)
    if not ok then
      error(("trials: %s, trial %d position %d: %s"):format(e.name, e.trial, e.position, tostring(v)), 0)
    end
    if v == nil then
      error(("trials: sample(%q, %d, %d) returned nothing"):format(e.name, e.trial, e.position), 0)
    end
    local list = samples[e.name]
    list[#list + 1] = v
  end
  return { samples = samples, ran = seq }
end

-- check(ran, names, count) -> true | false, why
-- Whether a recorded run (a list of entries {trial =, position =, name =},
-- or of plain names) is exactly sequence(names, count).
function trials.check(ran, names, count)
  check_names(names, "check")
  check_count(count, "check")
  if type(ran) ~= "table" then return false, "the recorded run is not a list" end
  local want = trials.sequence(names, count)
  if #ran ~= #want then
    return false, ("%d entries recorded, %d trials of %d names take %d"):format(#ran, count, #names, #want)
  end
  for i, w in ipairs(want) do
    local r = ran[i]
    local name = type(r) == "table" and r.name or r
    if name ~= w.name then
      return false, ("entry %d (trial %d position %d) is %s, expected %s")
        :format(i, w.trial, w.position, tostring(name), w.name)
    end
    if type(r) == "table" and (r.trial ~= w.trial or r.position ~= w.position) then
      return false, ("entry %d says trial %s position %s, expected trial %d position %d")
        :format(i, tostring(r.trial), tostring(r.position), w.trial, w.position)
    end
  end
  return true
end

return trials
