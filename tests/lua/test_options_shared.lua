-- The option declarations and checks several experiments share
-- (gpubench.options): multiple_of on values and lists, require_l2, the
-- --rotate and --submit declarations, and the output paths' checks.
local t = dofile("tests/lua/harness.lua")
local options = require "gpubench.options"

local function parse(decls, argv, env)
  return options.parse({ name = "x", options = decls }, argv, { env = env or {} })
end

t.test("multiple_of: a value, every element of a list, and the reason in the message", function()
  local decls = { { "k", type = "int", env = "K", check = options.multiple_of(256, "the q4_k super-block") },
                  { "sizes", type = "list", of = "bytes", check = options.multiple_of(16) } }
  t.eq(parse(decls, { "--k", "512", "--sizes", "16,1K" }).k, 512)
  local _, e = pcall(parse, decls, {}, { K = "1000" })
  t.eq(t.error_text(e), "K=1000 is invalid: must be a multiple of 256 (the q4_k super-block)")
  t.eq(e.gpubench_exit, 2)
  _, e = pcall(parse, decls, { "--sizes", "16,24" })
  t.eq(t.error_text(e), "--sizes=16,24 is invalid: 24 is not a multiple of 16")
end)

t.test("require_l2: a usage error naming the flag and the device, only when the flag is set", function()
  options.require_l2({ l2_bytes = 0, name = "dev0" }, false)
  options.require_l2({ l2_bytes = 1 << 20, name = "dev1" }, true)
  local _, e = pcall(options.require_l2, { l2_bytes = 0, name = "lavapipe" }, true)
  t.eq(t.error_text(e), "--rotate: the L2 size of lavapipe is unknown, so a rotation cannot be checked to exceed it")
  t.eq(e.gpubench_exit, 2)
  _, e = pcall(options.require_l2, { name = "x" }, true, "--regime cold")
  t.truthy(t.error_text(e):find("^%-%-regime cold: the L2 size of x"), t.error_text(e))
end)

t.test("rotate and submit declarations parse as flags and choices", function()
  local decls = { options.rotate_option(), options.submit_option("stream") }
  local o = parse(decls, {})
  t.eq({ o.rotate, o.submit }, { false, "stream" })
  o = parse(decls, { "--rotate", "--submit", "graph" })
  t.eq({ o.rotate, o.submit }, { true, "graph" })
  local _, e = pcall(parse, decls, { "--submit", "batch" })
  t.eq(t.error_text(e), "--submit=batch is not one of graph, stream")
end)

t.test("outputs: one file per output, writable folders, no folder as a file, - once", function()
  local decls = options.table_options()
  local dir = os.tmpname()
  os.remove(dir)
  assert(require("lfs").mkdir(dir))
  local function err(argv)
    local ok, e = pcall(parse, decls, argv)
    t.eq(ok, false, table.concat(argv, " "))
    t.eq(e.gpubench_exit, 2)
    return t.error_text(e)
  end
  t.eq(parse(decls, { "--csv", dir .. "/a.csv", "--json", dir .. "/a.jsonl" }).csv, dir .. "/a.csv")
  t.eq(parse(decls, { "--json", "-" }).json, "-")
  t.eq(err { "--csv", dir .. "/a", "--json", dir .. "/a" },
    ("--json=%s/a is the same file as --csv=%s/a: each output needs its own path"):format(dir, dir))
  t.truthy(err { "--csv", dir .. "/./b", "--markdown", dir .. "//b" }:find("is the same file as", 1, true))
  t.truthy(err { "--csv", "-", "--json", "-" }:find("(one may be - for standard output)", 1, true))
  t.eq(err { "--json", dir }, ("--json=%s cannot be written: it is a folder"):format(dir))
  t.eq(err { "--csv", "/proc/x.csv" }, "--csv=/proc/x.csv cannot be written: folder /proc is not writable")
  t.eq(err { "--csv", dir .. "/none/x.csv" }, ("--csv=%s/none/x.csv cannot be written: folder %s/none does not exist"):format(dir, dir))
  -- an existing file is fine (it is replaced when the run closes it); two names of one file are not
  local f = assert(io.open(dir .. "/c.csv", "wb")); f:close()
  os.execute(("ln -s %s/c.csv %s/link.csv"):format(dir, dir))
  t.truthy(err { "--csv", dir .. "/c.csv", "--json", dir .. "/link.csv" }:find("is the same file as", 1, true))
  t.eq(require("lfs").dir(dir) ~= nil, true)
  for name in require("lfs").dir(dir) do
    t.truthy(not name:find("write%-probe"), "the writability probe is removed: " .. name)
  end
  os.execute(("rm -rf %q"):format(dir))
end)

t.run()
