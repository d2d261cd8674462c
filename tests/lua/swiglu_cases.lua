-- tests/lua/swiglu_cases.lua: the SwiGLU checks shared by the tests of every
-- backend (test_swiglu_vulkan.lua, test_swiglu_cuda.lua), each through the
-- experiment's own code (gpubench.swiglu_bench).
--
--   local sc = dofile("tests/lua/swiglu_cases.lua")(t)
--   sc.check_paths(dev, { { n = 37, k = 136, m = { 1, 8 } } }, { "chain", "fused" })

local sb = require "gpubench.swiglu_bench"
local swiglu = require "gpubench.swiglu"
local check = require "gpubench.swiglu_check"
local trials = require "gpubench.trials"
local bench = require "gpubench.bench"

return function(t)
  local sc = {}

  local function geometry(dev, changes)
    local g, why = swiglu.specs(dev.backend).geometry(changes)
    if not g then error(why, 2) end
    return g
  end

  local function context(dev, m_values, changes, extra)
    local o = { m_values = m_values, seed = 3, warmup = 1, iterations = 2, trials = 1, l2_bytes = 1 << 20,
                geometry = geometry(dev, changes) }
    for k, v in pairs(extra or {}) do o[k] = v end
    return sb.context(dev, o)
  end

  local function text_of(g)
    local parts = {}
    for k, v in pairs(g or {}) do parts[#parts + 1] = k .. "=" .. v end
    table.sort(parts)
    return #parts > 0 and (" " .. table.concat(parts, ",")) or ""
  end

  -- Each case {n =, k =, m = {...}, geometry = {...}}: every path of `paths`
  -- checked against the FP64 reference for every m (poisoned outputs, the
  -- per-output bound of gpubench.swiglu_check).
  function sc.check_paths(dev, cases, paths)
    for _, c in ipairs(cases) do
      local ctx <close> = context(dev, c.m, c.geometry)
      local st = ctx:shape { name = "case", n = c.n, k = c.k }
      for _, m in ipairs(c.m) do
        for _, path in ipairs(paths) do
          local r = ctx:check(st, path, m)
          local what = ("%s N=%d K=%d M=%d%s"):format(path, c.n, c.k, m, text_of(c.geometry))
          t.eq(r.status, "ok", what .. ": " .. tostring(r.why))
          t.eq(r.error.outputs, m * c.n, what)
          t.truthy(r.error.cosine > 0.9999, what .. " cosine " .. r.error.cosine)
        end
      end
    end
  end

  -- The fused kernel compiled for m - 1 tokens and launched for m leaves the
  -- last token's outputs as poisoned: the check must fail exactly those.
  function sc.unwritten_token_fails(dev)
    local n, k, m = 24, 64, 3
    local ctx <close> = context(dev, { m }, {})
    local st = ctx:shape { name = "case", n = n, k = k }
    local short = swiglu.kernels(dev, m - 1, ctx.o.geometry)
    local ok, err = pcall(function()
      local l = swiglu.launches("fused", short, { W = st.W, x = st.x, h = st.h, y = st.y }, n, k, m)[1]
      st.y:fill("\255")
      l[1]:launch(table.unpack(l, 2))
      local f = check.compare(st.y:download(0, 2 * m * n), check.expected(st.R, m, false))
      t.eq({ f.ok, f.failures, f.nonfinite, f.first.t, f.first.n }, { false, n, n, m - 1, 0 })
    end)
    for _, x in pairs(short) do x.kernel:free() end
    if not ok then error(err, 0) end
  end

  -- One group measured as the experiment measures it: every path of
  -- `timed` timed in A-B-C-C-B-A order, the rest with why.
  -- with_overlap: the group asks for launch overlap (--overlap): every timed path then
  -- says it overlapped (the vendor path through its elementwise step; the GEMM's own
  -- launches are the library's).
  function sc.measured_group(dev, timed, regime, with_overlap, changes)
    local ctx <close> = context(dev, { 2 }, changes or {}, { trials = 2, iterations = 4, warmup = 2, l2_bytes = 32 << 10,
                                                  overlap = with_overlap })
    local g = ctx:group { shape = { name = "case", n = 64, k = 128 }, m = 2, mode = "graph", regime = regime }
    local ok, err = pcall(function()
      g:arm()
      bench.ready(dev)
      local row = g:measure()
      t.eq({ row.n, row.k, row.m, row.mode, row.regime, row.weight_bytes }, { 64, 128, 2, "graph", regime, 4 * 64 * 128 })
      t.eq(row.bytes_moved, 4 * 64 * 128 + 2 * 2 * 128 + 2 * 2 * 64)
      if regime == "rotated" then
        t.eq({ row.copies, row.fits }, { 4, "DRAM x4" }) -- 4 x 32 KiB over 32 KiB copies
      else
        t.eq(row.copies, 1)
      end
      t.eq(#row.order, 2 * 2 * #timed)
      local names = {}
      for i, e in ipairs(row.order) do names[i] = e.path end
      t.eq({ trials.check(names, timed, 2) }, { true })
      for _, path in ipairs(swiglu.PATHS) do
        local p = row.paths[path]
        t.eq(p.launches_per_call, swiglu.LAUNCHES[path], path)
        if p.timings then
          t.eq(p.overlap, with_overlap and true or false, path .. " overlap")
          t.eq(#p.timings, 4, path .. " samples")
          for _, s in ipairs(p.timings) do
            t.truthy(s.n == 4 and s.t_n > 0 and s.t_2n > 0 and s.trial >= 1 and s.position >= 1, path)
          end
          t.eq(#(p.samples or {}) + p.noise, 4, path)
        end
      end
      return row
    end)
    g:close()
    if not ok then error(err, 0) end
    return err
  end

  return sc
end
