-- tests/lua/harness.lua itself: failures are reported and counted, the exit
-- status is 0 / 1 / 77, and a C object kept alive past its test is a leak.
-- Each case runs a small test file in a child interpreter.
local t = dofile("tests/lua/harness.lua")

-- Runs `body` (a test file) in a child; returns its exit status and output.
local function child(body, env)
  local exe = t.interpreter()
  local path = os.tmpname()
  local f = assert(io.open(path, "wb"))
  f:write('local t = dofile("tests/lua/harness.lua")\n', body, "\nt.run()\n")
  f:close()
  local p = assert(io.popen(("%s%q %q 2>&1"):format(env or "", exe, path)))
  local out = p:read("a")
  local _, how, code = p:close()
  os.remove(path)
  t.eq(how, "exit", "the child exited (no signal)")
  return code, out
end

t.test("passes and failures are counted; exit 1 on a failure", function()
  local code, out = child([[
t.test("good", function() t.eq({ 1, { 2 } }, { 1, { 2 } }) end)
t.test("bad eq", function() t.eq({ a = 1 }, { a = 2 }) end)
t.test("bad near", function() t.near(1.0, 1.1, 0.01, "tolerance") end)
t.test("raises", function() error("boom") end)
t.test("wrong error", function() t.errors(function() error("apple") end, "pear") end)
]])
  t.eq(code, 1)
  t.truthy(out:find("ok   good", 1, true), out)
  t.truthy(out:find('FAIL bad eq: [^\n]*value%["a"%]: got 1, expected 2'), out)
  t.truthy(out:find("FAIL bad near: [^\n]*got 1, expected 1.1000000000000001 within 0.01 %(tolerance%)"), out)
  t.truthy(out:find("FAIL raises: [^\n]*boom"), out)
  t.truthy(out:find('FAIL wrong error: [^\n]*does not match "pear"'), out)
  t.truthy(out:find("1 passed, 4 failed, 0 skipped", 1, true), out)
end)

t.test("exit 0 when all pass, 77 when everything skipped", function()
  local code, out = child([[t.test("a", function() t.truthy(true) end)]])
  t.eq(code, 0)
  t.truthy(out:find("1 passed, 0 failed, 0 skipped", 1, true), out)
  local code2, out2 = child([[
t.test("s1", function() t.skip("not here") end)
t.test("s2", function() t.device("no-such-backend") end)
]])
  t.eq(code2, 77)
  t.truthy(out2:find("SKIP s1: not here", 1, true), out2)
  t.truthy(out2:find("SKIP s2: no", 1, true), out2)
  t.truthy(out2:find("0 passed, 0 failed, 2 skipped", 1, true), out2)
end)

t.test("GPUBENCH_TEST_ONLY runs the tests whose names contain it, the others skipped", function()
  local body = [[
t.test("alpha one", function() t.truthy(true) end)
t.test("beta", function() t.eq(1, 2) end)
t.test("alpha two", function() t.truthy(true) end)
]]
  local code, out = child(body, "GPUBENCH_TEST_ONLY='alpha' ")
  t.eq(code, 0, out)
  t.truthy(out:find("SKIP beta: GPUBENCH_TEST_ONLY=alpha", 1, true), out)
  t.truthy(out:find("2 passed, 0 failed, 1 skipped", 1, true), out)
  local code2, out2 = child(body, "GPUBENCH_TEST_ONLY='beta' ")
  t.eq(code2, 1, out2)
  t.truthy(out2:find("0 passed, 1 failed, 2 skipped", 1, true), out2)
  local code3, out3 = child(body, "GPUBENCH_TEST_ONLY='' ")
  t.eq(code3, 1, out3)
  t.truthy(out3:find("2 passed, 1 failed, 0 skipped", 1, true), out3)
end)

t.test("a C object kept alive after its test is reported as a leak", function()
  t.device("vulkan")
  local code, out = child([[
t.test("keeps a buffer", function()
  local dev = t.device("vulkan")
  KEPT = dev:buffer(256)
end)
t.test("frees its buffer", function()
  local dev = t.device("vulkan")
  local b <close> = dev:buffer(256)
end)
]])
  t.eq(code, 1)
  t.truthy(out:find("FAIL keeps a buffer: leaked C objects: buffers 0 -> 1", 1, true), out)
  t.truthy(out:find("ok   frees its buffer", 1, true), out)
end)

t.run()
