-- experiments/gemv_variants.lua: one GEMV shape, many launch geometries of the
-- same kernel -- which ROWS/WARPS/STAGES (CUDA) or GEMV_T/GEMV_NR (Vulkan)
-- reads its weights fastest.
--
--   M=14336 K=5120 gpubench experiments/gemv_variants.lua --kernels q4_0,q4_k \
--     --grid "ROWS=2,4,8;WARPS=1,2,4;STAGES=2,4" --rotate
--   gpubench --backend vulkan experiments/gemv_variants.lua --grid "GEMV_T=16,32;GEMV_NR=1,2,4"
--
-- Every variant is checked against the FP64 oracle before it is timed (a
-- variant that computes something else is reported as wrong, not as fast);
-- each is timed two-point, the table runs twice and only the second round is
-- reported, like gemv_table. Variants the compiler refuses (too much shared
-- memory, say) are listed as such. The default geometry is marked with *.

local gpu = require "gpu"
local options = require "gpubench.options"
local ceilings = require "gpubench.ceilings"
local cells = require "gpubench.cells"
local report = require "gpubench.report"
local gemv = require "gpubench.gemv"
local gemv_bench = require "gpubench.gemv_bench"
local validate = require "gpubench.validate"
local bench = require "gpubench.bench"
local devices = require "gpubench.devices"

local opts, meta = options.parse({
  name = "gemv_variants",
  description = "GEMV launch-geometry sweep for one shape: ms, GB/s, % of the read ceiling per variant.",
  options = options.concat(options.device_options(), {
    { "kernels", type = "list", of = "enum", choices = gemv.formats, default = "q4_0,q8_0,q4_k,q5_k,q6_k",
      help = "Formats to sweep." },
    { "m", type = "int", env = "M", default = 14336, help = "Rows." },
    { "k", type = "int", env = "K", default = 5120, check = options.multiple_of(gemv.K_MULTIPLE, gemv.K_MULTIPLE_WHY),
      help = "Columns, a multiple of 256." },
    { "grid", type = "string",
      help = "Defines to vary, \"NAME=v1,v2;NAME2=...\" (default: ROWS/WARPS/STAGES on CUDA, "
        .. "GEMV_T/GEMV_NR on Vulkan); \"GRID1|GRID2\" times both grids' variants in one process." },
    { "iters", type = "int", default = 200, env = "ITERS", max = options.MAX_ITERS,
      help = "Launches n at the first timing point." },
    options.rotate_option(),
    options.overlap_option(),
  }, options.table_options(), options.shard_options()),
}, arg)
if devices.dispatch(opts, meta) then return end -- --devices: one worker process per device, merged

