-- gpubench.cli: the text the command line prints about devices, written
-- against the gpu module so it shows exactly what scripts see. cli
-- prints what these return.
--
--   cli.list_devices_text([gpu]) -> text [, err]   for --list-devices
--   cli.banner_text([gpu])       -> text           the REPL banner's device part
--
-- gpu defaults to require "gpu" (tests pass a fake one).
local M = {}

-- Unknown numbers are 0 in the info tables and print as "?".
local function known(v, fmt)
  if v == nil or v == 0 or v == "" then return "?" end
  return fmt and string.format(fmt, v) or tostring(v)
end

local function bytes(n)
  if not n or n == 0 then return "?" end
  if n >= 2 ^ 30 then return string.format("%.1f GiB", n / 2 ^ 30) end
  if n >= 2 ^ 20 then return string.format("%.1f MiB", n / 2 ^ 20) end
  return string.format("%.0f KiB", n / 2 ^ 10)
end

-- Every backend (available with its device count, or not with the reason),
-- each followed by its devices. When device discovery fails the backends are
-- still listed and the error comes back as the second result.
function M.list_devices_text(gpu)
  gpu = gpu or require "gpu"
  local out = {}
  local function line(fmt, ...) out[#out + 1] = string.format(fmt, ...) .. "\n" end
  local ok, devs = pcall(gpu.devices)
  for _, b in ipairs(gpu.backends()) do
    if b.available then
      line("%s: available, %d device%s", b.name, b.count, b.count == 1 and "" or "s")
    else
      line("%s: not available (%s)", b.name, tostring(b.reason))
    end
    for _, d in ipairs(ok and devs or {}) do
      if d.backend == b.name then
        line("  %s %d: %s", d.backend, d.index, d.name)
        line("      type %s, memory %s, SMs/CUs %s, L2 %s, spec %s GB/s, driver %s, api %s%s",
          known(d.device_type), bytes(d.memory_bytes), known(d.sm_count), bytes(d.l2_bytes),
          known(d.spec_gbs, "%.0f"), known(d.driver_version), known(d.api_version),
          (d.arch and d.arch ~= "") and (", " .. d.arch) or "")
      end
    end
  end
  if not ok then return table.concat(out), devs end
  return table.concat(out)
end

-- "devices: vulkan:0 llvmpipe, ..." for the banner. Never raises: a missing
-- gpu module or failing discovery must not keep the REPL from starting.
function M.banner_text(gpu)
  if gpu == nil then
    local ok, mod = pcall(require, "gpu")
    if not ok then return "gpu module failed: " .. tostring(mod) end
    gpu = mod
  end
  local okd, devs = pcall(gpu.devices)
  if not okd then return "device discovery failed: " .. tostring(devs) end
  local parts = {}
  for _, d in ipairs(devs) do
    parts[#parts + 1] = string.format("%s:%d %s", d.backend, d.index, d.name)
  end
  if #parts > 0 then return "devices: " .. table.concat(parts, ", ") end
  return "no devices (see gpubench --list-devices)"
end

return M
