-- gpubench.ceilings: GB/s and % arithmetic, the L2 label, the probe size
-- rule, the per-device cache (with a synthetic probe), and a tiny real probe.
local t = dofile("tests/lua/harness.lua")
local ceilings = require "gpubench.ceilings"
local report = require "gpubench.report"

local MiB, GiB = 1 << 20, 1 << 30

t.test("GB/s is bytes / seconds / 1e9; % of a ceiling", function()
  t.eq(ceilings.gbs(1e9, 1), 1000.0)
  t.near(ceilings.gbs(GiB, 0.25), 4294.967296, 1e-9)
  t.eq(ceilings.gbs(1e9, nil), nil, "noise stays noise")
  t.errors(function() ceilings.gbs(1e9, 0) end, "bytes and a positive ms are required, got 1000000000.0, 0", true)
  t.near(ceilings.pct(4600, 4814), 95.5546323223, 1e-9)
  t.eq(ceilings.pct(100, 0), nil, "unknown ceiling")
  t.eq(ceilings.pct(nil, 100), nil)
end)

t.test("working sets below L2 are labelled", function()
  t.eq(ceilings.regime(40 * MiB, 60 * MiB), "L2")
  t.eq(ceilings.regime(60 * MiB, 60 * MiB), "DRAM")
  t.eq(ceilings.regime(1, 0), "?")
end)

t.test("probe size: 1 GiB capped by memory and max buffer, at least 4x L2; 64 MiB on CPU", function()
  t.eq(ceilings.probe_bytes { memory_bytes = 141 * GiB, l2_bytes = 60 * MiB }, GiB)
  t.eq(ceilings.probe_bytes { memory_bytes = 2 * GiB, l2_bytes = 0 }, 512 * MiB)
  t.eq(ceilings.probe_bytes { memory_bytes = 2 * GiB, l2_bytes = 256 * MiB }, GiB)
  t.eq(ceilings.probe_bytes { memory_bytes = 64 * GiB, max_buffer_bytes = 128 * MiB }, 128 * MiB)
  t.eq(ceilings.probe_bytes { device_type = "cpu", memory_bytes = 24 * GiB }, 64 * MiB)
  t.eq(ceilings.probe_bytes { memory_bytes = 0, max_buffer_bytes = GiB - 5 }, GiB - 16)
end)

t.test("cache dir: GPUBENCH_CACHE_DIR, then XDG_CACHE_HOME, then HOME", function()
  local function env(tbl) return function(k) return tbl[k] end end
  t.eq(ceilings.cache_dir(env { GPUBENCH_CACHE_DIR = "/c", XDG_CACHE_HOME = "/x", HOME = "/h" }), "/c")
  t.eq(ceilings.cache_dir(env { XDG_CACHE_HOME = "/x", HOME = "/h" }), "/x/gpubench")
  t.eq(ceilings.cache_dir(env { HOME = "/h" }), "/h/.cache/gpubench")
  t.eq(ceilings.cache_dir(env {}), nil)
  t.eq(ceilings.cache_path(env { HOME = "/h" }), "/h/.cache/gpubench/ceilings.json")
end)

t.test("the read ceiling is measured once per device and driver, then cached", function()
  local base = os.tmpname()
  local dir = base .. ".d/sub"
  local getenv = function(k) if k == "GPUBENCH_CACHE_DIR" then return dir end end
  local probes = 0
  local probe = function(dev)
    probes = probes + 1
    return 1000.0 + probes, { bytes = 64 * MiB, n = 8 }
  end
  local dev = { backend = "vulkan", name = "Fake", driver_version = "1.0", spec_gbs = 0 }
  local o = { getenv = getenv, probe = probe, log = false }
  local a = ceilings.get(dev, o)
  t.eq(a.read_gbs, 1001.0); t.eq(a.read_source, "measured"); t.eq(probes, 1)
  t.eq(a.spec_gbs, nil, "an unknown spec bandwidth stays unknown")
  local b = ceilings.get(dev, o)
  t.eq(b.read_gbs, 1001.0); t.eq(b.read_source, "cache"); t.eq(probes, 1)
  -- A new driver is a new key.
  local dev2 = { backend = "vulkan", name = "Fake", driver_version = "2.0" }
  t.eq(ceilings.get(dev2, o).read_gbs, 1002.0); t.eq(probes, 2)
  t.eq(ceilings.get(dev, o).read_gbs, 1001.0, "the first entry survives the second write")
  -- refresh re-measures and replaces the entry.
  t.eq(ceilings.get(dev, { getenv = getenv, probe = probe, log = false, refresh = true }).read_gbs, 1003.0)
  t.eq(ceilings.get(dev, o).read_source, "cache")
  local entries = ceilings.load_cache(dir .. "/ceilings.json")
  t.eq(entries["vulkan|Fake|1.0"].read_gbs, 1003.0)
  t.eq(entries["vulkan|Fake|2.0"].bytes, 64 * MiB)
  -- Overrides: spec from an option (PEAK_GBS), read from an option, no probe.
  local c = ceilings.get({ spec_gbs = 400 }, { spec_gbs = 4814, read_gbs = 4600, probe = probe })
  t.eq(c.spec_gbs, 4814); t.eq(c.spec_source, "override")
  t.eq(c.read_gbs, 4600); t.eq(c.read_source, "override"); t.eq(probes, 3)
  t.eq(ceilings.get({ spec_gbs = 400 }, { read_gbs = 1 }).spec_gbs, 400)
  os.remove(dir .. "/ceilings.json"); os.remove(dir); os.remove(base .. ".d"); os.remove(base)
end)

t.test("an unreadable cache is replaced, not trusted", function()
  local base = os.tmpname()
  local f = assert(io.open(base, "wb")); f:write("{not json"); f:close()
  t.eq(next(ceilings.load_cache(base)), nil)
  ceilings.store(base, "k", { read_gbs = 5 })
  t.eq(report.read_jsonl(base)[1].entries.k.read_gbs, 5)
  os.remove(base)
end)

t.test("device: the read probe measures a positive bandwidth", function()
  local dev = t.device("vulkan")
  local kernels = require "gpubench.kernels"
  local f = io.open(kernels.source("vulkan", "read").file, "rb")
  if not f then t.skip("kernels/vulkan/read.comp is not there yet") end
  f:close()
  local gbs, d = ceilings.read_probe(dev, { bytes = 4 * MiB, n = 2, ["repeat"] = 2 })
  t.truthy(gbs > 0, tostring(gbs))
  t.eq(d.bytes, 4 * MiB)
  t.truthy(#d.samples >= 1)
end)

t.run()
