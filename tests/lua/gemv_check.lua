-- tests/lua/gemv_check.lua: the oracle check shared by the GEMV tests of
-- every backend (test_gemv_cuda*.lua, test_gemv_vulkan*.lua,
-- test_gemv_tokens.lua), and the helpers more than one of them uses.
--
--   local gc = dofile("tests/lua/gemv_check.lua")(t)
--   gc.releasing(dev, function() gc.check(dev, "q4_k", 37, 256, seed) end)

local gemv = require "gpubench.gemv"

return function(t)
  local gb = require "gpubench.gemv_bench"
  local gc = { TOL = gb.TOL } -- the experiments' criterion

  -- Cached kernels would otherwise outlive the test and fail the harness's leak check.
  function gc.releasing(dev, fn)
    local ok, e = pcall(fn)
    gemv.release(dev)
    if not ok then error(e, 0) end
  end

  -- T distinct rows of x (each its own seed, seed + r, and row r scaled by
  -- 4^(r-1) so that the rows' magnitudes differ; T = 1 is ref.random_f32(k,
  -- seed + 1)): random valid weights for fmt at m x k through gemv.run, every
  -- row of y against the FP64 reference of its own x row, per row
  -- |y - y_ref| <= TOL * sum |w x|. T nil is gemv.run's default of one row
  -- (or the spec's GEMV_TOKENS, the spec then given in the tokens place).
  -- Returns y's f32 string, the weights and x.
  function gc.check_tokens(dev, fmt, m, k, T, seed, spec)
    local ref = require "gpubench.ref"
    local f = gemv.format(fmt)
    local rows = T or 1
    local w = ref.random_blocks(fmt, m * k // f.qk, seed)
    local xr = {}
    for r = 1, rows do
      local x = ref.random_f32(k, seed + r)
      if r > 1 then
        local v = { string.unpack(("<" .. ("f"):rep(k)), x) }
        local parts = {}
        for i = 1, k do parts[i] = string.pack("<f", v[i] * 4.0 ^ (r - 1)) end
        x = table.concat(parts)
      end
      xr[r] = x
    end
    local xs = table.concat(xr)
    local y, ys = gemv.run(dev, fmt, w, m, k, xs, T or spec, T and spec)
    t.eq(#y, rows * m, fmt .. " result count")
    t.eq(#ys, 4 * rows * m, fmt .. " result bytes")
    -- the kernel gemv.run used, for its x_rounding (integer kernels)
    local used = spec or gemv.spec_for(dev, fmt, m, k, rows)
    for r = 1, rows do
      local yref, absdot = ref.gemv(fmt, w, m, k, xr[r])
      absdot = gb.rounded_bound(fmt, w, m, k, xr[r], absdot, used.x_rounding)
      local ok, worst_row, worst_rel, failures = ref.check_rows(ys:sub(4 * m * (r - 1) + 1, 4 * m * r), yref, absdot, gc.TOL)
      t.truthy(ok, ("%s m=%d k=%d T=%d %s x row %d: %d rows off, worst row %d (|dy| / sum|w x| = %.3g, y=%.9g ref=%.9g)")
        :format(fmt, m, k, rows, spec and "variant" or "default", r, failures, worst_row, worst_rel,
          y[m * (r - 1) + worst_row], yref[worst_row]))
    end
    return ys, w, xs
  end

  -- Per row, the x-rounding part of an integer kernel's bound (gemv_bench.x_rounding_term).
  gc.x_rounding_term = gb.x_rounding_term

  -- One row of x given as an f32 string (k values), random valid weights from
  -- seed, through gemv.run with spec (nil: the kernel gemv.run picks for dev),
  -- checked like check_tokens, the x-rounding term included where the kernel
  -- declares one. Returns y's f32 string and the spec used.
  function gc.check_x(dev, fmt, m, k, xs, seed, spec, what)
    local ref = require "gpubench.ref"
    local f = gemv.format(fmt)
    local w = ref.random_blocks(fmt, m * k // f.qk, seed)
    local used = spec or gemv.spec_for(dev, fmt, m, k, 1)
    local y, ys = gemv.run(dev, fmt, w, m, k, xs, spec)
    t.eq(#y, m, fmt .. " result count")
    local yref, absdot = ref.gemv(fmt, w, m, k, xs)
    absdot = gb.rounded_bound(fmt, w, m, k, xs, absdot, used.x_rounding)
    local ok, worst_row, worst_rel, failures = ref.check_rows(ys, yref, absdot, gc.TOL)
    t.truthy(ok, ("%s m=%d k=%d %s (%s): %d rows off, worst row %d (|dy| / bound = %.3g, y=%.9g ref=%.9g)")
      :format(fmt, m, k, what or "given x", used.x_rounding and "integer kernel" or "float kernel", failures,
        worst_row, worst_rel, y[worst_row], yref[worst_row]))
    return ys, used
  end

  -- A device table as gemv_vulkan.for_device reads it: the H200's Vulkan limits by default.
  function gc.vulkan_fake(over)
    local d = { backend = "vulkan", integer_dot_product = true, subgroup_size = 32,
                max_shared_bytes = 49152, sm_count = 132 }
    for k, v in pairs(over or {}) do d[k] = v end
    return d
  end

  -- The Vulkan device, or a skip where it has no integer kernel (no shaderIntegerDotProduct,
  -- subgroups below 8 invocations).
  function gc.idot_device()
    local dev = t.device("vulkan")
    if not dev.integer_dot_product then t.skip("the device has no shaderIntegerDotProduct") end
    if dev.subgroup_size < 8 then t.skip("subgroups below 8 invocations") end
    return dev
  end

  -- The quantized formats (blocks of weights with scales); f32, f16 and bf16 are dense.
  gc.QUANT = { q4_0 = true, q8_0 = true, q4_k = true, q5_k = true, q6_k = true }

  -- gpu.compile needs NVRTC only; machines without it skip the compile tests: true
  -- where an error text says NVRTC (or the CUDA backend) is missing.
  function gc.nvrtc_missing(msg)
    return msg:find("cannot load NVRTC", 1, true) or msg:find("CUDA backend not built", 1, true)
      or msg:find("NVRTC has no", 1, true)
  end

  -- The parameters of every GEMV kernel: W, x, y, m, k.
  gc.GEMV_PARAMS = { "buffer", "buffer", "buffer", "u32", "u32" }

  -- A spec compiled for sm_90 with NVRTC (skipping the test where NVRTC is
  -- missing): the compile's result, or nil after a failed check naming label;
  -- params: the reflected parameter kinds it must have (not checked when nil).
  function gc.compile_sm90(spec, label, params)
    local ok, r = pcall(t.gpu.compile, { backend = "cuda", file = spec.file, entry = spec.entry,
      defines = spec.defines, target = "sm_90" })
    if not ok and gc.nvrtc_missing(t.error_text(r)) then t.skip("NVRTC not available: " .. t.error_text(r)) end
    t.truthy(ok, label .. ": " .. t.error_text(r))
    if ok and params then t.eq(r.params, params, label) end
    return ok and r or nil
  end

  -- One row of x: gc.check_tokens with T nil.
  function gc.check(dev, fmt, m, k, seed, spec)
    return gc.check_tokens(dev, fmt, m, k, nil, seed, spec)
  end

  -- Lane-group widths for the reduction paths of the Vulkan kernels on a
  -- device of subgroup size sg: narrower than, equal to and wider than a
  -- subgroup, and the whole workgroup (256), each once and within 1..256.
  function gc.lane_widths(sg)
    local widths, seen = {}, {}
    for _, w in ipairs { sg // 2, sg, sg * 2, 256 } do
      if w >= 1 and w <= 256 and not seen[w] then
        seen[w] = true
        widths[#widths + 1] = w
      end
    end
    return widths
  end

  -- x on its blocks' int16 grids (x_i = n_i 2^-e_b, |n_i| <= 32767, one |n_i| = 32767 per
  -- block, e_b from 4 to 24): the quantization is exact (s_b is 2^-e_b to one rounding),
  -- so the integer kernel has no x-rounding error and must meet a bound 100 times
  -- tighter than the GEMV criterion (lavapipe: 5e-8 at worst, as the float kernel).
  -- An integer dot 8 units off in every sub-block (2e-6 of sum |w x|) fails it and
  -- passes the oracle tests, whose bound with the x-rounding term is about 1.5e-4.
  -- fmt's integer kernel (GEMV_XB in xbs, one workgroup) on T rows of x on their blocks'
  -- int16 grids (random seed; the weights seed + 1) against 1e-6 of sum |w x| per row.
  function gc.check_int16_grid(dev, fmt, m, k, T, seed, xbs, mode, xpre, extra)
    local ref = require "gpubench.ref"
    local rng = math.random
    math.randomseed(seed)
    local rows = {}
    for tk = 1, T do
      local parts = {}
      for b = 0, k // 32 - 1 do
        local e = 4 + (b * 7 + tk) % 21
        local top = rng(0, 31) -- the element that carries the block's amax
        for i = 0, 31 do
          local n = i == top and (rng(0, 1) == 0 and -32767 or 32767) or rng(-32767, 32767)
          parts[#parts + 1] = string.pack("<f", n * 2.0 ^ -e)
        end
      end
      rows[tk] = table.concat(parts)
    end
    local xs = table.concat(rows)
    local w = ref.random_blocks(fmt, m * k // 256, seed + 1)
    for _, xb in ipairs(xbs) do
      local changes = { GEMV_IDOT = mode or 1, GEMV_XB = xb, GEMV_TOKENS = T, GEMV_GRID = 1, GEMV_XPRE = xpre }
      for name, v in pairs(extra or {}) do changes[name] = v end -- more defines (GEMV_KHALF)
      local spec = require("gpubench.gemv_vulkan").variant(fmt, changes)
      local y, ys = require("gpubench.gemv").run(dev, fmt, w, m, k, xs, T, spec)
      for tk = 1, T do
        local yref, absdot = ref.gemv(fmt, w, m, k, rows[tk])
        local ok, worst, rel, failures = ref.check_rows(ys:sub(4 * m * (tk - 1) + 1, 4 * m * tk), yref, absdot, 1e-6)
        t.truthy(ok, ("%s XB=%d token %d: %d rows beyond 1e-6 sum |w x|, worst row %d (%.3g), y=%.9g ref=%.9g"):format(
          fmt, xb, tk, failures, worst, rel, y[m * (tk - 1) + worst], yref[worst]))
      end
    end
  end

  return gc
end
