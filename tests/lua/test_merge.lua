-- gpubench.merge: shard files written by gpubench.report put back together,
-- and every refusal (another experiment, options, backend, table, a missing,
-- repeated or incomplete shard, an unfinished file) with its exact message.
local t = dofile("tests/lua/harness.lua")
local merge = require "gpubench.merge"
local report = require "gpubench.report"
local shard = require "gpubench.shard"

local dir = os.tmpname()
os.remove(dir)
assert(require("lfs").mkdir(dir))

local COLUMNS = { { key = "kernel" }, { key = "ms", unit = "ms", format = "%.3f" } }
local TOTAL = 7
local DEVICE = { backend = "vulkan", index = 0, name = "llvmpipe", uuid = "00ff" }

-- A shard file as an experiment writes it: rows of its cells (ms = cell
-- index / 10), a peer row, a validation section, and its end record.
local function write(name, o)
  o = o or {}
  local s = shard.of(o.shard or "0/1")
  local path = dir .. "/" .. name
  local env = { backend = o.backend or "vulkan", device = o.device or DEVICE,
                command_line = { o.script or "experiments/bandwidth.lua", "--shard", shard.text(s) },
                options = o.options or { iters = 4, sizes = { 65536, 131072 }, shard = shard.text(s), json = path },
                shard = shard.record(s, o.total or TOTAL) }
  local sink = report.open { columns = o.columns or COLUMNS, env = env, json = path, console = false }
  local picked, at = shard.deal((function() local l = {} for i = 1, o.total or TOTAL do l[i] = i end return l end)(), s)
  for i, p in ipairs(picked) do
    if not (o.skip and o.skip[p]) then
      sink:add { kernel = "k" .. p, ms = p / 10, label = "cell " .. p, cell_index = o.bad_index or at[i], shard = shard.text(s) }
    end
  end
  if o.twice then sink:add { kernel = "k", ms = 1, label = "again", cell_index = at[1] } end
  sink:add { kernel = "peer", ms = 9, status = "peer", note = "measured elsewhere" }
  sink:note("* shared note")
  sink:note("* note of " .. shard.text(s))
  sink:section("validation", { { key = "label" }, { key = "ratio" } }, { { label = "cell " .. at[1], ratio = 1.01 } })
  sink:close(o.interrupted and "stopped" or nil)
  if o.no_end then
    local f = io.open(path, "rb"); local text = f:read("a"); f:close()
    text = text:gsub('{"[^\n]*"type":"end"[^\n]*}\n$', ""):gsub('[^\n]*"type":"end"[^\n]*\n$', "")
    f = io.open(path, "wb"); f:write(text); f:close()
  end
  return path
end

local function load_all(paths)
  local files = {}
  for i, p in ipairs(paths) do files[i] = merge.load(p) end
  return files
end

-- The usage error (exit 2) of fn, as text.
local function refusal(fn)
  local ok, e = pcall(fn)
  t.eq(ok, false, "refused")
  t.eq(type(e) == "table" and e.gpubench_exit, 2, "exit status 2: " .. t.error_text(e))
  return t.error_text(e)
end

local function full_check(paths)
  local files = load_all(paths)
  merge.same_run(files)
  merge.partition(files)
  for _, f in ipairs(files) do merge.complete(f) end
  return files
end

