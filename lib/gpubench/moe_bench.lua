-- gpubench.moe_bench: the cells of experiments/moe_scaling.lua -- the plan
-- (no device), the device fixture of each projection (weight stacks and their
-- rotated copies, activations, ids, outputs), every variant checked against
-- the FP64 reference and batched against per_token before anything is timed,
-- and the table rows.
--
-- A cell is (variant, projection, regime, m); its call is one decode step, all
-- the dispatches of the variant (per_token: m launches). Regimes:
--   cold  consecutive steps rotate over copies of the stacks so that the
--         selected experts' bytes read over one rotation total >= 4x L2
--         (as decode meets each layer's experts: a layer's weights are long
--         gone from L2 when the next token reaches it). Copies are counted
--         against the bytes a step reads, not the stack's size: at m = 1 a
--         qwen3 step reads 8 of 128 experts, and copies of whole stacks
--         totalling 4x L2 would bring those 8 back while still in L2.
--   l2    one copy, the same step repeated, labelled so (llama.cpp's perf
--         mode repeats the same ids the same way).

local bench = require "gpubench.bench"
local ceilings = require "gpubench.ceilings"
local moe = require "gpubench.moe"
local ref = require "gpubench.ref"

local mb = {}

-- |y - y_ref| <= TOL * sum |w x| per output (fused: the SwiGLU bound, ref.swiglu).
mb.TOL = 1e-4

-- The peer: llama.cpp's MUL_MAT_ID with q4_K weights, Qwen3-30B-A3B gate/up
-- geometry, µs per op, measured outside gpubench on an H200 (docs/kernels/moe.md);
-- its perf mode repeats the same ids, so its weights stay in L2.
mb.PEER = { config = "qwen3_30b_a3b", projection = "gate_up", name = "llama.cpp*",
            us = { [1] = 8.2, [4] = 13.6, [8] = 25.4, [32] = 146, [64] = 202 } }

