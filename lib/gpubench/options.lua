-- gpubench.options: strict command-line flags and environment knobs.
--
-- Why: cera's wgpu_gemv_bench echoed ITERS nowhere, so a mistyped ITERS=100O
-- silently re-measured the default and an ITERS sweep came back
-- ITERS-independent -- exactly the check two-point timing has to survive. Its env_u32/env_f64
-- contract is kept here for flags and variables alike: absent -> default; set
-- but unparseable, zero where zero is meaningless, NaN/inf or out of range ->
-- an error naming the key and the value, raised before any device work and
-- ending the program with status 2 (gpubench.errors).
--
-- Flags are parsed by argparse (Debian's lua-argparse, bundled in the build's
-- lua/ folder), which also renders --help from the declarations; values are
-- then converted here so a flag and its environment variable obey the same
-- rules. A flag wins over its environment variable.
--
--   local opts = options.parse({
--     name = "bandwidth", description = "...",
--     options = {
--       { "iters", type = "int", default = 200, env = "ITERS", help = "launches at t(n)" },
--       { "sizes", type = "list", of = "bytes", default = "1M,16M" },
--     },
--   }, arg)
--
-- Types: int (positive unless min says otherwise), float (finite, positive
-- unless min says otherwise), bytes (4096, 64K, 16MiB, 1G: binary units),
-- enum (choices), string, path, flag (boolean), range ("S:E[:step]" of
-- `of` = int | bytes, expanded to a list), list (comma-separated `of` =
-- int | float | bytes | enum | string). Every option may have min, max, a
-- `check(value) -> ok, reason` function, `env`, `short` ("-n"), `argname`.

local errors = require "gpubench.errors"

local options = {}

local MAX_RANGE_POINTS = 100000

-- How a raw value is shown in a message: as typed, quoted when it would be
-- ambiguous (empty, spaces, control characters).
local function show(raw)
  if raw == "" or raw:find("[%s%c\"]") then return string.format("%q", raw) end
  return raw
end

local function bad(key, raw, problem)
  errors.usage(("%s=%s %s"):format(key, show(raw), problem))
end

local function trim(s) return (s:gsub("^%s+", ""):gsub("%s+$", "")) end

-- ------------------------------------------------------------ conversions
-- Each converter returns the value, or nil and a problem ("is not ...").

local function default_min(o)
  if o.min ~= nil then return o.min end
  return 1
end

local function range_problem(v, o, min)
  if min ~= nil and v < min then
    return ("is out of range: must be at least %s"):format(tostring(min))
  end
  if o.max ~= nil and v > o.max then
    return ("is out of range: must be at most %s"):format(tostring(o.max))
  end
end

local conv = {}

function conv.int(s, o)
  local min = default_min(o)
  local what = min >= 1 and "a positive integer" or "an integer"
  local t = trim(s)
  if not t:match("^[+-]?%d+$") then return nil, "is not " .. what end
  local v = math.tointeger(tonumber(t))
  if v == nil then return nil, "is too large for an integer" end
  local p = range_problem(v, o, min)
  if p then return nil, p end
  return v
end

local UNITS = { [""] = 1, K = 1 << 10, M = 1 << 20, G = 1 << 30, T = 1 << 40 }

function conv.bytes(s, o)
  local t = trim(s)
  local digits, unit, suffix = t:match("^(%d+)%s*([KkMmGgTt]?)(%a*)$")
  local what = "is not a byte size (e.g. 4096, 64K, 16MiB, 1G)"
  if not digits then return nil, what end
  unit = unit:upper()
  if not (suffix == "" or (unit ~= "" and (suffix == "iB" or suffix == "i"))
          or (unit == "" and suffix == "B")) then
    return nil, what
  end
  local n = math.tointeger(tonumber(digits))
  if n == nil or n > math.maxinteger // UNITS[unit] then return nil, "is too large" end
  local v = n * UNITS[unit]
  local p = range_problem(v, o, default_min(o))
  if p then return nil, p end
  return v
end

function conv.float(s, o)
  local t = trim(s)
  local lower = t:lower()
  if lower:match("^[+-]?inf$") or lower:match("^[+-]?infinity$") or lower:match("^[+-]?nan$") then
    return nil, "is not a finite number"
  end
  local v = tonumber(t)
  -- tonumber also accepts hex; only decimal notation is a number here
  -- ("1e999" parses, as inf, and is rejected below).
  if v == nil or not t:match("^[+-]?[%d.]+[eE]?[+-]?%d*$") then
    return nil, "is not a number"
  end
  v = v + 0.0
  local min = o.min
  if v ~= v or v == math.huge or v == -math.huge then
    return nil, "is not a finite number"
  end
  if min == nil then
    if not (v > 0) then return nil, "is not a finite positive number" end
  end
  local p = range_problem(v, o, min)
  if p then return nil, p end
  return v
