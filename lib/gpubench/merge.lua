-- gpubench.merge: JSON-lines files of one table's shards (or of --devices
-- workers) put back together into one file.
--
-- Why: a suite split over nodes comes back as one file per shard, and a
-- merge that silently accepted a shard of another experiment, of other
-- options, a shard twice or none at all would publish a table that was never
-- run. So every file must be a finished run (an end record, not interrupted)
-- holding exactly its shard's cells (gpubench.shard's rule over the table's
-- declared order), the files must be one experiment with the same options
-- (only --shard, --device, --devices, --devices-mode and the output files may
-- differ), on the same backend, with the same columns and table, and their
-- shards must cover 0..N-1 once each. A refusal is a one-line usage error
-- (exit status 2).
--
--   local files = {}
--   for i, p in ipairs(paths) do files[i] = merge.load(p) end
--   merge.same_run(files); merge.partition(files)
--   local m = merge.combine(files)        -- rows in table order, device columns filled
--   merge.write { json = out, env = merge.env(files), columns = m.columns, merged = m }

local report = require "gpubench.report"
local shard = require "gpubench.shard"
local errors = require "gpubench.errors"

local merge = {}

local function fail(fmt, ...) errors.usage("merge: " .. fmt:format(...)) end

-- cjson reads every number as a float: these fields are integers.
local INTEGER_FIELDS = { "cell_index", "worker", "device", "index" }
local function integer(v)
  if type(v) == "number" then return math.tointeger(v) or v end
  return v
end

-- Options that may differ between the files of one table.
merge.EXEMPT = {
  shard = true, device = true, devices = true, devices_mode = true, json = true, csv = true, markdown = true,
  plot = true, output = true, markdown_output = true, list_cells = true, profile = true, list = true,
}

