-- gpubench.order: the order in which a table's cells run, and rounds.
--
-- Why: in cera's wgpu_gemv_bench a cell's number depended on its position in the table
-- (whichever kernel ran first looked slow; docs/DESIGN.md) and was published
-- as a kernel defect. The cure was a discarded first round; the check is a reversed or
-- shuffled order. AstrAI's SwiGLU benchmark balanced drift with A-B-C-C-B-A trials. These are
-- the orders an experiment picks by name; every function returns a new list
-- and leaves its input alone.

local rng = require "gpubench.rng"

local order = {}

local function check_list(list, who)
  if type(list) ~= "table" then
    error(("order.%s: a list is required, got %s"):format(who, type(list)), 3)
  end
end

function order.forward(list)
  check_list(list, "forward")
  local out = {}
  for i = 1, #list do out[i] = list[i] end
  return out
end

function order.reverse(list)
  check_list(list, "reverse")
  local out, n = {}, #list
  for i = 1, n do out[i] = list[n + 1 - i] end
  return out
end

-- shuffle(list, seed): Fisher-Yates with a seeded generator; the same seed
-- gives the same order on every run and platform.
function order.shuffle(list, seed)
  check_list(list, "shuffle")
  if math.tointeger(seed) == nil then
    error(("order.shuffle: seed must be an integer, got %s"):format(tostring(seed)), 2)
  end
  local out = order.forward(list)
  local g = rng.new(seed)
  for i = #out, 2, -1 do
    local j = g:int(i)
    out[i], out[j] = out[j], out[i]
  end
  return out
end

-- mirrored(list): A B C -> A B C C B A. Each item's mean position is the same,
-- so a linear drift (clocks, temperature) charges every item equally; two
-- items give A B B A.
function order.mirrored(list)
  check_list(list, "mirrored")
  local out, n = order.forward(list), #list
  for i = n, 1, -1 do out[#out + 1] = list[i] end
  return out
end

order.names = { "forward", "reverse", "shuffle", "mirrored" }

-- apply(name, list [, seed]): the order called `name` (an option value).
function order.apply(name, list, seed)
  if name == "forward" then return order.forward(list)
  elseif name == "reverse" then return order.reverse(list)
  elseif name == "shuffle" then return order.shuffle(list, seed or 1)
  elseif name == "mirrored" then return order.mirrored(list)
  end
  error(("order.apply: unknown order %q (one of %s)"):format(tostring(name),
    table.concat(order.names, ", ")), 2)
end

-- rounds(k, run_table): calls run_table(round, is_last) for round = 1..k and
-- returns what the last call returned. Earlier rounds exist only to have run:
-- by the time anything is reported every cell has already run in full, which
-- sidesteps positional effects whose mechanism is unknown (cera measured that
-- a global warmup does not remove them).
function order.rounds(k, run_table)
  if math.tointeger(k) == nil or k < 1 then
    error(("order.rounds: k must be a positive integer, got %s"):format(tostring(k)), 2)
  end
  if type(run_table) ~= "function" then
    error("order.rounds: run_table must be a function", 2)
  end
  local result
  for round = 1, k do
    result = table.pack(run_table(round, round == k))
  end
  return table.unpack(result, 1, result.n)
end

return order
