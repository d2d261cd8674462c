-- gpubench.cli: the --list-devices text and the REPL banner, against a fake
-- gpu module (exact text) and the real one.
local t = dofile("tests/lua/harness.lua")
local cli = require "gpubench.cli"

local function fake_gpu(devices)
  return {
    backends = function()
      return {
        { name = "cuda", available = false, count = 0, reason = "libcuda.so.1: not found" },
        { name = "vulkan", available = true, count = 2 },
      }
    end,
    devices = type(devices) == "function" and devices or function() return devices end,
  }
end

local LAVAPIPE = {
  backend = "vulkan", index = 0, name = "llvmpipe", device_type = "cpu",
  memory_bytes = 2 * 2 ^ 30, sm_count = 0, l2_bytes = 0, spec_gbs = 0,
  driver_version = "Mesa 22.3.6", api_version = "1.3.230", arch = "",
}
local GPU = {
  backend = "vulkan", index = 1, name = "Big GPU", device_type = "discrete",
  memory_bytes = 512 * 2 ^ 20, sm_count = 132, l2_bytes = 50 * 2 ^ 10, spec_gbs = 4812.6,
  driver_version = "550.1", api_version = "1.3.280", arch = "sm_90",
}

t.test("list_devices_text: every backend, then its devices with ? for unknowns", function()
  local text, err = cli.list_devices_text(fake_gpu { LAVAPIPE, GPU })
  t.eq(err, nil)
  t.eq(text, table.concat({
    "cuda: not available (libcuda.so.1: not found)",
    "vulkan: available, 2 devices",
    "  vulkan 0: llvmpipe",
    "      type cpu, memory 2.0 GiB, SMs/CUs ?, L2 ?, spec ? GB/s, driver Mesa 22.3.6, api 1.3.230",
    "  vulkan 1: Big GPU",
    "      type discrete, memory 512.0 MiB, SMs/CUs 132, L2 50 KiB, spec 4813 GB/s, "
      .. "driver 550.1, api 1.3.280, sm_90",
    "",
  }, "\n"))
end)

t.test("list_devices_text: one device is singular; failing discovery still lists backends", function()
  local g = fake_gpu { LAVAPIPE }
  local backends = g.backends
  g.backends = function()
    local b = backends()
    b[2].count = 1
    return b
  end
  t.truthy(cli.list_devices_text(g):find("vulkan: available, 1 device\n", 1, true))
  local text, err = cli.list_devices_text(fake_gpu(function() error("probe failed", 0) end))
  t.eq(text, "cuda: not available (libcuda.so.1: not found)\nvulkan: available, 2 devices\n")
  t.eq(err, "probe failed")
end)

t.test("banner_text: the devices on one line, or why there are none", function()
  t.eq(cli.banner_text(fake_gpu { LAVAPIPE, GPU }), "devices: vulkan:0 llvmpipe, vulkan:1 Big GPU")
  t.eq(cli.banner_text(fake_gpu {}), "no devices (see gpubench --list-devices)")
  t.eq(cli.banner_text(fake_gpu(function() error("probe failed", 0) end)),
    "device discovery failed: probe failed")
end)

t.test("the real gpu module: a line per backend, a banner string", function()
  if not t.gpu then t.skip("no gpu module (stock interpreter)") end
  local text = cli.list_devices_text()
  for _, b in ipairs(t.gpu.backends()) do
    t.truthy(text:find("^" .. b.name .. ": ") or text:find("\n" .. b.name .. ": "), b.name)
  end
  t.eq(type(cli.banner_text()), "string")
end)

t.run()