-- load(path [, {shard_optional = true}]) -> {path =, name =, env =, cells =,
-- extras =, sections =, ending =}: cells are the records of type "cell" with
-- a cell_index, extras the other cell records (labelled peer rows, or every
-- row of a file written before cell_index existed), sections the other
-- records by type. A file without a shard record is refused unless
-- shard_optional (the spread report needs none).
function merge.load(path, o)
  local ok, recs = pcall(report.read_jsonl, path)
  if not ok then fail("%s", tostring(recs):gsub("^report: ", "")) end
  local name = path -- as given: shards of several machines often share their file names
  for _, r in ipairs(recs) do -- a JSON null is a missing value here, as in the rows that were written
    if type(r) == "table" then
      for k, v in pairs(r) do if v == report.json.null then r[k] = nil end end
      for _, k in ipairs(INTEGER_FIELDS) do r[k] = integer(r[k]) end
    end
  end
  local env = recs[1]
  if type(env) == "table" and type(env.shard) == "table" then
    for _, k in ipairs { "index", "count", "cells", "selected" } do env.shard[k] = integer(env.shard[k]) end
  end
  if type(env) ~= "table" or env.type ~= "environment" then
    fail("%s is not a gpubench JSON-lines file (its first line is not an environment record)", name)
  end
  local ending = recs[#recs]
  if #recs < 2 or ending.type ~= "end" then
    fail("%s has no end record: its run did not finish (a killed run's cells are in FILE.partial)", name)
  end
  if ending.interrupted == true then fail("%s was interrupted: run its shard again", name) end
  local has_shard = type(env.shard) == "table" and math.type(env.shard.count) == "integer"
    and math.type(env.shard.cells) == "integer"
  if not has_shard and not (o and o.shard_optional) then
    fail("%s has no shard record (an experiment without --shard wrote it, or a gpubench before it)", name)
  end
  local f = { path = path, name = name, env = env, cells = {}, extras = {}, sections = {}, ending = ending }
  local by_type = {}
  for i = 2, #recs - 1 do
    local r = recs[i]
    if r.type == "cell" then
      if r.cell_index ~= nil then f.cells[#f.cells + 1] = r else f.extras[#f.extras + 1] = r end
    elseif r.type ~= "environment" and r.type ~= "end" then
      local s = by_type[r.type]
      if not s then
        s = { type = r.type, records = {} }
        by_type[r.type] = s
        f.sections[#f.sections + 1] = s
      end
      s.records[#s.records + 1] = r
    end
  end
  return f
end

-- experiment(env) -> the experiment's name: its script's file name without .lua.
function merge.experiment(env)
  if env.experiment then return env.experiment end
  local script = type(env.command_line) == "table" and env.command_line[1] or nil
  if type(script) ~= "string" then return "?" end
  return ((script:match("[^/]+$") or script):gsub("%.lua$", ""))
end

local function equal(a, b)
  if type(a) ~= type(b) then return false end
  if type(a) ~= "table" then return a == b end
  for k, v in pairs(a) do if not equal(v, b[k]) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end

local function show(v)
  if v == nil or v == report.json.null then return "(not set)" end
  if type(v) == "table" then
    local parts = {}
    for i, x in ipairs(v) do parts[i] = show(x) end
    return table.concat(parts, ",")
  end
  return tostring(integer(v))
end

local function column_keys(env)
  local keys = {}
  for i, c in ipairs(env.columns or {}) do keys[i] = c.key end
  return table.concat(keys, ",")
end

-- same_run(files): refuses files of different experiments, options (apart
-- from merge.EXEMPT), backends, columns or table sizes.
function merge.same_run(files)
  local a = files[1]
  for i = 2, #files do
    local b = files[i]
    local ea, eb = merge.experiment(a.env), merge.experiment(b.env)
    if ea ~= eb then
      fail("%s is a run of %s, %s of %s: files of different experiments", b.name, eb, a.name, ea)
    end
    if a.env.backend ~= b.env.backend then
      fail("%s ran on %s, %s on %s: files of different backends", b.name, show(b.env.backend), a.name,
        show(a.env.backend))
    end
    local oa, ob = a.env.options or {}, b.env.options or {}
    local keys, seen = {}, {}
    for _, o in ipairs { oa, ob } do
      for k in pairs(o) do
        if not seen[k] and not merge.EXEMPT[k] then seen[k] = true; keys[#keys + 1] = k end
      end
    end
    table.sort(keys)
    for _, k in ipairs(keys) do
      if not equal(oa[k], ob[k]) then
        fail("%s differs from %s in --%s: %s vs %s (only --shard, --device, --devices, --devices-mode and "
          .. "the output files may differ)", b.name, a.name, k:gsub("_", "-"), show(ob[k]), show(oa[k]))
      end
    end
    if column_keys(a.env) ~= column_keys(b.env) then
      fail("%s and %s have different columns (%s vs %s)", b.name, a.name, column_keys(b.env), column_keys(a.env))
    end
    local ca, cb = a.env.shard and a.env.shard.cells, b.env.shard and b.env.shard.cells
    if ca and cb and ca ~= cb then
      fail("%s's table has %d cells, %s's %d: not one table", b.name, cb, a.name, ca)
    end
  end
end

-- partition(files): the files' shards must be of one split (one N) and hold
-- every shard 0..N-1 exactly once.
function merge.partition(files)
  local n = files[1].env.shard.count
  local have = {}
  for _, f in ipairs(files) do
    local s = f.env.shard
    if s.count ~= n then
      fail("%s is shard %s but %s is shard %s: shards of different splits", files[1].name,
        shard.text(files[1].env.shard), f.name, shard.text(s))
    end
    if have[s.index] then
      fail("%s and %s are both shard %s: overlapping shards", have[s.index].name, f.name, shard.text(s))
    end
    have[s.index] = f
  end
  local missing, held = {}, {}
  for i = 0, n - 1 do
    if have[i] then held[#held + 1] = ("%d/%d"):format(i, n) else missing[#missing + 1] = ("%d/%d"):format(i, n) end
  end
  if #missing > 0 then
    fail("%s %s missing (the files hold %s)", #missing == 1 and "shard" or "shards", table.concat(missing, ", ")
      .. (#missing == 1 and " is" or " are"), table.concat(held, ", "))
  end
end

-- complete(f): f's rows are exactly its shard's cells: each worker's rows
-- (one group without --devices) hold every cell once, or, when the workers
-- split the shard (--devices-mode split), their union does.
function merge.complete(f)
  local s, total = f.env.shard, f.env.shard.cells
  local expected, want = {}, 0
  for p = 1, total do
    if shard.member(p, s) then expected[p] = true; want = want + 1 end
  end
  local groups, order = {}, {}
  for _, r in ipairs(f.cells) do
    local p = r.cell_index
    if math.type(p) ~= "integer" or not expected[p] then
      fail("%s holds cell %s, which is not in its shard %s of %d cells", f.name, tostring(p), shard.text(s), total)
    end
    local w = r.worker or -1
    if not groups[w] then groups[w] = {}; order[#order + 1] = w end
    if groups[w][p] then fail("%s holds cell %d twice", f.name, p) end
    groups[w][p] = true
  end
  local split = type(f.env.options) == "table" and f.env.options.devices_mode == "split"
  local sets = {}
  if split or #order == 0 then
    local union = {}
    for _, w in ipairs(order) do for p in pairs(groups[w]) do union[p] = true end end
    sets[1] = { set = union, who = "" }
  else
    for _, w in ipairs(order) do sets[#sets + 1] = { set = groups[w], who = w >= 0 and (" (worker %d)"):format(w) or "" } end
  end
  for _, x in ipairs(sets) do
    local lack, first = 0, nil
    for p = 1, total do
      if expected[p] and not x.set[p] then lack = lack + 1; first = first or p end
    end
    if lack > 0 then
      fail("%s%s lacks %d of the %d cells of shard %s (the first: cell %d)", f.name, x.who, lack, want,
        shard.text(s), first)
    end
  end
end

-- A canonical text of a record (sorted keys), to keep a repeated extra row once.
local function canonical(v)
  if type(v) ~= "table" then return report.json.encode(v) end
  local keys = {}
  for k in pairs(v) do if k ~= "index" then keys[#keys + 1] = k end end
  table.sort(keys, function(x, y) return tostring(x) < tostring(y) end)
  local parts = {}
  for _, k in ipairs(keys) do parts[#parts + 1] = tostring(k) .. "=" .. canonical(v[k]) end
  return "{" .. table.concat(parts, ",") .. "}"
end

-- device_fields(row, device): the device columns from a device info record
-- (an environment's `device`), where the row has none.
function merge.device_fields(row, device)
  if row.device ~= nil or type(device) ~= "table" then return end
  row.device, row.device_name, row.device_uuid = integer(device.index), device.name, device.uuid
end

-- combine(files) -> {rows =, extras =, sections =, notes =, columns =}: the
-- cells in table order (then file order, then worker), each with its device
-- columns; extra rows kept once; sections concatenated; notes once each, in
-- order; columns: device (and worker, when a row has one) then the files'.
function merge.combine(files)
  local rows, keyed = {}, {}
  for fi, f in ipairs(files) do
    for ri, r in ipairs(f.cells) do
      merge.device_fields(r, f.env.device)
      keyed[#keyed + 1] = { r = r, k = { r.cell_index, fi, r.worker or -1, ri } }
    end
  end
  table.sort(keyed, function(x, y)
    for i = 1, 4 do if x.k[i] ~= y.k[i] then return x.k[i] < y.k[i] end end
    return false
  end)
  for i, x in ipairs(keyed) do rows[i] = x.r end
  local extras, seen_extra = {}, {}
  local sections, by_type = {}, {}
  local notes, seen_note = {}, {}
  local has_worker = false
  for _, r in ipairs(rows) do if r.worker ~= nil then has_worker = true end end
  for _, f in ipairs(files) do
    for _, r in ipairs(f.extras) do
      local c = canonical(r)
      if not seen_extra[c] then seen_extra[c] = true; extras[#extras + 1] = r end
    end
    for _, s in ipairs(f.sections) do
      local t = by_type[s.type]
      if not t then t = { type = s.type, records = {} }; by_type[s.type] = t; sections[#sections + 1] = t end
      for _, r in ipairs(s.records) do
        merge.device_fields(r, f.env.device)
        t.records[#t.records + 1] = r
      end
    end
    for _, n in ipairs(type(f.ending.notes) == "table" and f.ending.notes or {}) do
      if not seen_note[n] then seen_note[n] = true; notes[#notes + 1] = n end
    end
  end
  local columns = {}
  if has_worker then columns[#columns + 1] = { key = "worker", title = "worker" } end
  columns[#columns + 1] = { key = "device", title = "device" }
  for _, c in ipairs(files[1].env.columns or {}) do
    if c.key ~= "device" and c.key ~= "worker" then
      columns[#columns + 1] = { key = c.key, title = c.title, unit = c.unit }
    end
  end
  return { rows = rows, extras = extras, sections = sections, notes = notes, columns = columns }
end

-- env(files, extra) -> the merged file's environment: the first file's, its
-- options less the ones allowed to differ, the whole table as shard 0/1, and
-- where each shard came from (`sources`); the device is per row.
function merge.env(files, extra)
  local first = files[1].env
  local env = {}
  for k, v in pairs(first) do
    -- the device (and a --devices file's workers) are each file's: in sources, and on every row
    if not ({ type = true, columns = true, option_sources = true, device = true, devices = true, workers = true })[k] then
      env[k] = v
    end
  end
  env.options = {}
  for k, v in pairs(first.options or {}) do if not merge.EXEMPT[k] then env.options[k] = v end end
  env.shard = shard.record(nil, first.shard.cells)
  env.shard.merged_from = #files
  env.sources = {}
  for i, f in ipairs(files) do
    env.sources[i] = { file = f.path, shard = shard.text(f.env.shard), device = f.env.device, devices = f.env.devices,
                       date = f.env.date, command_line = f.env.command_line, clocks = f.env.clocks,
                       ceilings = f.env.ceilings, git = f.env.git }
  end
  for k, v in pairs(extra or {}) do env[k] = v end
  return env
end

-- A format for columns whose declared format did not travel in the file:
-- integers as they are, other numbers to 4 significant digits.
function merge.format(v)
  local i = math.tointeger(v) -- cjson reads 4096 back as 4096.0
  if i then return ("%d"):format(i) end
  return ("%.4g"):format(v)
end

-- console_columns(columns, rows) -> columns with a format, strings left-aligned.
function merge.console_columns(columns, rows)
  local out = {}
  for i, c in ipairs(columns) do
    local text = false
    for _, r in ipairs(rows) do
      local v = r[c.key]
      if v ~= nil and v ~= report.json.null then text = type(v) ~= "number"; break end
    end
    out[i] = { key = c.key, title = c.title, unit = c.unit, format = merge.format, align = text and "left" or "right" }
  end
  return out
end

-- write{json =, csv =, markdown =, env =, title =, merged = combine's result,
-- console = stream | nil}: the merged table through gpubench.report (the
-- console table printed at the end, with its notes, when console is given).
function merge.write(o)
  local m = o.merged
  local sink <close> = report.open { title = o.title or o.env.title, columns = m.columns, env = o.env,
                                     json = o.json, csv = o.csv, markdown = o.markdown, console = false,
                                     csv_extra = { "device_name", "device_uuid", "shard", "cell_index" } }
  for _, r in ipairs(m.rows) do sink:add(r) end
  for _, r in ipairs(m.extras) do sink:add(r) end
  for _, n in ipairs(m.notes) do sink:note(n) end
  for _, s in ipairs(m.sections) do
    local keys, seen = {}, {}
    for _, r in ipairs(s.records) do
      for k in pairs(r) do
        if not seen[k] and k ~= "type" and k ~= "index" then seen[k] = true; keys[#keys + 1] = k end
      end
    end
    table.sort(keys)
    local cols = {}
    for i, k in ipairs(keys) do cols[i] = { key = k } end
    if #cols > 0 then sink:section(s.type, cols, s.records) end
  end
  sink:close()
  if o.console then
    local all = {}
    for _, r in ipairs(m.rows) do all[#all + 1] = r end
    for _, r in ipairs(m.extras) do all[#all + 1] = r end
    local title = o.title or o.env.title
    if title then o.console:write(title, "\n") end
    o.console:write(report.table_text(merge.console_columns(m.columns, all), all))
    if #m.notes > 0 then o.console:write("\n", table.concat(m.notes, "\n"), "\n") end
    o.console:flush()
  end
end

return merge
