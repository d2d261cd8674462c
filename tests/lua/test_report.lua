-- gpubench.report: console table, CSV, Markdown, JSON lines, the environment
-- record, statuses and nulls, sections, files written beside their target,
-- an interrupted run's marker, and a run killed with SIGKILL keeping every
-- finished cell.
local t = dofile("tests/lua/harness.lua")
local report = require "gpubench.report"

local sink = t.text_sink

local columns = {
  { key = "kernel" },
  { key = "size", format = report.format_bytes, align = "right" },
  { key = "ms", title = "time", unit = "ms", format = "%.4f" },
  { key = "gbs", title = "GB/s", format = "%.1f" },
}

local function tmp()
  local p = os.tmpname()
  return p
end

local function slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

t.test("format_bytes", function()
  t.eq(report.format_bytes(512), "512 B")
  t.eq(report.format_bytes(65536), "64 KiB")
  t.eq(report.format_bytes(3 << 19), "1.5 MiB")
  t.eq(report.format_bytes(1 << 30), "1 GiB")
end)

t.test("console table is aligned, with units in the header", function()
  local text = report.table_text(columns, {
    { kernel = "copy", size = 1 << 20, ms = 0.01234, gbs = 170.04 },
    { kernel = "read", size = 1 << 30, status = "noise" },
  })
  t.eq(text, table.concat({
    "kernel   size  time (ms)   GB/s",
    "-------------------------------",
    "copy    1 MiB     0.0123  170.0",
    "read    1 GiB      noise  noise", -- a missing number shows the row's status
  }, "\n") .. "\n")
  t.eq(report.table_text({ { key = "a" }, { key = "b", format = "%d" } }, { { a = "x" } }),
    "a  b\n----\nx  -\n", "an ok row's missing number is -")
end)

t.test("CSV quoting follows RFC 4180", function()
  t.eq(report.csv_line(table.pack("a", 1, 2.5, nil, true)), "a,1,2.5,,true\n")
  t.eq(report.csv_line({ "a", nil, nil }, 3), "a,,\n", "trailing empty fields kept")
  t.eq(report.csv_line { 'say "hi"', "x,y", "line\nbreak" }, '"say ""hi""","x,y","line\nbreak"\n')
  t.eq(report.csv_line { 0.1 }, "0.1\n")
end)

t.test("Markdown table right-aligns numeric columns and escapes pipes", function()
  local md = report.markdown(columns, { { kernel = "a|b", size = 4096, ms = 1.5, gbs = 2 } }, { "* note" })
  t.eq(md, table.concat({
    "| kernel | size | time (ms) | GB/s |",
    "|---|---:|---:|---:|",
    "| a\\|b | 4 KiB | 1.5000 | 2.0 |",
    "",
    "* note",
  }, "\n") .. "\n")
end)

t.test("Markdown keeps a multi-line value in its row", function()
  local md = report.markdown({ { key = "kernel" }, { key = "note" } },
    { { kernel = "q4_0", note = "no build:\nline 2\r\nline 3" }, { kernel = "f32", note = "ok" } })
  t.eq(md, table.concat({
    "| kernel | note |",
    "|---|---|",
    "| q4_0 | no build:<br>line 2<br>line 3 |",
    "| f32 | ok |",
  }, "\n") .. "\n")
end)