-- copies(step_bytes, l2_bytes [, factor = 4]): the cold regime's copies, the
-- fewest (at least 2) whose steps total factor x L2.
function mb.copies(step_bytes, l2_bytes, factor)
  return math.max(2, -(-(factor or 4) * l2_bytes // step_bytes))
end

-- ------------------------------------------------------------ the plan

-- plan(o) -> cells. o: config, ms, routing, zipf_s, routing_seed, projections,
-- regimes, variants, backend (nil: dispatches of grouped per backend).
-- Every cell carries its routing's counts, so --list needs no device.
function mb.plan(o)
  local c = moe.CONFIGS[o.config]
  local max_m = 0
  for _, m in ipairs(o.ms) do max_m = math.max(max_m, m) end
  local ids = moe.routing(o.routing, max_m, c.experts, c.top_k, { seed = o.routing_seed, zipf_s = o.zipf_s })
  local list = {}
  for _, proj in ipairs(o.projections) do
    local shape = moe.shape(o.config, proj)
    for _, regime in ipairs(o.regimes) do
      for _, v in ipairs(o.variants) do
        if moe.applies(v, proj) then
          for _, m in ipairs(o.ms) do
            local pairs_ = m * c.top_k
            local unique = moe.unique(ids, pairs_)
            list[#list + 1] = {
              label = ("%s %s %s m=%d"):format(v, proj, regime, m), variant = v, projection = proj, regime = regime,
              m = m, pairs = pairs_, unique = unique, unique_bytes = moe.unique_bytes(shape, v, unique),
              dispatches = o.backend and moe.dispatches(o.backend, v, m) or nil, shape = shape, ids = ids,
              max_m = max_m,
            }
          end
        end
      end
    end
  end
  return list
end

-- dispatch_text(cell): "m" where the backend is known, else each backend's.
function mb.dispatch_text(cell)
  if cell.dispatches then return tostring(cell.dispatches) end
  local cu, vk = moe.dispatches("cuda", cell.variant, cell.m), moe.dispatches("vulkan", cell.variant, cell.m)
  if cu == vk then return tostring(cu) end
  return ("%d cuda, %d vulkan"):format(cu, vk)
end

-- ------------------------------------------------------------ the fixture

local Fixture = {}
Fixture.__index = Fixture

-- fixture(dev, o) -> F: device data made on first use per projection and kept
-- for every cell. o: l2_bytes, copies (a function cell -> the cold regime's
-- copies; 1 where the cold regime flushes L2 instead, --method cold).
function mb.fixture(dev, o)
  return setmetatable({ dev = dev, o = o, groups = {}, buffers = {} }, Fixture)
end

function Fixture:buffer(bytes)
  local b = self.dev:buffer(bytes)
  self.buffers[#self.buffers + 1] = b
  return b
end

local SEEDS = { gate_up = { w = 1, up = 2, x = 11 }, down = { w = 3, x = 13 } }

-- The stack copies one projection's cells need: role -> count.
local function copies_needed(cells, proj, copies_of)
  local need = { w = 0, up = 0 }
  for _, c in ipairs(cells) do
    if c.projection == proj then
      local n = c.regime == "cold" and copies_of(c) or 1
      need.w = math.max(need.w, n)
      if c.variant == "fused_gate_up" then need.up = math.max(need.up, n) end
    end
  end
  return need
end

-- build(F, shape, ids, max_m, need) -> a group: the device data of one
-- projection for pairs of up to max_m tokens routed by ids: stacks (role ->
-- list of need[role] copies), x, ids, y, and the FP64 reference of every pair
-- of max_m tokens (each smaller m checks against a prefix: the routing's
-- tokens are drawn in order).
local function build(F, sh, ids, max_m, need)
  local dev = F.dev
  local max_bytes = dev.max_buffer_bytes or 0
  if max_bytes > 0 and sh.buffer_bytes > max_bytes then
    return { skip = ("its %d-byte stack is more than the device's largest buffer (%d bytes)"):format(sh.buffer_bytes,
      max_bytes) }
  end
  local total = (need.w + need.up) * sh.buffer_bytes
  local mem = dev.memory_bytes or 0
  if mem > 0 and total > mem * 0.9 then
    return { skip = ("its %d stack copies take %.2f GB, more than 90 %% of the device's %.2f GB")
      :format(need.w + need.up, total / 1e9, mem / 1e9) }
  end
  local seeds = SEEDS[sh.projection]
  local pairs_ = max_m * sh.top_k
  moe.check_ids(ids, pairs_, sh.experts)
  local ids_s = moe.ids_string(ids, pairs_)
  local xs = ref.random_f32(moe.x_floats(sh, max_m), seeds.x)
  local g = { shape = sh, stacks = {}, max_m = max_m }
  local nblocks = sh.stack_bytes // moe.BLOCK_BYTES
  local refs = {}
  for _, role in ipairs { "w", "up" } do
    if need[role] > 0 then
      local data = ref.random_blocks("q4_k", nblocks, seeds[role])
      local list = {}
      for i = 1, need[role] do
        local b = F:buffer(sh.buffer_bytes)
        if i == 1 then
          b:fill(0) -- the slack past the last block is read by whole-word copies
          b:upload(data)
        else
          b:copy_from(list[1])
        end
        list[i] = b
      end
      g.stacks[role] = list
      refs[role] = { ref.moe_gemv("q4_k", data, sh.experts, sh.n, sh.k, ids_s, sh.top_k, xs, sh.outer, sh.inner) }
    end
  end
  g.ref, g.absdot = refs.w[1], refs.w[2]
  -- what a kernel that rounds x needs for its bound (rounded_absdot), without holding the stacks
  g.remake = { nblocks = nblocks, seeds = seeds, ids = ids_s, xs = xs }
  if refs.up then
    g.up_ref, g.up_absdot = refs.up[1], refs.up[2]
    g.fused_ref, g.fused_scale = ref.swiglu(refs.w[1], refs.w[2], refs.up[1], refs.up[2])
  end
  g.x = F:buffer(#xs)
  g.x:upload(xs)
  g.ids = F:buffer(#ids_s)
  g.ids:upload(ids_s)
  -- one float past the outputs of max_m tokens: a kernel writing past them is caught (mb.check)
  g.y = F:buffer(4 * pairs_ * sh.n + 4)
  dev:sync()
  return g
end

-- group(cell, cells) -> the projection's group (build), made on first use.
function Fixture:group(cell, cells)
  local g = self.groups[cell.projection]
  if not g then
    g = build(self, cell.shape, cell.ids, cell.max_m, copies_needed(cells, cell.projection, self.o.copies))
    self.groups[cell.projection] = g
  end
  return g
end

-- case(dev, shape, ids, m) -> F, g: a fixture holding one copy of each stack
-- the shape's variants read, for pairs of m tokens routed by ids (tests and
-- tools: mb.check(dev, g, variant, m') for any m' <= m). Close F.
function mb.case(dev, shape, ids, m)
  local F = mb.fixture(dev, {})
  local ok, g = pcall(build, F, shape, ids, m, { w = 1, up = shape.projection == "gate_up" and 1 or 0 })
  if not ok then F:close(); error(g, 0) end
  if g.skip then F:close(); error("moe_bench.case: the shape is skipped: " .. g.skip, 2) end
  return F, g
end

-- The buffers of copy i (1-based) of a group's stacks.
local function bufs_of(g, i)
  return { w = g.stacks.w[i], up = g.stacks.up and g.stacks.up[i], x = g.x, ids = g.ids, y = g.y }
end

-- Runs a variant's step once on copy 1 and returns its outputs (m pairs).
local function run_once(dev, g, variant, m, specs)
  local bytes = 4 * m * g.shape.top_k * g.shape.n
  g.y:fill("\xff") -- NaN: an output a kernel did not write cannot pass
  for _, l in ipairs(moe.launches(dev, variant, g.shape, m, bufs_of(g, 1), specs)) do l[1]:launch(table.unpack(l, 2)) end
  local all = g.y:download()
  if all:sub(bytes + 1) ~= string.rep("\xff", #all - bytes) then
    error(("moe_bench: the %s %s kernel wrote past the outputs of m=%d (%s); nothing was timed")
      :format(dev.backend, variant, m, g.shape.projection), 0)
  end
  return all:sub(1, bytes)
end

-- The bound of a kernel that rounds x to int16 per B values (spec.x_rounding,
-- the Vulkan grouped shader's integer path), as gemv_bench.x_rounding_term
-- gives the GEMV's: s_b = amax_b / 32767, |x_i - s_b xq_i| <= s_b (1/2 + 2^-6),
-- so each output may move by sum_i |w_i| e_i more, e_i = s_b(i) (1/2 + 2^-6):
-- the FP64 reference's absdot for x = e, computed once per group, B and
-- stack role ("w", or "up": the fused shader's second stack; the weights
-- regenerated from their seed), added to that stack's absdot in units of TOL.
local function rounded_absdot(g, B, role)
  role = role or "w"
  g.rounded = g.rounded or {}
  local key = role .. B
  if g.rounded[key] then return g.rounded[key] end
  local sh, rm = g.shape, g.remake
  local absdot = role == "up" and g.up_absdot or g.absdot
  local e = require("gpubench.gemv_bench").x_rounding_errors(rm.xs, B) -- rows of k, a multiple of 256
  local data = ref.random_blocks("q4_k", rm.nblocks, rm.seeds[role])
  local _, term = ref.moe_gemv("q4_k", data, sh.experts, sh.n, sh.k, rm.ids, sh.top_k, e, sh.outer, sh.inner)
  local out, count, slice = {}, #absdot // 8, 4096
  for i = 0, count - 1, slice do
    local c = math.min(slice, count - i)
    local fmt = "<" .. ("d"):rep(c)
    local a, t = { string.unpack(fmt, absdot, 8 * i + 1) }, { string.unpack(fmt, term, 8 * i + 1) }
    for j = 1, c do a[j] = a[j] + t[j] / mb.TOL end
    out[#out + 1] = string.pack(fmt, table.unpack(a, 1, c))
  end
  g.rounded[key] = table.concat(out)
  return g.rounded[key]
end

-- check(dev, g, variant, m [, specs]) -> {worst_rel, worst_pair, worst_row,
-- bit_exact}: the step's outputs against the FP64 reference (and, for
-- batched, against per_token's, bit for bit); an error naming the variant,
-- m and the worst output when either fails.
function mb.check(dev, g, variant, m, specs)
  local sh = g.shape
  local count = m * sh.top_k * sh.n
  local y = run_once(dev, g, variant, m, specs)
  local r, a = g.ref, g.absdot
  local B = moe.spec(dev, variant, sh, m, specs).x_rounding
  if variant == "fused_gate_up" then
    r, a = g.fused_ref, g.fused_scale
    -- the SwiGLU bound over both stacks' absdots, each with what x's rounding moves
    if B then a = select(2, ref.swiglu(g.ref, rounded_absdot(g, B, "w"), g.up_ref, rounded_absdot(g, B, "up"))) end
  elseif B then
    a = rounded_absdot(g, B)
  end
  local ok, worst, rel, failures = ref.check_rows_f64(y, r:sub(1, 8 * count), a:sub(1, 8 * count), mb.TOL)
  if not ok then
    error(("moe_bench: the %s %s kernel is wrong at m=%d (%s): %d output(s) beyond %g, worst pair %d row %d "
      .. "(relative error %g); nothing was timed"):format(dev.backend, variant, m, sh.projection, failures, mb.TOL,
      (worst - 1) // sh.n, (worst - 1) % sh.n, rel), 0)
  end
  local c = { worst_rel = rel, worst_pair = (worst - 1) // sh.n, worst_row = (worst - 1) % sh.n }
  if variant == "batched" then
    local pt = run_once(dev, g, "per_token", m, specs)
    c.bit_exact = pt == y
    if not c.bit_exact then
      local first
      for i = 1, count do
        if pt:sub(4 * i - 3, 4 * i) ~= y:sub(4 * i - 3, 4 * i) then first = i; break end
      end
      error(("moe_bench: the %s batched and per_token kernels differ at m=%d (%s), first at pair %d row %d; "
        .. "nothing was timed"):format(dev.backend, m, sh.projection, (first - 1) // sh.n, (first - 1) % sh.n), 0)
    end
  end
  return c
end

-- prepare(F, cell, cells) -> a bench cell with the cell's fields, or
-- {skip = why}. Checks the variant first (mb.check).
function Fixture:prepare(cell, cells, specs)
  local g = self:group(cell, cells)
  if g.skip then return { skip = g.skip } end
  local dev, sh = self.dev, g.shape
  local check = mb.check(dev, g, cell.variant, cell.m, specs)
  local copies = cell.regime == "cold" and self.o.copies(cell) or 1
  local sets = {}
  for i = 1, copies do sets[i] = moe.launches(dev, cell.variant, sh, cell.m, bufs_of(g, i), specs) end
  local io_bytes = 4 * moe.x_floats(sh, cell.m) + 4 * cell.pairs * sh.n
  local p = bench.cell(dev, {
    sets = sets, set_bytes = cell.unique_bytes,
    rotation = copies > 1 and { l2_bytes = self.o.l2_bytes } or nil,
    working_set = copies * cell.unique_bytes + io_bytes,
  })
  p.check, p.copies, p.io_bytes = check, copies, io_bytes
  return p
end

function Fixture:close()
  for _, b in ipairs(self.buffers) do b:free() end
  self.buffers, self.groups = {}, {}
  moe.release(self.dev)
end
Fixture.__close = Fixture.close

-- ------------------------------------------------------------ rows

-- row(cell, p, d, o) -> the table row of a timed cell: d as Cell:time (or
-- {ms =} from Cell:cold) returns it; o.read_gbs, o.l2_bytes, o.flushed (one
-- step per sample after an L2 flush: the cold regime without copies), o.defines
-- (the kernel defines the step ran, recorded in the row).
function mb.row(cell, p, d, o)
  local r = {
    variant = cell.variant, projection = cell.projection, regime = cell.regime, m = cell.m, pairs = cell.pairs,
    dispatches = cell.dispatches, unique = cell.unique, unique_bytes = cell.unique_bytes,
    status = d.ms and "ok" or "noise",
  }
  if p.skip then
    r.status, r.note = "skipped", p.skip
    return r
  end
  r.copies, r.max_rel_err, r.bit_exact, r.defines = p.copies, p.check.worst_rel, p.check.bit_exact, o.defines
  if cell.regime == "cold" then
    r.fits = o.flushed and "cold (flush)" or ("cold x" .. p.copies)
  else
    r.fits = "l2 (" .. ceilings.regime(cell.unique_bytes + p.io_bytes, o.l2_bytes) .. ")"
  end
  if d.ms then
    r.us_step = d.ms * 1e3
    r.us_pair = r.us_step / cell.pairs
    r.gbs = ceilings.gbs(cell.unique_bytes, d.ms)
    r.pct_read = ceilings.pct(r.gbs, o.read_gbs)
  end
  if o.read_gbs then
    r.floor_us = cell.unique_bytes / (o.read_gbs * 1e3)
    if r.us_step then r.x_floor = r.us_step / r.floor_us end
  end
  local peer = mb.PEER
  if cell.regime == "l2" and cell.shape.config == peer.config and cell.projection == peer.projection
      and peer.us[cell.m] and r.us_step then
    r.vs_peer = r.us_step / peer.us[cell.m]
  end
  return r
end

-- peer_rows(cells) -> llama.cpp's figures as rows (status "peer") for a table
-- that has l2 cells of the peer's geometry at the peer's m.
function mb.peer_rows(cells)
  local peer, have = mb.PEER, {}
  for _, c in ipairs(cells) do
    if c.regime == "l2" and c.shape.config == peer.config and c.projection == peer.projection and peer.us[c.m] then
      have[c.m] = c
    end
  end
  local rows = {}
  for m, c in pairs(have) do
    local us = peer.us[m]
    rows[#rows + 1] = { variant = peer.name, projection = c.projection, regime = "l2", m = m, pairs = c.pairs,
                        dispatches = 1, us_step = us, us_pair = us / c.pairs, fits = "L2 (peer)", status = "peer",
                        note = "measured outside gpubench (issue 15)" }
  end
  table.sort(rows, function(a, b) return a.m < b.m end)
  return rows
end

-- scaling_sink(sink) -> a sink that adds scaling_vs_m1 (us per pair at m over
-- us per pair at m = 1 of the same variant, projection and regime) to each
-- row, holding a row back only until its m = 1 row has come (in forward order
-- it always has); finish() adds what is left (no m = 1 row: no scaling).
function mb.scaling_sink(sink)
  local base, held = {}, {} -- held: rows waiting for their m = 1 row, in arrival order
  local function key(r) return r.variant .. "|" .. tostring(r.projection) .. "|" .. tostring(r.regime) end
  local a = {}
  local function emit(r)
    local b = base[key(r)]
    if b and r.us_pair then r.scaling_vs_m1 = r.us_pair / b end
    sink:add(r)
  end
  function a:add(r)
    local k = key(r)
    if r.m == 1 then
      base[k] = r.us_pair or false
      emit(r)
      local rest = {}
      for _, h in ipairs(held) do
        if key(h) == k then emit(h) else rest[#rest + 1] = h end
      end
      held = rest
    elseif base[k] ~= nil then
      emit(r)
    else
      held[#held + 1] = r
    end
  end
  function a:finish()
    for _, r in ipairs(held) do sink:add(r) end
    held = {}
  end
  return a
end

return mb