end

function conv.enum(s, o)
  local t = trim(s)
  for _, c in ipairs(o.choices) do
    if t == c then return c end
  end
  return nil, "is not one of " .. table.concat(o.choices, ", ")
end

function conv.string(s)
  if s == "" then return nil, "is empty" end
  return s
end

-- Can a file be created in dir? A probe file is made and removed: a folder
-- can be present and not writable (read-only, /proc).
local function writable_dir(dir)
  local probe = ("%s/.gpubench-write-probe-%d"):format(dir, math.random(1 << 30))
  local f = io.open(probe, "wb")
  if not f then return false end
  f:close()
  os.remove(probe)
  return true
end

-- A path; with `output = true` it is a file to write: "-" (standard
-- output), or a path whose folder exists and is writable and which is not
-- itself a folder, so a run that would fail to write its results fails
-- before any device work, not after it. (The report writes path.partial
-- there and renames it at close: the folder is what must be writable.)
function conv.path(s, o)
  if s == "" then return nil, "is empty" end
  if o and o.output and s ~= "-" then
    local dir = s:match("^(.*)/[^/]*$") or "."
    if dir == "" then dir = "/" end
    local ok, lfs = pcall(require, "lfs")
    if ok then
      if lfs.attributes(dir, "mode") ~= "directory" then
        return nil, ("cannot be written: folder %s does not exist"):format(dir)
      end
      if lfs.attributes(s, "mode") == "directory" then
        return nil, "cannot be written: it is a folder"
      end
      if not writable_dir(dir) then
        return nil, ("cannot be written: folder %s is not writable"):format(dir)
      end
    end
  end
  return s
end

-- Two outputs of one run must not be one file (the second would overwrite
-- the first at close), nor both standard output. Paths are compared as
-- written after removing "./" and doubled slashes, and by inode where the
-- file exists already.
local function same_file(a, b)
  local function norm(p) return (p:gsub("/%./", "/"):gsub("^%./", ""):gsub("//+", "/")) end
  if norm(a) == norm(b) then return true end
  local ok, lfs = pcall(require, "lfs")
  if not ok then return false end
  local x, y = lfs.attributes(a), lfs.attributes(b)
  return x ~= nil and y ~= nil and x.dev == y.dev and x.ino == y.ino
end

