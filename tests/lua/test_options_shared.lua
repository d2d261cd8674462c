-- The option declarations and checks several experiments share
-- (gpubench.options): multiple_of on values and lists, require_l2, the
-- --rotate and --submit declarations.
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

t.run()
