-- experiments/swiglu_ab.lua: fused SwiGLU GEMV against the GEMV chain and the
-- vendor GEMM (AstrAI's SwiGLU benchmark), eager and graph, L2-resident and
-- rotated, side by side.
--
--   gpubench experiments/swiglu_ab.lua --output swiglu.json --markdown-output swiglu.md
--   gpubench experiments/swiglu_ab.lua --shape 11008,4096 --m-values 1,8 --regime rotated
--
-- y = silu(x Wg^T) * (x Wu^T), BF16 weights and activations, fp32
-- accumulation, BF16 output; M (the rows of x) 1..8. Paths and their launches
-- per call: gpubench.swiglu; cells, checks and trials: gpubench.swiglu_bench;
-- outputs: gpubench.swiglu_report; design: docs/kernels/swiglu.md.

local gpu = require "gpu"
local options = require "gpubench.options"
local cells = require "gpubench.cells"
local bench = require "gpubench.bench"
local timing = require "gpubench.timing"
local ceilings = require "gpubench.ceilings"
local report = require "gpubench.report"
local swiglu = require "gpubench.swiglu"
local sb = require "gpubench.swiglu_bench"
local sr = require "gpubench.swiglu_report"
local shard = require "gpubench.shard"
local devices = require "gpubench.devices"

local MODES = { eager = { "eager" }, graph = { "graph" }, both = { "eager", "graph" } }
local REGIMES = { l2 = { "l2" }, rotated = { "rotated" }, both = { "l2", "rotated" } }

local opts, meta = options.parse({
  name = "swiglu_ab",
  description = "Fused SwiGLU GEMV vs the GEMV chain vs the vendor GEMM: eager and graph, L2-resident and rotated.",
  options = options.concat(options.device_options(), {
    { "shape", type = "list", of = "int", argname = "<N,K>",
      help = "One custom shape N,K (K a multiple of 8) instead of the five models' up/gate shapes." },
    { "m_values", type = "list", of = "int", default = "1,2,4,8", max = swiglu.MAX_M,
      help = "Rows of x (tokens), each 1..8." },
    { "mode", type = "enum", choices = { "eager", "graph", "both" }, default = "both",
      help = "graph: a timing point is one graph replay; eager: its launches queued from the host." },
    { "regime", type = "enum", choices = { "l2", "rotated", "both" }, default = "both",
      help = "l2: one weight copy re-read call after call (L2-resident where it fits); rotated: "
        .. "copies totalling >= 4x L2, so every call reads its weights from DRAM." },
    { "warmup", type = "int", min = 0, default = 20, max = 100000, help = "Untimed calls before each sample." },
    { "iterations", type = "int", default = 100, max = options.MAX_ITERS,
      help = "Calls n at a sample's first timing point (the second runs 2n)." },
    { "trials", type = "int", default = 10, max = 10000,
      help = "A-B-C-C-B-A trials per group: 2 samples per path each." },
    { "rounds", type = "int", default = 2, max = 100,
      help = "Run the whole table this many times; only the last round is reported." },
    { "seed", type = "int", min = 0, default = 1, help = "Seed of the random weights (x uses seed + 1)." },
    options.overlap_option("Let each launch of our kernels start while the launch before it finishes (CUDA "
      .. "programmatic dependent launch, sm_90 or later), as a decode step launched that way runs; each waits for "
      .. "the one before where it depends on it. The vendor GEMM's own launches cannot (its elementwise step "
      .. "can); the output says which paths did."),
    { "geometry", type = "string", argname = "<NAME=V,...>",
      help = "Kernel defines for every shape instead of the table's (its shape rules included): CUDA TILES, UNROLL, WARPS, KSPLIT (fused); Vulkan SW_WG, SW_OUT." },
    { "l2_bytes", type = "bytes",
      help = "L2 size for a device that does not report it (lavapipe); never below a reported one." },
    { "read_gbs", type = "float", help = "Read ceiling in GB/s (default: measured once, cached)." },
    { "output", type = "path", output = true, help = "Write the JSON document: every sample, the figures, the environment." },
    { "markdown_output", type = "path", output = true, help = "Write the Markdown tables per shape, mode and regime." },
    { "json", type = "path", output = true,
      help = "Write JSON lines: the environment, then one line per group (the console's columns, each path's p50 "
        .. "as <path>_us and its samples) (- for standard output)." },
    { "list_cells", type = "flag", help = "Print the names of the groups (the table's cells) and exit." },
  }, options.shard_options()),
}, arg)

-- ---------------------------------------------------------------- checks

local shapes = swiglu.SHAPES
if opts.shape then
  if #opts.shape ~= 2 then options.fail(("--shape=%s must be two integers N,K"):format(meta.raw.shape)) end
  local why = swiglu.check_shape(opts.shape[1], opts.shape[2])
  if why then options.fail(("--shape=%s: %s"):format(meta.raw.shape, why)) end
  shapes = { { name = "custom", n = opts.shape[1], k = opts.shape[2] } }
end
local seen_m = {}
for _, m in ipairs(opts.m_values) do
  if seen_m[m] then options.fail(("--m-values=%s names M=%d twice"):format(meta.raw.m_values or "", m)) end
  seen_m[m] = true
end
local geometry_changes = {}
if opts.geometry then
  local g, why = swiglu.parse_geometry(opts.geometry)
  if not g then options.fail(("--geometry=%s: %s"):format(opts.geometry, why)) end
  geometry_changes = g
end
local modes, regimes = MODES[opts.mode], REGIMES[opts.regime]

if devices.dispatch(opts, meta) then return end -- --devices: one worker process per device, merged
local dev = gpu.open { backend = opts.backend, index = opts.device }
options.require_overlap(dev, opts.overlap)
local l2, l2_source = (dev.l2_bytes or 0) > 0 and dev.l2_bytes or nil, "device"
if opts.l2_bytes then
  if l2 and opts.l2_bytes < l2 then
    options.fail(("--l2-bytes=%s is below the %d-byte L2 %s reports: a rotation over it could fit in L2")
      :format(meta.raw.l2_bytes, l2, dev.name))
  end
  l2, l2_source = opts.l2_bytes, "--l2-bytes"
end
if opts.regime ~= "l2" and not l2 then
  options.fail(("--regime %s: the L2 size of %s is unknown, so a rotation cannot be checked to exceed it "
    .. "(give --l2-bytes)"):format(opts.regime, dev.name))
end
-- --geometry: one geometry for every shape; else the table's, with its shape rules.
local SG = swiglu.specs(dev.backend)
local geometry, gwhy
if opts.geometry then
  geometry, gwhy = SG.geometry(geometry_changes)
  if not geometry then options.fail(("--geometry=%s: %s"):format(opts.geometry, gwhy)) end
end
-- Without --geometry, an M the device's rule covers takes its geometry (swiglu.device_geometry).
local shape_geometries, by_shape, by_m = {}, {}, {}
for _, s in ipairs(shapes) do
  local g, rule = geometry, nil
  if not g then g, rule = SG.for_shape(s.n, s.k) end
  local sg = { name = s.name, n = s.n, k = s.k, geometry = g, rule = rule and true or nil }
  shape_geometries[#shape_geometries + 1] = sg
  by_shape[s.n .. "x" .. s.k] = g
  local dwhy = swiglu.check_device(dev, g)
  if dwhy then options.fail(("--geometry=%s: %s"):format(opts.geometry or swiglu.geometry_text(g), dwhy)) end
  for _, m in ipairs(opts.m_values) do
    local gm = not geometry and swiglu.device_geometry(dev, s.n, s.k, m) or nil
    if gm then
      by_m[s.n .. "x" .. s.k .. "|" .. m] = gm
      sg.device = sg.device or { geometry = gm, m_values = {}, backend = dev.backend }
      table.insert(sg.device.m_values, m)
    end
    local why = swiglu.check_launch(dev.backend, s.n, m, gm or g, s.k)
    if why then options.fail(("%s (N=%d, K=%d): %s"):format(s.name, s.n, s.k, why)) end
  end
  -- a batch cycles through at most gpu.max_launches launches: copies x 2 per call
  if opts.regime ~= "l2" then
    local copies = timing.rotation(swiglu.bytes(s.n, s.k, 1).weights, l2)
    if copies * 2 > timing.MAX_LAUNCHES then
      options.fail(("%s (N=%d, K=%d): rotating its weights through 4x L2 takes %d copies, more than the %d "
        .. "launches a batch cycles through allow (2 per call): use a larger shape or --regime l2")
        :format(s.name, s.n, s.k, copies, timing.MAX_LAUNCHES))
    end
  end
end

-- ---------------------------------------------------------------- the table

-- The groups are the table's cells (--shard deals them, --list-cells names them).
local groups = {}
for _, s in ipairs(shapes) do
  for _, regime in ipairs(regimes) do
    for _, mode in ipairs(modes) do
      for _, m in ipairs(opts.m_values) do
        groups[#groups + 1] = { label = ("%s M=%d %s %s"):format(s.name, m, mode, regime), shape = s, m = m,
                                mode = mode, regime = regime }
      end
    end
  end
end
if opts.list_cells then
  for _, g in ipairs((shard.deal(groups, opts.shard))) do io.stdout:write(g.label, "\n") end
  return
end

local ceil = ceilings.get(dev, { read_gbs = opts.read_gbs })
local settings = {
  warmup = opts.warmup, iterations = opts.iterations, trials = opts.trials, rounds = opts.rounds,
  m_values = opts.m_values, modes = modes, regimes = regimes, seed = opts.seed, geometry = geometry,
  overlap = opts.overlap or false, shape_geometries = shape_geometries,
  l2_bytes = l2, l2_source = l2_source, read_gbs = ceil.read_gbs, read_source = ceil.read_source,
  shapes = shapes, tolerance = require("gpubench.swiglu_check").TOLERANCE,
}

local ctx <close> = sb.context(dev, { m_values = opts.m_values, warmup = opts.warmup, iterations = opts.iterations,
                                      trials = opts.trials, seed = opts.seed, l2_bytes = l2, overlap = opts.overlap,
                                      geometry_for = function(st, m)
                                        return by_m[st.n .. "x" .. st.k .. "|" .. m] or by_shape[st.n .. "x" .. st.k]
                                      end,
                                      read_gbs = ceil.read_gbs })

local tb <close> = cells.table {
  cells = groups, monitor = dev,
  prepare = function(c) return ctx:group(c) end,
  arm = function(p) p:arm() end,
  ready = function() bench.ready(dev) end,
  measure = function(p) return p:measure() end,
  close = function(p) p:close() end,
}
tb:shard(opts.shard)

local title = ("swiglu_ab on %s (%s, driver %s)"):format(dev.name, dev.backend, dev.driver_version)
local env = report.environment(dev, meta, { ceilings = ceil, l2_bytes = l2, l2_source = l2_source,
                                             shard = tb:shard_record() })
local to_stdout = opts.output == "-" or opts.markdown_output == "-" or opts.json == "-"
local console <close> = report.open { title = title, columns = sr.CONSOLE, env = env, json = opts.json,
                                      console = to_stdout and io.stderr or nil }

-- The files: the JSON rewritten as each group of the last round finishes
-- (an interrupted run keeps those, marked so), the Markdown at the end; "-"
-- (standard output) is written once, at the end.
local rows = {}
local function put(path, text, final)
  if path == "-" then
    if final then io.stdout:write(text); io.stdout:flush() end
  elseif path then
    report.write_atomic(path, text)
  end
end
local function write(interrupted, final)
  local notes = sr.notes(rows, settings)
  if opts.output then
    put(opts.output, report.json.encode(sr.document { env = env, settings = settings, rows = rows, notes = notes,
                                                      interrupted = interrupted }) .. "\n", final)
  end
  if final then
    local lines = { ("device: %s (%s, driver %s)"):format(dev.name, dev.backend, dev.driver_version),
                    "command: " .. table.concat(env.command_line, " "), "date: " .. env.date }
    put(opts.markdown_output, sr.markdown { title = title, env_lines = lines, rows = rows, notes = notes,
                                            interrupted = interrupted }, true)
  end
  return notes
end
local files <close> = setmetatable({}, { __close = function(_, err) if err ~= nil then write(true, true) end end })
local sink = { add = function(_, row)
  rows[#rows + 1] = row
  local line = sr.console_row(row)
  -- the JSON line: the console's text, the numbers behind it and the group's place in the table
  line.label, line.cell_index, line.shard, line.n, line.k = row.label, row.cell_index, row.shard, row.n, row.k
  for _, p in ipairs(swiglu.PATHS) do line[p .. "_us"] = row.paths[p].us end
  line.paths = row.paths
  console:add(line)
  write(true, false) -- marked interrupted until the run completes
end }

tb:run { order = "forward", rounds = opts.rounds, sink = sink }
for _, note in ipairs(write(false, true)) do console:note(note) end
