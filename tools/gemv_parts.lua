-- tools/gemv_parts.lua: what each launch of a two-launch GEMV call costs (a spec with a first
-- dispatch: x quantized or split before the GEMV). The call timed whole, then its first
-- dispatch alone and its GEMV alone, each over the same rotated weight copies, as
-- gemv_variants times a call (Cell:time, ITERS calls). The parts need not add up to the
-- whole: alone, a launch loses the gap and the overlap it had beside the other. Where the L2
-- size is unknown (lavapipe) one weight copy.
--
--   gpubench --backend vulkan tools/gemv_parts.lua          # FMT (f16), M (14336), K (5120), ITERS (200)
--   CHANGES="GEMV_TOKENS=8,GEMV_COOP=1,COOP_REG=2,COOP_KS=8" (the variant's defines; this default)
--   DIAG="WIDE_DIAG=1" (optional): the GEMV alone again, built with these defines added: a
--   diagnostic build (kernels/vulkan/gemv_dense_wide.comp's WIDE_DIAG) is not a GEMV (its y is
--   not checked); its time says what the part it takes out costs
local gpu = require "gpu"
local gemv_bench = require "gpubench.gemv_bench"
local ceilings = require "gpubench.ceilings"

local dev = gpu.open {}
local fmt = os.getenv("FMT") or "f16"
local m, k = math.tointeger(tonumber(os.getenv("M") or "14336")), math.tointeger(tonumber(os.getenv("K") or "5120"))
local iters = math.tointeger(tonumber(os.getenv("ITERS") or "200"))
if not (m and k and iters and m > 0 and k > 0 and iters > 0) then
  error("gemv_parts: M, K and ITERS must be positive integers", 0)
end
-- "NAME=v,NAME=v" -> { NAME = v }: every item a define and a non-negative integer, else an error naming it
local function defines_of(var, text)
  local out, why = require("gpubench.options").parse_defines(text)
  if not out then error(("gemv_parts: %s: %s"):format(var, why), 0) end
  return out
end
local changes = defines_of("CHANGES", os.getenv("CHANGES") or "GEMV_TOKENS=8,GEMV_COOP=1,COOP_REG=2,COOP_KS=8")
local diag = os.getenv("DIAG")
if diag == "" then diag = nil end
local diag_defines = diag and defines_of("DIAG", diag)
local spec = require("gpubench.gemv_" .. dev.backend).variant(fmt, changes)
if not spec.prep then error(("gemv_parts: %s with %s is one launch a call: nothing to split"):format(fmt,
  os.getenv("CHANGES") or "the default changes"), 0) end

local ceil = ceilings.get(dev)
local rotate = (dev.l2_bytes or 0) > 0 -- lavapipe reports none: one copy there
local cell <close> = gemv_bench.prepare(dev, fmt, m, k, { rotate = rotate, spec = spec })
local L = cell.launches -- per call: the first dispatch, then the GEMV; one call per weight copy
local firsts, gemvs = {}, {}
for i = 1, #L, 2 do
  firsts[#firsts + 1] = { L[i] }
  gemvs[#gemvs + 1] = { L[i + 1] }
end
local function show(name, d)
  local ms = d.ms
  if not ms then return print(("%-16s noise"):format(name)) end
  local gbs = ceilings.gbs(cell.weight_bytes, ms)
  print(("%-16s %9.2f us  (the weights at %.0f GB/s, %.1f %% of the %.0f GB/s read ceiling)"):format(name, 1000 * ms,
    gbs, ceilings.pct(gbs, ceil.read_gbs), ceil.read_gbs))
end
print(("%s %dx%d on %s (%s), %s %s, %s, %d calls a point"):format(fmt, m, k, dev.name, dev.backend,
  (spec.file or "?"):match("[^/]+$"), require("gpubench.options").format_defines(spec.defines),
  rotate and "weights rotated out of L2" or "one weight copy (the L2 size is unknown)", iters))
show("whole call", cell:time(iters))
show("first dispatch", cell:time(iters, { sets = firsts }))
show("GEMV alone", cell:time(iters, { sets = gemvs }))
if diag then
  local d = {}
  for name, v in pairs(spec.defines) do d[name] = v end
  for name, v in pairs(diag_defines) do d[name] = v end
  local kern = require("gpubench.gemv").kernel(dev, fmt, setmetatable({ defines = d }, { __index = spec }))
  local diags = {}
  for i, set in ipairs(gemvs) do
    local l = { table.unpack(set[1]) }
    l[1] = kern
    diags[i] = { l }
  end
  show("GEMV " .. diag, cell:time(iters, { sets = diags }))
end
