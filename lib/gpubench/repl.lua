-- gpubench.repl: what the REPL adds for exploring a device. cli/repl.c
-- calls install(_G) when the REPL starts, print_results(...) with each
-- expression's values, and complete(word) at Tab; scripts never load it.
--
--   M.install(G [, opts]) -> M   the globals gpu, help and dev (gpu.open{} on
--                                first use; opts.open replaces the opener)
--   M.format(v) -> text          how a result prints (tables through inspect)
--   M.inspect(v [, limits])      inspect.lua over a copy cut to the limits
--   M.help_text([x]) -> text     what help(x) prints
--   M.complete(word [, G])       completion candidates, without side effects
--   M.doc                        the one-line descriptions of the gpu API
local inspect = require "inspect"
local M = {}

-- Captured now, so printing, help and completion keep working (and
-- completion stays side-effect free) whatever a session does to the globals.
-- Only print is looked up when used, so a session's own print is honoured.
local getmetatable, setmetatable, rawget, rawset = getmetatable, setmetatable, rawget, rawset
local next, ipairs, pairs, type, pcall, error = next, ipairs, pairs, type, pcall, error
local tostring, select, sort, concat, unpack = tostring, select, table.sort, table.concat, table.unpack
local mathtype, max = math.type, math.max
local getupvalue, getinfo, getlocal = debug.getupvalue, debug.getinfo, debug.getlocal
local registry, loaded = debug.getregistry(), package.loaded

local has_gpu, gpu = pcall(require, "gpu")
if not has_gpu then gpu = nil end

-- How much of a table a result prints: nesting depth, entries per table,
-- entries in all, and bytes of a string inside a table.
M.limits = { depth = 4, items = 50, total = 1000, string = 200 }

local IDENT = "^[%a_][%w_]*$"

-- The one-line descriptions of the gpu API (gpubench.repl_doc).
local doc = require "gpubench.repl_doc"
M.doc = doc
M.INFO_FIELDS = doc.INFO_FIELDS

-- ------------------------------------------------------------ gpu types

-- The gpu type of v ("gpu.buffer", ...): only for a userdata whose metatable
-- is the one the bindings registered, so a look-alike is never trusted.
local function gpu_type(v)
  if type(v) ~= "userdata" then return nil end
  local mt = getmetatable(v)
  if type(mt) ~= "table" then return nil end
  local name = rawget(mt, "__name")
  if type(name) == "string" and doc.types[name] and rawget(registry, name) == mt then return name end
  return nil
end
M.gpu_type = gpu_type

