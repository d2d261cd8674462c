-- gpubench: the measurement library, one module per method (DESIGN.md §3).
--
--   local gb = require "gpubench"
--   gb.timing.two_point(run, n)      -- or require "gpubench.timing"
--
-- Submodules load on first use, so a script that needs only the option
-- parser does not load the rest. See docs/WRITING_EXPERIMENTS.md.

local MODULES = {
  timing = true, order = true, stats = true, options = true, report = true,
  ceilings = true, validate = true, progress = true, cells = true, kernels = true, bench = true,
  errors = true, rng = true, shard = true, devices = true, merge = true, spread = true,
}

return setmetatable({}, {
  __index = function(self, name)
    if not MODULES[name] then return nil end
    local m = require("gpubench." .. name)
    rawset(self, name, m)
    return m
  end,
})
