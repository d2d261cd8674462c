-- experiments/linear_variants.lua: one Linear shape, many launch geometries of
-- one route -- which defines (CUDA LN_*, Vulkan gemv LIN_*) serve (qtype, N,
-- K, T) fastest, cold.
--
--   gpubench experiments/linear_variants.lua --qtype q4 --n 131072 --k 5120 --t 1,8 \
--     --route gemv --grid "LN_NW=2,4,8;LN_RT=1,2;LN_U=2,4"
--   gpubench experiments/linear_variants.lua --qtype w8 --n 6144 --k 5120 --t 128 --route mma --grid "LN_NW=2,4,8"
--   gpubench experiments/linear_variants.lua --qtype q4 --n 131072 --k 5120 --t 1 \
--     --route dot --grid "LN_R=8,16;LN_U=1,2"
--   gpubench experiments/linear_variants.lua --backend vulkan --qtype q4 --n 131072 --k 5120 --t 1 \
--     --route dot --grid "LIN_DOT=0,1;LIN_NR=2,4,8"
--   gpubench experiments/linear_variants.lua --qtype w8 --n 4608 --k 4608 --t 1024 --route wgmma --grid "TAIL=0,4,8"
--     (TAIL: the last wave's tiles in that many slices, a second launch; not a define)
--   gpubench experiments/linear_variants.lua --qtype w8 --n 2048 --k 8192 --t 1024 --route wgmma --grid "PREP_HOLD=0,12"
--     (PREP_HOLD: the LN_HALF prepass holding that many 16-byte chunks of a row of x a thread, at any K)
--
-- Each variant is checked against the FP64 reference before it is timed (a
-- variant outside docs/LINEAR.md's bound is reported as wrong, not fast) and
-- timed by the suite's cold contract (gpubench.linear_bench). The variants
-- run in declared order, then in reverse (ABBA): a geometry is faster only
-- if it is in both rounds. Variants the compiler refuses (shared memory,
-- registers) are listed as such. The route table's geometry is marked *.

local gpu = require "gpu"
local options = require "gpubench.options"
local ceilings = require "gpubench.ceilings"
local report = require "gpubench.report"
local linear = require "gpubench.linear"
local lb = require "gpubench.linear_bench"
local suites = require "gpubench.linear_suites"

local opts, meta = options.parse({
  name = "linear_variants",
  description = "Linear launch-geometry sweep of one CUDA route for one shape: cold us and READ_% per variant.",
  options = options.concat(options.device_options(), {
    { "qtype", type = "enum", choices = linear.qtypes, default = "q4", help = "Weight format." },
    { "n", type = "int", default = 14336, help = "Output features N." },
    { "k", type = "int", default = 5120, help = "Input features K (a multiple of 8)." },
    { "t", type = "list", of = "int", default = "1", help = "Tokens T, one table per T." },
    { "route", type = "enum", choices = { "gemv", "mma", "wgmma", "dot" }, default = "gemv",
      help = "The route whose geometry varies (mma, wgmma: CUDA only; dot: q4, q5, q6, w8; Vulkan's LIN_DOT=0,1 sweeps gemv against dot)." },
    { "versus", type = "enum", choices = { "none", "gemv", "mma", "wgmma", "dot" }, default = "none",
      help = "Also time the route table's route of this kind for each T, in the same ABBA rounds." },
    { "grid", type = "string", help = "Defines to vary, \"NAME=v1,v2;NAME2=...\" (the others: the route table's)." },
    { "samples", type = "int", min = 3, default = 20, help = "Cold samples per variant and round." },
    { "csv", type = "path", output = true, help = "Write a CSV file (- for standard output)." },
    { "json", type = "path", output = true, help = "Write JSON lines (- for standard output)." },
    { "markdown", type = "path", output = true, help = "Write a Markdown table at the end (- for standard output)." },
  }),
}, arg)

-- The grid's keys that are not route defines (the wgmma route's): what each
-- is, and its value in the table's route at the swept shape.
local KEYS = {
  TAIL = { what = "the last wave in slices", now = function(base) return base.tail_slices or 0 end },
  PREP_HOLD = { what = "the prepass's chunks of x held a thread", now = function(base)
    local p = linear.prep_at(base, opts.k)
    return p and p.defines.LN_PREP_HOLD
  end },
}

local function parse_grid(text)
  local dims = {}
  for part in (text or ""):gmatch("[^;]+") do
    local name, values = part:match("^%s*([%u%d_]+)%s*=%s*([%d,%s]+)$")
    if name and not name:match("^L") and not KEYS[name] then name = nil end
    if not name then
      options.fail(("linear_variants: --grid: %q is not NAME=v1,v2,... (a route define, TAIL: the wgmma route's last wave in that many slices, or PREP_HOLD: its prepass's chunks held a thread)"):format(part))
    end
    local list = {}
    for v in values:gmatch("%d+") do list[#list + 1] = math.tointeger(tonumber(v)) end
    if #list == 0 then options.fail(("linear_variants: --grid: %s has no value"):format(name)) end
    dims[#dims + 1] = { name = name, values = list }
  end
  return dims
end

local dims = parse_grid(opts.grid)
for _, t in ipairs(opts.t) do
  local msg = linear.shape_error(opts.qtype, "a16", opts.n, opts.k, t)
  if msg then options.fail("linear_variants: " .. msg) end
end

local dev = gpu.open { backend = opts.backend, index = opts.device }
local lc = linear.route_table(dev.backend)
for _, kind in ipairs { opts.route, opts.versus } do
  if (kind == "mma" or kind == "wgmma") and dev.backend ~= "cuda" then
    options.fail(("linear_variants: --route %s is CUDA's"):format(kind))
  end
end
local ceil = ceilings.get(dev, {})

-- The route table's route for (qtype, t) when it is of the swept kind: the base.
-- Else the table's first route of that kind; an integer-dot route whose
-- LN_TT is below t is widened to LN_TT = t (it takes T <= LN_TT in one pass).
local function base_route(t, kind)
  kind = kind or opts.route
  local r = linear.route(dev, { qtype = opts.qtype, n = opts.n, k = opts.k }, t)
  if r.name == kind then return r end
  local first
  for _, x in ipairs(lc[opts.qtype]) do
    if x.name == kind and (not x.requires or x.requires(dev)) then
      if x.max_t >= t then return x end
      first = first or x
    end
  end
  if not first then
    options.fail(("linear_variants: %s has no %s route for %s in the %s route table"):format(opts.qtype, kind, dev.name,
      dev.backend))
  end
  if first.name == "dot" then return lc.variant(opts.qtype, first, { [dev.backend == "cuda" and "LN_TT" or "LIN_TMAX"] = t }) end
  return first
end

local function variants_for(t)
  local base = base_route(t)
  local list = { { changes = {}, default = true } }
  local function walk(i, c)
    if i > #dims then
      local same = true
      for k, v in pairs(c) do
        local now = KEYS[k] and KEYS[k].now(base) or base.defines[k]
        if now ~= v then same = false end
      end
      if not same then list[#list + 1] = { changes = c } end
      return
    end
    local key = KEYS[dims[i].name]
    if key and opts.route ~= "wgmma" then
      options.fail(("linear_variants: %s (%s) is the wgmma route's"):format(dims[i].name, key.what))
    elseif not key and base.defines[dims[i].name] == nil then
      options.fail(("linear_variants: the %s route has no define %s"):format(opts.route, dims[i].name))
    end
    for _, v in ipairs(dims[i].values) do
      local d = {}
      for k, x in pairs(c) do d[k] = x end
      d[dims[i].name] = v
      walk(i + 1, d)
    end
  end
  walk(1, {})
  for _, v in ipairs(list) do
    v.route = v.default and base or lc.variant(opts.qtype, base, v.changes)
    local keys = {}
    for k in pairs(v.changes) do keys[#keys + 1] = k end
    table.sort(keys)
    local parts = {}
    for _, k in ipairs(keys) do parts[#parts + 1] = ("%s=%d"):format(k:gsub("^L[IN]*_", ""), v.changes[k]) end
    v.name = (#parts > 0 and table.concat(parts, ",") or "table") .. (v.default and " *" or "")
  end
  if opts.versus ~= "none" and opts.versus ~= opts.route then
    list[#list + 1] = { route = base_route(t, opts.versus), name = "route " .. opts.versus, changes = {} }
  end
  return list
end

local sink <close> = report.open {
  title = ("linear_variants %s %dx%d, %s route on %s (%s)"):format(opts.qtype, opts.n, opts.k, opts.route, dev.name,
    dev.backend),
  columns = {
    { key = "t", title = "T", format = "%d", width = 4 }, { key = "variant", width = 30 },
    { key = "us_a", title = "us (A)", format = "%.2f", width = 9 }, { key = "us_b", title = "us (B)", format = "%.2f", width = 9 },
    { key = "read_pct", title = "% read", format = "%.1f", width = 7 },
    { key = "tflops", title = "TFLOP/s", format = "%.1f", width = 8 },
    { key = "vs_default", title = "default/this", format = "%.3f", width = 8 }, { key = "status", width = 10 },
  },
  json = opts.json, csv = opts.csv, markdown = opts.markdown,
  env = report.environment(dev, meta, { ceilings = ceil }),
}

for _, g in ipairs(suites.groups((function()
  local ps = {}
  for _, t in ipairs(opts.t) do ps[#ps + 1] = { qtype = opts.qtype, policy = "a16", n = opts.n, k = opts.k, t = t } end
  return ps
end)())) do
  local grp = lb.prepare_group(dev, g, {})
  for _, p in ipairs(g.points) do
    local list = variants_for(p.t)
    local po = { flush = "clean", warmup = 3, rule = { samples = opts.samples }, ceil = ceil, max_rows = 64 }
    local order = {}
    for i = 1, #list do order[#order + 1] = i end
    for i = #list, 1, -1 do order[#order + 1] = i end
    for pass, i in ipairs(order) do
      local v = list[i]
      if not v.status then
        po.route = v.route
        local ok, row = pcall(lb.measure, dev, grp, p, po)
        if not ok then v.status, v.note = "refused", tostring(row):match("[^\n]*")
        elseif row.status == "wrong" then v.status, v.note = "wrong", row.note
        else v[pass <= #list and "us_a" or "us_b"] = row.median_us end
      end
    end
    local base_us
    for _, v in ipairs(list) do if v.default and v.us_a then base_us = (v.us_a + v.us_b) / 2 end end
    for _, v in ipairs(list) do
      local us = v.us_a and v.us_b and (v.us_a + v.us_b) / 2
      sink:add { t = p.t, variant = v.name, us_a = v.us_a, us_b = v.us_b, defines = v.route and v.route.defines,
                 read_pct = us and ceil.read_gbs and 100 * linear.weight_bytes(p.qtype, p.n, p.k) / (us * 1e3) / ceil.read_gbs,
                 tflops = us and 2 * p.n * p.k * p.t / (us * 1e6),
                 vs_default = us and base_us and base_us / us, status = v.status or "ok", note = v.note }
    end
  end
  lb.close_group(grp)
end
sink:note("* cold: a clean L2 flush before each sample, timestamps around one call; median of the samples; "
  .. "A = declared order, B = reversed (ABBA); % read = weight bytes / mean(A, B) against the read ceiling; "
  .. "TFLOP/s = 2 N K T / mean(A, B)")
sink:note("* * = the route table's geometry (the table's route for T when it is of this kind, else its first "
  .. opts.route .. " route); every variant checked against the FP64 reference first")
