-- tools/ncu_crosscheck.lua EXPERIMENT [ARGS...]: gpubench's cold time of each
-- cell beside what Nsight Compute measures for one call of it.
--
--   gpubench tools/ncu_crosscheck.lua experiments/gemv_table.lua --kernels q4_k,bf16
--   CELLS="q4_k custom" NCU=/usr/local/cuda/bin/ncu M=14336 K=5120 gpubench tools/ncu_crosscheck.lua experiments/gemv_table.lua
--
-- For every cell (or those CELLS names, comma-separated): the experiment run
-- with --method cold gives gpubench's median and the timer's fixed cost; the
-- experiment run with --profile CELL under `ncu --profile-from-start off
-- --cache-control all --clock-control none` gives ncu's gpu__time_duration
-- and DRAM bytes, summed over the kernels of the one call. The table puts
-- them side by side with the model's bytes (the row's model_bytes, or
-- weight_bytes), so the instrument is checked against another one: the two
-- times should agree within a few percent, and DRAM bytes read should be the
-- model's bytes. ARGS go to every run; --flush picks the flush gpubench's
-- cold samples use (ncu's own cache control flushes before each kernel).
-- JSON=path also writes the table as JSON lines.

local report = require "gpubench.report"

local exp = arg[1]
if not exp then
  io.stderr:write("usage: gpubench tools/ncu_crosscheck.lua EXPERIMENT [ARGS...]\n")
  os.exit(2)
end
local args = {}
for i = 2, #arg do args[#args + 1] = arg[i] end

local function quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end
local function cmdline(parts)
  local q = {}
  for i, p in ipairs(parts) do q[i] = quote(p) end
  return table.concat(q, " ")
end

-- The gpubench that runs this script (arg[-1]), so the children are the same build.
local i = -1
while arg[i - 1] do i = i - 1 end
local gpubench = os.getenv("GPUBENCH") or arg[i]
local ncu = os.getenv("NCU") or "ncu"

local function run(parts, what)
  local p = assert(io.popen(cmdline(parts) .. " 2>&1"))
  local out = p:read("a")
  local ok, _, code = p:close()
  if not ok then
    io.stderr:write(out)
    error(("ncu_crosscheck: %s failed (exit %s)"):format(what, tostring(code)), 0)
  end
  return out
end

local function with(extra)
  local parts = { gpubench, exp }
  for _, a in ipairs(args) do parts[#parts + 1] = a end
  for _, a in ipairs(extra) do parts[#parts + 1] = a end
  return parts
end

-- 1. The cells.
local names = {}
if os.getenv("CELLS") and os.getenv("CELLS") ~= "" then
  for n in os.getenv("CELLS"):gmatch("[^,]+") do names[#names + 1] = n end
else
  for line in run(with { "--list-cells" }, "--list-cells"):gmatch("[^\n]+") do names[#names + 1] = line end
end

-- 2. gpubench's cold medians.
local js = os.tmpname()
run(with { "--method", "cold", "--json", js }, "the cold run")
local rows = {}
for _, rec in ipairs(report.read_jsonl(js)) do
  if rec.type == "cell" and rec.label then rows[rec.label] = rec end
end
os.remove(js)

-- 3. ncu on one call of each cell.
local METRICS = "gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum"

-- The fields of one CSV line ("a","b,c",d).
local function csv_fields(line)
  local out, pos = {}, 1
  while pos <= #line + 1 do
    local c = line:sub(pos, pos)
    if c == '"' then
      local j, v = pos + 1, {}
      while j <= #line do
        local ch = line:sub(j, j)
        if ch == '"' and line:sub(j + 1, j + 1) == '"' then v[#v + 1] = '"'; j = j + 2
        elseif ch == '"' then j = j + 1; break
        else v[#v + 1] = ch; j = j + 1 end
      end
      out[#out + 1] = table.concat(v)
      pos = j + 1 -- past the comma
    else
      local j = line:find(",", pos, true) or (#line + 1)
      out[#out + 1] = line:sub(pos, j - 1)
      pos = j + 1
    end
  end
  return out
end

-- NCU_REPEATS=N: ncu measures each cell N times (each its own process), and
-- the median duration is kept: a single ncu duration of a short call moves
-- between runs (docs/results/h200-flush.md).
local repeats = math.tointeger(tonumber(os.getenv("NCU_REPEATS") or "1")) or 1

local function ncu_once(name)
  local parts = { ncu, "--profile-from-start", "off", "--cache-control", "all", "--clock-control", "none",
                  "--metrics", METRICS, "--csv", "--print-units", "base" }
  for _, p in ipairs(with { "--profile", name }) do parts[#parts + 1] = p end
  local out = run(parts, "ncu on " .. name)
  local header, sums, kernels = nil, {}, {}
  for line in out:gmatch("[^\n]+") do
    if line:sub(1, 1) == '"' then
      local f = csv_fields(line)
      if not header then
        header = {}
        for k, v in ipairs(f) do header[v] = k end
      elseif header["Metric Name"] and header["Metric Value"] then
        local metric = f[header["Metric Name"]]
        local v = tonumber((f[header["Metric Value"]] or ""):gsub(",", ""), 10)
        if metric and v then sums[metric] = (sums[metric] or 0) + v end
        if header["ID"] then kernels[f[header["ID"]]] = f[header["Kernel Name"] or 1] end
      end
    end
  end
  local n = 0
  for _ in pairs(kernels) do n = n + 1 end
  if not sums["gpu__time_duration.sum"] then
    io.stderr:write(out)
    error(("ncu_crosscheck: ncu measured no kernel for %s"):format(name), 0)
  end
  return { us = sums["gpu__time_duration.sum"] / 1e3, read = sums["dram__bytes_read.sum"],
           write = sums["dram__bytes_write.sum"], kernels = n }
end

local function ncu_of(name)
  local runs = {}
  for r = 1, repeats do runs[r] = ncu_once(name) end
  table.sort(runs, function(a, b) return a.us < b.us end)
  local m = runs[(#runs + 1) // 2]
  m.all_us = {}
  for r, x in ipairs(runs) do m.all_us[r] = x.us end
  return m
end

local columns = {
  { key = "cell", width = 22 },
  { key = "gpubench_us", title = "gpubench us", format = "%.2f" },
  { key = "fixed_us", title = "fixed us", format = "%.2f" },
  { key = "ncu_us", title = "ncu us", format = "%.2f" },
  { key = "time_ratio", title = "gb/ncu", format = "%.3f" },
  { key = "read_mb", title = "DRAM read MB", format = "%.2f" },
  { key = "model_mb", title = "model MB", format = "%.2f" },
  { key = "read_ratio", title = "read/model", format = "%.3f" },
  { key = "write_mb", title = "DRAM write MB", format = "%.3f" },
  { key = "kernels", format = "%d" },
}
local out = {}
for _, name in ipairs(names) do
  local r = rows[name] or {}
  local n = ncu_of(name)
  local model = r.model_bytes or r.weight_bytes
  local gb_us = type(r.ms) == "number" and r.ms * 1e3 or nil
  out[#out + 1] = {
    cell = name, gpubench_us = gb_us, fixed_us = type(r.fixed_us) == "number" and r.fixed_us or nil,
    ncu_us = n.us, time_ratio = gb_us and gb_us / n.us, read_mb = n.read and n.read / 1e6,
    model_mb = type(model) == "number" and model / 1e6 or nil,
    read_ratio = n.read and type(model) == "number" and n.read / model or nil,
    write_mb = n.write and n.write / 1e6, kernels = n.kernels, status = gb_us and "ok" or (r.status or "missing"),
    ncu_runs_us = n.all_us,
  }
  io.stdout:write(("%s: gpubench %s us, ncu %.2f us\n"):format(name, gb_us and ("%.2f"):format(gb_us) or "-", n.us))
  io.stdout:flush()
end
io.stdout:write("\n", report.table_text(columns, out))
io.stdout:write("* gpubench us: the cold median (flush, held stream, one call between timestamps); fixed us: the same\n"
  .. "  timing of an empty kernel; ncu: --cache-control all --clock-control none, summed over the call's kernels\n")
if os.getenv("JSON") then
  local f = assert(io.open(os.getenv("JSON"), "wb"))
  for _, r in ipairs(out) do f:write(report.encode(r), "\n") end
  f:close()
end
