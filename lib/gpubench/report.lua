-- gpubench.report: where a table's cells go -- an aligned console table with
-- units, CSV, JSON lines (every sample plus the environment) and Markdown.
--
-- Why: cera's numbers reached a baseline document without the ITERS, the
-- order or the device they came from, and could not be re-examined;
-- AstrAI's SwiGLU benchmark kept every sample and p50/p90/p99 in JSON, which
-- is what let its warm-L2 gain be re-measured and withdrawn. So every
-- file carries the environment, JSON keeps every raw sample, a cell without
-- a number says why (its status) instead of holding a string, and no run
-- loses its finished cells (gpubench.report_files). docs/OUTPUTS.md
-- documents the layouts.

local cjson = require "cjson"
local files = require "gpubench.report_files"

local report = {}

local json = cjson.new()
json.encode_invalid_numbers("null") -- a NaN sample must not abort the write
json.encode_number_precision(14)

report.json = json
report.write_atomic = files.write_atomic

-- ------------------------------------------------------------ formatting

-- format_bytes(n): "512 B", "64 KiB", "1.5 MiB", "1 GiB".
function report.format_bytes(n)
  if type(n) ~= "number" then return tostring(n) end
  local units = { "B", "KiB", "MiB", "GiB", "TiB" }
  local v, i = n, 1
  while v >= 1024 and i < #units do v, i = v / 1024, i + 1 end
  if v == math.floor(v) then return ("%d %s"):format(math.floor(v), units[i]) end
  return ("%.3g %s"):format(v, units[i])
end

local function header_of(c)
  local title = c.title or c.key
  if c.unit then return ("%s (%s)"):format(title, c.unit) end
  return title
end

local function is_right(c)
  if c.align then return c.align == "right" end
  return c.format ~= nil or c.unit ~= nil
end

-- A column shows numbers when it has a format or a unit.
local function numeric(c) return c.format ~= nil or c.unit ~= nil end

-- The text of one value in column c of row: a missing number shows the row's
-- status ("noise", "skipped", ...) when it is not ok, else "-".
-- Statuses that flag a measured row (its numbers stand, with a warning)
-- rather than explain a row without numbers.
report.FLAGS = { not_converged = true, throttled = true }

local function cell_text(c, v, row)
  if v == nil then
    local st = row and row.status
    if numeric(c) and st ~= nil and st ~= "ok" and not report.FLAGS[st] then return tostring(st) end
    return "-"
  end
  if type(v) == "number" and c.format then
    if type(c.format) == "function" then return tostring(c.format(v)) end
    return string.format(c.format, v)
  end
  if type(v) == "boolean" then return v and "yes" or "no" end
  return tostring(v)
end

