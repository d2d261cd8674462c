-- The `gpu` module's own surface, end to end on every backend present
-- (lavapipe in CI): discovery, buffers, kernels, argument checking, batches,
-- timers, the L2 flush, and that every misuse is a Lua error naming the
-- problem -- never a crash -- with no object leaked (the harness checks
-- gpu.live() after each test).

local t = dofile("tests/lua/harness.lua")
local gpu = t.gpu

-- An increment kernel per backend: x[i] += add for i < n; its parameters
-- are (buffer, u32 n, u32 add) on both.
local INC = {
  vulkan = [[
#version 450
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) buffer X { uint x[]; };
layout(push_constant) uniform P { uint n; uint add; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < n) x[i] += add;
}]],
  cuda = [[
extern "C" __global__ void inc(unsigned* x, unsigned n, unsigned add) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += add;
}]],
}

local function inc_kernel(dev)
  return dev:kernel { source = INC[dev.backend], entry = dev.backend == "cuda" and "inc" or "main" }
end

local function u32s(s) return { string.unpack("<" .. string.rep("I4", #s // 4), s) } end

local function each_backend(name, fn)
  for _, b in ipairs { "vulkan", "cuda" } do
    t.test(b .. ": " .. name, function() fn(t.device(b)) end)
  end
end

t.test("discovery: backends say why they are missing; devices carry their info", function()
  if not gpu then t.skip("no gpu module") end
  local names = {}
  for _, b in ipairs(gpu.backends()) do
    names[#names + 1] = b.name
    t.eq(type(b.available), "boolean")
    if not b.available then t.truthy(type(b.reason) == "string" and #b.reason > 0, b.name .. " reason") end
  end
  t.eq(names, { "cuda", "vulkan" })
  for _, d in ipairs(gpu.devices()) do
    t.truthy(d.name ~= "" and (d.backend == "cuda" or d.backend == "vulkan"), "device name and backend")
    t.truthy(d.memory_bytes > 0 and d.max_threads_per_group > 0, d.name .. " limits")
  end
  t.errors(function() gpu.open { backend = "metal" } end, "unknown backend 'metal'", true)
  t.errors(function() gpu.open { backend = "vulkan", index = 99 } end, "vulkan device 99 does not exist", true)
  t.errors(function() gpu.open { index = -1 } end, "index must be a non-negative integer", true)
end)

each_backend("buffers: upload, download, fill, copy and their ranges", function(dev)
  local b <close> = dev:buffer(64)
  t.eq(b.size, 64)
  t.eq(#b, 64)
  b:upload(string.rep("\1", 64))
  b:fill(7, 8, 8)              -- bytes 8..15
  b:fill("ab", 16, 5)          -- a pattern that does not tile words: "ababa"
  local s = b:download()
  t.eq(s:sub(1, 8), string.rep("\1", 8))
  t.eq(s:sub(9, 16), string.rep("\7", 8))
  t.eq(s:sub(17, 21), "ababa")
  t.eq(b:download(60), "\1\1\1\1")
  local c <close> = dev:buffer(32)
  c:fill(0)
  c:copy_from(b, 4, 8, 8)      -- c[4..11] = b[8..15]
  t.eq(c:download(0, 16), "\0\0\0\0" .. string.rep("\7", 8) .. "\0\0\0\0")
  t.errors(function() b:upload("x", 64) end, "upload out of range: offset 64 + 1 bytes exceeds the buffer's 64 bytes", true)
  t.errors(function() b:download(60, 8) end, "download out of range", true)
  t.errors(function() b:fill(1, 0, 65) end, "fill out of range", true)
  t.errors(function() b:fill(256) end, "fill byte must be an integer from 0 to 255", true)
  t.errors(function() c:copy_from(b, 0, 0, 33) end, "copy destination out of range", true)
  t.errors(function() b:copy_from(b, 0, 4, 8) end, "overlap", true)
  t.errors(function() dev:buffer(0) end, "bytes must be a positive integer", true)
end)

each_backend("fill_random: deterministic per seed, in range, in C", function(dev)
  local a <close> = dev:buffer(4096)
  local b <close> = dev:buffer(4096)
  a:fill_random { dtype = "f32", dist = "uniform", lo = 2, hi = 3, seed = 5 }
  b:fill_random { dtype = "f32", dist = "uniform", lo = 2, hi = 3, seed = 5 }
  local s = a:download()
  t.eq(s, b:download(), "same seed, same bytes")
  local vals = { string.unpack("<" .. string.rep("f", 1024), s) }
  for i = 1, 1024 do t.truthy(vals[i] >= 2 and vals[i] < 3, "uniform value in [2, 3): " .. vals[i]) end
  b:fill_random { dtype = "f32", seed = 6 }
  t.truthy(s ~= b:download(), "another seed, other bytes")
  b:fill_random { dtype = "bf16", dist = "normal", mean = 0, std = 1, seed = 1, n = 8 }
  t.errors(function() b:fill_random { dtype = "f64" } end, "unknown dtype 'f64'", true)
  t.errors(function() b:fill_random { dtype = "f32", n = 1025 } end, "fill_random out of range", true)
  t.errors(function() b:fill_random { dist = "uniform", lo = 1, hi = 0 } end, "hi must be at least lo", true)
end)

each_backend("use after free, and release in any order", function(dev)
  local b = dev:buffer(16)
  local k = inc_kernel(dev)
  b:free()
  b:free() -- a second release is harmless
  t.errors(function() b:download() end, "use of a released gpu.buffer", true)
  t.errors(function() k:launch(1, 64, b, 4, 1) end, "released gpu.buffer", true)
  k:free()
  t.errors(function() k:launch(1, 64) end, "use of a released gpu.kernel", true)
  -- A second device handle released before its buffer: the buffer still works.
  local d2 = gpu.open { backend = dev.backend, index = dev.index }
  local c = d2:buffer(8)
  d2:free()
  t.errors(function() d2:buffer(8) end, "use of a released gpu.device", true)
  t.errors(function() c:upload("12345678") end, "device was released", true)
  c:free()
end)

each_backend("kernels: parameters reflected, arguments checked before launch", function(dev)
  local k = inc_kernel(dev)
  t.eq(k.params, { "buffer", "u32", "u32" })
  t.eq(k.dynamic_shared, 0, "a kernel that declares none gets no dynamic shared memory")
  t.eq(k.overlap, false, "a kernel that declares no launch overlap")
  local y <close> = dev:buffer(4 * 100)
  if dev.launch_overlap then
    t.errors(function() dev:batch { count = 2, overlap = true, { k, 2, 64, y, gpu.u32(100), gpu.u32(1) } } end,
      "launch overlap: none of the batch's kernels (inc) declares GB_LAUNCH_OVERLAP", true)
  else
    t.errors(function() dev:batch { count = 2, overlap = true, { k, 2, 64, y, gpu.u32(100), gpu.u32(1) } } end,
      "launch overlap needs programmatic dependent launch (CUDA, sm_90 or later, a driver with cuLaunchKernelEx); "
        .. dev.name, true)
  end
  local b <close> = dev:batch { count = 2, { k, 2, 64, y, gpu.u32(100), gpu.u32(1) } }
  t.eq({ b.overlap, b.overlapped }, { false, 0 }, "a plain batch")
  local x <close> = dev:buffer(4 * 100)
  x:fill(0)
  k:launch({ 2, 1, 1 }, { 64, 1, 1 }, x, gpu.u32(100), 3)
  k:launch(2, 64, x, 100, gpu.u32(4))
  local v = u32s(x:download())
  t.eq(v[1], 7); t.eq(v[100], 7)
  t.errors(function() k:launch(2, 64, x, 100) end, "takes 3 arguments", true)
  t.errors(function() k:launch(2, 64, x, x, 1) end, "argument 2: expected u32, got gpu.buffer", true)
  t.errors(function() k:launch(2, 64, x, gpu.i32(1), 1) end, "argument 2: expected u32, got gpu.i32", true)
  t.errors(function() k:launch(2, 64, x, -1, 1) end, "argument 2: -1 is out of range for u32", true)
  t.errors(function() k:launch(2, 64, x, 1.5, 1) end, "non-integral number", true)
  t.errors(function() k:launch(2, 64, "x", 1, 1) end, "argument 1: expected buffer, got string", true)
  t.errors(function() k:launch(0, 64, x, 1, 1) end, "grid must be an integer from 1", true)
  t.errors(function() gpu.u32(2 ^ 32) end, "gpu.u32", true)
  t.errors(function() gpu.i32(2 ^ 31) end, "out of range", true)
  k:free()
end)

-- k:stats: what the compiled code uses. CUDA's are exact where the source fixes them
-- (static shared memory, no local memory, the occupancy calculator's warps); Vulkan's are
-- the driver's (VK_KHR_pipeline_executable_properties), and a device without them says so.
local SHARED = {
  cuda = [[
extern "C" __global__ void __launch_bounds__(128) sh(float* y) {
  __shared__ float s[1000];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  y[threadIdx.x] = s[999 - threadIdx.x];
}]],
  vulkan = [[
#version 450
layout(local_size_x_id = 0) in;
layout(std430, set = 0, binding = 0) buffer Y { float y[]; };
shared float s[1000];
void main() {
  s[gl_LocalInvocationID.x] = float(gl_LocalInvocationID.x);
  barrier();
  y[gl_GlobalInvocationID.x] = s[999u - gl_LocalInvocationID.x];
}]],
}
each_backend("kernel statistics: exact where the source fixes them, refused with the reason", function(dev)
  local k = dev:kernel { source = SHARED[dev.backend], entry = dev.backend == "cuda" and "sh" or "main" }
  local inc = inc_kernel(dev)
  t.errors(function() k:stats() end, dev.backend == "cuda" and "kernel sh: stats needs a block" or
    "kernel main: stats needs a block", true)
  t.errors(function() k:stats { 0, 1, 1 } end, "block[1] must be an integer from 1", true)
  if dev.backend == "vulkan" then
    -- the increment shader fixes 64 invocations
    t.errors(function() inc:stats(32) end, "kernel statistics failed: BLOCK_SIZE_MISMATCH", true)
  end
  t.errors(function() k:stats(100000) end, "kernel statistics: block 100000x1x1: dimension x must be 1 to", true)
  t.errors(function() k:stats { 32, 32, 32 } end, "kernel statistics: block 32x32x32 is 32768 threads", true)
  local ok, st = pcall(k.stats, k, 128)
  if dev.backend == "vulkan" and not ok then
    t.truthy(tostring(st):find(dev.name .. " does not offer VK_KHR_pipeline_executable_properties", 1, true), st)
  elseif dev.backend == "vulkan" then
    t.truthy(#st >= 1, "the driver reports at least one statistic")
    for _, x in ipairs(st) do
      t.truthy(type(x.name) == "string" and x.name ~= "" and x.value == x.value and st[x.name] ~= nil, x.name)
      print(("  %s = %s (%s)"):format(x.name, tostring(x.value), x.description))
    end
  else
    t.truthy(ok, st)
    t.eq({ st.static_shared_bytes, st.local_bytes_per_thread, st.dynamic_shared_bytes, st.max_warps_per_sm % 32 },
      { 4000, 0, 0, 0 })
    t.truthy(st.registers_per_thread >= 1 and st.registers_per_thread <= 255, st.registers_per_thread)
    t.truthy(st.blocks_per_sm >= 1 and st.warps_per_sm == 4 * st.blocks_per_sm
      and st.warps_per_sm <= st.max_warps_per_sm, st.blocks_per_sm)
    t.eq(st[1].name, "registers_per_thread")
    t.errors(function() k:stats(256) end, "sh runs at most 128 threads a block", true)
  end
  k:free()
  t.errors(function() k:stats(128) end, "released", false)
  inc:free()
end)

each_backend("compile errors carry the compiler log with file and line", function(dev)
  local src = dev.backend == "cuda"
    and 'extern "C" __global__ void bad(unsigned* x) {\n  x[0] = undefined_name;\n}'
    or "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {\n  undefined_name = 1;\n}"
  local entry = dev.backend == "cuda" and "bad" or nil -- GLSL enters at main
  local msg = t.errors(function() dev:kernel { source = src, entry = entry } end, "undefined_name", true)
  t.truthy(msg:find(dev.backend == "cuda" and "%(2%)" or ":4:"), "line number in: " .. msg)
  t.errors(function() dev:kernel { file = "kernels/none.cu" } end, "cannot open kernels/none.cu", true)
  t.errors(function() dev:kernel { entry = "x" } end, "exactly one of file= or source=", true)
end)

each_backend("record and batch: exact launch counts, rotating sets, freed buffers refused", function(dev)
  local k = inc_kernel(dev)
  local x <close> = dev:buffer(4 * 64)
  local y <close> = dev:buffer(4 * 64)
  x:fill(0); y:fill(0)
  dev:record(10, k, 1, 64, x, 64, 1)
  dev:record(5, { k, 1, 64, x, 64, 2 }, { k, 1, 64, y, 64, 3 }) -- x +2 three times, y +3 twice
  t.eq(u32s(x:download())[64], 10 + 6)
  t.eq(u32s(y:download())[1], 6)
  for _, graph in ipairs { false, true } do
    local b = dev:batch { count = 7, graph = graph, { k, 1, 64, y, 64, 1 } }
    t.eq(b.count, 7)
    b:submit(); b:submit()
    b:free()
  end
  t.eq(u32s(y:download())[1], 6 + 28)
  local z = dev:buffer(4 * 64)
  local b = dev:batch { count = 1, { k, 1, 64, z, 64, 1 } }
  z:free()
  t.errors(function() b:submit() end, "argument 1 is a buffer that was released", true)
  b:free()
  t.errors(function() dev:record(0, k, 1, 64, x, 64, 1) end, "launch count must be a positive integer", true)
  t.errors(function() dev:batch { count = 1 } end, "takes 1 to", true)
  k:free()
end)

each_backend("timers and the L2 flush", function(dev)
  local k = inc_kernel(dev)
  local x <close> = dev:buffer(4 * 64)
  x:fill(0)
  local tm = dev:timer()
  t.errors(function() tm:ms() end, "timer read before start and stop", true)
  t.errors(function() tm:stop() end, "stopped without being started", true)
  tm:start()
  dev:record(20, k, 1, 64, x, 64, 1)
  tm:stop()
  local ms = tm:ms()
  t.truthy(ms > 0 and ms < 60000, "elapsed ms " .. ms)
  tm:free()
  dev:flush_l2()
  t.truthy(dev.flush_bytes > 0 and dev.flush_bytes <= math.max(dev.max_buffer_bytes, dev.flush_bytes))
  if dev.l2_bytes > 0 then t.truthy(dev.flush_bytes >= 2 * dev.l2_bytes, "flush >= 2x L2") end
  dev:sync()
  k:free()
end)

each_backend("a buffer larger than the device holds is a Lua error, and the device goes on", function(dev)
  local huge = math.max(dev.memory_bytes, dev.max_buffer_bytes) * 4
  local msg = t.errors(function() dev:buffer(huge) end, "bytes")
  -- Refused up front (largest buffer) or by the driver (out of memory): either names it.
  t.truthy(msg:find("exceeds the device's largest buffer", 1, true) or msg:find("OUT_OF", 1, true), msg)
  local b <close> = dev:buffer(16)
  b:upload("0123456789abcdef")
  t.eq(b:download(), "0123456789abcdef")
end)

t.run()
