-- gpubench.validate (and gpubench.cells, which it reruns): the reversed 5x
-- rerun flags exactly the cells whose number is an artifact of the harness.
local t = dofile("tests/lua/harness.lua")
local cells = require "gpubench.cells"
local validate = require "gpubench.validate"

local sink = t.text_sink

local table3 = { { label = "q4" }, { label = "q8" }, { label = "f32" } }
local true_ms = { q4 = 1.0, q8 = 2.0, f32 = 4.0 }

t.test("compare: ratio second/first, > 3 % is moved, missing is noise", function()
  local first = { { ms = 1.0 }, { ms = 2.0 }, { ms = 1.0 }, { ms = "noise" } }
  local second = { { ms = 1.02 }, { ms = 2.2 }, { ms = 0.96 }, { ms = 1.0 } }
  local r, moved = validate.compare(first, second, "ms")
  t.eq(moved, 2)
  t.near(r[1].ratio, 1.02, 1e-12); t.eq(r[1].status, "ok")
  t.near(r[2].ratio, 1.1, 1e-12); t.eq(r[2].status, "moved")
  t.eq(r[3].status, "moved", "a 4 % drop is flagged too")
  t.eq(r[4].status, "noise"); t.eq(r[4].ratio, nil)
  local _, m2 = validate.compare(first, second, "ms", 0.2)
  t.eq(m2, 0)
end)

t.test("compare: an infinite or NaN time is noise, never ok", function()
  local inf, nan = math.huge, 0 / 0
  local r, moved = validate.compare({ { ms = inf }, { ms = 1.0 }, { ms = nan }, { ms = 0 } },
                                    { { ms = inf }, { ms = inf }, { ms = 1.0 }, { ms = 1.0 } }, "ms")
  t.eq(moved, 0)
  for i = 1, 4 do
    t.eq(r[i].status, "noise", "cell " .. i)
    t.eq(r[i].ratio, nil, "cell " .. i)
  end
end)

t.test("cells.run: order, rounds, only the last round reaches the sink", function()
  local seen = {}
  local added = {}
  local fake_sink = { add = function(_, row) added[#added + 1] = row.label end }
  local rows, ran = cells.run {
    cells = table3, order = "reverse", rounds = 2, sink = fake_sink, progress = false,
    measure = function(cell, ctx)
      seen[#seen + 1] = ("%s:%d:%s"):format(cell.label, ctx.round, tostring(ctx.last))
      return { label = cell.label, ms = true_ms[cell.label] * ctx.scale }
    end,
  }
  t.eq(seen, { "f32:1:false", "q8:1:false", "q4:1:false", "f32:2:true", "q8:2:true", "q4:2:true" })
  t.eq(added, { "f32", "q8", "q4" })
  t.eq(ran, { 3, 2, 1 })
  t.eq(rows[1].label, "q4", "rows are indexed in declaration order")
  t.errors(function()
    cells.run { cells = table3, progress = false, measure = function() return 5 end }
  end, "measure returned number for q4, not a row table", true)
end)

-- Runs the table and validates it; measure(cell, ctx, position) is the
-- synthetic harness under test, position counting cells since the run began.
local function check(measure, rounds)
  local pos = 0
  local function m(cell, ctx)
    pos = pos + 1
    return { label = cell.label, ms = measure(cell, ctx, pos) }
  end
  local first, ran = cells.run { cells = table3, measure = m, rounds = rounds, progress = false }
  pos = 0
  local con = sink()
  local results, moved = validate.run { cells = table3, measure = m, first = first, ran = ran,
    key = "ms", rounds = rounds, console = con, progress = false }
  return results, moved, con:text()
end

t.test("a clean harness validates: nothing moves", function()
  local results, moved, text = check(function(cell) return true_ms[cell.label] end, 1)
  t.eq(moved, 0)
  for _, r in ipairs(results) do t.eq(r.ratio, 1.0); t.eq(r.status, "ok") end
  t.truthy(text:find("no cell moved more than 3 %", 1, true), text)
  t.truthy(text:find("reversed, 5x ms", 1, true), text)
end)

t.test("a positional artifact (first cell 3x slow) is flagged", function()
  -- cera's wgpu_gemv_bench: whichever kernel ran first looked slow (a positional artifact).
  local artifact = function(cell, _, pos) return true_ms[cell.label] * (pos == 1 and 3 or 1) end
  local results, moved, text = check(artifact, 1)
  t.eq(moved, 2, "q4 (first forward) and f32 (first reversed) both move")
  t.eq(results[1].status, "moved"); t.near(results[1].ratio, 1 / 3, 1e-12)
  t.eq(results[2].status, "ok")
  t.eq(results[3].status, "moved"); t.near(results[3].ratio, 3.0, 1e-12)
  t.truthy(text:find("MOVED", 1, true))
  t.truthy(text:find("2 cell(s) moved more than 3 %", 1, true), text)
  -- Two rounds discard the first pass: the same artifact no longer shows.
  local _, moved2 = check(artifact, 2)
  t.eq(moved2, 0)
end)

t.test("an unsubtracted fixed cost (T + C/ITERS) is flagged", function()
  -- cera's wgpu_gemv_bench: one timed run(ITERS) divided by ITERS reads
  -- T + C/ITERS, a fixed cost far above its cheap cells (docs/DESIGN.md, "validation").
  local iters, C = 200, 1.16
  local T = { q4 = 0.02, q8 = 0.03, f32 = 0.1 }
  local single_point = function(cell, ctx) return T[cell.label] + C / (iters * ctx.scale) end
  local results, moved = check(single_point, 2)
  t.eq(moved, 3)
  t.near(results[1].ratio, (0.02 + C / 1000) / (0.02 + C / 200), 1e-12)
  -- two-point timing cancels C: the same cells validate.
  local two_point = function(cell) return T[cell.label] end
  local _, ok_moved = check(two_point, 2)
  t.eq(ok_moved, 0)
end)

t.run()
