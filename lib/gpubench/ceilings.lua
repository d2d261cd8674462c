-- gpubench.ceilings: what a GB/s figure is a percentage of.
--
-- Why: cera's wgpu_gemv_bench hard-coded one laptop's bandwidth as "peak"
-- for every device; ninfer's linear_bench found the spec figure unreachable
-- and reported against a measured pure-read probe as well; AstrAI's SwiGLU
-- benchmark read several times its part's DRAM bandwidth because its weights sat in
-- L2 (docs/DESIGN.md). So a
-- cell reports GB/s (1e9 bytes/s) against both the spec bandwidth from the
-- device info and a measured read ceiling -- a pure-read kernel over a buffer
-- of at least 4x L2, timed two-point, measured once per device (backend,
-- name, driver) and cached as JSON -- and a cell whose working set fits in
-- L2 is labelled so.

local report = require "gpubench.report"
local timing = require "gpubench.timing"
local stats = require "gpubench.stats"
local kernels = require "gpubench.kernels"

local ceilings = {}

local MiB, GiB = 1 << 20, 1 << 30

-- gbs(bytes, ms) -> GB/s (1e9 bytes per second); nil when ms is nil (noise).
function ceilings.gbs(bytes, ms)
  if ms == nil then return nil end
  if type(bytes) ~= "number" or type(ms) ~= "number" or not (ms > 0) then
    error(("ceilings.gbs: bytes and a positive ms are required, got %s, %s")
      :format(tostring(bytes), tostring(ms)), 2)
  end
  return bytes / (ms * 1e-3) / 1e9
end

-- pct(gbs, ceiling) -> 100 * gbs / ceiling; nil when either is unknown.
function ceilings.pct(gbs, ceiling)
  if gbs == nil or ceiling == nil or ceiling <= 0 then return nil end
  return 100 * gbs / ceiling
end

-- regime(bytes, l2_bytes) -> "L2" when the working set fits in L2 (its
-- GB/s may legitimately exceed DRAM bandwidth), "DRAM" otherwise, "?" when
-- the L2 size is unknown.
function ceilings.regime(bytes, l2_bytes)
  if not l2_bytes or l2_bytes <= 0 then return "?" end
  if bytes < l2_bytes then return "L2" end
  return "DRAM"
end

-- note(ceil [, peak [, peak_source [, label = "peak"]]]) -> the footnote
-- naming what the "% peak" (or "% spec") and "% read" columns are of.
function ceilings.note(ceil, peak, peak_source, label)
  peak = peak or ceil.spec_gbs
  label = label or "peak"
  local p = peak and ("%.1f GB/s (%s)"):format(peak, peak_source or ceil.spec_source or "given")
    or "an unknown peak (set PEAK_GBS)"
  local r = ceil.read_gbs and ("%.1f GB/s, the pure-read ceiling (%s)"):format(ceil.read_gbs, ceil.read_source)
    or "an unknown read ceiling"
  return ("* %% %s: of %s; %% read: of %s"):format(label, p, r)
end

-- ------------------------------------------------------------ the cache

-- cache_dir([getenv]) -> $GPUBENCH_CACHE_DIR, else $XDG_CACHE_HOME/gpubench,
-- else ~/.cache/gpubench; nil when none can be formed.
function ceilings.cache_dir(getenv)
  getenv = getenv or os.getenv
  local d = getenv("GPUBENCH_CACHE_DIR")
  if d and d ~= "" then return d end
  local x = getenv("XDG_CACHE_HOME")
  if x and x ~= "" then return x .. "/gpubench" end
  local h = getenv("HOME")
  if h and h ~= "" then return h .. "/.cache/gpubench" end
  return nil
end

function ceilings.cache_path(getenv)
  local d = ceilings.cache_dir(getenv)
  return d and (d .. "/ceilings.json") or nil
end

-- key(info) -> "backend|name|driver": a new driver can change the ceiling.
function ceilings.key(info)
  return ("%s|%s|%s"):format(tostring(info.backend), tostring(info.name),
    tostring(info.driver_version))
end

local function mkdir_p(dir)
  local lfs = require "lfs"
  local path = dir:sub(1, 1) == "/" and "" or "."
  for part in dir:gmatch("[^/]+") do
    path = path .. "/" .. part
    if lfs.attributes(path, "mode") == nil then
      local ok, err = lfs.mkdir(path)
      if not ok and lfs.attributes(path, "mode") ~= "directory" then
        error(("ceilings: cannot create %s: %s"):format(path, tostring(err)), 0)
      end
    end
  end
end

-- load_cache(path) -> entries keyed by key(info). A missing file is empty; an
-- unreadable one is reported on stderr and treated as empty (it is rewritten).
function ceilings.load_cache(path)
  local f = io.open(path, "rb")
  if not f then return {} end
  local text = f:read("a")
  f:close()
  local ok, v = pcall(report.json.decode, text)
  if not ok or type(v) ~= "table" or type(v.entries) ~= "table" then
    io.stderr:write(("gpubench: ignoring unreadable ceiling cache %s\n"):format(path))
    return {}
  end
  return v.entries
