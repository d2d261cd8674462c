-- gpubench.workspace: device scratch buffers that a call's launches share
-- (a first launch writes what the next one reads), one per device and name,
-- made while the launches are built (before any timing), never inside a call.
--
--   local ws = require("gpubench.workspace").registry()
--   local b = ws.get(dev, bytes, "name") -- at least bytes, grown when a call needs more
--   ws.release(dev)                      -- frees dev's buffers (every device's when dev is nil)
--
-- Growing does not free the smaller buffer: launches built earlier (cells a
-- sweep armed before its first timed round) may still hold it. It is retired
-- instead, held weakly: the garbage collector frees it once nothing refers to
-- it, and release frees what is left. Each module keeps its own registry
-- (gpubench.linear, gpubench.gemv), so one's release does not free the
-- other's buffers. Weak device keys: a device that is collected takes its
-- entries with it.
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
    if not per then
      per = { current = {}, retired = setmetatable({}, { __mode = "k" }) }
      per_dev[dev] = per
    end
    local b = per.current[name]
    if b and b.size >= bytes then return b end
    if b then per.retired[b] = true end
    per.current[name] = nil
    b = dev:buffer((bytes + 255) // 256 * 256)
    per.current[name] = b
    return b
  end
  function r.release(dev)
    local devs = {}
    if dev ~= nil then devs[1] = dev else for d in pairs(per_dev) do devs[#devs + 1] = d end end
    for _, d in ipairs(devs) do
      local per = per_dev[d]
      if per then
        for _, b in pairs(per.current) do b:free() end
        for b in pairs(per.retired) do b:free() end -- :free() of one already released is a no-op
      end
      per_dev[d] = nil
    end
  end
  return r
end

return workspace
