-- gpubench.shard: one table split into N shards (--shard I/N), for a suite
-- spread over GPUs, nodes or a Slurm job array.
--
-- The rule: the cell at 0-based position p in the table's declared order
-- belongs to shard p mod N (shards are numbered 0 to N-1). Dealing round-robin
-- keeps the shards within one cell of each other in size and mixes the
-- table's kinds of cell (a format-major table does not put every q4_k cell in
-- shard 0); it depends only on the declared order, never on --order, so every
-- shard of one table is computed the same way on every machine, the shards
-- are disjoint and their union is the table. --order then orders the shard's
-- own cells.
--
--   local s = shard.parse("1/4")          -- {index = 1, count = 4}, or nil and why
--   local picked, at = shard.deal(list, s) -- the shard's cells and their 1-based table positions
--   env.shard = shard.record(s, #list)     -- what the environment record carries

local shard = {}

shard.RULE = "the cell at 0-based position p of the declared table is in shard p mod N"

-- parse(text) -> {index =, count =} or nil, why. "I/N": integers, N >= 1,
-- 0 <= I < N.
function shard.parse(text)
  if type(text) ~= "string" then return nil, "not of the form I/N" end
  local i, n = text:match("^%s*(%d+)%s*/%s*(%d+)%s*$")
  if not i then return nil, "not of the form I/N (shard I of N, 0 <= I < N)" end
  i, n = math.tointeger(tonumber(i)), math.tointeger(tonumber(n))
  if i == nil or n == nil then return nil, "a number too large" end
  if n < 1 then return nil, "N = 0: there must be at least one shard" end
  if i >= n then
    return nil, ("I = %d is not below N = %d (shards are numbered 0 to N-1)"):format(i, n)
  end
  return { index = i, count = n }
end

-- check(text) -> ok, why: the options check function of --shard.
function shard.check(text)
  local s, why = shard.parse(text)
  if not s then return false, why end
  return true
end

-- of(value) -> the parsed shard of an option value (a string or a parsed
-- table), or nil when value is nil.
function shard.of(v)
  if v == nil then return nil end
  if type(v) == "table" then return v end
  local s, why = shard.parse(v)
  if not s then error(("shard: %q: %s"):format(tostring(v), why), 2) end
  return s
end

-- text(s) -> "I/N".
function shard.text(s) return ("%d/%d"):format(s.index, s.count) end

-- member(position, s) -> whether the cell at 1-based table position belongs to s.
function shard.member(position, s)
  return (position - 1) % s.count == s.index
end

-- deal(list, s) -> picked, at: the shard's items in declared order and
-- their 1-based positions in list. s nil: the whole list.
function shard.deal(list, s)
  s = shard.of(s)
  local picked, at = {}, {}
  for p, item in ipairs(list) do
    if s == nil or shard.member(p, s) then
      picked[#picked + 1] = item
      at[#at + 1] = p
    end
  end
  return picked, at
end

-- size(total, s) -> how many of total cells shard s holds.
function shard.size(total, s)
  if s.index >= total then return 0 end
  return (total - 1 - s.index) // s.count + 1
end

-- record(s, total) -> the environment record's `shard`: index, count, the
-- table's cells and this shard's, and the rule. s nil: the whole table (0/1).
function shard.record(s, total)
  s = shard.of(s) or { index = 0, count = 1 }
  return { index = s.index, count = s.count, cells = total, selected = shard.size(total, s), rule = shard.RULE }
end

-- split(s, workers) -> the shards of `workers` processes that share shard s
-- between them (--devices-mode split): worker w (0-based) gets shard
-- s.index + s.count * w of s.count * workers, so a cell goes to the worker
-- by the same rule, one level down, and the workers' shards partition s.
function shard.split(s, workers)
  s = shard.of(s) or { index = 0, count = 1 }
  local out = {}
  for w = 0, workers - 1 do out[w + 1] = { index = s.index + s.count * w, count = s.count * workers } end
  return out
end

return shard