-- The method table of a gpu type: the metatable's __index, or the first
-- upvalue of the C closure that is the __index (lb_register's layout).
function M.methods_of(name)
  local mt = rawget(registry, name)
  if type(mt) ~= "table" then return nil end
  local index = rawget(mt, "__index")
  if type(index) == "function" then
    local _, up = getupvalue(index, 1)
    index = up
  end
  if type(index) == "table" then return index end
  return nil
end

local function safe_tostring(v)
  local ok, s = pcall(tostring, v)
  if ok and type(s) == "string" then return s end
  return ("(%s value; its __tostring failed: %s)"):format(type(v), type(s) == "string" and s or type(s))
end

-- ------------------------------------------------------------- printing

local serial = 0

-- inspect.lua over a copy of v cut to the limits (inspect itself walks the
-- whole table). What inspect cannot show is a placeholder string in the copy,
-- replaced in its output: gpu objects (their __tostring), long strings (cut),
-- the metatable and the count of entries left out.
function M.inspect(v, limits)
  limits = limits or M.limits
  serial = serial + 1
  local prefix, n = "~gbrepl" .. serial .. ".", 0
  local values, entries = {}, {}
  local function placeholder(map, text)
    n = n + 1
    local p = prefix .. n .. "~"
    map[p] = text
    return p
  end
  local budget = limits.total
  local seen = {}
  local copy
  copy = function(x, depth)
    local tx = type(x)
    if tx == "string" then
      if #x <= limits.string then return x end
      return placeholder(values, inspect(x:sub(1, limits.string)) .. ("... (%d bytes)"):format(#x))
    elseif tx == "userdata" then
      if gpu_type(x) then return placeholder(values, "<" .. safe_tostring(x) .. ">") end
      return x
    elseif tx ~= "table" then
      return x
    end
    if seen[x] then return seen[x] end
    if depth >= limits.depth then return {} end -- inspect prints {...} there
    local c, shown, seq = {}, 0, 0
    seen[x] = c
    while rawget(x, seq + 1) ~= nil and shown < limits.items and budget > 0 do
      seq = seq + 1
      c[seq] = copy(rawget(x, seq), depth + 1)
      shown, budget = shown + 1, budget - 1
    end
    local total = 0
    for k, val in next, x do
      total = total + 1
      local in_seq = mathtype(k) == "integer" and k >= 1 and k <= seq
      if not in_seq and shown < limits.items and budget > 0 then
        c[copy(k, depth + 1)] = copy(val, depth + 1)
        shown, budget = shown + 1, budget - 1
      end
    end
    if total > shown then
      c[placeholder(entries, ("... (%d more entr%s)"):format(total - shown,
        total - shown == 1 and "y" or "ies"))] = true
    end
    local mt = getmetatable(x)
    if mt ~= nil then c[placeholder(entries, "<metatable> = ")] = copy(mt, depth + 1) end
    return c
  end
  local out = inspect(copy(v, 0), { depth = limits.depth })
  local pat = prefix:gsub("%p", "%%%0") .. "%d+~"
  out = out:gsub('%["(' .. pat .. ')"%] = true', entries)
  out = out:gsub('%["(' .. pat .. ')"%] = ', entries)
  out = out:gsub('"(' .. pat .. ')"', values)
  return out
end

-- The text one result prints as: strings as they are, tables through
-- inspect, a device with its info table, anything else through tostring.
function M.format(v)
  local gt = gpu_type(v)
  if gt == "gpu.device" then
    local text = safe_tostring(v)
    local ok, info = pcall(function() return not v.closed and v.info end)
    if ok and type(info) == "table" then text = text .. " " .. M.inspect(info) end
    return text
  end
  if type(v) == "string" then return v end
  if type(v) == "table" then return M.inspect(v) end
  return safe_tostring(v)
end

-- The REPL's printer: each value formatted, then the global print (so a
-- session that replaces print still gets its output), tab-separated.
function M.print_results(...)
  local n = select("#", ...)
  local parts = {}
  for i = 1, n do parts[i] = M.format((select(i, ...))) end
  print(unpack(parts, 1, n))
end

-- ----------------------------------------------------------------- help

-- Two columns; a signature wider than 48 pushes its own text right.
local function aligned(rows)
  local width = 0
  for _, r in ipairs(rows) do
    if #r[1] <= 48 then width = max(width, #r[1]) end
  end
  local out = {}
  for _, r in ipairs(rows) do
    out[#out + 1] = ("  %-" .. width .. "s  %s"):format(r[1], r[2])
  end
  return concat(out, "\n")
end

local function sorted_keys(t)
  local keys = {}
  for k in next, t do keys[#keys + 1] = k end
  sort(keys, function(a, b)
    if type(a) == type(b) and (type(a) == "string" or type(a) == "number") then return a < b end
    return type(a) < type(b)
  end)
  return keys
end

-- The rows of a gpu type: its methods (from the bindings, so a method added
-- there shows even before it is described) and its described fields.
local function type_rows(name)
  local d = doc.types[name]
  local methods, fields = {}, {}
  for _, k in ipairs(sorted_keys(M.methods_of(name) or {})) do
    local e = d.methods[k] or { d.var .. ":" .. tostring(k) .. "(...)", "(no description)" }
    methods[#methods + 1] = e
  end
  for _, k in ipairs(sorted_keys(d.fields)) do fields[#fields + 1] = d.fields[k] end
  return methods, fields
end

local function gpu_help(x, name)
  local lines = { safe_tostring(x) .. "  (" .. doc.types[name].summary .. ")" }
  local methods, fields = type_rows(name)
  if #methods > 0 then lines[#lines + 1] = "methods:\n" .. aligned(methods) end
  if #fields > 0 then lines[#lines + 1] = "fields:\n" .. aligned(fields) end
  return concat(lines, "\n")
end

local function module_help()
  local rows = {}
  for _, k in ipairs(sorted_keys(gpu)) do
    rows[#rows + 1] = doc.module[k] or { "gpu." .. tostring(k), type(gpu[k]) .. " (no description)" }
  end
  return "gpu: the gpu module (docs/LUA_API.md)\n" .. aligned(rows)
end

-- A plain value's one-line summary in a table listing.
local function brief(v)
  local tv = type(v)
  if gpu_type(v) then return safe_tostring(v) end
  if tv == "string" then
    local s = inspect(#v > 40 and v:sub(1, 40) or v)
    return "string  " .. s .. (#v > 40 and ("... (%d bytes)"):format(#v) or "")
  end
  if tv == "number" or tv == "boolean" then return tv .. "  " .. tostring(v) end
  if tv == "table" then
    local count = 0
    for _ in next, v do count = count + 1 end
    return ("table (%d entr%s)"):format(count, count == 1 and "y" or "ies")
  end
  return tv
end

local function key_text(k)
  if type(k) == "string" and k:match(IDENT) then return k end
  return "[" .. inspect(k) .. "]"
end

local function module_name(t)
  for name, mod in next, loaded do
    if mod == t and type(name) == "string" then return name end
  end
  return nil
end

local MAX_HELP_ROWS = 200

local function table_help(t)
  local seq = 0
  while rawget(t, seq + 1) ~= nil do seq = seq + 1 end
  local rows, more = {}, 0
  if seq > 0 then rows[1] = { ("[1] .. [%d]"):format(seq), "the array part" } end
  for _, k in ipairs(sorted_keys(t)) do
    if not (mathtype(k) == "integer" and k >= 1 and k <= seq) then
      if #rows < MAX_HELP_ROWS then rows[#rows + 1] = { key_text(k), brief(rawget(t, k)) }
      else more = more + 1 end
    end
  end
  local name = module_name(t)
  local lines = { (name and ("module %s"):format(name) or safe_tostring(t)) ..
    (#rows == 0 and ": an empty table" or ":") }
  if #rows > 0 then lines[#lines + 1] = aligned(rows) end
  if more > 0 then lines[#lines + 1] = ("  ... (%d more)"):format(more) end
  local mt = getmetatable(t)
  local index = type(mt) == "table" and rawget(mt, "__index")
  if type(index) == "table" and index ~= t then
    local inherited = {}
    for _, k in ipairs(sorted_keys(index)) do
      if rawget(t, k) == nil and #inherited < MAX_HELP_ROWS then
        inherited[#inherited + 1] = { key_text(k), brief(rawget(index, k)) }
      end
    end
    if #inherited > 0 then lines[#lines + 1] = "from its metatable's __index:\n" .. aligned(inherited) end
  end
  return concat(lines, "\n")
end

-- What the bindings have that M.doc does not describe: "gpu.NAME" for the
-- module, "TYPE:NAME" for methods. The test of this module wants none.
function M.undescribed()
  local out = {}
  for k in next, gpu or {} do
    if not doc.module[k] then out[#out + 1] = "gpu." .. tostring(k) end
  end
  for name, d in next, doc.types do
    for k in next, M.methods_of(name) or {} do
      if not d.methods[k] then out[#out + 1] = name .. ":" .. tostring(k) end
    end
  end
  sort(out)
  return out
end

-- "print", "string.format": where a function is found in the loaded modules.
local function function_name(f)
  local best
  for modname, mod in next, loaded do
    if type(mod) == "table" and type(modname) == "string" then
      for k, v in next, mod do
        if v == f and type(k) == "string" then
          local name = modname == "_G" and k or modname .. "." .. k
          if not best or #name < #best then best = name end
        end
      end
    end
  end
  return best
end

-- The description of a function of the gpu API, found by identity.
local function find_function(f)
  if gpu then
    for k, v in next, gpu do
      if v == f and doc.module[k] then return doc.module[k] end
    end
  end
  for name, d in next, doc.types do
    for k, v in next, M.methods_of(name) or {} do
      if v == f and d.methods[k] then return d.methods[k] end
    end
  end
  return nil
end

local function function_help(f)
  local e = find_function(f)
  if e then return aligned({ e }) end
  local info = getinfo(f, "Su")
  local name = function_name(f) or safe_tostring(f)
  if info.what == "C" then return name .. ": a C function (no description)" end
  local params = {}
  for i = 1, info.nparams do params[i] = getlocal(f, i) end
  if info.isvararg then params[#params + 1] = "..." end
  return ("%s: a Lua function (%s), defined at %s:%d"):format(name,
    concat(params, ", "), info.short_src, info.linedefined)
end

-- help "flush_l2", help "dev:buffer": every described name that matches.
local function name_help(s)
  local name = s:match("([%a_][%w_]*)$") or s
  local rows = {}
  if doc.module[name] then rows[1] = doc.module[name] end
  for _, k in ipairs(sorted_keys(doc.types)) do
    local d = doc.types[k]
    if d.methods[name] then rows[#rows + 1] = d.methods[name] end
    if d.fields[name] then rows[#rows + 1] = d.fields[name] end
  end
  if #rows == 0 then return ("no gpu function or field is named %q; help() for an overview"):format(name) end
  return aligned(rows)
end

local OVERVIEW = [[
gpubench REPL: an expression prints its value (tables through inspect, cut at
depth %d and %d entries); a statement that ends early continues on the next line.
  gpu        the gpu module                      help(gpu)
  dev        a device, opened on first use       help(dev)
             (gpu.open{}: --backend and --device apply)
  help(x)    methods and fields of x: gpu, dev, a buffer, kernel, timer, batch,
             any table or module; help "name" looks a gpu name up
  Tab        completes globals, t.fields and obj:methods
  Ctrl-C     stops a running statement, or drops the line being typed
  Ctrl-D     ends the session (so does os.exit())]]

function M.help_text(...)
  if select("#", ...) == 0 then return OVERVIEW:format(M.limits.depth, M.limits.items) end
  local x = ...
  local gt = gpu_type(x)
  if gt then return gpu_help(x, gt) end
  if gpu and x == gpu then return module_help() end
  local tx = type(x)
  if tx == "table" then return table_help(x) end
  if tx == "function" then return function_help(x) end
  if tx == "string" then return name_help(x) end
  if x == nil then return "help: the value is nil (an undefined name?); help() for an overview" end
  return ("%s: a %s"):format(safe_tostring(x), tx)
end

-- ------------------------------------------------------------- globals

local lazy = setmetatable({}, { __mode = "k" }) -- G -> names opened on first use

-- An error the REPL prints as one line, without a traceback (its
-- __tostring gives a string; see cli/protect.c).
local NOTE = { __tostring = function(e) return e.message end }

local function first_line(v)
  return (safe_tostring(v):match("^[^\n]*"))
end

-- Sets the REPL's globals in G: gpu, help, and dev opened on first use (a
-- failure says why in one line; the next use tries again). A name the
-- session already set is left alone; G's own __index still answers the rest.
function M.install(G, opts)
  G = G or _G
  opts = opts or {}
  local open = opts.open or function()
    if not gpu then error("the gpu module failed to load", 0) end
    return gpu.open {}
  end
  if gpu and rawget(G, "gpu") == nil then rawset(G, "gpu", gpu) end
  if rawget(G, "help") == nil then
    rawset(G, "help", function(...) print(M.help_text(...)) end)
  end
  local mt = getmetatable(G)
  if mt == nil then
    mt = {}
    setmetatable(G, mt)
  end
  if type(mt) ~= "table" then return M end -- a protected metatable: no dev
  local previous = rawget(mt, "__index")
  rawset(mt, "__index", function(t, k)
    if k == "dev" and t == G then
      local ok, dev = pcall(open)
      if not ok then
        error(setmetatable({ message = "dev: cannot open a device: " .. first_line(dev) }, NOTE), 2)
      end
      rawset(G, "dev", dev)
      return dev
    end
    if type(previous) == "function" then return previous(t, k) end
    if type(previous) == "table" then return previous[k] end
    return nil
  end)
  lazy[G] = { dev = "gpu.device" }
  return M
end

-- ----------------------------------------------------------- completion
-- Reads only with rawget, next and getmetatable, follows __index tables but
-- never __index functions, except that a gpu object's fields are read
-- through the bindings' own __index (no side effects). A dev not opened yet
-- completes its type's names without opening it.

local KEYWORDS = { "and", "break", "do", "else", "elseif", "end", "false", "for", "function",
  "goto", "if", "in", "local", "nil", "not", "or", "repeat", "return", "then", "true",
  "until", "while" }

local MAX_CANDIDATES = 500

-- A value standing for a gpu object not made yet (the lazy dev), marked by
-- a key no other table has.
local UNOPENED = {}
local function unopened(name) return { [UNOPENED] = name } end

local function index_table(v)
  local mt = getmetatable(v)
  local index = type(mt) == "table" and rawget(mt, "__index")
  return type(index) == "table" and index or nil
end

local function lookup(v, key)
  local gt = gpu_type(v)
  if gt then
    local methods = M.methods_of(gt)
    if methods and rawget(methods, key) ~= nil then return rawget(methods, key) end
    if not doc.types[gt].fields[key] then return nil end
    local ok, r = pcall(function() return v[key] end)
    return ok and r or nil
  end
  for _ = 1, 16 do -- the __index chain, tables only
    if type(v) == "table" then
      local r = rawget(v, key)
      if r ~= nil then return r end
    end
    v = index_table(v)
    if v == nil then return nil end
  end
  return nil
end

local function is_callable(v)
  if type(v) == "function" then return true end
  local mt = getmetatable(v)
  return type(mt) == "table" and rawget(mt, "__call") ~= nil
end

-- Calls add(name) for each name after v and sep ("." or ":").
local function names(v, sep, add)
  local gt = gpu_type(v) or (type(v) == "table" and rawget(v, UNOPENED))
  if gt then
    for k in next, M.methods_of(gt) or {} do add(k) end
    if sep == "." then for k in next, doc.types[gt].fields do add(k) end end
    return
  end
  for _ = 1, 16 do
    if type(v) == "table" then
      for k, val in next, v do
        if sep ~= ":" or is_callable(val) then add(k) end
      end
    end
    v = index_table(v)
    if v == nil then return end
  end
end

function M.complete(word, G)
  G = G or _G
  if type(word) ~= "string" then return {} end
  local partial = word:match("[%a_][%w_]*$") or ""
  local base = word:sub(1, #word - #partial)
  local out, seen = {}, {}
  local function add(name)
    if type(name) == "string" and name:match(IDENT) and not seen[name] and #out < MAX_CANDIDATES
        and name:sub(1, #partial) == partial then
      seen[name] = true
      out[#out + 1] = base .. name
    end
  end
  if base == "" then
    names(G, ".", add)
    for name in next, lazy[G] or {} do add(name) end
    for _, kw in ipairs(KEYWORDS) do add(kw) end
  else
    local sep = base:sub(-1)
    if sep ~= "." and sep ~= ":" then return {} end
    -- "a.b.c" before the separator: every part a name, read as described above
    local v, first = G, true
    for seg in (base:sub(1, -2) .. "."):gmatch("(.-)%.") do
      if v == nil or not seg:match(IDENT) then return {} end
      local nextv = lookup(v, seg)
      if nextv == nil and first and lazy[G] and lazy[G][seg] then nextv = unopened(lazy[G][seg]) end
      v, first = nextv, false
    end
    if v == nil then return {} end
    names(v, sep, add)
  end
  sort(out)
  return out
end

return M
