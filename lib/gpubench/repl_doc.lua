-- gpubench.repl_doc: the one-line descriptions the REPL's help(x) prints,
-- for every function, method and field of the gpu module (docs/LUA_API.md):
-- {signature, what it does}. tests/lua/test_repl.lua fails when the
-- bindings have a method or gpu function this table does not describe, or
-- the reverse, so it stays in step with bindings/.

local pairs = pairs

local function described(var, summary, methods, fields)
  local t = { var = var, summary = summary, methods = {}, fields = {} }
  for k, e in pairs(methods) do t.methods[k] = e end
  for k, e in pairs(fields) do t.fields[k] = e end
  return t
end

local doc = { types = {} }

doc.module = {
  backends = { "gpu.backends() -> {backend, ...}",
    "the compiled-in backends: name, available, count, reason (why one is missing)" },
  devices = { "gpu.devices() -> {info, ...}", "the info table of every device, across backends" },
  open = { "gpu.open{backend=, index=} -> gpu.device",
    "opens a device; --backend/--device fill in what is not given" },
  live = { "gpu.live() -> {devices=, buffers=, ...}",
    "counts of live C objects (also kernels, timers, batches), for leak checks" },
  clock = { "gpu.clock() -> seconds", "monotonic host clock" },
  isatty = { "gpu.isatty(fd) -> boolean", "whether a file descriptor is a terminal" },
  root = { "gpu.root() -> path", "the gpubench tree scripts and kernels resolve against" },
  compile = { "gpu.compile{backend=, file=, target=} -> t",
    "compiles a kernel without a device; t.params, t.log" },
  u32 = { "gpu.u32(v) -> gpu.scalar", "a kernel argument of kind u32 (unsigned 32-bit)" },
  i32 = { "gpu.i32(v) -> gpu.scalar", "a kernel argument of kind i32 (signed 32-bit)" },
  f32 = { "gpu.f32(v) -> gpu.scalar", "a kernel argument of kind f32 (float)" },
  u64 = { "gpu.u64(v) -> gpu.scalar", "a kernel argument of kind u64 (unsigned 64-bit)" },
  max_launches = { "gpu.max_launches -> integer", "distinct launches one batch may cycle through" },
  version = { "gpu.version -> string", "the gpubench release" },
  git = { "gpu.git -> string", "the git revision the binary was built from" },
  executable = { "gpu.executable -> path", "the running gpubench binary (from /proc/self/exe), to start workers of a script" },
}

local INFO_FIELDS = {
  backend = { "string", "cuda or vulkan" },
  index = { "integer", "the device's index within its backend" },
  name = { "string", "the device's name" },
  device_type = { "string", "discrete, integrated, cpu, ..." },
  driver_version = { "string", "the driver's version" },
  api_version = { "string", "the CUDA or Vulkan API version" },
  arch = { "string", "the architecture, e.g. sm_90 (CUDA)" },
  vendor_id = { "integer", "PCI vendor id" },
  device_id = { "integer", "PCI device id" },
  uuid = { "string", "the device's UUID in hex, when known" },
  memory_bytes = { "integer", "device memory, bytes" },
  sm_count = { "integer", "SMs, or CUs where known (0: unknown)" },
  l2_bytes = { "integer", "L2 cache size, bytes (0: unknown)" },
  spec_gbs = { "number", "theoretical DRAM GB/s: memory clock x bus width (0: unknown)" },
  memory_clock_khz = { "integer", "memory clock, kHz" },
  memory_bus_bits = { "integer", "memory bus width, bits" },
  timestamp_period_ns = { "number", "nanoseconds per device timestamp tick" },
  subgroup_size = { "integer", "warp / subgroup width" },
  max_threads_per_group = { "integer", "most threads in one block / workgroup" },
  max_group_size = { "{x, y, z}", "largest block / workgroup per dimension" },
  max_groups = { "{x, y, z}", "largest grid per dimension" },
  max_shared_bytes = { "integer", "shared memory per block / workgroup, bytes" },
  max_push_bytes = { "integer", "push-constant bytes (Vulkan)" },
  max_buffer_bytes = { "integer", "largest single buffer, bytes" },
  storage_buffer_16bit = { "boolean", "16-bit types in storage buffers (Vulkan; false on CUDA)" },
  storage_buffer_8bit = { "boolean", "8-bit types in storage buffers (Vulkan; false on CUDA)" },
  integer_dot_product = { "boolean",
    "Vulkan 1.3 shaderIntegerDotProduct, enabled (false on CUDA and below 1.3)" },
  integer_dot_4x8_accelerated = { "boolean",
    "the packed 4x8-bit mixed-signedness integer dot is accelerated (Vulkan)" },
  launch_overlap = { "boolean",
    "a batch may overlap its launches (CUDA programmatic dependent launch, sm_90+; false on Vulkan)" },
  cooperative_matrix = { "string | false", "\"nv\": VK_NV_cooperative_matrix enabled (Vulkan)" },
  cooperative_matrix_shapes = { "{{m, n, k, a, b, c, d}, ...}",
    "the device's subgroup cooperative-matrix shapes and component types" },
  flush_bytes = { "integer", "size of the buffer dev:flush_l2() goes through" },
}
doc.INFO_FIELDS = INFO_FIELDS

local device_fields = {
  info = { "dev.info -> table", "the device's info fields below, as one table" },
  closed = { "dev.closed -> boolean", "whether the device was released" },
}
for k, f in pairs(INFO_FIELDS) do device_fields[k] = { "dev." .. k .. " -> " .. f[1], f[2] } end

