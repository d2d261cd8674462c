-- experiments/bandwidth.lua end to end on a Vulkan device (lavapipe here):
-- the JSON lines it writes hold every cell, and each cell's GB/s and % read
-- follow from its bytes and time.
local t = dofile("tests/lua/harness.lua")
local report = require "gpubench.report"
local NULL = require("cjson").null -- what report writes for a missing value

-- Runs the experiment in a child process; returns the decoded JSON lines
-- and the console output.
local function run_bandwidth(extra)
  local exe = t.interpreter()
  local js = os.tmpname()
  local cmd = ("%q experiments/bandwidth.lua --backend vulkan --sizes 64K,256K --iters 4 "
    .. "--rounds 1 --read-gbs 10 --json %q %s 2>&1"):format(exe, js, extra or "")
  local p = assert(io.popen(cmd))
  local out = p:read("a")
  local ok, how, code = p:close()
  if not ok then
    os.remove(js)
    error(("bandwidth.lua ended by %s %s:\n%s"):format(tostring(how), tostring(code), out), 0)
  end
  local recs = report.read_jsonl(js)
  os.remove(js)
  return recs, out
end

t.test("every cell is written, and GB/s = bytes / time", function()
  t.device("vulkan") -- skips unless a Vulkan device exists
  local recs, out = run_bandwidth()
  t.eq(recs[1].type, "environment")
  t.eq(recs[1].backend, "vulkan")
  t.eq(recs[1].options.iters, 4)
  t.eq(recs[#recs].type, "end")
  t.eq(recs[#recs].cells, 4)
  local seen = {}
  for i = 2, #recs - 1 do
    local c = recs[i]
    t.eq(c.type, "cell")
    seen[#seen + 1] = ("%s:%d"):format(c.kernel, c.size) -- JSON numbers decode as floats
    t.eq(c.bytes, (c.kernel == "copy" and 2 or 1) * c.size)
    t.eq(#c.samples, 2, "both two-point times kept")
    t.eq(c.samples[1], c.t_n); t.eq(c.samples[2], c.t_2n)
    if c.status ~= "noise" then
      t.eq(c.status, "ok")
      t.near(c.ms, (c.t_2n - c.t_n) / c.iters, 1e-9 * c.ms)
      t.near(c.gbs, c.bytes / c.ms / 1e6, 1e-9 * c.gbs)
      t.near(c.pct_read, c.gbs / 10 * 100, 1e-9 * c.pct_read)
    else -- a noise cell (a loaded machine) has no time and no GB/s: JSON null
      t.truthy(c.ms == NULL and c.gbs == NULL, "noise: ms and gbs are null")
      t.truthy(c.t_2n < 1.2 * c.t_n or c.t_2n <= c.t_n)
    end
  end
  t.eq(seen, { "copy:65536", "copy:262144", "read:65536", "read:262144" })
  t.truthy(out:find("% read: of 10.0 GB/s, the pure-read ceiling (override)", 1, true), out)
end)

t.test("--validate prints the reversed 5x comparison for every cell", function()
  t.device("vulkan")
  local _, out = run_bandwidth("--validate --kernels read")
  t.truthy(out:find("validation: reversed order, 5x iterations", 1, true), out)
  t.truthy(out:find("read 64 KiB", 1, true), out)
  t.truthy(out:find("read 256 KiB", 1, true), out)
end)

t.run()