t.test("three shards in any order merge into the table: order, device columns, peers once, notes once", function()
  local paths = { write("b2.jsonl", { shard = "2/3" }), write("b0.jsonl", { shard = "0/3" }),
                  write("b1.jsonl", { shard = "1/3" }) }
  local files = full_check(paths)
  local m = merge.combine(files)
  t.eq(#m.rows, TOTAL)
  for i, r in ipairs(m.rows) do
    t.eq(r.cell_index, i, "table order")
    t.eq(r.ms, i / 10)
    t.eq(r.shard, shard.text { index = (i - 1) % 3, count = 3 })
    t.eq({ r.device, r.device_name, r.device_uuid }, { 0, "llvmpipe", "00ff" }, "device columns from the environment")
  end
  t.eq(#m.extras, 1, "the peer row every shard repeats is kept once")
  t.eq(m.extras[1].kernel, "peer")
  t.eq(m.notes, { "* shared note", "* note of 2/3", "* note of 0/3", "* note of 1/3" })
  t.eq(#m.sections, 1)
  t.eq(m.sections[1].type, "validation")
  t.eq(#m.sections[1].records, 3)
  t.eq({ m.columns[1].key, m.columns[2].key, m.columns[3].key }, { "device", "kernel", "ms" })

  -- written and read back: one finished run of the whole table, mergeable again
  local out = dir .. "/merged.jsonl"
  local env = merge.env(files)
  merge.write { json = out, env = env, merged = m }
  local back = merge.load(out)
  t.eq({ back.env.shard.index, back.env.shard.count, back.env.shard.cells, back.env.shard.merged_from }, { 0, 1, TOTAL, 3 })
  t.eq(back.env.options, { iters = 4, sizes = { 65536, 131072 } }, "options less --shard and the outputs")
  t.eq(#back.env.sources, 3)
  t.eq(back.env.sources[1].shard, "2/3")
  t.eq(back.env.sources[2].file, paths[2])
  merge.complete(back)
  merge.partition { back }
  t.eq(#back.cells, TOTAL)
  t.eq(#back.extras, 1)
  t.eq(back.cells[3].ms, 0.3)
  t.eq(back.cells[3].device_name, "llvmpipe")
  t.eq(back.ending.cells, TOTAL + 1)
end)

t.test("a missing, repeated or foreign shard is refused", function()
  local s0, s1, s2 = write("m0.jsonl", { shard = "0/3" }), write("m1.jsonl", { shard = "1/3" }),
    write("m2.jsonl", { shard = "2/3" })
  t.eq(refusal(function() full_check { s0, s2 } end), "merge: shard 1/3 is missing (the files hold 0/3, 2/3)")
  t.eq(refusal(function() full_check { s1 } end), "merge: shards 0/3, 2/3 are missing (the files hold 1/3)")
  t.eq(refusal(function() full_check { s0, s1, s2, s1 } end),
    ("merge: %s and %s are both shard 1/3: overlapping shards"):format(s1, s1))
  local h = write("h1.jsonl", { shard = "1/2" })
  t.eq(refusal(function() full_check { s0, h } end),
    ("merge: %s is shard 0/3 but %s is shard 1/2: shards of different splits"):format(s0, h))
  t.eq(refusal(function() full_check { write("u.jsonl"), write("u2.jsonl") } end),
    ("merge: %s/u.jsonl and %s/u2.jsonl are both shard 0/1: overlapping shards"):format(dir, dir))
end)

t.test("files of another experiment, options, backend, columns or table are refused", function()
  local a = write("o0.jsonl", { shard = "0/2" })
  local other = write("o1.jsonl", { shard = "1/2", script = "experiments/gemv_table.lua" })
  t.eq(refusal(function() full_check { a, other } end),
    ("merge: %s is a run of gemv_table, %s of bandwidth: files of different experiments"):format(other, a))
  local iters = write("o2.jsonl", { shard = "1/2", options = { iters = 8, sizes = { 65536, 131072 }, shard = "1/2" } })
  t.eq(refusal(function() full_check { a, iters } end),
    ("merge: %s differs from %s in --iters: 8 vs 4 (only --shard, --device, --devices, --devices-mode and the "
      .. "output files may differ)"):format(iters, a))
  local sizes = write("o3.jsonl", { shard = "1/2", options = { iters = 4, sizes = { 65536 } } })
  t.eq(refusal(function() full_check { a, sizes } end),
    ("merge: %s differs from %s in --sizes: 65536 vs 65536,131072 (only --shard, --device, --devices, "
      .. "--devices-mode and the output files may differ)"):format(sizes, a))
  local extra = write("o4.jsonl", { shard = "1/2", options = { iters = 4, sizes = { 65536, 131072 }, validate = true } })
  t.truthy(refusal(function() full_check { a, extra } end):find("in --validate: true vs (not set)", 1, true))
  local cuda = write("o5.jsonl", { shard = "1/2", backend = "cuda" })
  t.eq(refusal(function() full_check { a, cuda } end),
    ("merge: %s ran on cuda, %s on vulkan: files of different backends"):format(cuda, a))
  local cols = write("o6.jsonl", { shard = "1/2", columns = { { key = "kernel" }, { key = "gbs" } } })
  t.eq(refusal(function() full_check { a, cols } end),
    ("merge: %s and %s have different columns (kernel,gbs vs kernel,ms)"):format(cols, a))
  local big = write("o7.jsonl", { shard = "1/2", total = 9 })
  t.eq(refusal(function() full_check { a, big } end),
    ("merge: %s's table has 9 cells, %s's 7: not one table"):format(big, a))
  -- what may differ: the device, the outputs and the shard itself
  local ok = write("o8.jsonl", { shard = "1/2", device = { backend = "vulkan", index = 1, name = "other", uuid = "11" },
                                  options = { iters = 4, sizes = { 65536, 131072 }, device = 1, json = "x.jsonl" } })
  local m = merge.combine(full_check { a, ok })
  t.eq({ m.rows[1].device_name, m.rows[2].device_name, m.rows[2].device }, { "llvmpipe", "other", 1 })
end)

t.test("an unfinished, interrupted or incomplete file is refused", function()
  local good = write("i0.jsonl", { shard = "0/2" })
  local cut = write("i1.jsonl", { shard = "1/2", no_end = true })
  t.eq(refusal(function() merge.load(cut) end),
    ("merge: %s has no end record: its run did not finish (a killed run's cells are in FILE.partial)"):format(cut))
  local stopped = write("i2.jsonl", { shard = "1/2", interrupted = true })
  t.eq(refusal(function() merge.load(stopped) end), ("merge: %s was interrupted: run its shard again"):format(stopped))
  local lacking = write("i3.jsonl", { shard = "1/2", skip = { [4] = true, [6] = true } })
  t.eq(refusal(function() full_check { good, lacking } end),
    ("merge: %s lacks 2 of the 3 cells of shard 1/2 (the first: cell 4)"):format(lacking))
  local twice = write("i4.jsonl", { shard = "1/2", twice = true })
  t.eq(refusal(function() full_check { good, twice } end), ("merge: %s holds cell 2 twice"):format(twice))
  local foreign = write("i5.jsonl", { shard = "1/2", bad_index = 3 })
  t.eq(refusal(function() full_check { good, foreign } end),
    ("merge: %s holds cell 3, which is not in its shard 1/2 of 7 cells"):format(foreign))
  local junk = dir .. "/junk.jsonl"
  local f = io.open(junk, "wb"); f:write('{"type":"cell"}\n{"type":"end"}\n'); f:close()
  t.eq(refusal(function() merge.load(junk) end),
    ("merge: %s is not a gpubench JSON-lines file (its first line is not an environment record)"):format(junk))
  f = io.open(junk, "wb"); f:write('{"type":"environment"}\n{"type":"end","cells":0}\n'); f:close()
  t.eq(refusal(function() merge.load(junk) end),
    ("merge: %s has no shard record (an experiment without --shard wrote it, or a gpubench before it)"):format(junk))
  t.eq(merge.load(junk, { shard_optional = true }).env.type, "environment", "the spread report reads it")
  t.truthy(refusal(function() merge.load(dir .. "/none.jsonl") end):find("^merge: cannot open " .. dir .. "/none.jsonl"))
end)

t.test("workers that split a shard are complete together, workers of the same cells each", function()
  local path = dir .. "/w.jsonl"
  local function run(mode, rows)
    local sink = report.open { columns = COLUMNS, json = path, console = false,
                               env = { backend = "vulkan", command_line = { "experiments/x.lua" },
                                       options = { devices = "0,0", devices_mode = mode }, shard = shard.record("1/2", 6) } }
    for _, r in ipairs(rows) do sink:add { kernel = "k", ms = 1, cell_index = r[1], worker = r[2] } end
    sink:close()
    return merge.load(path)
  end
  merge.complete(run("split", { { 2, 0 }, { 4, 1 }, { 6, 0 } }))
  merge.complete(run("same", { { 2, 0 }, { 4, 0 }, { 6, 0 }, { 2, 1 }, { 4, 1 }, { 6, 1 } }))
  t.eq(refusal(function() merge.complete(run("same", { { 2, 0 }, { 4, 0 }, { 6, 0 }, { 2, 1 }, { 6, 1 } })) end),
    ("merge: %s (worker 1) lacks 1 of the 3 cells of shard 1/2 (the first: cell 4)"):format(path))
  t.eq(refusal(function() merge.complete(run("split", { { 2, 0 }, { 6, 1 } })) end),
    ("merge: %s lacks 1 of the 3 cells of shard 1/2 (the first: cell 4)"):format(path))
end)

t.test("console columns: numbers formatted, text left-aligned", function()
  t.eq(merge.format(4096.0), "4096")
  t.eq(merge.format(0.123456), "0.1235")
  local cols = merge.console_columns({ { key = "kernel" }, { key = "ms" } }, { { kernel = "a", ms = 1.5 } })
  t.eq({ cols[1].align, cols[2].align }, { "left", "right" })
end)

t.test("the test's files are removed", function()
  os.execute(("rm -rf %q"):format(dir))
  t.eq(require("lfs").attributes(dir), nil)
end)

t.run()
