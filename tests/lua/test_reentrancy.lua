-- Lua code that runs inside a gpu call (an argument table's metamethod, a
-- finalizer run by the call's own allocation) cannot make the call use an
-- object it freed: argument tables with metatables are refused, and objects
-- are fetched after the call's allocations (the fuzzer's findings,
-- tests/fuzz/regressions/reenter_*.txt, as unit tests). Run under the
-- sanitizer build, a use after free here is a report, not a pass.
local t = dofile("tests/lua/harness.lua")
local gpu = require "gpu"

local COPY = [[
#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { uint a[]; };
layout(std430, binding = 1) writeonly buffer B { uint b[]; };
layout(push_constant) uniform P { uint n; };
void main() { uint i = gl_GlobalInvocationID.x; if (i < n) b[i] = a[i]; }
]]

local function freeing(obj) return setmetatable({}, { __index = function() obj:free() end }) end

local PLAIN = "must be a plain table (one with a metatable is refused"

t.test("argument tables with metatables are refused before anything runs", function()
  local dev = t.device("vulkan")
  local a, b = dev:buffer(256), dev:buffer(256)
  local k = dev:kernel { source = COPY }
  t.errors(function() k:launch(setmetatable({ 1 }, { __index = function() k:free() end }), 64, a, b, 64) end,
    "launch: grid " .. PLAIN, true)
  t.truthy(not k.closed and k.entry, "the kernel was not freed by the refused call")
  t.errors(function() dev:record(1, setmetatable({ k, 1, 64, a, b, 64 }, {})) end, "launch: a launch table " .. PLAIN, true)
  t.errors(function() dev:batch(setmetatable({ count = 1, { k, 1, 64, a, b, 64 } }, {})) end,
    "dev:batch: the batch table " .. PLAIN, true)
  t.errors(function() a:fill_random(freeing(a)) end, "fill_random: the options table " .. PLAIN, true)
  t.eq(a.size, 256, "the buffer is still there")
  t.errors(function() dev:kernel(setmetatable({ source = COPY }, { __index = function() dev:free() end })) end,
    "dev:kernel: the source table " .. PLAIN, true)
  t.errors(function() dev:kernel { source = COPY, defines = setmetatable({}, {}) } end, "dev:kernel: defines " .. PLAIN, true)
  t.errors(function() dev:vendor_gemm(setmetatable({ n = 8, k = 8, t = 1 }, {})) end, "dev:vendor_gemm: the table " .. PLAIN, true)
  local bt = dev:batch { count = 1, { k, 1, 64, a, b, 64 } }
  local tm = dev:timer()
  t.errors(function() bt:cold_sample(tm, freeing(tm)) end, "batch:cold_sample: the options table " .. PLAIN, true)
  t.errors(function() gpu.open(setmetatable({ backend = "vulkan" }, {})) end, "gpu.open: the options table " .. PLAIN, true)
  t.truthy(select(1, bt:cold_sample(tm, { flush = "none" })) >= 0, "batch and timer still work")
  bt:free(); tm:free(); k:free(); a:free(); b:free()
end)

t.test("a define value with a line break is refused (it would add preprocessor lines)", function()
  local dev = t.device("vulkan")
  t.errors(function() dev:kernel { source = COPY, defines = { FOO = "1\n#error injected" } } end,
    "dev:kernel: defines.FOO must be one line, got a value with a line break", true)

end)

t.test("a finalizer that frees the buffer during fill_random's allocation", function()
  local dev = t.device("vulkan")
  for _ = 1, 3 do
    local buf = dev:buffer(1 << 23)
    collectgarbage()
    setmetatable({}, { __gc = function() buf:free() end }) -- garbage now: runs at the next collection
    local ok, err = pcall(buf.fill_random, buf, {})
    -- Either the collection came after the upload, or the call noticed the release.
    t.truthy(ok or tostring(err):find("use of a released gpu.buffer", 1, true), tostring(err))
    buf:free()
  end

end)

t.test("a launch table's first entry is named when it is not a kernel", function()
  local dev = t.device("vulkan")
  local a = dev:buffer(256)
  t.errors(function() dev:record(1, { a, 1, 64 }) end, "a launch table's first entry must be a gpu.kernel, got gpu.buffer", true)
  a:free()
end)

t.run()