-- "ROWS=2,4;WARPS=1,2" -> { {name="ROWS", values={2,4}}, ... }
local function parse_grid(text)
  local dims = {}
  for part in text:gmatch("[^;]+") do
    local name, values = part:match("^%s*([%a_][%w_]*)%s*=%s*([%d,%s]+)$")
    if not name then
      options.fail(("--grid: %q is not NAME=v1,v2,... (non-negative integers)"):format(part))
    end
    if values:find(",%s*,") or values:match("^[%s,]*,") or values:match(",%s*$") then
      options.fail(("--grid: %s has an empty value in %q"):format(name, values))
    end
    local list = {}
    for v in values:gmatch("%d+") do
      local n = math.tointeger(tonumber(v))
      -- 0 is a value (on/off switches such as MMA); the kernel table checks ranges.
      if not n then options.fail(("--grid: %s=%s is not an integer"):format(name, v)) end
      list[#list + 1] = n
    end
    -- No values would make the grid's product empty: a table with no rows.
    if #list == 0 then options.fail(("--grid: %s has no values"):format(name)) end
    for _, d in ipairs(dims) do
      if d.name == name then options.fail(("--grid: %s is given twice"):format(name)) end
    end
    dims[#dims + 1] = { name = name, values = list }
  end
  if #dims == 0 then options.fail("--grid: no NAME=values given") end
  return dims
end

local dev = gpu.open { backend = opts.backend, index = opts.device }
options.require_overlap(dev, opts.overlap)
bench.policy.overlap = opts.overlap -- every cell's runners, armed and timed
local specs = require("gpubench.gemv_" .. dev.backend)
local default_grid = dev.backend == "cuda" and "ROWS=2,4,8;WARPS=1,2,4;STAGES=2,4"
  or "GEMV_T=16,32,64;GEMV_NR=1,2,4"
-- "A|B": the variants of each grid in turn, so that two kernels with
-- different defines (the int8 and the f16 tensor-core q8_0 kernels) are
-- timed in one process.
local grids = {}
for part in ((opts.grid or default_grid) .. "|"):gmatch("([^|]*)|") do
  if part:match("^%s*$") then options.fail("--grid: an empty grid between '|'") end
  grids[#grids + 1] = parse_grid(part)
end
-- Without a known L2 every cell's rotation would fail inside prepare and be
-- listed as "no build"; say what is wrong, before any device work.
options.require_l2(dev, opts.rotate)

-- Every combination of a grid's values, as a define table.
local function combinations(dims)
  local out = { {} }
  for _, d in ipairs(dims) do
    local next_out = {}
    for _, partial in ipairs(out) do
      for _, v in ipairs(d.values) do
        local c = {}
        for k2, v2 in pairs(partial) do c[k2] = v2 end
        c[d.name] = v
        next_out[#next_out + 1] = c
      end
    end
    out = next_out
  end
  return out
end

-- A variant's label: its grid's defines in the grid's order.
local function describe(cell)
  local parts = {}
  for _, d in ipairs(cell.dims) do parts[#parts + 1] = ("%s=%d"):format(d.name, cell.changes[d.name]) end
  return table.concat(parts, " ")
end

local table_cells = {}
for _, fmt in ipairs(opts.kernels) do
  -- the shape's own default (gemv.spec with the shape: a backend may pick a
  -- variant that measured faster there), and the variants over it
  local base = gemv.spec(dev.backend, fmt, opts.m, opts.k)
  local known = specs.variant_defines and specs.variant_defines(fmt) or base.defines -- names a variant takes
  for _, dims in ipairs(grids) do
    for _, grid_changes in ipairs(combinations(dims)) do
      local shape = specs.shape_changes and specs.shape_changes(fmt, opts.m, opts.k, grid_changes) or {}
      local is_default = true
      local changes = {}
      for name, v in pairs(shape) do changes[name] = v end
      for name, v in pairs(grid_changes) do
        if known[name] == nil then
          options.fail(("--grid: the %s %s kernel has no define %s"):format(dev.backend, fmt, name))
        end
        if (base.defines[name] or known[name]) ~= v then is_default = false end
        changes[name] = v
      end
      local cell = { fmt = fmt, changes = changes, default = is_default, dims = dims }
      cell.label = fmt .. " " .. describe(cell)
      table_cells[#table_cells + 1] = cell
    end
  end
end

-- After every option check above: its first measurement is device work.
local ceil = ceilings.get(dev, {})

-- A variant the kernel table refuses is "invalid", one the compiler refuses
-- "no build", one that disagrees with the oracle "WRONG": listed, not timed.
local function prepare(cell)
  local ok, spec = pcall(specs.variant, cell.fmt, cell.changes)
  local p
  if not ok then
    p = { status = "invalid", why = tostring(spec) }
  else
    local ok2, res = pcall(gemv_bench.prepare, dev, cell.fmt, opts.m, opts.k, { rotate = opts.rotate, spec = spec })
    if ok2 then p = res
    elseif tostring(res):find("is wrong at", 1, true) then p = { status = "WRONG", why = tostring(res) }
    else p = { status = "no build", why = tostring(res) } end
  end
  if p.why then io.stderr:write(("gemv_variants: %s: %s\n"):format(cell.label, p.why:match("^[^\n]*"))) end
  return p
end

local function measure(p, ctx)
  local cell = ctx.cell
  local row = { kernel = cell.fmt, variant = describe(cell) .. (cell.default and " *" or "") }
  if p.status then
    row.status, row.note = p.status, p.why
    return row
  end
  row.launches = p.launches_per_call
  local d = p:time(ctx.iters) -- graph replay, n >= the copy count (see gemv_table --submit)
  local gbs = ceilings.gbs(p.weight_bytes, d.ms)
  row.status, row.ms, row.gbs = d.ms and "ok" or "noise", d.ms, gbs
  row.pct_read = ceilings.pct(gbs, ceil.read_gbs)
  row.t_n, row.t_2n, row.repeats, row.runners = d.t_n, d.t_2n, d.repeats, d.runners
  return row
end

-- every variant prepared and armed before the first timed round
local tb <close> = cells.table { cells = table_cells, prepare = prepare, measure = measure, iters = opts.iters,
                                 monitor = dev, ready = function() bench.ready(dev) end }
if tb:special(opts) then return end

local sink <close> = report.open {
  title = ("gemv_variants on %s (%s), m=%d k=%d%s"):format(dev.name, dev.backend, opts.m, opts.k,
    (opts.rotate and ", weights rotated out of L2" or "") .. (opts.overlap and ", launches overlapped" or "")),
  columns = {
    { key = "kernel", width = 6 },
    { key = "variant", width = 26 },
    { key = "ms", format = "%.4f", width = 10 },
    { key = "gbs", title = "GB/s", format = "%.1f", width = 9 },
    { key = "pct_read", title = "% read", format = "%.1f", width = 7 },
  },
  csv = opts.csv, json = opts.json, markdown = opts.markdown,
  env = report.environment(dev, meta, { ceilings = ceil, shard = tb:shard_record() }),
}
local rows, ran = tb:run { order = opts.order, seed = opts.seed, rounds = opts.rounds, sink = sink }
sink:note(("* %% read: of %.1f GB/s (%s); * marks the default geometry; every timed variant "
  .. "matched the FP64 oracle first"):format(ceil.read_gbs, ceil.read_source))
sink:note(bench.describe { iters = opts.iters, rotate = opts.rotate })
local two = {}
for _, r in ipairs(rows) do
  if (r.launches or 1) > 1 then two[#two + 1] = r.kernel .. " " .. r.variant end
end
if #two > 0 then
  sink:note(("* two launches per call, both timed (x quantized once in a first launch): %s"):format(table.concat(two, "; ")))
end
if opts.validate then
  validate.run { table = tb, first = rows, ran = ran, key = "ms", rounds = opts.rounds, format = "%.5f", sink = sink }
end
sink:close()
