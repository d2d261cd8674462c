-- gpubench.options: values, the environment contract of cera's wgpu_gemv_bench
-- (a knob set but unparseable is an error, not the default), error messages and
-- exit status 2, flag-over-env precedence, and the generated --help.
local t = dofile("tests/lua/harness.lua")
local options = require "gpubench.options"

local spec = {
  name = "bench",
  description = "A test experiment.",
  options = {
    { "iters", type = "int", default = 200, env = "ITERS", help = "Launches at the first point." },
    { "peak_gbs", type = "float", env = "PEAK_GBS", help = "Spec bandwidth override." },
    { "order", type = "enum", choices = { "forward", "reverse", "shuffle" }, default = "forward" },
    { "sweep", type = "range", help = "T range." },
    { "sizes", type = "list", of = "bytes", default = "1M,16MiB" },
    { "kernels", type = "list", of = "enum", choices = { "copy", "read" }, default = { "copy", "read" } },
    { "k", type = "int", env = "K",
      check = function(v) return v % 256 == 0, "must be a multiple of 256" end },
    { "device", type = "int", min = 0 },
    { "validate", type = "flag", env = "VALIDATE" },
    { "csv", type = "path" },
  },
}

local function parse(argv, env) return options.parse(spec, argv, { env = env or {} }) end

-- Asserts a usage error with exit status 2 and exactly this message.
local function usage_error(msg, argv, env)
  local text, e = t.errors(function() parse(argv, env) end, msg, true)
  t.eq(text, msg)
  t.eq(type(e), "table", "an error object, not a string")
  t.eq(e.gpubench_exit, 2)
  t.eq(tostring(e), msg)
end

t.test("absent -> defaults; sources recorded", function()
  local o, meta = parse {}
  t.eq(o.iters, 200)
  t.eq(o.peak_gbs, nil)
  t.eq(o.order, "forward")
  t.eq(o.sizes, { 1 << 20, 16 << 20 })
  t.eq(o.kernels, { "copy", "read" })
  t.eq(o.validate, false)
  t.eq(meta.source.iters, "default")
end)

t.test("an output file whose folder does not exist is refused before any work", function()
  local options = require "gpubench.options"
  local spec = { name = "x", options = options.table_options() }
  local _, e = pcall(options.parse, spec, { "--csv", "/nonexistent-gpubench-dir/out.csv" })
  t.eq(type(e), "table", "an exit request, not a crash")
  t.eq(e.gpubench_exit, 2)
  t.eq(e.message, "--csv=/nonexistent-gpubench-dir/out.csv cannot be written: folder /nonexistent-gpubench-dir does not exist")
  local o = options.parse(spec, { "--json", "out.jsonl" }) -- the current folder exists
  t.eq(o.json, "out.jsonl")
end)

t.test("flags and env are converted by type", function()
  local o, meta = parse({ "--iters", "50", "--peak-gbs=4814.5", "--order", "reverse",
    "--sweep", "4:16:4", "--sizes", "4096,64K,2M,1G", "--kernels", "read",
    "--k", "1024", "--device", "0", "--validate", "--csv", "out.csv" })
  t.eq(o.iters, 50); t.eq(math.type(o.iters), "integer")
  t.eq(o.peak_gbs, 4814.5)
  t.eq(o.order, "reverse")
  t.eq(o.sweep, { 4, 8, 12, 16 })
  t.eq(o.sizes, { 4096, 65536, 2 << 20, 1 << 30 })
  t.eq(o.kernels, { "read" })
  t.eq(o.k, 1024); t.eq(o.device, 0)
  t.eq(o.validate, true); t.eq(o.csv, "out.csv")
  t.eq(meta.source.iters, "flag"); t.eq(meta.raw.iters, "50")
  local e = parse({}, { ITERS = " 300 ", PEAK_GBS = "1e3", VALIDATE = "yes" })
  t.eq(e.iters, 300); t.eq(e.peak_gbs, 1000.0); t.eq(e.validate, true)
end)

t.test("a flag wins over its environment variable", function()
  local o, meta = parse({ "--iters", "7" }, { ITERS = "5" })
  t.eq(o.iters, 7)
  t.eq(meta.source.iters, "flag")
  local e, m2 = parse({}, { ITERS = "5" })
  t.eq(e.iters, 5); t.eq(m2.source.iters, "env")
end)

t.test("env set but unparseable / zero / empty is an error naming key and value", function()
  usage_error("ITERS=100O is not a positive integer", {}, { ITERS = "100O" })
  usage_error("ITERS=0 is out of range: must be at least 1", {}, { ITERS = "0" })
  usage_error('ITERS="" is not a positive integer', {}, { ITERS = "" })
  usage_error("ITERS=2.5 is not a positive integer", {}, { ITERS = "2.5" })
  usage_error("ITERS=99999999999999999999 is too large for an integer", {},
    { ITERS = "99999999999999999999" })
  usage_error("VALIDATE=maybe is not a boolean (1/0, true/false, yes/no, on/off)", {},
    { VALIDATE = "maybe" })
end)

