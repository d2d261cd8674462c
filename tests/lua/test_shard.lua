-- gpubench.shard and the table's --shard: the rule p mod N, partitions of
-- every table size, the worker split, the option's messages, and a sharded
-- cells.table (its rows, --list-cells, --profile, the --devices guard).
local t = dofile("tests/lua/harness.lua")
local shard = require "gpubench.shard"
local cells = require "gpubench.cells"
local options = require "gpubench.options"

local function why(text) return select(2, shard.parse(text)) end

t.test("parse: I/N with 0 <= I < N, else the reason", function()
  t.eq(shard.parse("1/4"), { index = 1, count = 4 })
  t.eq(shard.parse(" 0 / 1 "), { index = 0, count = 1 })
  t.eq(shard.parse("7/8"), { index = 7, count = 8 })
  t.eq(why("4/4"), "I = 4 is not below N = 4 (shards are numbered 0 to N-1)")
  t.eq(why("9/4"), "I = 9 is not below N = 4 (shards are numbered 0 to N-1)")
  t.eq(why("0/0"), "N = 0: there must be at least one shard")
  for _, bad in ipairs { "1", "a/b", "-1/2", "1/2/3", "", "1/-2", "1.0/2" } do
    t.eq(why(bad), "not of the form I/N (shard I of N, 0 <= I < N)", bad)
  end
  t.eq(shard.text { index = 2, count = 5 }, "2/5")
end)

t.test("--shard, --devices and --devices-mode: one-line usage errors naming the value", function()
  local spec = { name = "x", options = options.shard_options() }
  local function err(argv)
    local ok, e = pcall(options.parse, spec, argv, { env = {} })
    t.eq(ok, false, table.concat(argv, " "))
    t.eq(e.gpubench_exit, 2)
    return t.error_text(e)
  end
  t.eq(err { "--shard", "3/3" }, "--shard=3/3 is invalid: I = 3 is not below N = 3 (shards are numbered 0 to N-1)")
  t.eq(err { "--shard", "x" }, "--shard=x is invalid: not of the form I/N (shard I of N, 0 <= I < N)")
  t.eq(err { "--devices", "0,x" },
    '--devices=0,x is invalid: "x" is not a device index (give all, or indices such as 0,1,3)')
  t.eq(err { "--devices-mode", "both" }, "--devices-mode=both is not one of same, split")
  local o = options.parse(spec, { "--shard", "2/5", "--devices", "0,0,1" }, { env = {} })
  t.eq({ o.shard, o.devices, o.devices_mode }, { "2/5", "0,0,1", "same" })
  t.eq(require("gpubench.devices").parse(o.devices), { 0, 0, 1 })
  t.eq(require("gpubench.devices").parse("all"), "all")
end)

