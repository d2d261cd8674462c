-- tests/lua/harness.lua: the test runner for every tests/lua/test_*.lua.
--
-- Each test runs in pcall, so one failure does not hide the others; after
-- each test the harness collects garbage and compares gpu.live() with the
-- count before it, so a C object that outlives its Lua handle (a leak in the
-- bindings) fails the test that caused it. Exit status: 0 all passed, 1 any
-- failed, 77 everything skipped (ctest's SKIP_RETURN_CODE).
--
-- Runs under both `gpubench` and a stock `lua5.4` (where `require "gpu"`
-- fails and device tests skip).
--
--   local t = dofile("tests/lua/harness.lua")
--   t.test("name", function() t.eq(1 + 1, 2) end)
--   t.run()
--
-- GPUBENCH_TEST_ONLY=TEXT runs only the tests whose names contain TEXT (a
-- plain substring; the others count as skipped): one test on a GPU machine
-- without the rest of its file.

local t = {}

local ok_gpu, gpu = pcall(require, "gpu")
if not ok_gpu then gpu = nil end
t.gpu = gpu

local tests = {}
local SKIP = {} -- sentinel error value raised by t.skip

-- Devices opened through t.device, one per backend, kept for the whole file:
-- opening a device per test is slow on lavapipe. The leak check allows for them.
local devices = {}
local device_count = 0

local function describe(v)
  if type(v) == "string" then return string.format("%q", v) end
  if math.type(v) == "float" then return string.format("%.17g", v) end
  return tostring(v)
end

-- Deep equality; returns nil when equal, else a path and both values.
local function diff(a, b, path)
  if a == b then return nil end
  if type(a) ~= "table" or type(b) ~= "table" then
    if type(a) == "number" and type(b) == "number" and a ~= a and b ~= b then return nil end
    return ("%s: got %s, expected %s"):format(path, describe(a), describe(b))
  end
  for k, v in pairs(a) do
    local d = diff(v, b[k], path .. "[" .. describe(k) .. "]")
    if d then return d end
  end
  for k, v in pairs(b) do
    if a[k] == nil then
      return ("%s[%s]: missing, expected %s"):format(path, describe(k), describe(v))
    end
  end
  return nil
end

local function fail(msg, user)
  if user then msg = msg .. " (" .. tostring(user) .. ")" end
  error(msg, 3)
end

function t.test(name, fn)
  if type(name) ~= "string" or type(fn) ~= "function" then
    error("t.test(name, fn): a name and a function are required", 2)
  end
  tests[#tests + 1] = { name = name, fn = fn }
end

function t.eq(a, b, msg)
  local d = diff(a, b, "value")
  if d then fail(d, msg) end
end

function t.near(a, b, tol, msg)
  if type(a) ~= "number" or type(b) ~= "number" or type(tol) ~= "number" then
    fail(("t.near needs numbers, got %s, %s, %s"):format(describe(a), describe(b), describe(tol)), msg)
  end
  if not (math.abs(a - b) <= tol) then
    fail(("got %s, expected %s within %s"):format(describe(a), describe(b), describe(tol)), msg)
  end
end

function t.truthy(v, msg)
  if not v then fail(("expected a true value, got %s"):format(describe(v)), msg) end
end

-- The text of an error value (error objects carry .message).
local function error_text(e)
  if type(e) == "table" and e.message ~= nil then return tostring(e.message) end
  return tostring(e)
end
t.error_text = error_text

-- Asserts fn raises an error whose text matches pattern (a plain substring when
-- plain is true); returns the text. The raw error value is the second result.
function t.errors(fn, pattern, plain)
  local ok, e = pcall(fn)
  if ok then fail("expected an error matching " .. describe(pattern) .. ", got none") end
  if e == SKIP then error(e, 0) end
  local text = error_text(e)
  if not text:find(pattern, 1, plain) then
    fail(("error %s does not match %s"):format(describe(text), describe(pattern)))
  end
  return text, e
end

function t.skip(reason)
  SKIP.reason = reason or "skipped"
  error(SKIP, 0)
end

-- A stream (write/flush, like io.stdout) that keeps what is written: :text().
function t.text_sink()
  local s = { parts = {} }
  function s:write(...) for _, v in ipairs { ... } do self.parts[#self.parts + 1] = v end return self end
  function s:flush() end
  function s:text() return table.concat(self.parts) end
  return s
end

-- The interpreter running this test (lua5.4 or gpubench), to run a child
-- process with; skips the test when the command line does not say (arg[-1]).
function t.interpreter()
  local i = 0
  while arg and arg[i - 1] do i = i - 1 end
  if i == 0 then t.skip("cannot tell which interpreter runs this test (arg[-1] unset)") end
  return arg[i]
end

function t.device(backend)
  if devices[backend] then return devices[backend] end
  if not gpu then t.skip("no gpu module (stock interpreter)") end
  local available = false
  for _, b in ipairs(gpu.backends()) do
    if b.name == backend and b.available and (b.count or 0) > 0 then available = true end
  end
  if not available then t.skip("no " .. tostring(backend) .. " device") end
  local dev = gpu.open { backend = backend, index = 0 }
  devices[backend] = dev
  device_count = device_count + 1
  return dev
end

local function live()
  if not gpu or not gpu.live then return nil end
  collectgarbage("collect")
  collectgarbage("collect")
  return gpu.live()
end

local function leak_report(before, after, new_devices)
  if not before or not after then return nil end
  local out = {}
  for k, v in pairs(after) do
    local expected = before[k] or 0
    if k == "devices" then expected = expected + new_devices end
    if v ~= expected then out[#out + 1] = ("%s %d -> %d"):format(k, expected, v) end
  end
  if #out == 0 then return nil end
  table.sort(out)
  return "leaked C objects: " .. table.concat(out, ", ")
end

function t.run()
  local passed, failed, skipped = 0, 0, 0
  local only = os.getenv("GPUBENCH_TEST_ONLY")
  if only == "" then only = nil end
  for _, case in ipairs(tests) do
    if only and not case.name:find(only, 1, true) then
      skipped = skipped + 1
      print(("SKIP %s: GPUBENCH_TEST_ONLY=%s"):format(case.name, only))
      goto next
    end
    local before = live()
    local devs_before = device_count
    local ok, e = xpcall(case.fn, function(err)
      if err == SKIP then return err end
      return debug.traceback(error_text(err), 2)
    end)
    if not ok and e == SKIP then
      skipped = skipped + 1
      print(("SKIP %s: %s"):format(case.name, SKIP.reason))
    elseif not ok then
      failed = failed + 1
      print(("FAIL %s: %s"):format(case.name, e))
    else
      local leak = leak_report(before, live(), device_count - devs_before)
      if leak then
        failed = failed + 1
        print(("FAIL %s: %s"):format(case.name, leak))
      else
        passed = passed + 1
        print(("ok   %s"):format(case.name))
      end
    end
    ::next::
  end
  print(("%d passed, %d failed, %d skipped"):format(passed, failed, skipped))
  io.stdout:flush()
  local status = 0
  if failed > 0 then status = 1 elseif passed == 0 and skipped > 0 then status = 77 end
  for _, d in pairs(devices) do d:free() end
  os.exit(status, true)
end

return t
