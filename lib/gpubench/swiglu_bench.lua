-- gpubench.swiglu_bench: the cells of experiments/swiglu_ab.lua -- per
-- shape the data, the reference and the weight copies, per group (shape,
-- regime, mode, M) each path checked and then timed in A-B-C-C-B-A trials.
--
-- Why each part (AstrAI's SwiGLU benchmark, docs/DESIGN.md): its headline
-- was a weight pair that fit in its L2, timed in a loop, so here the
-- L2-resident regime and the rotated one (weight copies totalling >= 4x L2,
-- refused otherwise by gpubench.bench) are both first-class and every row
-- says which it is; its paths were compared in mirrored trials to balance
-- drift (gpubench.trials); every path is checked against the FP64 reference
-- before it is timed (gpubench.swiglu_check), and one outside its tolerance
-- is not timed.
--
-- A sample is one two-point timing of `iterations` calls (gpubench.bench
-- Cell:time, graph replay or launches queued from the host): an L2 flush,
-- `warmup` untimed calls, one untimed run of the n calls (the settle), then
-- t(n) and t(2n); the sample is (t(2n) - t(n)) / n per call, or noise.
--
--   local ctx <close> = swiglu_bench.context(dev, opts)
--   local g = ctx:group { shape = s, m = 4, mode = "graph", regime = "rotated" }
--   g:arm(); local row = g:measure(); g:close()

local bench = require "gpubench.bench"
local timing = require "gpubench.timing"
local trials = require "gpubench.trials"
local stats = require "gpubench.stats"
local ceilings = require "gpubench.ceilings"
local swiglu = require "gpubench.swiglu"
local check = require "gpubench.swiglu_check"

local SB = {}

-- random_bf16(dev, count, seed) -> count normal(0, 1) bf16 values as a
-- string: gpubench.ref's generator where this build has it, else the
-- device buffer's (both C, both seeded).
function SB.random_bf16(dev, count, seed)
  local ref = require "gpubench.ref"
  if type(ref.random_bf16) == "function" then return ref.random_bf16(count, seed, "normal") end
  local b <close> = dev:buffer(2 * count)
  b:fill_random { dtype = "bf16", dist = "normal", seed = seed }
  return b:download()
end

local Ctx = {}
Ctx.__index = Ctx

-- context(dev, o) -> ctx. o: m_values, warmup, iterations, trials, seed,
-- l2_bytes (the L2 the rotation is checked against), geometry (the
-- backend's, from swiglu_cuda/swiglu_vulkan.geometry) or geometry_for(shape, m)
-- (a geometry per shape and M: the table's shape rules, the device's rule by M),
-- read_gbs (for % read).
function SB.context(dev, o)
  local mmax = 0
  for _, m in ipairs(o.m_values) do mmax = math.max(mmax, m) end
  return setmetatable({ dev = dev, o = o, mmax = mmax, shapes = {}, kernel_sets = {}, owned = {} }, Ctx)
end

function Ctx:own(obj)
  self.owned[#self.owned + 1] = obj
  return obj
end

-- The geometry of a shape's kernels for m rows of x.
function Ctx:geometry(st, m)
  if self.o.geometry_for then return self.o.geometry_for(st, m) end
  return self.o.geometry
end

-- The kernels for m tokens and geometry g, compiled once (the mul kernel is shared).
function Ctx:kernels(m, g)
  local key = m .. "|" .. swiglu.geometry_text(g)
  local ks = self.kernel_sets[key]
  if ks then return ks end
  local any = next(self.kernel_sets)
  ks = swiglu.kernels(self.dev, m, g, any and self.kernel_sets[any].mul)
  self:own(ks.fused.kernel); self:own(ks.gemv.kernel)
  if not any then self:own(ks.mul.kernel) end
  self.kernel_sets[key] = ks
  return ks
end

-- The vendor GEMM h[m, 2N] = x W^T, or nil and why it is not available.
function Ctx:vendor(st, m)
  st.vendor = st.vendor or {}
  local v = st.vendor[m]
  if v then return v.kernel, v.why end
  local dev = self.dev
  if dev.backend ~= "cuda" then
    v = { why = ("n/a on %s (cuBLASLt is a CUDA library)"):format(dev.backend) }
  elseif type(dev.vendor_gemm) ~= "function" then
    v = { why = "cuBLASLt op not available: this gpubench has no dev:vendor_gemm" }
  else
    local ok, g = pcall(dev.vendor_gemm, dev, { n = 2 * st.n, k = st.k, t = m })
    if ok then v = { kernel = self:own(g) } else v = { why = "cuBLASLt op not available: " .. tostring(g) } end
  end
  st.vendor[m] = v
  return v.kernel, v.why
end

-- ------------------------------------------------------------ per shape

-- shape(s) -> the shape's state: W (the checked copy), x, h, y on the
-- device, the FP64 reference for mmax tokens, the checks so far.
function Ctx:shape(s)
  local key = s.n .. "x" .. s.k
  local st = self.shapes[key]
  if st then return st end
  local dev, n, k, t = self.dev, s.n, s.k, self.mmax
  st = { n = n, k = k, name = s.name, checks = {}, expected = {}, bytes = swiglu.bytes(n, k, t) }
  local w = SB.random_bf16(dev, 2 * n * k, self.o.seed)
  local x = SB.random_bf16(dev, t * k, self.o.seed + 1)
  st.W = self:own(dev:buffer(swiglu.alloc(#w))); st.W:upload(w)
  st.x = self:own(dev:buffer(swiglu.alloc(#x))); st.x:upload(x)
  st.h = self:own(dev:buffer(swiglu.alloc(st.bytes.h)))
  st.y = self:own(dev:buffer(swiglu.alloc(st.bytes.y)))
  st.R = check.reference(w, x, n, k, t)
  self.shapes[key] = st
  return st
end

-- The rotated weight copies of a shape: the checked W and byte copies of it,
-- as many as make 4x L2 (at least 2).
function Ctx:copies(st)
  if st.copies then return st.copies end
  local count = timing.rotation(st.bytes.weights, self.o.l2_bytes)
  local list = { st.W }
  for i = 2, count do
    local b = self:own(self.dev:buffer(st.W.size))
    b:copy_from(st.W)
    list[i] = b
  end
  st.copies = list
  return list
end

-- check(st, path, m) -> {status = "ok" | "wrong" | "n/a", why, error, vendor}:
-- the path run once on the checked W (outputs poisoned with NaN first) and
-- compared with the reference; once per shape, path and m.
function Ctx:check(st, path, m)
  local key = path .. "|" .. m
  if st.checks[key] then return st.checks[key] end
  local res = { launches_per_call = swiglu.LAUNCHES[path] }
  local g, why
  if path == "vendor" then g, why = self:vendor(st, m) end
  if path == "vendor" and not g then
    res.status, res.why = "n/a", why
  else
    if g then res.vendor = g.vendor end
    local ks = self:kernels(m, self:geometry(st, m))
    local launches = swiglu.launches(path, ks, { W = st.W, x = st.x, h = st.h, y = st.y }, st.n, st.k, m, g)
    st.h:fill("\255"); st.y:fill("\255") -- bf16 0xFFFF is a NaN: an output never written fails
    for _, l in ipairs(launches) do l[1]:launch(table.unpack(l, 2)) end
    local rounds = swiglu.ROUNDS_H[path]
    local ekey = m .. "|" .. tostring(rounds)
    st.expected[ekey] = st.expected[ekey] or check.expected(st.R, m, rounds)
    local f = check.compare(st.y:download(0, 2 * m * st.n), st.expected[ekey])
    res.error = f
    res.status = f.ok and "ok" or "wrong"
    if not f.ok then res.why = "outside its tolerance, not timed: " .. check.describe(f) end
  end
  st.checks[key] = res
  return res
end

function Ctx:close()
  if self.closed then return end
  self.closed = true
  for i = #self.owned, 1, -1 do self.owned[i]:free() end
  self.owned, self.shapes, self.kernel_sets = {}, {}, {}
end
Ctx.__close = Ctx.close

-- ------------------------------------------------------------ groups

local Group = {}
Group.__index = Group

-- group(c) -> a group: c = {shape = {name, n, k}, m, mode = "graph" | "eager",
-- regime = "l2" | "rotated"}. Every path is checked; each that passes gets a
-- bench cell over the regime's weight copies.
function Ctx:group(c)
  local st = self:shape(c.shape)
  local m, n, k = c.m, st.n, st.k
  local b = swiglu.bytes(n, k, m)
  local rotated = c.regime == "rotated"
  local copies = rotated and self:copies(st) or { st.W }
  local G = setmetatable({ ctx = self, c = c, st = st, bytes = b, copies = #copies, paths = {}, names = {},
                           graph = c.mode == "graph" }, Group)
  -- resident between calls: every weight copy, x, y, and h (the unfused paths')
  G.working_set = #copies * b.weights + b.x + b.y + b.h
  G.fits = rotated and ("DRAM x%d"):format(#copies) or ceilings.regime(G.working_set, self.o.l2_bytes)
  G.geometry = self:geometry(st, m)
  local ks = self:kernels(m, G.geometry)
  for _, path in ipairs(swiglu.PATHS) do
    local chk = self:check(st, path, m)
    local P = { status = chk.status, why = chk.why, error = chk.error, vendor = chk.vendor,
                launches_per_call = chk.launches_per_call }
    if chk.status == "ok" then
      local g = path == "vendor" and self:vendor(st, m) or nil
      local sets = {}
      for i, W in ipairs(copies) do
        sets[i] = swiglu.launches(path, ks, { W = W, x = st.x, h = st.h, y = st.y }, n, k, m, g)
      end
      P.cell = rotated
        and bench.cell(self.dev, { sets = sets, set_bytes = b.weights, rotation = { l2_bytes = self.o.l2_bytes },
                                   working_set = G.working_set })
        or bench.cell(self.dev, { launches = sets[1], working_set = G.working_set })
      -- with o.overlap: whether some launch of this path may overlap (the vendor GEMM's own cannot)
      P.overlap = timing.overlaps(self.dev, P.cell.launches, self.o.overlap)
      G.names[#G.names + 1] = path
    end
    G.paths[path] = P
  end
  return G
end

-- arm(): every timed path's batches (the cell's runner at n and 2n calls,
-- and the warm-up batch), built and submitted once now, before any round.
function Group:arm()
  local o, dev = self.ctx.o, self.ctx.dev
  for _, name in ipairs(self.names) do
    local P = self.paths[name]
    P.cell:arm(o.iterations, { runners = 1, graph = self.graph, overlap = o.overlap })
    if o.warmup > 0 and not P.warm then
      local spec = { count = math.max(o.warmup, P.cell.copies) * P.cell.per_call, graph = self.graph,
                     overlap = P.overlap }
      for i, l in ipairs(P.cell.launches) do spec[i] = l end
      P.warm = dev:batch(spec)
      P.warm:submit()
    end
  end
  dev:sync()
end

-- One sample of a path (see the header).
function Group:sample(name, trial, position)
  local o, P = self.ctx.o, self.paths[name]
  self.ctx.dev:flush_l2()
  if P.warm then P.warm:submit() end
  local d, n = P.cell:time(o.iterations, { runners = 1, repeats = 1, settle_ms = 0, flush = false, graph = self.graph,
                                           overlap = o.overlap })
  return { trial = trial, position = position, ms = d.ms or false, t_n = d.t_n, t_2n = d.t_2n, n = n }
end

local function summary_of(ms)
  local s = stats.summary(ms)
  return { n = s.n, p50 = s.median, p90 = s.p90, p99 = s.p99, min = s.min, max = s.max, mean = s.mean,
           rel_iqr = s.rel_iqr }
end

-- measure() -> the group's row: per path its status, error figures, every
-- sample and its summary; the trials' order; the fused path against the
-- best unfused one (the smaller p50 of vendor and chain).
function Group:measure()
  local o, c = self.ctx.o, self.c
  local row = {
    label = ("%s M=%d %s %s"):format(c.shape.name, c.m, c.mode, c.regime),
    shape = c.shape.name, n = self.st.n, k = self.st.k, m = c.m, mode = c.mode, regime = c.regime,
    fits = self.fits, copies = self.copies, working_set = self.working_set, weight_bytes = self.bytes.weights,
    bytes_moved = self.bytes.moved, l2_bytes = o.l2_bytes, geometry = self.geometry, paths = {},
  }
  local ran
  if #self.names > 0 then
    local r = trials.run { names = self.names, trials = o.trials, sample = function(...) return self:sample(...) end }
    ran = r.ran
    for _, name in ipairs(self.names) do
      local P = self.paths[name]
      P.timings, P.samples, P.noise = {}, {}, 0
      for i, s in ipairs(r.samples[name]) do
        P.timings[i] = s
        if s.ms then P.samples[#P.samples + 1] = s.ms else P.noise = P.noise + 1 end
      end
    end
  end
  row.order = {}
  for i, e in ipairs(ran or {}) do row.order[i] = { trial = e.trial, position = e.position, path = e.name } end
  for _, path in ipairs(swiglu.PATHS) do
    local P = self.paths[path]
    local out = { status = P.status, why = P.why, launches_per_call = P.launches_per_call, error = P.error,
                  vendor = P.vendor, what = swiglu.WHAT[path], overlap = P.overlap }
    if P.cell then
      out.timings, out.noise = P.timings, P.noise
      if #P.samples > 0 then out.samples = P.samples end
      if 2 * P.noise >= #P.timings then
        out.status, out.why = "noise", ("%d of %d samples were noise (t(2n) < 1.2 t(n)): raise --iterations")
          :format(P.noise, #P.timings)
      end
      if #P.samples > 0 then
        out.summary = summary_of(P.samples)
        if out.status == "ok" then
          out.us = 1e3 * out.summary.p50
          out.gbs = ceilings.gbs(self.bytes.moved, out.summary.p50)
          -- % of a DRAM ceiling only where the weights come from DRAM
          if self.fits ~= "L2" then out.pct_read = ceilings.pct(out.gbs, o.read_gbs) end
        end
      end
    end
    row.paths[path] = out
  end
  local best
  for _, path in ipairs { "vendor", "chain" } do
    local p = row.paths[path]
    if p.us and (not best or p.us < row.paths[best].us) then best = path end
  end
  if best and row.paths.fused.us then
    row.best_unfused = best
    row.vs_best_unfused = row.paths[best].us / row.paths.fused.us
  end
  return row
end

function Group:close()
  for _, name in ipairs(self.names) do
    local P = self.paths[name]
    if P.warm then P.warm:free(); P.warm = nil end
    P.cell:close()
  end
end

return SB