t.test("deal: for every table size and N the shards partition the table by p mod N", function()
  for n = 0, 23 do
    local list = {}
    for i = 1, n do list[i] = "c" .. i end
    for count = 1, 7 do
      local seen, sizes = {}, {}
      for index = 0, count - 1 do
        local s = { index = index, count = count }
        local picked, at = shard.deal(list, s)
        t.eq(#picked, shard.size(n, s), ("size of %d/%d of %d"):format(index, count, n))
        sizes[#sizes + 1] = #picked
        for j, item in ipairs(picked) do
          t.eq((at[j] - 1) % count, index, "the rule: 0-based position mod N")
          t.eq(item, list[at[j]], "the item at its position")
          t.eq(seen[at[j]], nil, "no cell in two shards")
          seen[at[j]] = true
          if j > 1 then t.truthy(at[j] > at[j - 1], "declared order kept") end
        end
      end
      for p = 1, n do t.eq(seen[p], true, ("cell %d of %d is in a shard of %d"):format(p, n, count)) end
      local lo, hi = math.huge, -math.huge
      for _, x in ipairs(sizes) do lo, hi = math.min(lo, x), math.max(hi, x) end
      t.truthy(hi - lo <= 1, "balanced within one cell")
    end
  end
  t.eq((shard.deal({ "a", "b", "c" }, nil)), { "a", "b", "c" })
  t.eq((shard.deal({ "a", "b", "c", "d", "e" }, "1/2")), { "b", "d" })
end)

t.test("split: the workers' shards partition their parent shard", function()
  local list = {}
  for i = 1, 30 do list[i] = i end
  for _, parent in ipairs { { index = 0, count = 1 }, { index = 1, count = 3 }, { index = 2, count = 3 } } do
    local want = shard.deal(list, parent)
    for workers = 1, 4 do
      local got, seen = {}, {}
      for _, s in ipairs(shard.split(parent, workers)) do
        for _, v in ipairs((shard.deal(list, s))) do
          t.eq(seen[v], nil, "a cell in one worker's shard only")
          seen[v] = true
          got[#got + 1] = v
        end
      end
      table.sort(got)
      t.eq(got, want, ("%s over %d workers"):format(shard.text(parent), workers))
    end
  end
  t.eq(shard.split("1/3", 2), { { index = 1, count = 6 }, { index = 4, count = 6 } })
end)

t.test("record: the environment's shard", function()
  t.eq(shard.record("1/4", 10), { index = 1, count = 4, cells = 10, selected = 3, rule = shard.RULE })
  t.eq(shard.record(nil, 10), { index = 0, count = 1, cells = 10, selected = 10, rule = shard.RULE })
  t.eq(shard.record("5/8", 3).selected, 0)
end)

local function table_of(n, prepared)
  local list = {}
  for i = 1, n do list[i] = { label = "c" .. i, v = i } end
  return cells.table {
    cells = list,
    prepare = function(c) prepared[#prepared + 1] = c.label; return { v = c.v } end,
    measure = function(p) return { v = p.v } end,
  }
end

t.test("a sharded table runs, prepares and labels only its cells, whatever the order", function()
  for _, ord in ipairs { "forward", "reverse", "shuffle" } do
    local prepared = {}
    local tb <close> = table_of(7, prepared)
    t.eq(tb:special({ shard = "1/3" }, t.text_sink()), false)
    local rows, ran = tb:run { order = ord, seed = 3, rounds = 1, progress = false }
    t.eq(prepared, { "c2", "c5" }, "prepared: the shard's cells only")
    t.eq(#rows, 2)
    for i, want in ipairs { 2, 5 } do
      t.eq(rows[i].label, "c" .. want)
      t.eq(rows[i].cell_index, want, "cell_index: the position in the whole table")
      t.eq(rows[i].shard, "1/3")
      t.eq(rows[i].v, want)
    end
    t.eq(#ran, 2)
    t.eq(tb:shard_record(), { index = 1, count = 3, cells = 7, selected = 2, rule = shard.RULE })
  end
  local tb <close> = table_of(3, {})
  local rows = tb:run { rounds = 1, progress = false }
  t.eq({ rows[1].cell_index, rows[3].cell_index, rows[1].shard }, { 1, 3, nil }, "unsharded: cell_index, no shard")
  t.eq(tb:shard_record().count, 1)
end)

t.test("special: --list-cells lists the shard, --profile looks in it, --devices is refused", function()
  local tb <close> = table_of(7, {})
  local out = t.text_sink()
  t.eq(tb:special({ list_cells = true, shard = "0/2" }, out), true)
  t.eq(out:text(), "c1\nc3\nc5\nc7\n")
  local tb2 <close> = table_of(7, {})
  local _, e = pcall(tb2.special, tb2, { profile = "c2", shard = "0/2" }, t.text_sink())
  t.eq(e.gpubench_exit, 2)
  t.eq(t.error_text(e), "--profile=c2 names no cell of this table in shard 0/2 (--list-cells lists them)")
  local tb3 <close> = table_of(2, {})
  t.errors(function() tb3:special({ devices = "0,0" }, t.text_sink()) end,
    "cells: --devices is handled by gpubench.devices.dispatch(opts, meta), which this experiment does not call "
      .. "before opening its device", true)
end)

t.test("unlabelled cells are named by their place in the whole table", function()
  local tb <close> = cells.table { cells = { {}, {}, {}, {} }, measure = function() return {} end }
  tb:shard("1/2")
  local rows = tb:run { rounds = 1, progress = false }
  t.eq({ rows[1].label, rows[2].label }, { "cell 2", "cell 4" })
end)

t.test("a table is sharded once and before it is prepared", function()
  local tb <close> = table_of(4, {})
  tb:shard("0/2")
  t.errors(function() tb:shard("1/2") end, "cells: the table is sharded already", true)
  local tb2 <close> = table_of(4, {})
  tb2:run { rounds = 1, progress = false }
  t.errors(function() tb2:shard("1/2") end, "cells: shard after the table was prepared", true)
end)

t.run()
