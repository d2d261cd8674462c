-- gpubench.repl without a terminal: the printer, help and its descriptions
-- (kept in sync with the bindings), the lazy dev global, and the completion
-- candidates (which must have no side effects).
local t = dofile("tests/lua/harness.lua")
local repl = require "gpubench.repl"
local gpu = t.gpu

-- A globals table for install(): a copy of _G, so this script's own _G
-- stays a script's (no REPL globals).
local function fake_globals()
  local G = {}
  for k, v in pairs(_G) do G[k] = v end
  return G
end

local function has(text, plain) return text:find(plain, 1, true) ~= nil end

-- ------------------------------------------------------------ printing

t.test("format: strings as they are, other scalars through tostring", function()
  t.eq(repl.format("a b"), "a b")
  t.eq(repl.format(3), "3")
  t.eq(repl.format(0.5), "0.5")
  t.eq(repl.format(nil), "nil")
  t.eq(repl.format(true), "true")
  t.truthy(repl.format(print):match("^builtin: ") or repl.format(print):match("^function: "))
end)

t.test("format: tables through inspect", function()
  t.eq(repl.format { 1, 2, x = "y" }, '{ 1, 2,\n  x = "y"\n}')
  t.eq(repl.format {}, "{}")
  local cyc = { name = "c" }
  cyc.self = cyc
  t.eq(repl.format(cyc), '<1>{\n  name = "c",\n  self = <table 1>\n}')
end)