t.test("floats: NaN, inf, zero, negative and junk are errors", function()
  usage_error("PEAK_GBS=nan is not a finite number", {}, { PEAK_GBS = "nan" })
  usage_error("PEAK_GBS=inf is not a finite number", {}, { PEAK_GBS = "inf" })
  usage_error("PEAK_GBS=1e999 is not a finite number", {}, { PEAK_GBS = "1e999" })
  usage_error("PEAK_GBS=0 is not a finite positive number", {}, { PEAK_GBS = "0" })
  usage_error("--peak-gbs=-3 is not a finite positive number", { "--peak-gbs", "-3" })
  usage_error("PEAK_GBS=0x10 is not a number", {}, { PEAK_GBS = "0x10" })
  usage_error("PEAK_GBS=400GB is not a number", {}, { PEAK_GBS = "400GB" })
end)

t.test("flag values: ints, enums, ranges, lists, checks", function()
  usage_error("--iters=100O is not a positive integer", { "--iters", "100O" })
  usage_error("--iters=-5 is out of range: must be at least 1", { "--iters", "-5" })
  usage_error("--device=-1 is out of range: must be at least 0", { "--device", "-1" })
  usage_error("--order=sideways is not one of forward, reverse, shuffle", { "--order", "sideways" })
  usage_error("--sweep=4:2 is not a range: the end is below the start", { "--sweep", "4:2" })
  usage_error("--sweep=1:10:0 has a step 0 that is out of range: must be at least 1",
    { "--sweep", "1:10:0" })
  usage_error("--sweep=a:3 has a start a that is not a positive integer", { "--sweep", "a:3" })
  usage_error("--sweep=5 is not a range S:E[:step]", { "--sweep", "5" })
  usage_error("--sweep=1:1000000 has more than 100000 points", { "--sweep", "1:1000000" })
  usage_error("--sizes=1M,,2M has an empty element", { "--sizes", "1M,,2M" })
  usage_error("--sizes=1M,16MB has an element 16MB that is not a byte size (e.g. 4096, 64K, 16MiB, 1G)",
    { "--sizes", "1M,16MB" })
  usage_error("--sizes=0 has an element 0 that is out of range: must be at least 1", { "--sizes", "0" })
  usage_error("--kernels=copy,write has an element write that is not one of copy, read",
    { "--kernels", "copy,write" })
  usage_error("K=1000 is invalid: must be a multiple of 256", {}, { K = "1000" })
  usage_error('--csv="" is empty', { "--csv=" })
end)

t.test("command-line mistakes: unknown flag, missing value, repeats, extras", function()
  usage_error("bench: unknown option '--bogus' (see --help)", { "--bogus" })
  usage_error("bench: option '--iters' requires an argument (see --help)", { "--iters" })
  usage_error("bench: option '--iters' must be used at most 1 time (see --help)",
    { "--iters", "1", "--iters", "2" })
  usage_error("bench: too many arguments (see --help)", { "extra" })
end)

t.test("--help prints the generated help and exits 0", function()
  local captured = {}
  local real = io.stdout
  io.stdout = { write = function(self, ...) for _, s in ipairs { ... } do captured[#captured + 1] = s end return self end,
                flush = function() end }
  local ok, e = pcall(parse, { "--iters", "junk", "--help" })
  io.stdout = real
  t.eq(ok, false)
  t.eq(e.gpubench_exit, 0)
  t.eq(e.printed, true)
  local text = table.concat(captured)
  t.truthy(text:find("Usage: bench", 1, true), text)
  t.truthy(text:find("--iters <n>", 1, true), text)
  t.truthy(text:find("Launches at the first point. [default 200; env ITERS]", 1, true), text)
  t.truthy(text:find("one of forward, reverse, shuffle; default forward", 1, true), text)
  t.truthy(text:find("the flag wins", 1, true), text)
  t.eq(options.help(spec) .. "\n", text)
end)

t.test("bad declarations are programming errors", function()
  t.errors(function() options.parse({ options = { { "x", type = "money" } } }, {}) end,
    'x has unknown type "money"', true)
  t.errors(function() options.parse({ options = { { "x", type = "enum" } } }, {}) end,
    "x needs choices", true)
  t.errors(function() options.parse({ options = { { "x" }, { "x" } } }, {}) end,
    "x is declared twice", true)
end)

t.test("shared declarations combine", function()
  local decls = options.concat(options.device_options(), options.table_options())
  local o = options.parse({ name = "x", options = decls }, { "--backend", "vulkan", "--rounds", "3" },
    { env = {} })
  t.eq(o.backend, "vulkan"); t.eq(o.rounds, 3); t.eq(o.order, "forward"); t.eq(o.validate, false)
  t.eq(o.device, nil)
end)

t.test("list items are trimmed: \"read, copy\" is {read, copy}", function()
  local o = options.parse({ name = "x", options = { { "names", type = "list", of = "string" } } },
    { "--names", "read, copy" })
  t.eq(o.names, { "read", "copy" })
end)

t.test("format_defines: sorted NAME=v, the inverse of parse_defines; parse_defines refuses bad text", function()
  t.eq(options.format_defines { WARPS = 1, KSPLIT = 4, TILES = 2 }, "KSPLIT=4,TILES=2,WARPS=1")
  t.eq(options.format_defines({ GTOK = 8, GSTAGES = 2 }, " "), "GSTAGES=2 GTOK=8")
  t.eq(options.format_defines {}, "")
  local d = assert(options.parse_defines("UNROLL=4, TILES=2"))
  t.eq(d, { UNROLL = 4, TILES = 2 })
  t.eq(options.parse_defines(options.format_defines(d)), d)
  t.eq({ options.parse_defines("TILES=2,TILES=3") }, { nil, "TILES is given twice" })
  t.eq({ options.parse_defines("TILES") }, { nil, '"TILES" is not NAME=integer' })
end)

t.run()