doc.types["gpu.device"] = described("dev", "a device: memory, kernels, launches, timers", {
  buffer = { "dev:buffer(bytes) -> gpu.buffer", "device memory, freed at scope exit or :free()" },
  kernel = { "dev:kernel{file=|source=, entry=, ...} -> gpu.kernel",
    "compiles a kernel or takes it from the disk cache; also defines=, include_dirs=, params=" },
  timer = { "dev:timer() -> gpu.timer", "device timestamps: t:start(), t:stop(), t:ms()" },
  record = { "dev:record(n, k, grid, block, args...)",
    "n launches in one submission (or rotating {k, grid, block, args...} sets)" },
  batch = { "dev:batch{count=, graph=, overlap=, launch...} -> gpu.batch",
    "launches ({k, grid, block, args...} each) recorded once, replayed by b:submit()" },
  sync = { "dev:sync()", "waits until everything submitted has finished" },
  flush_l2 = { "dev:flush_l2([kind])",
    "evicts the L2 through a 2 x L2 buffer, then waits: kind \"clean\" reads it (default), \"write\" writes it" },
  clocks = { "dev:clocks() -> {sm_mhz, max_sm_mhz, ...} | nil, why",
    "SM and memory clocks, temperature, power and throttle reasons through NVML (NVIDIA GPUs)" },
  profiler_start = { "dev:profiler_start([name])", "starts a profiler range (NVTX / Vulkan debug label)" },
  profiler_stop = { "dev:profiler_stop()", "ends the profiler range" },
  vendor_gemm = { "dev:vendor_gemm{n=, k=, t=} -> gpu.kernel",
    "cuBLASLt bf16 y[T,N] = x[T,K]·W[N,K]^T as a kernel: launch it as {g, 1, 1, W, x, y} (CUDA)" },
  free = { "dev:free()", "releases the device (its buffers and kernels keep it alive until they go)" },
}, device_fields)

doc.types["gpu.buffer"] = described("buf", "device memory", {
  upload = { "buf:upload(str [, offset])", "copies a string into the buffer (synchronous)" },
  download = { "buf:download([offset [, n]]) -> string", "copies bytes out (synchronous)" },
  fill = { "buf:fill(byte | pattern [, offset [, n]])", "fills with a byte or a repeated string (asynchronous)" },
  fill_random = { "buf:fill_random{dtype=, dist=, seed=, ...}",
    "random f32/f16/bf16/u8 values (also lo=, hi=, mean=, std=, offset=, n=)" },
  copy_from = { "dst:copy_from(src [, dst_offset [, src_offset [, n]]])",
    "device-to-device copy (asynchronous)" },
  free = { "buf:free()", "releases the memory now (also at scope exit with <close>)" },
}, {
  size = { "buf.size -> integer", "bytes (also #buf)" },
  closed = { "buf.closed -> boolean", "whether the buffer was released" },
})

doc.types["gpu.kernel"] = described("k", "a compiled kernel", {
  launch = { "k:launch(grid, block, args...)",
    "one launch; grid/block: n or {x, y, z}; args checked against k.params" },
  stats = { "k:stats([block]) -> {{name=, value=, description=}, ..., [name] = value}",
    "what the compiled code uses for that block: registers, shared and local memory (CUDA: blocks per SM too)" },
  free = { "k:free()", "releases the kernel now" },
}, {
  entry = { "k.entry -> string", "the entry point" },
  label = { "k.label -> string", "the source file (or a label for inline source)" },
  params = { "k.params -> {kind, ...}", "argument kinds: buffer, u32, i32, f32, u64" },
  local_size = { "k.local_size -> {x, y, z}", "the shader's workgroup size (Vulkan)" },
  cache_hit = { "k.cache_hit -> boolean", "whether the binary came from the disk cache" },
  backend = { "k.backend -> string", "cuda or vulkan" },
  overlap = { "k.overlap -> boolean",
    "the source declares GB_LAUNCH_OVERLAP: a batch with overlap may start it before the launch before it ends" },
  vendor = { "k.vendor -> table | false",
    "a vendor GEMM's library, version, shape and algorithm (dev:vendor_gemm); false for compiled code" },
})

doc.types["gpu.timer"] = described("t", "device timestamps in stream order", {
  start = { "t:start()", "records the start timestamp after the work submitted so far" },
  stop = { "t:stop()", "records the stop timestamp" },
  ms = { "t:ms() -> number", "milliseconds from start to stop (waits for both)" },
  free = { "t:free()", "releases the timer now" },
}, {})

doc.types["gpu.batch"] = described("b", "launches recorded once, replayed with one submission", {
  submit = { "b:submit()", "replays the launches (a CUDA graph / pre-recorded command buffer)" },
  cold_sample = { "b:cold_sample(t [, {flush=, hold=}]) -> ms, held",
    "one cold sample: L2 flush, t:start(), one submit, t:stop(), behind a held stream" },
  free = { "b:free()", "releases the batch now" },
}, {
  count = { "b.count -> integer", "how many launches one submit makes" },
  graph = { "b.graph -> boolean", "whether it replays as a graph / pre-recorded commands" },
  launches = { "b.launches -> integer", "distinct launches it cycles through" },
  overlap = { "b.overlap -> boolean", "whether its launches may overlap the one before (CUDA, sm_90+)" },
  overlapped = { "b.overlapped -> integer", "distinct launches whose kernel declares launch overlap" },
})

doc.types["gpu.scalar"] = described("s", "a typed kernel argument from gpu.u32/i32/f32/u64", {}, {})

return doc
