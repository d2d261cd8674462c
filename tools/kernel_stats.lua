-- tools/kernel_stats.lua [--backend cuda|vulkan] ITEM...: what the kernels the tables pick
-- use (registers, shared and local memory; CUDA: the occupancy calculator's blocks per SM),
-- through k:stats (docs/LUA_API.md, "Kernels"). The statistics come from the driver, for
-- the code it runs: on Vulkan, where ptxas -v cannot see, they are the only register
-- count there is (VK_KHR_pipeline_executable_properties).
--
-- ITEM is one of
--   linear:QTYPE:N:K:T        the route gpubench.linear takes for that point
--   swiglu:N:K:M              the SwiGLU fused and chain kernels for that shape and M
--   gemv:FMT:M:K:T            the GEMV kernel gpubench.gemv takes (its prep kernel too)
--   moe:VARIANT:CONFIG:PROJ:M the MoE kernel a step of M tokens runs (moe_scaling's variants
--                             and configs, PROJ gate_up or down)
--   file:PATH:ENTRY:BLOCK[:NAME=V,...]   any kernel, its defines given
-- e.g. gpubench tools/kernel_stats.lua --backend vulkan linear:q6:248320:5120:1 swiglu:13824:5120:8
local gpu = require "gpu"
local linear = require "gpubench.linear"
local options = require "gpubench.options"

local backend, items = "vulkan", {}
local i = 1
while i <= #arg do
  if arg[i] == "--backend" then
    backend = arg[i + 1] or error("kernel_stats: --backend needs cuda or vulkan")
    i = i + 2
  else
    items[#items + 1] = arg[i]
    i = i + 1
  end
end
if #items == 0 then
  io.stderr:write("usage: gpubench tools/kernel_stats.lua [--backend cuda|vulkan] linear:Q:N:K:T | swiglu:N:K:M | gemv:FMT:M:K:T | moe:VARIANT:CONFIG:PROJ:M | file:PATH:ENTRY:BLOCK[:NAME=V,...] ...\n")
  os.exit(2)
end

local function int(s, what)
  local v = math.tointeger(tonumber(s))
  if not v then error(("kernel_stats: %s %q is not an integer"):format(what, tostring(s)), 0) end
  return v
end

-- item -> list of {what =, file =, entry =, defines =, block =}
local function specs(dev, item)
  local kind, rest = item:match("^(%w+):(.*)$")
  local f = {}
  for p in (rest or ""):gmatch("[^:]+") do f[#f + 1] = p end
  if kind == "linear" and #f == 4 then
    local t = int(f[4], "T")
    local r = linear.route(dev, { qtype = f[1], n = int(f[2], "N"), k = int(f[3], "K") }, t)
    return { { what = ("%s route %s"):format(item, r.name), file = r.file, entry = r.entry, defines = r.defines, block = r.block } }
  elseif kind == "swiglu" and #f == 3 then
    local n, k, m = int(f[1], "N"), int(f[2], "K"), int(f[3], "M")
    local S = require("gpubench.swiglu_" .. dev.backend)
    local g = S.for_device and S.for_device(dev, n, k, m) or S.for_shape(n, k)
    local out = {}
    for _, name in ipairs { "fused", "gemv" } do
      local s = S[name](g, m)
      out[#out + 1] = { what = item .. " " .. name, file = s.file, entry = s.entry, defines = s.defines, block = s.block }
    end
    return out
  elseif kind == "gemv" and #f == 4 then
    local s = require("gpubench.gemv").spec_for(dev, f[1], int(f[2], "M"), int(f[3], "K"), int(f[4], "T"))
    local out = { { what = item, file = s.file, entry = s.entry, defines = s.defines, block = s.block } }
    if s.prep then
      local p = s.prep.spec
      out[2] = { what = item .. " prep", file = p.file, entry = p.entry, defines = p.defines, block = p.block }
    end
    return out
  elseif kind == "moe" and #f == 4 then
    local moe = require "gpubench.moe"
    local sh = moe.shape(f[2], f[3])
    local s = require("gpubench.moe_" .. dev.backend).spec_of(f[1], sh, int(f[4], "M"), nil, dev)
    return { { what = item, file = s.file, entry = s.entry, defines = s.defines, block = s.block } }
  elseif kind == "file" and (#f == 3 or #f == 4) then
    local defines = {}
    for name, v in (f[4] or ""):gmatch("([%w_]+)=([%-%w_]+)") do defines[name] = math.tointeger(tonumber(v)) or v end
    return { { what = item, file = f[1], entry = f[2], defines = defines, block = int(f[3], "BLOCK") } }
  end
  error(("kernel_stats: %q is not linear:Q:N:K:T, swiglu:N:K:M, gemv:FMT:M:K:T, moe:VARIANT:CONFIG:PROJ:M or file:PATH:ENTRY:BLOCK[:DEFS]"):format(item), 0)
end

local dev = gpu.open { backend = backend }
print(("kernel statistics on %s (%s)"):format(dev.name, backend))
-- An item that names no kernel, or whose kernel does not compile here, is reported and the
-- others still run; the exit status says whether any failed.
local failed = 0
local function report(what, why)
  print(("%s: %s"):format(what, tostring(why)))
  failed = failed + 1
end
for _, item in ipairs(items) do
  local ok, list = pcall(specs, dev, item)
  if not ok then report(item, list); list = {} end
  for _, s in ipairs(list) do
    -- dev:kernel looks a relative file up from here, then from the gpubench root
    local kok, k = pcall(dev.kernel, dev, { file = s.file, entry = s.entry, defines = s.defines })
    if not kok then
      report(s.what, k)
    else
      local block = type(s.block) == "table" and s.block or { s.block, 1, 1 }
      local sok, st = pcall(k.stats, k, block)
      print(("%s: %s %s, block %s"):format(s.what, s.file, options.format_defines(s.defines or {}, " "), table.concat(block, "x")))
      if sok then
        for _, x in ipairs(st) do print(("  %-28s %12s  %s"):format(x.name, tostring(x.value), x.description)) end
      else
        print("  " .. tostring(st))
      end
      k:free()
    end
  end
end
if failed > 0 then
  io.stderr:write(("kernel_stats: %d of the items failed (above)\n"):format(failed))
  os.exit(1)
end
