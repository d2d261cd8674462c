-- tools/alloc_history.lua HISTORY [MB]: whether what a process allocated and
-- freed before changes how fast a fresh buffer reads. HISTORY, done first:
--
--   none   nothing
--   big    one 1 GiB buffer filled, then freed (what the read-ceiling probe does)
--   many   48 buffers of 1 .. 48 MB filled, then freed
--
-- then three times: a fresh MB-byte buffer (default 398, the q6 248320 x 2048
-- head's weights), filled, read by the pure-read kernel once per sample after
-- a clean L2 flush (bench's cold method, 20 samples, as linear_suite times),
-- and freed. Prints us and GB/s of each. Why: docs/results/h200-linear.md,
-- "The Vulkan q6 heads inside --suite all".
--
--   BACKEND=vulkan gpubench tools/alloc_history.lua big
local gpu = require "gpu"
local bench = require "gpubench.bench"
local ceilings = require "gpubench.ceilings"
local kernels = require "gpubench.kernels"

local history, mb = arg[1], tonumber(arg[2] or "398")
local HISTORIES = { none = true, big = true, many = true }
if not HISTORIES[history or ""] or not mb then
  io.stderr:write("usage: gpubench tools/alloc_history.lua none|big|many [MB]\n")
  os.exit(2)
end

local dev = gpu.open { backend = os.getenv("BACKEND") or "cuda" }
local function churn(sizes)
  local bufs = {}
  for i, bytes in ipairs(sizes) do
    bufs[i] = dev:buffer(bytes)
    bufs[i]:fill("\1")
  end
  dev:sync()
  for _, b in ipairs(bufs) do b:free() end
end
if history == "big" then churn { 1 << 30 } end
if history == "many" then
  local sizes = {}
  for i = 1, 48 do sizes[i] = i * 1000000 end
  churn(sizes)
end

local k = kernels.load(dev, "read")
local bytes = math.floor(mb * 1e6) // 16 * 16
print(("alloc_history %s on %s (%s): a fresh %.1f MB buffer, pure read, cold"):format(
  history, dev.name, dev.backend, mb))
for i = 1, 3 do
  local b = dev:buffer(bytes)
  b:fill("\0")
  local launch, out <close> = kernels.read_launch(dev, k, b)
  local cell <close> = bench.cell(dev, { launches = { launch } })
  local ms = cell:cold { rule = { samples = 20 } }.ms
  print(("  buffer %d: %9.2f us %8.0f GB/s"):format(i, ms * 1e3, ceilings.gbs(bytes, ms)))
  b:free()
end
k:free()
