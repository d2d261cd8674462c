-- gpubench.workspace: device scratch buffers that a call's launches share
-- (a first launch writes what the next one reads), one per device and name,
-- made while the launches are built (before any timing), never inside a call.
--
--   local ws = require("gpubench.workspace").registry()
--   local b = ws.get(dev, bytes, "name") -- at least bytes; grown (freed and made anew) when a call needs more
--   ws.release(dev)                      -- frees dev's buffers (every device's when dev is nil)
--
-- Each module keeps its own registry (gpubench.linear, gpubench.gemv), so
-- one's release does not free the other's buffers. Weak device keys: a
-- device that is collected takes its entries with it.
local workspace = {}

function workspace.registry()
  local per_dev = setmetatable({}, { __mode = "k" })
  local r = {}
  function r.get(dev, bytes, name)
    if math.type(bytes) ~= "integer" or bytes < 1 then
      error(("workspace.get: bytes must be a positive integer, got %s"):format(tostring(bytes)), 2)
    end
    if type(name) ~= "string" then
      error(("workspace.get: name must be a string, got %s"):format(type(name)), 2)
    end
    local per = per_dev[dev]
    if not per then per = {}; per_dev[dev] = per end
    local b = per[name]
    if b and b.size >= bytes then return b end
    if b then b:free() end
    per[name] = nil -- a failed allocation below leaves no freed buffer behind
    b = dev:buffer((bytes + 255) // 256 * 256)
    per[name] = b
    return b
  end
  function r.release(dev)
    local devs = {}
    if dev ~= nil then devs[1] = dev else for d in pairs(per_dev) do devs[#devs + 1] = d end end
    for _, d in ipairs(devs) do
      for _, b in pairs(per_dev[d] or {}) do b:free() end
      per_dev[d] = nil
    end
  end
  return r
end

return workspace