local function check_outputs(decls, opts, meta)
  local seen = {}
  for _, d in ipairs(decls) do
    local v = opts[d.name]
    if d.output and type(v) == "string" then
      for _, other in ipairs(seen) do
        if same_file(v, other.path) then
          local key = meta.source[d.name] == "env" and d.env or d.flag
          local okey = meta.source[other.name] == "env" and other.env or other.flag
          errors.usage(("%s=%s is the same file as %s=%s: each output needs its own path%s")
            :format(key, show(v), okey, show(other.path), v == "-" and " (one may be - for standard output)" or ""))
        end
      end
      seen[#seen + 1] = { name = d.name, path = v, flag = d.flag, env = d.env }
    end
  end
end

local TRUE = { ["1"] = true, ["true"] = true, yes = true, on = true }
local FALSE = { ["0"] = true, ["false"] = true, no = true, off = true }

function conv.flag(s)
  local t = trim(s):lower()
  if TRUE[t] then return true end
  if FALSE[t] then return false end
  return nil, "is not a boolean (1/0, true/false, yes/no, on/off)"
end

local function element_opts(o)
  return { choices = o.choices, min = o.min, max = o.max }
end

function conv.list(s, o)
  local of = o.of or "string"
  local el = conv[of]
  local out = {}
  if trim(s) == "" then return nil, "is an empty list" end
  for part in (s .. ","):gmatch("(.-),") do
    if trim(part) == "" then return nil, "has an empty element" end
    local v, p = el(trim(part), element_opts(o)) -- "a, b" means {"a", "b"}
    if v == nil then return nil, ("has an element %s that %s"):format(show(trim(part)), p) end
    out[#out + 1] = v
  end
  return out
end

function conv.range(s, o)
  local of = o.of or "int"
  local el = conv[of]
  local what = "is not a range S:E[:step]"
  local parts = {}
  for part in (s .. ":"):gmatch("(.-):") do parts[#parts + 1] = part end
  if #parts < 2 or #parts > 3 then return nil, what end
  local eo = element_opts(o)
  local a, pa = el(parts[1], eo)
  if a == nil then return nil, ("has a start %s that %s"):format(show(trim(parts[1])), pa) end
  local b, pb = el(parts[2], eo)
  if b == nil then return nil, ("has an end %s that %s"):format(show(trim(parts[2])), pb) end
  local step = 1
  if parts[3] then
    local ps
    step, ps = el(parts[3], { min = 1 })
    if step == nil then return nil, ("has a step %s that %s"):format(show(trim(parts[3])), ps) end
  end
  if b < a then return nil, "is not a range: the end is below the start" end
  if (b - a) // step + 1 > MAX_RANGE_POINTS then
    return nil, ("has more than %d points"):format(MAX_RANGE_POINTS)
  end
  local out = {}
  for v = a, b, step do out[#out + 1] = v end
  return out
end

-- ------------------------------------------------------------ declarations

local TYPES = { int = true, float = true, bytes = true, enum = true, string = true,
                path = true, flag = true, range = true, list = true }

local function normalize(o, i)
  if type(o) ~= "table" then error(("options: declaration %d is not a table"):format(i), 4) end
  local name = o.name or o[1]
  if type(name) ~= "string" or not name:match("^[%a_][%w_]*$") then
    error(("options: declaration %d needs a name (letters, digits, _)"):format(i), 4)
  end
  local ty = o.type or "string"
  if not TYPES[ty] then error(("options: %s has unknown type %q"):format(name, tostring(ty)), 4) end
  if (ty == "enum" or o.of == "enum") and type(o.choices) ~= "table" then
    error(("options: %s needs choices"):format(name), 4)
  end
  if (ty == "list" or ty == "range") and o.of and not conv[o.of] then
    error(("options: %s has unknown element type %q"):format(name, tostring(o.of)), 4)
  end
  local d = {}
  for k, v in pairs(o) do d[k] = v end
  d.name, d.type = name, ty
  d.flag = "--" .. name:gsub("_", "-")
  return d
end

local function default_text(d)
  local v = d.default
  if v == nil then return nil end
  if type(v) == "table" then return table.concat(v, ",") end
  return tostring(v)
end

local function describe(d)
  local text = d.help or ""
  local extra = {}
  if d.type == "enum" then extra[#extra + 1] = "one of " .. table.concat(d.choices, ", ") end
  local dt = default_text(d)
  if dt then extra[#extra + 1] = "default " .. dt end
  if d.env then extra[#extra + 1] = "env " .. d.env end
  if #extra > 0 then text = text .. " [" .. table.concat(extra, "; ") .. "]" end
  return text
end

local ARGNAME = { int = "<n>", float = "<x>", bytes = "<bytes>", enum = "<choice>",
                  string = "<text>", path = "<file>", range = "<S:E[:step]>", list = "<a,b,...>" }

local function build_parser(spec, decls)
  local argparse = require "argparse"
  local epilog = spec.epilog or ""
  local any_env = false
  for _, d in ipairs(decls) do if d.env then any_env = true end end
  if any_env then
    epilog = (epilog ~= "" and epilog .. "\n\n" or "")
      .. "An environment variable is read only when its flag is absent: the flag wins.\n"
      .. "A value that is set but invalid (unparseable, zero, NaN/inf, out of range) is an\n"
      .. "error naming the key and the value (exit status 2)."
  end
  local p = argparse(spec.name or "experiment", spec.description, epilog ~= "" and epilog or nil)
  p:add_help(false)
  p:flag("-h --help", "Show this help and exit.")
  for _, d in ipairs(decls) do
    local names = d.short and (d.short .. " " .. d.flag) or d.flag
    local el
    if d.type == "flag" then
      el = p:flag(names, describe(d))
    else
      el = p:option(names, describe(d)):args(1):argname(d.argname or ARGNAME[d.type])
    end
    -- A repeated flag is an error rather than "the last one wins": two values
    -- for one knob on a command line is a mistake (a pasted command, a typo).
    el:target(d.name):count("0-1"):overwrite(false)
  end
  -- Positional arguments (spec.arguments): { name, help =, args = "?" | "0-2" | ... }.
  for _, a in ipairs(spec.arguments or {}) do
    p:argument(a[1], a.help):args(a.args or "?"):argname(a.argname or ("<" .. a[1] .. ">"))
  end
  return p
end

local function decls_of(spec)
  if type(spec) ~= "table" or type(spec.options) ~= "table" then
    error("options: spec.options must be a list of declarations", 3)
  end
  local decls, seen = {}, {}
  for i, o in ipairs(spec.options) do
    local d = normalize(o, i)
    if seen[d.name] then error(("options: %s is declared twice"):format(d.name), 3) end
    seen[d.name] = true
    decls[#decls + 1] = d
  end
  return decls
end

-- help(spec) -> the --help text.
function options.help(spec)
  return build_parser(spec, decls_of(spec)):get_help()
end

-- Joins "--opt -5" into "--opt=-5" for options that take a value, so a
-- negative number is reported by our checks ("is not a positive integer")
-- rather than as an unknown option "-5".
local function join_negative(argv, decls)
  local takes = {}
  for _, d in ipairs(decls) do
    if d.type ~= "flag" then
      takes[d.flag] = true
      if d.short then takes[d.short] = true end
    end
  end
  local out, i = {}, 1
  while i <= #argv do
    local a, nxt = argv[i], argv[i + 1]
    if takes[a] and type(nxt) == "string" and nxt:match("^%-[%d.]") then
      out[#out + 1] = a .. "=" .. nxt
      i = i + 2
    else
      out[#out + 1] = a
      i = i + 1
    end
  end
  return out
end

local function env_lookup(env)
  if env == nil then return os.getenv end
  if type(env) == "table" then return function(k) return env[k] end end
  if type(env) == "function" then return env end
  error("options.parse: opts.env must be a table or a function", 3)
end

local function convert(d, raw, key)
  local v, problem = conv[d.type](raw, d)
  if v == nil then bad(key, raw, problem) end
  if d.check then
    local ok, why = d.check(v)
    if not ok then bad(key, raw, "is invalid: " .. tostring(why or "rejected")) end
  end
  return v
end

-- parse(spec, argv [, {env = table|function}]) -> opts, meta
-- argv: the script's `arg` (arg[1..n]). opts[name] holds each value (nil
-- when absent with no default). meta.source[name] is "flag", "env" or
-- "default"; meta.raw[name] the text it came from; meta.argv a copy of argv;
-- meta.values is opts (for the report's environment record).
-- --help prints the help on stdout and ends the program with status 0.
function options.parse(spec, argv, popts)
  local decls = decls_of(spec)
  local getenv = env_lookup(popts and popts.env)
  argv = argv or {}
  local list = {}
  for i = 1, #argv do list[i] = tostring(argv[i]) end
  local p = build_parser(spec, decls)
  local ok, res = p:pparse(join_negative(list, decls))
  if not ok then
    errors.usage(("%s: %s (see --help)"):format(spec.name or "experiment", res))
  end
  if res.help then
    io.stdout:write(p:get_help(), "\n")
    io.stdout:flush()
    error(errors.exit_error(0, "", true), 0)
  end
  local opts = {}
  local meta = { source = {}, raw = {}, argv = list, values = opts }
  meta.decls = decls -- the declarations, so a worker's command line can be rebuilt (gpubench.devices)
  for _, d in ipairs(decls) do
    local v = res[d.name]
    if d.type == "flag" and v then
      opts[d.name], meta.source[d.name], meta.raw[d.name] = true, "flag", d.flag
    elseif d.type ~= "flag" and v ~= nil then
      opts[d.name] = convert(d, v, d.flag)
      meta.source[d.name], meta.raw[d.name] = "flag", v
    else
      local ev = d.env and getenv(d.env)
      if ev ~= nil then
        opts[d.name] = convert(d, ev, d.env)
        meta.source[d.name], meta.raw[d.name] = "env", ev
      elseif d.default ~= nil then
        local dv = d.default
        if type(dv) == "string" and d.type ~= "string" and d.type ~= "path" and d.type ~= "enum" then
          dv = convert(d, dv, d.flag .. " (default)")
        elseif type(dv) == "table" then
          dv = table.move(dv, 1, #dv, 1, {}) -- the caller may modify its copy, not the spec
        end
        opts[d.name], meta.source[d.name] = dv, "default"
      elseif d.type == "flag" then
        opts[d.name], meta.source[d.name] = false, "default"
      end
    end
  end
  for _, a in ipairs(spec.arguments or {}) do opts[a[1]] = res[a[1]] end
  check_outputs(decls, opts, meta)
  return opts, meta
end

-- The largest launch count n an experiment may take: two-point timing runs
-- 2n launches in one submission (a u32 count) and --validate 5x that, so a
-- larger n would fail only after the device work had started.
options.MAX_ITERS = 0xFFFFFFFF // (2 * 5)

-- Raises a usage error (exit status 2) for checks across several options,
-- e.g. options.fail("--k=1000 must be a multiple of 256").
options.fail = errors.usage

-- ------------------------------------------------------------ shared declarations

-- The device an experiment runs on; nil values fall back to the CLI's
-- --backend/--device, then to the best available device.
function options.device_options()
  return {
    { "backend", type = "enum", choices = { "cuda", "vulkan" }, env = "GPUBENCH_BACKEND",
      help = "Backend to run on (default: the CLI's --backend, else the best available)." },
    { "device", type = "int", min = 0, env = "GPUBENCH_DEVICE",
      help = "Device index within the backend (default: the CLI's --device, else 0)." },
  }
end

-- Order, rounds, validation and output files, as every table experiment takes them.
function options.table_options()
  return {
    { "order", type = "enum", choices = { "forward", "reverse", "shuffle" }, default = "forward",
      help = "Order of the table's cells." },
    { "seed", type = "int", min = 0, default = 1, help = "Seed of --order shuffle." },
    { "rounds", type = "int", default = 2,
      help = "Run the whole table this many times; only the last round is reported." },
    { "validate", type = "flag",
      help = "Rerun the table in reverse order at 5x the iterations and flag cells that move > 3 %." },
    { "csv", type = "path", output = true,
      help = "Write a CSV file (rows flushed as cells finish; - for standard output)." },
    { "json", type = "path", output = true,
      help = "Write JSON lines: the environment, then one line per cell (- for standard output)." },
    { "markdown", type = "path", output = true, help = "Write a Markdown table at the end (- for standard output)." },
    { "profile", type = "string", argname = "<cell>",
      help = "Instead of the table, one call of this cell between profiler start and stop "
        .. "(ncu --profile-from-start off), after warm-up and a flush." },
    { "list_cells", type = "flag", help = "Print the names of the table's cells (for --profile) and exit." },
  }
end

-- --shard, --devices and --devices-mode: one table over several processes.
-- cells' Table:special applies --shard (gpubench.shard has the rule); an
-- experiment calls gpubench.devices.dispatch(opts, meta) before it opens a
-- device, which runs the workers of --devices and merges their outputs.
function options.shard_options()
  return {
    { "shard", type = "string", argname = "<I/N>", check = function(v) return require("gpubench.shard").check(v) end,
      help = "Run shard I of N only (0 <= I < N): the cells at 0-based positions p of the declared table with "
        .. "p mod N = I, whatever --order." },
    { "devices", type = "string", argname = "<all|LIST>",
      check = function(v) return require("gpubench.devices").check(v) end,
      help = "One worker process per device (all: every GPU of the backend; or indices 0,1,..., a device may "
        .. "repeat), run concurrently, their rows merged into one table and --json with device columns." },
    { "devices_mode", type = "enum", choices = { "same", "split" }, default = "same",
      help = "With --devices: same: every worker runs the whole table (or shard), for the device spread "
        .. "(tools/device_spread.lua); split: the cells are dealt among the workers." },
  }
end

-- multiple_of(n, why) -> a check function: the value (or, for a list or a
-- range, every element) must be a multiple of n; the message says why
-- ("must be a multiple of 256 (the q4_k super-block)").
function options.multiple_of(n, why)
  local because = why and (" (" .. why .. ")") or ""
  return function(v)
    if type(v) == "table" then
      for _, e in ipairs(v) do
        if e % n ~= 0 then return false, ("%s is not a multiple of %d%s"):format(tostring(e), n, because) end
      end
    elseif v % n ~= 0 then
      return false, ("must be a multiple of %d%s"):format(n, because)
    end
    return true
  end
end

-- The --submit option: how a timing point's n calls reach the device.
function options.submit_option(default)
  return { "submit", type = "enum", choices = { "graph", "stream" }, default = default or "graph",
           help = "graph: a timing point is one replay of n calls (CUDA graph, recorded Vulkan command buffer); "
             .. "stream: n calls queued from the host, which times the host once a call is shorter than queueing it." }
end

-- How a cell is timed: --method (two-point over many calls, or cold: one
-- call per sample from a flushed L2), --flush (which flush), and the
-- stopping rule (--max-noise, --min-samples, --max-time, or --samples N).
function options.measure_options(default_method)
  return {
    { "method", type = "enum", choices = { "two-point", "cold" }, default = default_method or "two-point",
      help = "two-point: (t(2n) - t(n)) / n over many back-to-back calls; cold: one call per sample, each "
        .. "after an L2 flush, between device timestamps queued behind a held stream." },
    { "flush", type = "enum", choices = { "clean", "write" }, default = "clean",
      help = "The L2 flush: clean (read 2x L2: clean lines only) or write (a memset, as nvbench and triton "
        .. "flush: the next call pays for the dirty lines)." },
    { "max_noise", type = "float", default = 0.5,
      help = "Stopping rule: sample until the median's relative noise is at most this % (two-point repeats "
        .. "follow the rule only when a rule option is given)." },
    { "min_samples", type = "int", help = "Stopping rule: at least this many samples (default 20 cold, 3 two-point)." },
    { "max_time", type = "float", default = 2, help = "Stopping rule: at most this many seconds of samples per cell." },
    { "samples", type = "int", help = "Exactly this many samples per cell (two-point: repeats per runner) instead of the rule." },
  }
end

-- rule_of(opts, meta) -> the stopping rule for timing.sample_until /
-- bench (nil for two-point timings unless a rule option was given: they
-- keep their fixed repeats).
function options.rule_of(opts, meta)
  local given = false
  for _, k in ipairs { "max_noise", "min_samples", "max_time", "samples" } do
    if meta.source[k] and meta.source[k] ~= "default" then given = true end
  end
  if opts.method ~= "cold" and not given then return nil end
  return { max_noise = opts.max_noise / 100, max_time = opts.max_time, samples = opts.samples,
           min_samples = opts.min_samples or (opts.method == "cold" and 20 or 3) }
end

-- The --rotate flag of experiments that rotate weight copies out of L2.
function options.rotate_option(help)
  return { "rotate", type = "flag",
           help = help or "Cycle weight copies totalling >= 4x L2 so every call reads DRAM." }
end

-- require_l2(dev, flag): a usage error when flag (e.g. "--rotate") is set but
-- the device's L2 size is unknown, so a rotation cannot be checked to exceed
-- it. Call it right after opening the device, before any device work.
function options.require_l2(dev, set, flag)
  if set and not ((dev.l2_bytes or 0) > 0) then
    options.fail(("%s: the L2 size of %s is unknown, so a rotation cannot be checked to exceed it")
      :format(flag or "--rotate", tostring(dev.name)))
  end
end

-- overlap_option([help]): --overlap, launches that may overlap the one
-- before (timing.overlaps); require_overlap(dev, set) refuses it, exit 2,
-- on a device without launch overlap, before any device work.
function options.overlap_option(help)
  return { "overlap", type = "flag",
           help = help or ("Let each launch of a kernel that declares launch overlap start while the launch before "
             .. "it finishes (CUDA programmatic dependent launch, sm_90 or later), as a sequence of kernels "
             .. "launched that way runs; each waits for the one before where it depends on it.") }
end

function options.require_overlap(dev, set)
  local why = set and require("gpubench.timing").no_overlap(dev)
  if why then options.fail("--overlap: " .. why) end
end

-- concat(list, list, ...) -> one list of declarations.
-- parse_defines(text) -> {NAME = value}, or nil and why: "TILES=2,UNROLL=4",
-- a kernel's defines as an experiment's --geometry-style option gives them.
function options.parse_defines(text)
  local g = {}
  for part in (text .. ","):gmatch("(.-),") do
    local k, v = part:match("^%s*([%a_][%w_]*)%s*=%s*(%d+)%s*$")
    if not k then return nil, ("%q is not NAME=integer"):format(part) end
    if g[k] then return nil, ("%s is given twice"):format(k) end
    g[k] = math.tointeger(tonumber(v))
  end
  return g
end

-- format_defines(d [, sep = ","]) -> "NAME=v" for each define of d, sorted
-- by name (parse_defines' inverse with sep ","; "" for none).
function options.format_defines(d, sep)
  local parts = {}
  for k, v in pairs(d) do parts[#parts + 1] = ("%s=%s"):format(k, tostring(v)) end
  table.sort(parts)
  return table.concat(parts, sep or ",")
end

function options.concat(...)
  local out = {}
  for i = 1, select("#", ...) do
    for _, d in ipairs((select(i, ...))) do out[#out + 1] = d end
  end
  return out
end

return options