t.test("sink streams rows and writes CSV, JSON lines and Markdown", function()
  local csv, js, md = tmp(), tmp(), tmp()
  local con = sink()
  local out = report.open {
    title = "demo", columns = columns, csv = csv, json = js, markdown = md, console = con,
    env = { device = { name = "fake" }, command_line = { "x.lua", "--iters", "5" } },
  }
  out:add { kernel = "copy", size = 1024, ms = 0.5, gbs = 4.096, samples = { 1.0, 1.5 } }
  out:add { kernel = "read", size = 2048, status = "noise", details = { t_n = 1, t_2n = 1.1 } }
  out:note("* GB/s = bytes / time")
  out:close()
  out:close() -- idempotent
  t.eq(con:text(), table.concat({
    "demo",
    -- streamed: columns are at least 8 wide, since later values are unknown
    "kernel        size  time (ms)      GB/s",
    "---------------------------------------",
    "copy         1 KiB     0.5000       4.1",
    "read         2 KiB      noise     noise",
    "",
    "* GB/s = bytes / time",
  }, "\n") .. "\n")
  -- CSV: the environment as comments, a status column, empty where there is no number
  t.eq(slurp(csv), table.concat({
    "# demo", "# device: fake", "# command: x.lua --iters 5",
    "kernel,size,ms,gbs,status", "copy,1024,0.5,4.096,ok", "read,2048,,,noise",
    "# * GB/s = bytes / time",
  }, "\n") .. "\n")
  local recs = report.read_jsonl(js)
  t.eq(#recs, 4)
  t.eq(recs[1].type, "environment")
  t.eq(recs[1].device.name, "fake")
  t.eq(recs[1].command_line, { "x.lua", "--iters", "5" })
  t.eq(recs[1].columns[3], { key = "ms", title = "time", unit = "ms" })
  t.eq(recs[2].type, "cell"); t.eq(recs[2].index, 1); t.eq(recs[2].status, "ok")
  t.eq(recs[2].samples, { 1.0, 1.5 }, "every sample kept")
  t.eq(recs[3].status, "noise"); t.eq(recs[3].details.t_2n, 1.1)
  t.eq(recs[3].ms, report.json.null, "a missing number is null, not a string")
  t.eq(recs[3].gbs, report.json.null)
  t.eq(recs[4], { type = "end", cells = 2, notes = { "* GB/s = bytes / time" }, interrupted = false })
  local mdt = slurp(md)
  t.truthy(mdt:find("| read | 2 KiB | noise | noise |", 1, true), mdt)
  t.truthy(mdt:find("## demo\n\ndevice: fake", 1, true), mdt)
  t.errors(function() out:add {} end, "add after close", true)
  for _, p in ipairs { csv, js, md } do
    t.eq(io.open(p .. ".partial", "rb"), nil, "no .partial file is left behind")
    os.remove(p)
  end
end)

t.test("JSON: an empty notes list is an array; arrays of samples stay arrays", function()
  local js = tmp()
  local out = report.open { columns = columns, json = js, console = false }
  out:add { kernel = "a", samples = {} }
  out:close()
  local text = slurp(js)
  t.truthy(text:find('"notes":[]', 1, true), text)
  t.truthy(text:find('"samples":[]', 1, true), text)
  os.remove(js)
end)

t.test("a file is written beside its target and replaces it only at close", function()
  local js = tmp()
  local f = assert(io.open(js, "wb")); f:write("old\n"); f:close()
  local out = report.open { columns = columns, json = js, console = false }
  out:add { kernel = "a", ms = 1 }
  t.eq(slurp(js), "old\n", "the previous file is untouched while the run goes on")
  t.truthy(slurp(js .. ".partial"):find('"kernel":"a"', 1, true))
  out:close()
  t.eq(report.read_jsonl(js)[2].kernel, "a")
  t.eq(io.open(js .. ".partial", "rb"), nil)
  os.remove(js)
end)

t.test("an interrupted run (an error through <close>) leaves well-formed files saying so", function()
  local csv, js, md = tmp(), tmp(), tmp()
  local ok, err = pcall(function()
    local out <close> = report.open { columns = columns, csv = csv, json = js, markdown = md, console = false }
    out:add { kernel = "a", ms = 1 }
    out:note("* a note")
    error("interrupted!", 0)
  end)
  t.eq({ ok, err }, { false, "interrupted!" })
  local recs = report.read_jsonl(js)
  t.eq(recs[#recs], { type = "end", cells = 1, notes = { "* a note" }, interrupted = true })
  t.truthy(slurp(csv):find("# interrupted: true\n$"), slurp(csv))
  t.truthy(slurp(md):find("**interrupted**", 1, true))
  os.remove(csv); os.remove(js); os.remove(md)
end)

t.test("sections: a second table goes to the console after the notes and into every file", function()
  local csv, js, md = tmp(), tmp(), tmp()
  local con = sink()
  local out = report.open { columns = columns, csv = csv, json = js, markdown = md, console = con }
  out:add { kernel = "a", ms = 1 }
  out:note("* note")
  local vcols = { { key = "cell" }, { key = "ratio", format = "%.3f" }, { key = "status" } }
  out:section("validation", vcols, { { cell = "a", ratio = 1.01, status = "ok" } }, "VALIDATION TEXT\n")
  out:close()
  local text = con:text()
  t.truthy(text:find("* note\nVALIDATION TEXT\n", 1, true), text)
  local recs = report.read_jsonl(js)
  t.eq(recs[3], { type = "validation", index = 1, cell = "a", ratio = 1.01, status = "ok" })
  t.truthy(slurp(csv):find("# validation:\n# cell,ratio,status\n# a,1.01,ok\n", 1, true), slurp(csv))
  t.truthy(slurp(md):find("### validation", 1, true))
  os.remove(csv); os.remove(js); os.remove(md)
end)

t.test("read_jsonl names a corrupt line", function()
  local p = tmp()
  local f = assert(io.open(p, "wb"))
  f:write('{"a":1}\n{"b":\n')
  f:close()
  t.errors(function() report.read_jsonl(p) end, "line 2 is not JSON", true)
  os.remove(p)
end)

t.test("environment record carries device, version, command line, date", function()
  local dev = { name = "Fake GPU", backend = "vulkan", driver_version = "1.2.3",
                memory_clock_khz = 1000, l2_bytes = 0 }
  local env = report.environment(dev, { argv = { "--iters", "9" }, values = { iters = 9 },
    source = { iters = "flag" } })
  t.eq(env.device.name, "Fake GPU")
  t.eq(env.backend, "vulkan"); t.eq(env.driver, "1.2.3")
  t.eq(env.clocks, { memory_clock_khz = 1000 })
  t.eq(env.options, { iters = 9 }); t.eq(env.option_sources, { iters = "flag" })
  t.eq(env.command_line[#env.command_line], "9")
  t.truthy(env.date:match("^%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%dZ$"), env.date)
  if t.gpu then t.eq(env.gpubench_version, t.gpu.version) end
end)

t.test("a run killed mid-table keeps every finished cell beside the untouched old file", function()
  local exe = t.interpreter()
  local csv, js, script = tmp(), tmp(), tmp()
  for _, p in ipairs { csv, js } do local f = assert(io.open(p, "wb")); f:write("previous run\n"); f:close() end
  local f = assert(io.open(script, "wb"))
  f:write(([[
local report = require "gpubench.report"
local out = report.open { columns = { { key = "cell" }, { key = "ms", format = "%%.3f" } },
  csv = %q, json = %q, console = false, env = { device = { name = "fake" } } }
for i = 1, 3 do out:add { cell = "c" .. i, ms = i * 1.5, samples = { i, i + 0.5 } } end
-- SIGKILL ourselves: no close, no flush at exit, no finalizers.
local pid = io.popen("echo $PPID"):read("l")
os.execute("kill -KILL " .. pid)
out:add { cell = "never", ms = 0 }
]]):format(csv, js))
  f:close()
  local ok, how, code = os.execute(("%q %q >/dev/null 2>&1"):format(exe, script))
  t.eq(ok, nil, "the child did not exit normally")
  t.truthy((how == "signal" and code == 9) or (how == "exit" and code == 137),
    ("child ended by %s %s"):format(tostring(how), tostring(code)))
  t.eq(slurp(csv), "previous run\n", "the old file is not replaced by a run that never closed")
  t.eq(slurp(js), "previous run\n")
  t.eq(slurp(csv .. ".partial"), "# device: fake\ncell,ms,status\nc1,1.5,ok\nc2,3,ok\nc3,4.5,ok\n")
  local recs = report.read_jsonl(js .. ".partial")
  t.eq(#recs, 4, "environment + 3 cells, no end record")
  t.eq(recs[1].type, "environment")
  for i = 1, 3 do
    t.eq(recs[i + 1].type, "cell"); t.eq(recs[i + 1].cell, "c" .. i)
    t.eq(recs[i + 1].samples, { i, i + 0.5 })
  end
  for _, p in ipairs { csv, js, csv .. ".partial", js .. ".partial", script } do os.remove(p) end
end)

t.test("markdown: a backslash before a pipe cannot un-escape it", function()
  local md = report.markdown({ { key = "a" } }, { { a = "x\\|y" } })
  t.truthy(md:find("| x\\\\\\|y |", 1, true), md)
end)

t.run()
