-- gpubench.plot: line plots of an experiment's JSON-lines cells through
-- gnuplot (tools/plot.lua is its command line).
--
--   local plot = require "gpubench.plot"
--   local series = plot.series(rows, {x = "m", y = "us_per_step", by = {"variant"}})
--   plot.render(series, {output = "moe.svg", x = "m", y = "us_per_step"})
--
-- One line per distinct value of the `by` fields, points sorted by x. A
-- numeric x is plotted as numbers; any other x as categories in the order
-- they first appear. Rows whose y is not a number (a skipped or failed cell:
-- null in JSON) are left out and counted, never drawn as zero.

local plot = {}

local function text(v)
  if math.type(v) == "float" and math.tointeger(v) then return tostring(math.tointeger(v)) end
  return tostring(v)
end

local function is_number(v) return type(v) == "number" and v == v and v > -math.huge and v < math.huge end

-- series(rows, {x =, y =, by = {fields}}) -> {lines = {{name, points = {{x, y}}}}, categories, skipped}
function plot.series(rows, o)
  local lines, by_name, skipped, numeric_x = {}, {}, 0, true
  local present_x, present_y = false, false
  for _, r in ipairs(rows) do
    if r[o.x] ~= nil then present_x = true end
    if r[o.y] ~= nil then present_y = true end
    if r[o.x] ~= nil and not is_number(r[o.x]) then numeric_x = false end
  end
  if not present_x then error(("plot: no cell has the field %s (--x)"):format(o.x), 2) end
  if not present_y then error(("plot: no cell has the field %s (--y)"):format(o.y), 2) end
  local categories, cat_index = {}, {}
  for _, r in ipairs(rows) do
    local x, y = r[o.x], r[o.y]
    if x == nil or not is_number(y) then
      skipped = skipped + 1
    else
      if not numeric_x then
        local key = text(x)
        if not cat_index[key] then
          categories[#categories + 1] = key
          cat_index[key] = #categories
        end
        x = cat_index[key] - 1
      end
      local parts = {}
      for i, f in ipairs(o.by or {}) do parts[i] = text(r[f]) end
      local name = #parts > 0 and table.concat(parts, " ") or o.y
      local line = by_name[name]
      if not line then
        line = { name = name, points = {} }
        by_name[name] = line
        lines[#lines + 1] = line
      end
      line.points[#line.points + 1] = { x, y }
    end
  end
  for _, line in ipairs(lines) do
    table.sort(line.points, function(p, q) return p[1] < q[1] end)
  end
  if #lines == 0 then error(("plot: no cell has a number in %s"):format(o.y), 2) end
  return { lines = lines, categories = not numeric_x and categories or nil, skipped = skipped }
end

local function quote(s) return '"' .. tostring(s):gsub('[\\"]', "\\%0") .. '"' end

-- The gnuplot program for series s; data is the path of the data file, whose
-- blocks (one per line, two blank lines apart) `index` selects.
function plot.script(s, o, data)
  local out = {}
  local function add(fmt, ...) out[#out + 1] = fmt:format(...) end
  local ext = o.output:match("%.(%w+)$")
  if ext == "svg" then
    add("set terminal svg size %d,%d dynamic enhanced font 'sans,12' background rgb 'white'", o.width, o.height)
  else
    add("set terminal pngcairo size %d,%d enhanced font 'sans,11'", o.width, o.height)
  end
  add("set output %s", quote(o.output))
  add("set title %s noenhanced", quote(o.title or (o.y .. " against " .. o.x)))
  add("set xlabel %s noenhanced", quote(o.xlabel or o.x))
  add("set ylabel %s noenhanced", quote(o.ylabel or o.y))
  add("set key outside right top noenhanced")
  add("set grid")
  if o.logx then add("set logscale x 2") end
  if o.logy then add("set logscale y") end
  if s.categories then
    local tics = {}
    for i, c in ipairs(s.categories) do tics[i] = ("%s %d"):format(quote(c), i - 1) end
    add("set xtics (%s) rotate by -30", table.concat(tics, ", "))
    add("set xrange [-0.5:%g]", #s.categories - 0.5)
  end
  local plots = {}
  for i, line in ipairs(s.lines) do
    plots[i] = ("%s index %d using 1:2 with linespoints title %s"):format(quote(data), i - 1, quote(line.name))
  end
  add("plot %s", table.concat(plots, ", \\\n     "))
  return table.concat(out, "\n") .. "\n"
end

local function shell_quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

-- Is gnuplot on the PATH? (a clear message instead of a shell's "not found").
function plot.have_gnuplot()
  local ok = os.execute("command -v gnuplot >/dev/null 2>&1")
  return ok == true or ok == 0
end

-- render(series, {output =, x =, y =, title =, logx =, logy =, width = 900, height = 540})
-- Writes the plot; raises an error with gnuplot's own message when it fails.
function plot.render(s, o)
  local ext = type(o.output) == "string" and o.output:match("%.(%w+)$")
  if ext ~= "svg" and ext ~= "png" then
    error(("plot: the output must end in .svg or .png, got %s"):format(tostring(o.output)), 2)
  end
  if not plot.have_gnuplot() then
    error("plot: gnuplot is not installed (Debian: apt-get install gnuplot-nox; scripts/install-deps.sh installs it)", 2)
  end
  o.width, o.height = o.width or 900, o.height or 540
  local data, script = os.tmpname(), os.tmpname()
  local f = assert(io.open(data, "w"))
  for i, line in ipairs(s.lines) do
    if i > 1 then f:write("\n\n") end
    for _, p in ipairs(line.points) do f:write(("%.17g %.17g\n"):format(p[1], p[2])) end
  end
  f:close()
  f = assert(io.open(script, "w"))
  f:write(plot.script(s, o, data))
  f:close()
  local log = os.tmpname()
  local ok = os.execute(("gnuplot %s >%s 2>&1"):format(shell_quote(script), shell_quote(log)))
  local lf = io.open(log, "rb")
  local msg = lf and lf:read("a") or ""
  if lf then lf:close() end
  os.remove(data); os.remove(script); os.remove(log)
  if not (ok == true or ok == 0) then
    os.remove(o.output)
    error(("plot: gnuplot failed: %s"):format(msg:gsub("%s+$", "")), 2)
  end
end

return plot
