-- gpubench.order: every order, and rounds reporting only the last round.
local t = dofile("tests/lua/harness.lua")
local order = require "gpubench.order"
local rng = require "gpubench.rng"

local ten = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 }

t.test("forward copies, reverse reverses, input untouched", function()
  local abc = { "A", "B", "C" }
  local f = order.forward(abc)
  t.eq(f, { "A", "B", "C" })
  t.truthy(f ~= abc, "forward returns a new list")
  t.eq(order.reverse(abc), { "C", "B", "A" })
  t.eq(order.reverse {}, {})
  t.eq(abc, { "A", "B", "C" })
end)

t.test("mirrored: ABC -> ABCCBA, two variants -> ABBA", function()
  t.eq(order.mirrored { "A", "B", "C" }, { "A", "B", "C", "C", "B", "A" })
  t.eq(order.mirrored { "A", "B" }, { "A", "B", "B", "A" })
  t.eq(order.mirrored { "A" }, { "A", "A" })
end)

t.test("splitmix64 matches the reference sequence", function()
  -- First two outputs for state 0 (Vigna's splitmix64.c):
  -- 0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4 as signed 64-bit integers.
  local g = rng.new(0)
  t.eq(g:next64(), -2152535657050944081)
  t.eq(g:next64(), 7960286522194355700)
end)

t.test("shuffle: same seed same order, a permutation, pinned order", function()
  local a = order.shuffle(ten, 42)
  t.eq(order.shuffle(ten, 42), a)
  -- Pinned so a change of generator (or a platform difference) is caught.
  t.eq(a, { 9, 4, 7, 6, 5, 1, 10, 3, 2, 8 })
  t.eq(order.shuffle(ten, 43), { 5, 10, 3, 2, 7, 1, 9, 4, 6, 8 })
  local seen = {}
  for _, v in ipairs(a) do seen[v] = (seen[v] or 0) + 1 end
  for i = 1, 10 do t.eq(seen[i], 1, "each item exactly once") end
  t.eq(ten, { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 }, "input untouched")
  t.errors(function() order.shuffle(ten, 1.5) end, "seed must be an integer", true)
end)

t.test("apply picks an order by name", function()
  t.eq(order.apply("reverse", { 1, 2 }), { 2, 1 })
  t.eq(order.apply("shuffle", ten, 42), order.shuffle(ten, 42))
  t.eq(order.apply("mirrored", { 1, 2 }), { 1, 2, 2, 1 })
  t.errors(function() order.apply("backwards", ten) end, 'unknown order "backwards"', true)
end)

t.test("rounds runs the table k times and returns only the last round", function()
  local calls = {}
  -- A synthetic positional effect: the first cell ever measured is 3x slow.
  local first = true
  local function run_table(round, last)
    calls[#calls + 1] = { round, last }
    local out = {}
    for i, cell in ipairs { "q4", "q8", "f32" } do
      out[i] = { cell = cell, ms = first and 3.0 or 1.0 }
      first = false
    end
    return out, round
  end
  local res, round = order.rounds(2, run_table)
  t.eq(calls, { { 1, false }, { 2, true } })
  t.eq(round, 2)
  t.eq(res[1], { cell = "q4", ms = 1.0 }, "the slow first run is not reported")
  t.errors(function() order.rounds(0, run_table) end, "k must be a positive integer", true)
  t.errors(function() order.rounds(1, nil) end, "run_table must be a function", true)
end)

t.run()
