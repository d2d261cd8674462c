-- gpubench.gemv_bench: one GEMV benchmark cell on a device -- checked weights,
-- optional rotation out of L2, and the launches that time it.
--
-- Why: seed 000 timed kernels on synthetic bytes (0x30..0x37) whose output
-- nobody checked, so a kernel that skipped work would have looked fast; and
-- its weights sat in L2 between launches at the small shapes. Here every cell
-- runs on random valid blocks (FORMATS.md), its first launch is compared with
-- the FP64 oracle before anything is timed, and with rotation the launches
-- cycle through weight copies totalling at least 4x L2 (refused otherwise),
-- so DRAM, not L2, is what is measured.
--
--   local cell <close> = gemv_bench.prepare(dev, "q4_k", 14336, 5120, {rotate = true})
--   cell.launches  -- {{kernel, grid, block, w_i, x, y, m, k}, ...} for timing.runner
--   cell.weight_bytes, cell.copies, cell.working_set, cell.check (the oracle's verdict)

local gemv = require "gpubench.gemv"
local ref = require "gpubench.ref"
local timing = require "gpubench.timing"

local gemv_bench = {}

-- The per-row criterion of the correctness check: |y - y_ref| <= TOL * sum |w x|.
gemv_bench.TOL = 1e-4

-- Cell:time's runners (each its own graphs or command buffers) and two-point
-- timings per runner: the runner's time is the median of its timings, the
-- cell's the fastest runner's (timing.fastest_of). Why several runners: on
-- an H200 with the Vulkan driver, eight identical q4_k 2816 x 1024 cells,
-- each with its batches built once, timed 4.26 to 4.51 us, each the same in
-- every round and in either order; with the command buffers never reused they
-- varied from one timing to the next instead, and new weight, x and y buffers
-- changed nothing: a cell's time depended on where its command buffers
-- landed. Five runners per cell, one timing each, still left forward and
-- reversed tables 5.9 % apart on one cell (its runners: 4.38 or 4.68 us, the
-- median falling either way), 2.6 % apart by the fastest runner.
gemv_bench.RUNNERS = 5
gemv_bench.REPEATS = 3

-- Milliseconds of the cell's own launches, at least n of them, between the
-- L2 flush and the first timing (timing.settle).
gemv_bench.SETTLE_MS = 50

local Cell = {}
Cell.__index = Cell

-- The runners a timing with these options submits through (graph replay
-- unless opts.graph == false), made into rs (so that a failure part-way
-- leaves the ones made to close), and the key that says whether armed ones fit.
local function add_runners(rs, dev, launches, count, opts)
  for i = 1, count do
    rs[i] = timing.runner(dev, launches, { clock = opts.clock, graph = opts.graph ~= false })
  end
end

local function close_all(rs)
  for _, r in ipairs(rs) do r:close() end
end

local function runner_key(n, count, opts)
  return ("%d|%d|%s|%s"):format(n, count, tostring(opts.clock or "device"), tostring(opts.graph ~= false))
end

-- Times launches (default: the cell's own) as gemv_table does: through
-- opts.runners runners (gemv_bench.RUNNERS; graph replay unless opts.graph
-- == false; opts.clock as timing.runner), two-point with n = max(iters,
-- copies): a submission starts at the first weight copy, so fewer launches
-- would rotate through only n copies (perhaps inside L2). Each runner times
-- opts.repeats times (gemv_bench.REPEATS), its median kept; the cell's time
-- is the fastest runner's (timing.fastest_of). Returns its details (d.ms nil
-- when "noise"; d.repeats that runner's timings, d.runners every runner's
-- median) and n.
--
-- The L2 is flushed first (unless opts.flush == false) and the cell's own
-- launches, n at a time, warm it for opts.settle_ms (gemv_bench.SETTLE_MS)
-- before the first timing, so every timing starts from the same L2 state. Without it,
-- on an H200, a small L2-resident f16 cell ran 2.6 us after a large dense
-- GEMV (134 MB read) but 4.2-4.3 us, for hundreds of launches, after a
-- quantized one (71 MB) or after a flush: its time depended on what ran
-- before, and forward and reversed tables disagreed by up to 2x. With the
-- flush every order measures the flushed state (the slower one); the cause
-- inside the L2 is not known (docs/results/h200-gemv.md).
function Cell:time(iters, opts)
  opts = opts or {}
  local n = math.max(iters, self.copies)
  local count = opts.runners or gemv_bench.RUNNERS
  local reps = opts.repeats or gemv_bench.REPEATS
  local armed = not opts.launches and self.armed and self.armed.key == runner_key(n, count, opts)
  local rs = armed and self.armed.runners or {}
  local ok, d = pcall(function()
    if not armed then add_runners(rs, self.dev, opts.launches or self.launches, count, opts) end
    if opts.flush ~= false then self.dev:flush_l2() end
    -- warmed once, by the first runner: the runners follow each other
    timing.settle(rs[1]:fn(), n, opts.settle_ms or gemv_bench.SETTLE_MS)
    local ds = {}
    for i, r in ipairs(rs) do ds[i] = timing.two_point_median(r:fn(), n, reps) end
    return timing.fastest_of(ds)
  end)
  if not armed then close_all(rs) end
  if not ok then error(d, 0) end
  return d, n
end

-- Makes, now, what Cell:time(iters, opts) with the cell's own launches will
-- submit: its runners (opts.runners, default gemv_bench.RUNNERS) and their
-- batches (graph, command buffer) of n and 2n launches, each submitted once;
-- they are kept until the cell is closed or armed for another count. Why:
-- built inside a timed round, they were allocations inside it, made in the
-- round's order (forward, reversed), and allocations during timed rounds
-- have moved later cells on Vulkan (gemv_bench.ready). gemv_table and
-- gemv_variants arm every cell, in table order, before the first round.
function Cell:arm(iters, opts)
  opts = opts or {}
  local n = math.max(iters, self.copies)
  local count = opts.runners or gemv_bench.RUNNERS
  local key = runner_key(n, count, opts)
  if self.armed and self.armed.key == key then return end
  if self.armed then close_all(self.armed.runners); self.armed = nil end
  local rs = {}
  local ok, err = pcall(function()
    add_runners(rs, self.dev, self.launches, count, opts)
    for _, r in ipairs(rs) do r:batch(n); r:batch(2 * n) end
  end)
  if not ok then close_all(rs); error(err, 0) end
  self.armed = { key = key, runners = rs }
end

-- Call once every cell is prepared, before the first timed round: allocates
-- what Cell:time will use (the device's L2-flush buffer, made on first use)
-- and waits for the device, so that no allocation falls inside a timed round
-- (measured on the H200 with Vulkan: allocations during round 1 left the
-- first cells of round 2 2-4x slow).
function gemv_bench.ready(dev)
  dev:flush_l2()
  dev:sync()
end

function Cell:close()
  if self.closed then return end
  self.closed = true
  if self.armed then close_all(self.armed.runners); self.armed = nil end
  for _, b in ipairs(self.buffers) do b:free() end
  self.buffers = {}
end
Cell.__close = Cell.close

-- Fails with the format, shape and worst row when the kernel's output on
-- these weights is not the oracle's.
local function verify(dev, fmt, m, k, weights, xs, wbuf, xbuf, ybuf, spec)
  local kern, grid, block = gemv.launch_args(dev, fmt, wbuf, xbuf, ybuf, m, k, spec)
  ybuf:fill("\xff") -- NaN: an unwritten row cannot pass
  kern:launch(grid, block, wbuf, xbuf, ybuf, m, k)
  local ys = ybuf:download(0, 4 * m)
  local y, absdot = ref.gemv(fmt, weights, m, k, xs)
  local ok, worst_row, worst_rel, failures = ref.check_rows(ys, y, absdot, gemv_bench.TOL)
  local check = { ok = ok, worst_row = worst_row, worst_rel = worst_rel, failures = failures }
  if not ok then
    error(("gemv_bench: the %s %s kernel is wrong at m=%d k=%d: %d row(s) beyond %g of sum|w*x|, "
      .. "worst row %d (relative error %g); nothing was timed")
      :format(dev.backend, fmt, m, k, failures, gemv_bench.TOL, worst_row, worst_rel), 0)
  end
  return check
end

-- prepare(dev, fmt, m, k, opts) -> cell
-- opts.seed (default 1): the weights' and x's seed.
-- opts.rotate: cycle through weight copies totalling >= opts.factor (4) x L2.
-- opts.l2_bytes: overrides dev.l2_bytes (rotation needs a known L2).
-- opts.spec: a kernel variant's launch geometry (default: the backend's table).
-- opts.round_bytes: every weight buffer's size rounded up to a multiple of
-- this (tools/placement_probe.lua: does a 2 MiB-sized buffer run differently?).
function gemv_bench.prepare(dev, fmt, m, k, opts)
  opts = opts or {}
  local seed = opts.seed or 1
  local weight_bytes = gemv.weight_bytes(fmt, m, k)
  local buf_bytes = gemv.buffer_bytes(fmt, m, k)
  if opts.round_bytes then buf_bytes = (buf_bytes + opts.round_bytes - 1) // opts.round_bytes * opts.round_bytes end
  local nblocks = weight_bytes // ref.formats[fmt].block_bytes
  local self = setmetatable({ dev = dev, fmt = fmt, m = m, k = k, weight_bytes = weight_bytes,
                              buffers = {}, copies = 1 }, Cell)
  local function buffer(bytes)
    local b = dev:buffer(bytes)
    self.buffers[#self.buffers + 1] = b
    return b
  end
  local ok, err = pcall(function()
    local weights = ref.random_blocks(fmt, nblocks, seed)
    local xs = ref.random_f32(k, seed + 1)
    local w = buffer(buf_bytes)
    local x = buffer(4 * k)
    local y = buffer(4 * m)
    w:fill(0) -- defined slack past the last block (word-reading kernels touch it)
    w:upload(weights)
    x:upload(xs)
    self.check = verify(dev, fmt, m, k, weights, xs, w, x, y, opts.spec)
    local ws = { w }
    if opts.rotate then
      local l2 = opts.l2_bytes or dev.l2_bytes
      local copies = timing.rotation(buf_bytes, l2, opts.factor)
      if copies > timing.MAX_LAUNCHES then
        error(("gemv_bench: rotating %s m=%d k=%d through %d x L2 needs %d copies, more than the %d "
          .. "launches a batch can cycle through"):format(fmt, m, k, opts.factor or 4, copies,
          timing.MAX_LAUNCHES), 0)
      end
      for i = 2, copies do
        local c = buffer(buf_bytes)
        c:copy_from(w)
        ws[i] = c
      end
      self.copies = copies
    end
    local launches = {}
    for i, wi in ipairs(ws) do
      launches[i] = { gemv.launch_args(dev, fmt, wi, x, y, m, k, opts.spec) }
    end
    self.launches = launches
    -- What stays resident between launches: every weight copy, x and y.
    self.working_set = self.copies * buf_bytes + 4 * k + 4 * m
  end)
  if not ok then
    self:close()
    error(err, 0)
  end
  return self
end

return gemv_bench
