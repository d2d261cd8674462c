-- gpubench.devices: --devices all|LIST -- one experiment run as one worker
-- process per device, concurrently, merged into one table.
--
-- Why processes: a device per process keeps every worker's timings its own
-- (no shared host thread, no context switching between devices inside one
-- submission loop) and lets a worker fail without taking the others' rows
-- with it. The parent re-runs the same script with the same arguments, plus
-- --device D, its shard and a --json file of its own; it opens no device.
-- With --devices-mode same every worker runs the whole table (or shard), so
-- the same cells run on every device (tools/device_spread.lua compares
-- them); with split the cells are dealt among the workers
-- (gpubench.shard.split). The parent checks each worker's file
-- (gpubench.merge), then writes the merged rows, each with worker, device,
-- device_name and device_uuid, to --json/--csv/--markdown and prints the
-- merged table. A worker that fails fails the run: its number, device and
-- exit status, the last line of its log, and the exit status its own.
--
--   local opts, meta = options.parse(spec, arg)   -- spec with options.shard_options()
--   if devices.dispatch(opts, meta) then return end -- before gpu.open

local errors = require "gpubench.errors"
local shard = require "gpubench.shard"
local merge = require "gpubench.merge"
local report = require "gpubench.report"

local devices = {}

-- parse(text) -> "all" or a list of device indices (repeats allowed), or nil, why.
function devices.parse(text)
  if type(text) ~= "string" then return nil, "not all or a list of device indices" end
  local t = text:match("^%s*(.-)%s*$")
  if t == "all" then return "all" end
  local list = {}
  for part in (t .. ","):gmatch("(.-),") do
    local v = part:match("^%s*(%d+)%s*$")
    local n = v and math.tointeger(tonumber(v))
    if not n or n > 0x7FFFFFFF then
      return nil, ("%q is not a device index (give all, or indices such as 0,1,3)"):format(part)
    end
    list[#list + 1] = n
  end
  return list
end

function devices.check(text)
  local v, why = devices.parse(text)
  if not v then return false, why end
  return true
end

local function quote(s)
  s = tostring(s)
  if s:match("^[%w%._/=:,+@%-]+$") then return s end
  return "'" .. s:gsub("'", "'\\''") .. "'"
end
devices.quote = quote

-- interpreter() -> the executable and the interpreter's own options (those
-- before the script: --backend, -e ...), without -i (a worker must not
-- start a REPL) and --list-devices.
function devices.interpreter()
  local lowest = 0
  while arg and arg[lowest - 1] ~= nil do lowest = lowest - 1 end
  local okg, gpu = pcall(require, "gpu")
  local exe = okg and type(gpu) == "table" and gpu.executable or (lowest < 0 and arg[lowest]) or nil
  if not exe then error("devices: cannot tell which executable runs this script (no gpu.executable, no arg[-1])", 0) end
  local opts = {}
  for i = lowest + 1, -1 do
    local a = arg[i]
    if a ~= "-i" and a ~= "--list-devices" then opts[#opts + 1] = a end
  end
  return exe, opts
end

-- The backend the workers open: --backend of the experiment, else of the
-- interpreter, else the one gpu.open picks (CUDA when it has a device).
local function backend_of(opts, interp, gpu)
  if opts.backend then return opts.backend end
  for i, a in ipairs(interp) do
    if a == "--backend" then return interp[i + 1] end
    local v = a:match("^%-%-backend=(.+)$")
    if v then return v end
  end
  for _, b in ipairs(gpu.backends()) do
    if b.name == "cuda" and b.available and b.count > 0 then return "cuda" end
  end
  return "vulkan"
end

-- worker_args(meta, drop) -> the script arguments of a worker: every option
-- given as a flag (as --name=raw), less those in drop. Options that came from
-- the environment reach the worker through its environment.
function devices.worker_args(meta, drop)
  local out = {}
  for _, d in ipairs(meta.decls or {}) do
    if meta.source[d.name] == "flag" and not drop[d.name] then
      if d.type == "flag" then out[#out + 1] = d.flag else out[#out + 1] = d.flag .. "=" .. meta.raw[d.name] end
    end
  end
  return out
end

local function last_line(path)
  local f = io.open(path, "rb")
  if not f then return "(no log)" end
  local text = f:read("a")
  f:close()
  local last
  for line in text:gmatch("[^\r\n]+") do if line:match("%S") then last = line end end
  return last and last:gsub("^gpubench: ", "") or "(empty log)"
end

-- A new folder under $TMPDIR (else /tmp) for the workers' files and logs;
-- os.tmpname's unique name, whose file is removed, makes it unique.
local function temp_dir()
  local lfs = require "lfs"
  local unique = os.tmpname()
  os.remove(unique)
  local path = ("%s/gpubench-devices-%s"):format(os.getenv("TMPDIR") or "/tmp", unique:match("[^/]+$"))
  local ok, err = lfs.mkdir(path)
  if not ok then error(("devices: cannot create %s: %s"):format(path, err), 0) end
  return path
end

local function remove_dir(dir, names)
  for _, n in ipairs(names) do os.remove(dir .. "/" .. n) end
  os.remove(dir)
end

-- run_workers(workers) -> statuses: runs every worker's command at once
-- (one shell, each in the background, output to its log, its status to a
-- file) and waits for all of them.
function devices.run_workers(workers)
  local parts = {}
  for _, w in ipairs(workers) do
    local cmd = {}
    for i, a in ipairs(w.argv) do cmd[i] = quote(a) end
    parts[#parts + 1] = ("( %s >%s 2>&1 </dev/null; echo $? >%s ) &"):format(table.concat(cmd, " "), quote(w.log),
      quote(w.rc))
  end
  parts[#parts + 1] = "wait"
  os.execute(table.concat(parts, "\n"))
  local statuses = {}
  for i, w in ipairs(workers) do
    local f = io.open(w.rc, "rb")
    local s = f and tonumber((f:read("a") or ""):match("%d+"))
    if f then f:close() end
    statuses[i] = s or -1
  end
  return statuses
end

local function refuse(fmt, ...) errors.usage(fmt:format(...)) end

-- check_request(opts, meta): the usage errors of --devices, before any worker.
local function check_request(opts, meta, drop)
  if meta.source.device == "flag" then refuse("--device and --devices: give one of them") end
  for _, k in ipairs { "list_cells", "profile", "list" } do
    if opts[k] then
      local flag = "--" .. k:gsub("_", "-")
      refuse("%s and --devices: %s runs in one process (drop --devices)", flag, flag)
    end
  end
  for _, d in ipairs(meta.decls or {}) do
    if d.output and not drop[d.name] and opts[d.name] then
      refuse("%s writes one file per run: with --devices, write --json and make it from the merged file", d.flag)
    end
  end
  if type(arg) ~= "table" or arg[0] == nil or arg[0] == "-" then
    refuse("--devices runs the script again in each worker: give it as a file, not on standard input")
  end
end

-- device_list(text, backend, gpu) -> the device indices of --devices, checked
-- against the backend's devices where discovery works.
local function device_list(text, backend, gpu)
  local count, infos = 0, {}
  local okd, all = pcall(gpu.devices)
  if okd then
    for _, d in ipairs(all) do
      if d.backend == backend then count = count + 1; infos[d.index] = d end
    end
  end
  local list = devices.parse(text)
  if list == "all" then
    -- every GPU of the backend; a CPU device (lavapipe) only where it is the only one
    local gpus, cpus = {}, {}
    for i = 0, count - 1 do
      if infos[i] and infos[i].device_type == "cpu" then cpus[#cpus + 1] = i else gpus[#gpus + 1] = i end
    end
    list = #gpus > 0 and gpus or cpus
    if #list == 0 then refuse("--devices=all: %s has no device (gpubench --list-devices says why)", backend) end
  elseif okd then
    for _, i in ipairs(list) do
      if i >= count then
        refuse("--devices=%s: %s has %s, no device %d", text, backend,
          count == 1 and "1 device (0)" or ("%d devices (0 to %d)"):format(count, count - 1), i)
      end
    end
  end
  return list
end

-- The workers: each one's command line (the script again, with its device,
-- shard and JSON file) and files, in a new folder.
local function plan_workers(meta, drop, list, shards)
  local exe, interp = devices.interpreter()
  local dir = temp_dir()
  local workers, names = {}, {}
  local base = devices.worker_args(meta, drop)
  for w, index in ipairs(list) do
    local stem = dir .. "/" .. ("worker-%d"):format(w - 1)
    local argv = { exe }
    for _, a in ipairs(interp) do argv[#argv + 1] = a end
    argv[#argv + 1] = arg[0]
    for _, a in ipairs(base) do argv[#argv + 1] = a end
    argv[#argv + 1] = "--device=" .. index
    if shards[w] then argv[#argv + 1] = "--shard=" .. shard.text(shards[w]) end
    argv[#argv + 1] = "--json=" .. stem .. ".jsonl"
    workers[w] = { number = w - 1, index = index, argv = argv, json = stem .. ".jsonl", log = stem .. ".log",
                   rc = stem .. ".rc" }
    for _, ext in ipairs { ".jsonl", ".log", ".rc" } do names[#names + 1] = stem:match("[^/]+$") .. ext end
  end
  return workers, dir, names
end

-- A failed worker ends the run: one line per failed worker, the first one's status.
local function fail_workers(workers, statuses, backend)
  local failed, first_status = {}, nil
  for i, w in ipairs(workers) do
    if statuses[i] ~= 0 then
      failed[#failed + 1] = ("devices: worker %d (%s device %d) failed with exit status %s: %s (log: %s)")
        :format(w.number, backend, w.index, statuses[i] >= 0 and tostring(statuses[i]) or "unknown", last_line(w.log),
          w.log)
      first_status = first_status or statuses[i]
    end
  end
  if #failed == 0 then return end
  if first_status < 1 or first_status > 255 then first_status = 1 end
  error(errors.exit_error(first_status, table.concat(failed, "\n")), 0)
end

-- The workers' files, each checked to hold its shard's cells, with the
-- worker and device columns on their rows.
local function collect(workers)
  local files = {}
  for i, w in ipairs(workers) do
    local f = merge.load(w.json)
    f.name = ("worker %d (%s)"):format(w.number, f.name)
    merge.complete(f)
    for _, r in ipairs(f.cells) do r.worker = w.number; merge.device_fields(r, f.env.device) end
    for _, sec in ipairs(f.sections) do for _, r in ipairs(sec.records) do r.worker = w.number end end
    files[i] = f
  end
  merge.same_run(files)
  return files
end

-- The parent's environment: its own command line and options, the workers'
-- devices and where each ran.
local function merged_env(meta, files, workers, s)
  local first = files[1].env
  local env = report.environment(nil, meta, {
    title = first.title, backend = first.backend, driver = first.driver, ceilings = first.ceilings,
    experiment = merge.experiment(first), shard = shard.record(s, first.shard.cells),
  })
  env.devices, env.workers = {}, {}
  for i, w in ipairs(workers) do
    local e = files[i].env
    local d = e.device or {}
    env.devices[i] = { worker = w.number, index = w.index, name = d.name, uuid = d.uuid }
    env.workers[i] = { worker = w.number, device = d, shard = shard.text(e.shard), command_line = e.command_line,
                       date = e.date, clocks = e.clocks, ceilings = e.ceilings }
  end
  return env
end

-- dispatch(opts, meta [, o]) -> false when --devices is not given (the
-- experiment runs as usual); else runs the workers, writes the merged
-- outputs and returns true (the experiment then returns). o.console: the
-- stream for the merged table (default stdout, stderr when an output is "-").
function devices.dispatch(opts, meta, o)
  o = o or {}
  if opts.devices == nil then
    if meta.source.devices_mode == "flag" then refuse("--devices-mode applies with --devices") end
    return false
  end
  local drop = { devices = true, devices_mode = true, device = true, shard = true, json = true, csv = true,
                 markdown = true }
  check_request(opts, meta, drop)
  local gpu = require "gpu"
  local backend = backend_of(opts, select(2, devices.interpreter()), gpu)
  local list = device_list(opts.devices, backend, gpu)
  local s = shard.of(opts.shard)
  local mode = opts.devices_mode or "same"
  local shards = {}
  if mode == "split" then shards = shard.split(s, #list) else for w = 1, #list do shards[w] = s end end
  local workers, dir, names = plan_workers(meta, drop, list, shards)

  local where = {}
  for _, w in ipairs(workers) do where[#where + 1] = tostring(w.index) end
  io.stderr:write(("devices: %d worker%s on %s device%s %s (%s), logs in %s\n"):format(#workers,
    #workers == 1 and "" or "s", backend, #workers == 1 and "" or "s", table.concat(where, ","), mode, dir))
  io.stderr:flush()
  fail_workers(workers, devices.run_workers(workers), backend)

  local files = collect(workers)
  local m = merge.combine(files)
  m.notes[#m.notes + 1] = ("* --devices %s (%s): %d worker process%s at once, %s; worker = its place in the "
    .. "list (0-based), device = its device index"):format(opts.devices, mode, #workers, #workers == 1 and "" or "es",
    mode == "split" and "the cells dealt among them (worker w: shard I + N w of N x workers)"
      or "each ran every cell of the table (or shard)")
  local first = files[1].env
  local title = ("%s; %d worker%s (devices %s, %s)"):format(first.title or merge.experiment(first), #workers,
    #workers == 1 and "" or "s", table.concat(where, ","), mode)
  local to_stdout = opts.json == "-" or opts.csv == "-" or opts.markdown == "-"
  merge.write { json = opts.json, csv = opts.csv, markdown = opts.markdown, env = merged_env(meta, files, workers, s),
                title = title, merged = m, console = o.console or (to_stdout and io.stderr or io.stdout) }
  remove_dir(dir, names)
  return true
end

return devices