end

-- store(path, key, entry): read-modify-write through a temporary file and a
-- rename, so a concurrent reader sees the old or the new file, never half.
function ceilings.store(path, key, entry)
  mkdir_p(path:match("^(.*)/[^/]*$") or ".")
  local entries = ceilings.load_cache(path)
  entries[key] = entry
  report.write_atomic(path, report.json.encode { version = 1, entries = entries } .. "\n")
end

-- ------------------------------------------------------------ the probe

-- probe_bytes(info) -> the read probe's buffer size: max(1 GiB capped by a
-- quarter of memory and by max_buffer_bytes, 4 x L2), never above
-- max_buffer_bytes; 64 MiB on a CPU device (lavapipe), where 1 GiB is slow.
function ceilings.probe_bytes(info)
  local bytes
  if info.device_type == "cpu" then
    bytes = 64 * MiB
  else
    bytes = GiB
    if (info.memory_bytes or 0) > 0 then bytes = math.min(bytes, info.memory_bytes // 4) end
    if (info.max_buffer_bytes or 0) > 0 then bytes = math.min(bytes, info.max_buffer_bytes) end
    bytes = math.max(bytes, 4 * (info.l2_bytes or 0))
  end
  if (info.max_buffer_bytes or 0) > 0 then bytes = math.min(bytes, info.max_buffer_bytes) end
  return bytes - bytes % 16
end

-- read_probe(dev [, {bytes =, n = 4, repeat = 5}]) -> gbs, details
-- Two-point timing of kernels/<backend>/read over `bytes` (probe_bytes):
-- each launch reads the buffer once in 16-byte loads. Repeated `repeat`
-- times; the result is the median (a noise result is retried with more
-- launches, up to 64x).
function ceilings.read_probe(dev, o)
  o = o or {}
  local bytes = o.bytes or ceilings.probe_bytes(dev)
  local n = o.n or 4
  local rep = o["repeat"] or 5
  local k = kernels.load(dev, "read")
  local src <close> = dev:buffer(bytes)
  src:fill("\0")
  local launch, out <close> = kernels.read_launch(dev, k, src)
  local per = {}
  do
    local r <close> = timing.runner(dev, { launch })
    for _ = 1, rep do
      local ms, d = timing.two_point(r:fn(), n, { max_n = n * 64 })
      if ms then
        per[#per + 1] = ms
        n = d.n -- keep a count that resolved
      end
    end
  end
  k:free()
  if #per == 0 then
    error(("ceilings: the read probe over %s never resolved (t(2n) < 1.2 t(n) up to n = %d)")
      :format(report.format_bytes(bytes), n * 64), 0)
  end
  local ms = stats.median(per)
  return ceilings.gbs(bytes, ms), { bytes = bytes, n = n, ms = ms, samples = per }
end

-- get(dev [, opts]) -> {spec_gbs =, read_gbs =, read_source =, ...}
-- spec_gbs: opts.spec_gbs (an override such as PEAK_GBS), else dev.spec_gbs
-- (nil when unknown). read_gbs: opts.read_gbs, else the cache entry for this
-- device, else a fresh probe (stored). opts.refresh re-measures;
-- opts.cache = false neither reads nor writes the cache; opts.probe replaces
-- read_probe (tests); opts.getenv replaces os.getenv; opts.log (a stream,
-- default io.stderr, false for none) says when a probe runs.
function ceilings.get(dev, opts)
  opts = opts or {}
  local c = {}
  c.spec_gbs = opts.spec_gbs or ((dev.spec_gbs or 0) > 0 and dev.spec_gbs or nil)
  c.spec_source = opts.spec_gbs and "override" or (c.spec_gbs and "device" or nil)
  if opts.read_gbs then
    c.read_gbs, c.read_source = opts.read_gbs, "override"
    return c
  end
  local key = ceilings.key(dev)
  local path = opts.cache ~= false and ceilings.cache_path(opts.getenv) or nil
  if path and not opts.refresh then
    local e = ceilings.load_cache(path)[key]
    if type(e) == "table" and type(e.read_gbs) == "number" and e.read_gbs > 0 then
      c.read_gbs, c.read_source, c.read_bytes, c.cache_path = e.read_gbs, "cache", e.bytes, path
      return c
    end
  end
  local log = opts.log == nil and io.stderr or opts.log
  if log then
    log:write(("gpubench: measuring the read ceiling of %s (%s)%s\n"):format(tostring(dev.name),
      report.format_bytes(ceilings.probe_bytes(dev)), path and (", cached in " .. path) or ""))
    log:flush()
  end
  local gbs, d = (opts.probe or ceilings.read_probe)(dev)
  c.read_gbs, c.read_source, c.read_bytes = gbs, "measured", d and d.bytes
  if path then
    ceilings.store(path, key, {
      read_gbs = gbs, bytes = d and d.bytes, n = d and d.n,
      method = "two-point pure read, 16-byte loads",
      measured_at = os.date("!%Y-%m-%dT%H:%M:%SZ"),
    })
    c.cache_path = path
  end
  return c
end

return ceilings