t.test("format: depth, entries per table, entries in all and long strings are cut", function()
  local deep = { a = { b = { c = { d = { e = 1 } } } } }
  local text = repl.format(deep)
  t.truthy(has(text, "d = {...}"), text)
  t.truthy(not has(text, "e = 1"), text)
  local big = {}
  for i = 1, 100000 do big[i] = i end
  big.extra = true
  text = repl.format(big)
  t.truthy(has(text, "{ 1, 2, 3,"), text)
  t.truthy(has(text, " 50,"), text)
  t.truthy(not has(text, " 51,"), text)
  t.truthy(has(text, "... (99951 more entries)"), text)
  local wide = {}
  for i = 1, 100 do wide[i] = { i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i } end
  text = repl.format(wide)
  t.truthy(#text < 20000, "a budget of entries in all: " .. #text .. " characters")
  text = repl.format { s = string.rep("x", 1000) }
  t.truthy(has(text, '"' .. string.rep("x", 200) .. '"... (1000 bytes)'), text)
end)

t.test("format: metatables shown as inspect does, without calling their metamethods", function()
  local called = false
  local obj = setmetatable({ v = 1 }, {
    __index = function() called = true end,
    __pairs = function() called = true; return next, {}, nil end,
    __tostring = function() error("boom") end,
  })
  local text = repl.format(obj)
  t.truthy(has(text, "v = 1"), text)
  t.truthy(has(text, "<metatable> = {"), text)
  t.truthy(has(text, "__tostring = <function"), text)
  t.eq(called, false)
end)

t.test("format: gpu objects print their __tostring, also inside tables", function()
  if not gpu then t.skip("no gpu module (stock interpreter)") end
  local s = gpu.u32(7)
  t.eq(repl.format(s), "gpu.u32(7)")
  t.eq(repl.format { s }, "{ <gpu.u32(7)> }")
end)

t.test("format: a device shows its info fields", function()
  local dev = t.device("vulkan")
  local text = repl.format(dev)
  t.truthy(text:find("^gpu%.device: vulkan 0 "), text)
  t.truthy(has(text, ('name = "%s"'):format(dev.name)), text)
  t.truthy(has(text, "memory_bytes = "), text)
end)

t.test("print_results: each value formatted, through the global print", function()
  local got
  local saved = _G.print
  _G.print = function(...) got = table.pack(...) end
  local ok, err = pcall(repl.print_results, "a", nil, 3, { 1 })
  _G.print = saved
  t.truthy(ok, err)
  t.eq(got, { n = 4, "a", "nil", "3", "{ 1 }" })
end)

-- ---------------------------------------------------------------- help

t.test("every method and gpu function in the bindings has a description, and only those", function()
  if not gpu then t.skip("no gpu module (stock interpreter)") end
  t.eq(repl.undescribed(), {})
  for name, d in pairs(repl.doc.types) do
    local methods = repl.methods_of(name)
    t.truthy(methods, "a method table for " .. name)
    for k in pairs(d.methods) do t.truthy(methods[k], name .. ":" .. k .. " is described but not bound") end
  end
  for k in pairs(repl.doc.module) do t.truthy(gpu[k] ~= nil, "gpu." .. k .. " is described but not bound") end
end)

t.test("a method without a description is found (the check above can fail)", function()
  if not gpu then t.skip("no gpu module (stock interpreter)") end
  local methods = repl.methods_of("gpu.timer")
  methods.extra_method = function() end
  local missing = repl.undescribed()
  methods.extra_method = nil
  t.eq(missing, { "gpu.timer:extra_method" })
end)

t.test("the described fields exist on real objects", function()
  local dev = t.device("vulkan")
  for k in pairs(dev.info) do t.truthy(repl.INFO_FIELDS[k], "info field " .. k .. " has no description") end
  for k in pairs(repl.INFO_FIELDS) do
    t.truthy(dev.info[k] ~= nil or k == "uuid", "described info field " .. k .. " is not in dev.info")
  end
  local buf <close> = dev:buffer(64)
  local k = dev:kernel { file = "kernels/vulkan/copy.comp", entry = "main" }
  local b = dev:batch { count = 2, { k, 1, 256, buf, buf, 1 } }
  local objects = { ["gpu.buffer"] = buf, ["gpu.kernel"] = k, ["gpu.batch"] = b, ["gpu.device"] = dev }
  for name, obj in pairs(objects) do
    for field in pairs(repl.doc.types[name].fields) do
      t.truthy(obj[field] ~= nil, name .. " field " .. field .. " is described but reads nil")
    end
  end
  b:free()
  k:free()
end)

t.test("help: a device lists its methods with descriptions, and its fields", function()
  local dev = t.device("vulkan")
  local text = repl.help_text(dev)
  t.truthy(text:find("^gpu%.device: vulkan 0"), text)
  t.truthy(text:find("\n  dev:flush_l2%(%[kind%]%) +evicts the L2"), text)
  t.truthy(text:find("\n  dev:buffer%(bytes%) %-> gpu%.buffer +device memory, freed at scope exit or :free%(%)"), text)
  t.truthy(text:find("\n  dev%.memory_bytes %-> integer +device memory"), text)
end)

t.test("help: buffer, kernel, timer, batch and scalar", function()
  local dev = t.device("vulkan")
  local buf <close> = dev:buffer(64)
  local k = dev:kernel { file = "kernels/vulkan/copy.comp", entry = "main" }
  local tm = dev:timer()
  local b = dev:batch { count = 1, { k, 1, 256, buf, buf, 1 } }
  t.truthy(has(repl.help_text(buf), "buf:upload(str [, offset])"))
  t.truthy(has(repl.help_text(buf), "buf.size -> integer"))
  t.truthy(has(repl.help_text(k), "k:launch(grid, block, args...)"))
  t.truthy(has(repl.help_text(k), "k.params -> {kind, ...}"))
  t.truthy(has(repl.help_text(tm), "t:ms() -> number"))
  t.truthy(has(repl.help_text(b), "b:submit()"))
  t.truthy(has(repl.help_text(gpu.f32(1)), "a typed kernel argument"))
  b:free(); tm:free(); k:free()
end)

t.test("help: the gpu module, plain tables and modules, functions, names, nothing", function()
  if not gpu then t.skip("no gpu module (stock interpreter)") end
  local text = repl.help_text(gpu)
  for k in pairs(gpu) do t.truthy(has(text, "gpu." .. k), "gpu." .. k .. " in help(gpu)") end
  text = repl.help_text(string)
  t.truthy(text:find("^module string:"), text)
  t.truthy(text:find("\n  format +function"), text)
  text = repl.help_text { 10, 20, 30, name = "x", n = 3, sub = { 1 } }
  t.truthy(has(text, "[1] .. [3]"), text)
  t.truthy(text:find('\n  name +string  "x"'), text)
  t.truthy(text:find("\n  n +number  3"), text)
  t.truthy(text:find("\n  sub +table %(1 entry%)"), text)
  t.truthy(has(repl.help_text(setmetatable({}, { __index = { method = print } })), "method"))
  t.truthy(has(repl.help_text(gpu.open), "gpu.open{backend=, index=} -> gpu.device"))
  t.truthy(has(repl.help_text(print), "print: a C function"))
  t.truthy(has(repl.help_text(function(a, b) end), "a Lua function (a, b), defined at"))
  t.truthy(has(repl.help_text("flush_l2"), "dev:flush_l2([kind])"))
  t.truthy(has(repl.help_text("dev:buffer"), "dev:buffer(bytes)"))
  t.truthy(has(repl.help_text(), "help(x)"))
  t.truthy(has(repl.help_text(nil), "nil"))
end)

-- -------------------------------------------------------------- globals

t.test("a script gets none of the REPL's globals", function()
  t.eq(rawget(_G, "dev"), nil)
  t.eq(rawget(_G, "help"), nil)
  t.eq(getmetatable(_G), nil)
end)

t.test("install: gpu and help set, dev opened once on first use", function()
  local G, opened = fake_globals(), 0
  local fake_dev = { name = "fake" }
  repl.install(G, { open = function() opened = opened + 1; return fake_dev end })
  t.eq(G.gpu, gpu)
  t.eq(type(G.help), "function")
  t.eq(opened, 0)
  t.eq(G.dev, fake_dev)
  t.eq(G.dev, fake_dev)
  t.eq(opened, 1)
  t.eq(rawget(G, "dev"), fake_dev)
  t.eq(G.undefined_name, nil)
end)

t.test("install: a failing open says why in one line, and the next use tries again", function()
  local G, tries = fake_globals(), 0
  repl.install(G, { open = function()
    tries = tries + 1
    error("no device here\nsecond line", 0)
  end })
  local ok, e = pcall(function() return G.dev end)
  t.eq(ok, false)
  t.eq(tostring(e), "dev: cannot open a device: no device here")
  pcall(function() return G.dev end)
  t.eq(tries, 2)
end)

t.test("install: names already set stay, an existing __index still answers", function()
  local G = fake_globals()
  G.gpu, G.help = "mine", "mine too"
  setmetatable(G, { __index = { from_before = 42 } })
  repl.install(G, { open = function() return "d" end })
  t.eq(G.gpu, "mine")
  t.eq(G.help, "mine too")
  t.eq(G.from_before, 42)
  t.eq(G.dev, "d")
end)

t.test("install: the real dev is gpu.open{}", function()
  t.device("vulkan") -- skips without a device
  local G = fake_globals()
  repl.install(G)
  local dev = G.dev
  t.eq(repl.gpu_type(dev), "gpu.device")
  dev:free()
end)

-- ----------------------------------------------------------- completion

local function completer_globals()
  local G, opened = fake_globals(), 0
  repl.install(G, { open = function() opened = opened + 1; error("must not open", 0) end })
  return G, function() return opened end
end

t.test("complete: globals and keywords", function()
  local G = completer_globals()
  t.eq(repl.complete("coll", G), { "collectgarbage" })
  t.eq(repl.complete("whi", G), { "while" })
  t.eq(repl.complete("pai", G), { "pairs" })
  t.eq(repl.complete("zzz", G), {})
  local all = repl.complete("", G)
  t.truthy(#all > 30)
  for _, name in ipairs { "dev", "gpu", "help", "print", "function" } do
    local found = false
    for _, c in ipairs(all) do found = found or c == name end
    t.truthy(found, name .. " among the candidates for an empty word")
  end
end)

t.test("complete: fields after '.', methods after ':', through __index tables", function()
  local G = completer_globals()
  t.eq(repl.complete("string.fo", G), { "string.format" })
  t.eq(repl.complete("math.fl", G), { "math.floor" })
  G.s = "text"
  t.eq(repl.complete("s:up", G), { "s:upper" })
  G.f = io.stdout
  t.eq(repl.complete("f:wr", G), { "f:write" })
  G.obj = setmetatable({ a = 1, fn = print }, { __index = { inherited = print, value = 2 } })
  t.eq(repl.complete("obj.", G), { "obj.a", "obj.fn", "obj.inherited", "obj.value" })
  t.eq(repl.complete("obj:", G), { "obj:fn", "obj:inherited" })
  G.a = { b = { c = { deep = 1 } } }
  t.eq(repl.complete("a.b.c.d", G), { "a.b.c.deep" })
end)

t.test("complete: nothing for what is not a plain path", function()
  local G = completer_globals()
  G.t = { x = 1 }
  for _, w in ipairs { "nope.x", "t..x", ".x", "3.", "t.x.", "t[1].", "t:x.", "t.1" } do
    t.eq(repl.complete(w, G), {}, w)
  end
end)

t.test("complete: runs no __index function and no __pairs", function()
  local G = completer_globals()
  local calls = 0
  local function trap() calls = calls + 1; error("side effect") end
  G.trapped = setmetatable({ visible = 1 }, { __index = trap, __pairs = trap, __call = trap })
  t.eq(repl.complete("trapped.", G), { "trapped.visible" })
  t.eq(repl.complete("trapped.v.", G), {})
  t.eq(repl.complete("trapped.hidden.x", G), {})
  t.eq(calls, 0)
end)

t.test("complete: dev not opened yet completes its methods without opening it", function()
  if not gpu then t.skip("no gpu module (stock interpreter)") end
  local G, opened = completer_globals()
  t.eq(repl.complete("dev:fl", G), { "dev:flush_l2" })
  local fields = repl.complete("dev.", G)
  local set = {}
  for _, c in ipairs(fields) do set[c] = true end
  t.truthy(set["dev.buffer"] and set["dev.name"] and set["dev.info"], table.concat(fields, " "))
  t.eq(repl.complete("dev.info.", G), {})
  t.eq(opened(), 0)
  t.eq(rawget(G, "dev"), nil)
end)

t.test("complete: an open device, its fields and its info table", function()
  local dev = t.device("vulkan")
  local G = completer_globals()
  G.dev = dev
  t.eq(repl.complete("dev:fl", G), { "dev:flush_l2" })
  t.eq(repl.complete("dev.info.na", G), { "dev.info.name" })
  t.eq(repl.complete("dev.max_g", G), { "dev.max_group_size", "dev.max_groups" })
  local buf <close> = dev:buffer(16)
  G.buf = buf
  t.eq(repl.complete("buf:up", G), { "buf:upload" })
  t.eq(repl.complete("buf.si", G), { "buf.size" })
end)

t.run()
