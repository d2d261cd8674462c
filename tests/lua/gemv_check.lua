-- tests/lua/gemv_check.lua: the oracle check shared by the GEMV tests of
-- every backend (test_gemv_cuda.lua, test_gemv_vulkan.lua).
--
--   local gc = dofile("tests/lua/gemv_check.lua")(t)
--   gc.releasing(dev, function() gc.check(dev, "q4_k", 37, 256, seed) end)

local gemv = require "gpubench.gemv"

return function(t)
  local gc = { TOL = 1e-4 }

  -- Cached kernels would otherwise outlive the test and fail the harness's leak check.
  function gc.releasing(dev, fn)
    local ok, e = pcall(fn)
    gemv.release(dev)
    if not ok then error(e, 0) end
  end

  -- Random valid weights and x for fmt at m x k: the GPU result against the
  -- FP64 oracle, per row |y - y_ref| <= TOL * sum |w x|. Returns y, y_ref.
  function gc.check(dev, fmt, m, k, seed, spec)
    local ref = require "gpubench.ref"
    local f = gemv.format(fmt)
    local w = ref.random_blocks(fmt, m * k // f.qk, seed)
    local x = ref.random_f32(k, seed + 1)
    local y, ys = gemv.run(dev, fmt, w, m, k, x, spec)
    t.eq(#y, m, fmt .. " result count")
    t.eq(#ys, 4 * m, fmt .. " result bytes")
    local yref, absdot = ref.gemv(fmt, w, m, k, x)
    local ok, worst_row, worst_rel, failures = ref.check_rows(ys, yref, absdot, gc.TOL)
    t.truthy(ok, ("%s m=%d k=%d %s: %d rows off, worst row %d (|dy| / sum|w x| = %.3g, y=%.9g ref=%.9g)")
      :format(fmt, m, k, spec and "variant" or "default", failures, worst_row, worst_rel,
        y[worst_row], yref[worst_row]))
    return y, yref
  end

  return gc
end