local function pad(s, w, right)
  if #s >= w then return s end
  if right then return string.rep(" ", w - #s) .. s end
  return s .. string.rep(" ", w - #s)
end

-- Streamed rows are printed before the widest value is known: a column is at
-- least this wide unless it declares a width.
local STREAM_MIN_WIDTH = 8

-- widths(columns [, rows]): the console width of each column: the header,
-- the declared width, and every value when rows are given (else at least
-- STREAM_MIN_WIDTH).
local function widths(columns, rows)
  local w = {}
  for i, c in ipairs(columns) do
    w[i] = math.max(#header_of(c), c.width or (rows and 0 or STREAM_MIN_WIDTH))
    for _, r in ipairs(rows or {}) do w[i] = math.max(w[i], #cell_text(c, r[c.key], r)) end
  end
  return w
end

local function line_of(columns, w, texts)
  local parts = {}
  for i, c in ipairs(columns) do parts[i] = pad(texts[i], w[i], is_right(c)) end
  return (table.concat(parts, "  "):gsub("%s+$", ""))
end

local function header_line(columns, w)
  local texts = {}
  for i, c in ipairs(columns) do texts[i] = header_of(c) end
  return line_of(columns, w, texts)
end

local function row_line(columns, w, row)
  local texts = {}
  for i, c in ipairs(columns) do texts[i] = cell_text(c, row[c.key], row) end
  local line = line_of(columns, w, texts)
  if report.FLAGS[row.status] then line = line .. "  [" .. row.status .. "]" end
  return line
end

local function check_columns(columns)
  if type(columns) ~= "table" or #columns == 0 then
    error("report: columns must be a non-empty list of {key =, title =, unit =, format =}", 3)
  end
  for i, c in ipairs(columns) do
    if type(c.key) ~= "string" then error(("report: column %d has no key"):format(i), 3) end
  end
end

-- table_text(columns, rows) -> the aligned console table of all rows.
function report.table_text(columns, rows)
  check_columns(columns)
  local w = widths(columns, rows)
  local out = { header_line(columns, w) }
  local total = 0
  for i = 1, #w do total = total + w[i] end
  out[2] = string.rep("-", total + 2 * (#w - 1))
  for _, r in ipairs(rows) do out[#out + 1] = row_line(columns, w, r) end
  return table.concat(out, "\n") .. "\n"
end

-- CSV field quoting (RFC 4180): quote when the text has a comma, quote,
-- CR or LF; double the quotes inside.
local function csv_field(v)
  local s
  if v == nil then s = ""
  elseif math.type(v) == "integer" then s = string.format("%d", v)
  elseif type(v) == "number" then s = string.format("%.10g", v)
  elseif type(v) == "boolean" then s = v and "true" or "false"
  else s = tostring(v) end
  if s:find('[,"\r\n]') then s = '"' .. s:gsub('"', '""') .. '"' end
  return s
end

-- csv_line(values [, n]): n fields (default values.n or #values); pass n when
-- trailing values may be nil, or the row would lose its empty fields.
function report.csv_line(values, n)
  local parts = {}
  for i = 1, n or values.n or #values do parts[i] = csv_field(values[i]) end
  return table.concat(parts, ",") .. "\n"
end

-- A "|" would split the cell and a line break would end the row (and the
-- table) early, so a multi-line value (an error message) becomes one line.
-- Backslashes first, so a value ending in "\" cannot swallow the "|" escape.
local function md_escape(s)
  return (s:gsub("\\", "\\\\"):gsub("|", "\\|"):gsub("\r?\n", "<br>"))
end

-- markdown(columns, rows [, notes]) -> a Markdown table (right-aligned
-- numeric columns) followed by the notes.
function report.markdown(columns, rows, notes)
  check_columns(columns)
  local head, sep = {}, {}
  for i, c in ipairs(columns) do
    head[i] = md_escape(header_of(c))
    sep[i] = is_right(c) and "---:" or "---"
  end
  local out = { "| " .. table.concat(head, " | ") .. " |", "|" .. table.concat(sep, "|") .. "|" }
  for _, r in ipairs(rows) do
    local t = {}
    for i, c in ipairs(columns) do t[i] = md_escape(cell_text(c, r[c.key], r)) end
    if report.FLAGS[r.status] then t[#t] = t[#t] .. " [" .. r.status .. "]" end
    out[#out + 1] = "| " .. table.concat(t, " | ") .. " |"
  end
  local text = table.concat(out, "\n") .. "\n"
  if notes and #notes > 0 then text = text .. "\n" .. table.concat(notes, "\n") .. "\n" end
  return text
end

-- read_jsonl(path) -> records: every line of a JSON-lines file, decoded;
-- an undecodable line is an error naming its number.
function report.read_jsonl(path)
  local f, err = io.open(path, "rb")
  if not f then error(("report: cannot open %s: %s"):format(path, err), 2) end
  local out, n = {}, 0
  for line in f:lines() do
    n = n + 1
    if line ~= "" then
      local ok, v = pcall(json.decode, line)
      if not ok then
        f:close()
        error(("report: %s line %d is not JSON: %s"):format(path, n, tostring(v)), 2)
      end
      out[#out + 1] = v
    end
  end
  f:close()
  return out
end

-- ------------------------------------------------------------ JSON records

-- cjson encodes an empty table as {}; these fields are arrays, so an empty
-- one is written [] (a marker string, replaced after encoding).
local EMPTY_ARRAY = "\1gpubench-empty-array\1"
local ARRAY_FIELDS = { notes = true, samples = true, repeats = true, runners = true }

local function encode(rec)
  local marked = false
  for k in pairs(ARRAY_FIELDS) do
    local v = rec[k]
    if type(v) == "table" and next(v) == nil then rec[k] = EMPTY_ARRAY; marked = true end
  end
  local text = json.encode(rec)
  if marked then text = text:gsub('"\\u0001gpubench%-empty%-array\\u0001"', "[]") end
  return text
end
report.encode = encode

-- A record of a row: every column key present (null when nil), then the
-- row's other fields (samples, details); `type` and `index` are the record's.
local function record_of(kind, index, columns, row)
  local rec = { type = kind, index = index }
  for _, c in ipairs(columns) do
    if row[c.key] == nil then rec[c.key] = json.null end
  end
  for k, v in pairs(row) do
    if rec[k] == nil then rec[k] = v end
  end
  return rec
end

-- ------------------------------------------------------------ the sink

local Sink = {}
Sink.__index = Sink

-- The columns of a file: the declared ones, then `status` when not declared.
local function file_keys(columns, extra)
  local keys, has = {}, {}
  for i, c in ipairs(columns) do
    keys[i] = c.key
    has[c.key] = true
  end
  if not has.status then keys[#keys + 1] = "status" end
  for _, k in ipairs(extra or {}) do
    if not has[k] and k ~= "status" then keys[#keys + 1] = k end
  end
  return keys
end

local function csv_comment(text)
  return "# " .. tostring(text):gsub("\r?\n", "\n# ") .. "\n"
end

-- A line or two of the environment, for the CSV header and the Markdown summary.
local function env_lines(env)
  local out = {}
  local d = env.device or {}
  if d.name then
    local more = {}
    if d.backend then more[#more + 1] = d.backend .. (d.index and (" " .. tostring(d.index)) or "") end
    if d.driver_version then more[#more + 1] = "driver " .. tostring(d.driver_version) end
    out[#out + 1] = ("device: %s%s"):format(tostring(d.name), #more > 0 and (" (" .. table.concat(more, ", ") .. ")") or "")
  end
  if env.gpubench_version then
    out[#out + 1] = ("gpubench %s%s"):format(env.gpubench_version, env.git and (" (git " .. env.git .. ")") or "")
  end
  if env.date then out[#out + 1] = "date: " .. env.date end
  if env.command_line then out[#out + 1] = "command: " .. table.concat(env.command_line, " ") end
  if env.clocks and env.clocks.sm_mhz then
    out[#out + 1] = ("clocks: SM %s MHz (max %s), memory %s MHz, %s C, %s W"):format(
      tostring(env.clocks.sm_mhz), tostring(env.clocks.max_sm_mhz), tostring(env.clocks.memory_mhz),
      tostring(env.clocks.temperature_c), tostring(env.clocks.power_w))
  end
  return out
end

-- open{columns =, title =, env =, csv = path, json = path, markdown = path,
--      console = stream | false, csv_extra = {keys}} -> sink
-- columns: {key =, title =, unit =, format = "%.3f" | function, width =,
-- align = "left" | "right"}. Rows stream to the console as they are added,
-- with widths from the headers and the declared widths. A file path "-" is
-- standard output (then the console table goes to standard error); at most
-- one file may be "-" (gpubench.options refuses two outputs of one path).
-- csv_extra: row fields the CSV carries after the console's columns (JSON
-- lines carry every field of a row anyway).
function report.open(o)
  o = o or {}
  check_columns(o.columns)
  local to_stdout = o.csv == "-" or o.json == "-" or o.markdown == "-"
  local console = o.console
  if console == nil then console = to_stdout and io.stderr or io.stdout end
  local self = setmetatable({
    columns = o.columns, title = o.title, env = o.env or {}, console = console,
    markdown_path = o.markdown, rows = {}, notes = {}, sections = {}, closed = false,
    keys = file_keys(o.columns, o.csv_extra),
  }, Sink)
  self.widths = widths(self.columns)
  if o.csv then
    self.csv = files.writer(o.csv)
    local head = {}
    if self.title then head[#head + 1] = csv_comment(self.title) end
    for _, l in ipairs(env_lines(self.env)) do head[#head + 1] = csv_comment(l) end
    if self.env.options then head[#head + 1] = csv_comment("options: " .. encode(self.env.options)) end
    head[#head + 1] = report.csv_line(self.keys)
    self.csv:line(table.concat(head))
  end
  if o.json then
    self.json = files.writer(o.json)
    local cols = {}
    for i, c in ipairs(self.columns) do
      cols[i] = { key = c.key, title = c.title or c.key, unit = c.unit }
    end
    local head = { type = "environment", title = self.title, columns = cols }
    for k, v in pairs(self.env) do head[k] = v end
    self.json:line(encode(head) .. "\n")
  end
  if self.console then
    if self.title then self.console:write(self.title, "\n") end
    local hl = header_line(self.columns, self.widths)
    self.console:write(hl, "\n", string.rep("-", #hl), "\n")
    self.console:flush()
  end
  return self
end

-- add(row): row holds a value per column key (numbers, or nil where the
-- cell has none) and `status` ("ok" when absent; "noise", "skipped",
-- "not_converged", "throttled", ...); row.samples and any other keys go to
-- the JSON line only.
function Sink:add(row)
  if self.closed then error("report: add after close", 2) end
  if type(row) ~= "table" then error("report: a row must be a table", 2) end
  if row.status == nil then row.status = "ok" end
  self.rows[#self.rows + 1] = row
  if self.console then
    self.console:write(row_line(self.columns, self.widths, row), "\n")
    self.console:flush()
  end
  if self.csv then
    local vals = {}
    for i, k in ipairs(self.keys) do vals[i] = row[k] end
    self.csv:line(report.csv_line(vals, #self.keys))
  end
  if self.json then self.json:line(encode(record_of("cell", #self.rows, self.columns, row)) .. "\n") end
end

-- note(text): a footnote printed under the table and kept in every file.
function Sink:note(text)
  if self.closed then error("report: note after close", 2) end
  self.notes[#self.notes + 1] = text
end

-- end_table(): prints the notes under the console table (once); close does
-- it too. A section printed later (the validation table) follows them.
function Sink:end_table()
  if self.notes_printed then return end
  self.notes_printed = true
  if self.console and #self.notes > 0 then
    self.console:write("\n", table.concat(self.notes, "\n"), "\n")
    self.console:flush()
  end
end

-- section(name, columns, rows [, text]): a second table of the run (--validate's
-- comparison): `text` is printed on the console now; every file keeps the
-- rows (JSON records of type `name`, CSV comment lines, a Markdown section).
function Sink:section(name, columns, rows, text)
  if self.closed then error("report: section after close", 2) end
  check_columns(columns)
  self:end_table()
  if text and self.console then
    self.console:write(text)
    self.console:flush()
  end
  self.sections[#self.sections + 1] = { name = name, columns = columns, rows = rows }
  if self.csv then
    local keys = {}
    for i, c in ipairs(columns) do keys[i] = c.key end
    local out = { csv_comment(name .. ":"), csv_comment(report.csv_line(keys):gsub("\n$", "")) }
    for _, r in ipairs(rows) do
      local vals = {}
      for i, k in ipairs(keys) do vals[i] = r[k] end
      out[#out + 1] = csv_comment(report.csv_line(vals, #keys):gsub("\n$", ""))
    end
    self.csv:line(table.concat(out))
  end
  if self.json then
    local lines = {}
    for i, r in ipairs(rows) do lines[i] = encode(record_of(name, i, columns, r)) .. "\n" end
    if #lines > 0 then self.json:line(table.concat(lines)) end
  end
end

-- close([err]): prints the notes, writes the Markdown file and the JSON end
-- line, and puts every file in place. With err (an error ended the run; also
-- when closed by <close> during an error), the files say "interrupted".
function Sink:close(err)
  if self.closed then return end
  self.closed = true
  local interrupted = err ~= nil
  self:end_table()
  if self.csv then
    local tail = {}
    for _, n in ipairs(self.notes) do tail[#tail + 1] = csv_comment(n) end
    if interrupted then tail[#tail + 1] = csv_comment("interrupted: true") end
    if #tail > 0 then self.csv:line(table.concat(tail)) end
    self.csv:finish()
  end
  if self.json then
    self.json:line(encode { type = "end", cells = #self.rows, notes = self.notes, interrupted = interrupted } .. "\n")
    self.json:finish()
  end
  if self.markdown_path then
    local out = {}
    if self.title then out[#out + 1] = "## " .. self.title .. "\n\n" end
    local env = env_lines(self.env)
    if #env > 0 then out[#out + 1] = table.concat(env, "  \n") .. "\n\n" end
    out[#out + 1] = report.markdown(self.columns, self.rows, self.notes)
    for _, s in ipairs(self.sections) do
      out[#out + 1] = "\n### " .. s.name .. "\n\n" .. report.markdown(s.columns, s.rows)
    end
    if interrupted then out[#out + 1] = "\n**interrupted**: the run ended early; the rows above are the cells that finished.\n" end
    files.whole(self.markdown_path, table.concat(out))
  end
end
Sink.__close = function(self, err) self:close(err) end

-- ------------------------------------------------------------ environment

local DEVICE_FIELDS = {
  "backend", "index", "name", "device_type", "driver_version", "api_version", "arch",
  "vendor_id", "device_id", "uuid", "memory_bytes", "sm_count", "l2_bytes", "spec_gbs",
  "memory_clock_khz", "memory_bus_bits", "timestamp_period_ns", "subgroup_size",
  "max_buffer_bytes",
}

-- environment(dev [, meta [, extra]]) -> the record every output carries:
-- device, driver, backend, clocks where readable, gpubench version, git
-- revision, command line, resolved options, date. meta is options.parse's
-- second result; extra is merged in last.
function report.environment(dev, meta, extra)
  local env = {}
  if dev then
    local d = {}
    for _, k in ipairs(DEVICE_FIELDS) do
      local ok, v = pcall(function() return dev[k] end)
      if ok and v ~= nil then d[k] = v end
    end
    env.device = d
    env.backend, env.driver = d.backend, d.driver_version
    env.clocks = require("gpubench.clocks").read(dev) -- NVML on NVIDIA GPUs; nil elsewhere
    if (d.memory_clock_khz or 0) > 0 then
      env.clocks = env.clocks or {}
      env.clocks.memory_clock_khz = d.memory_clock_khz
    end
  end
  local okg, gpu = pcall(require, "gpu")
  if okg and type(gpu) == "table" then
    env.gpubench_version = gpu.version
    if gpu.git and gpu.git ~= "" then env.git = gpu.git end
  end
  local cmd = {}
  if arg and arg[0] then cmd[1] = arg[0] end
  if meta and meta.argv then
    for _, a in ipairs(meta.argv) do cmd[#cmd + 1] = a end
  elseif arg then
    for i = 1, #arg do cmd[#cmd + 1] = arg[i] end
  end
  env.command_line = cmd
  if meta and meta.values then env.options = meta.values end
  if meta and meta.source then env.option_sources = meta.source end
  env.date = os.date("!%Y-%m-%dT%H:%M:%SZ")
  for k, v in pairs(extra or {}) do env[k] = v end
  return env
end

return report
