-- gpubench.gemv_bench: one GEMV table cell -- random valid weights, the
-- kernel checked against the FP64 oracle, optional rotation out of L2 --
-- as a bench cell (gpubench.bench), which times it.
--
-- Why: cera's wgpu_gemv_bench timed kernels on synthetic bytes whose output
-- nobody checked, so a kernel that skipped work would have looked fast, and
-- its weights sat in L2 between launches at the small shapes. Here every
-- cell runs on random valid blocks (docs/FORMATS.md), its first launch is
-- compared with the oracle before anything is timed, and with rotation the
-- calls cycle through weight copies totalling at least 4x L2.
--
--   local cell <close> = gemv_bench.prepare(dev, "q4_k", 14336, 5120, {rotate = true})
--   cell:arm(200); local d = cell:time(200)      -- gpubench.bench's Cell
--   cell.weight_bytes, cell.copies, cell.working_set, cell.check (the oracle's verdict)
--   gemv_bench.prepare(dev, "q4_k", 2816, 1024, {tokens = 4})  -- y[4,m] = x[4,k] . W^T

local bench = require "gpubench.bench"
local gemv = require "gpubench.gemv"
local ref = require "gpubench.ref"

local gemv_bench = {}

-- The per-row criterion of the correctness check: |y - y_ref| <= TOL * sum |w x|.
gemv_bench.TOL = 1e-4

-- x_rounding_term(fmt, w, m, k, xstr, B, tol) -> per row, the part of the
-- bound that a kernel with spec.x_rounding = B takes (x quantized to int16
-- per B-block: s_b = amax_b / 32767, |x_i - s_b xq_i| <= s_b / 2): the sum
-- over blocks of sum_i |w_i| s_b / 2, with a margin of 2^-6 of s_b for the
-- fp32 quotient x_i / s_b (its error is at most 32767 * a few ulp, about 0.01
-- of a unit). Computed as the FP64 oracle's sum |w e| for e_i = s_b(i)
-- (1/2 + 2^-6) >= 0, divided by tol so that it adds to absdot in
-- ref.check_rows. It bounds every kernel that computes sum_i w_i s_b xq_i
-- with w_i the whole dequantized weight: q8_0 (d q), q6_k (d sc (q - 32), the
-- -32 in signed codes), q4_0 (d (q - 8), the -8
-- through the block's sum of xq) and q4_k (d sc q - dmin m per sub-block, a
-- 32-block of x): q4_k's kernel takes dmin m times the quantized sum s_b sum
-- xq, not x's float sum, so the min meets the same rounded x and the term is
-- this one (with the float sum it would be sum_i |d sc q_i| e_i, larger
-- where the min cancels the scale term). docs/kernels/vulkan-gemv.md,
-- "Integer path".
function gemv_bench.x_rounding_term(fmt, w, m, k, xstr, B, tol)
  local _, term = ref.gemv(fmt, w, m, k, gemv_bench.x_rounding_errors(xstr, B))
  for r = 1, m do term[r] = term[r] / tol end
  return term
end

-- x_rounding_errors(xstr, B) -> an f32 string: for each value of xstr (f32)
-- the most int16 quantization per block of B values (from the first) moves
-- it, e_i = s_b (1/2 + 2^-6), s_b = amax_b / 32767 (x_rounding_term's e;
-- also gpubench.moe_bench's, over all rows of x at once: rows of a multiple
-- of B values keep the blocks inside rows).
function gemv_bench.x_rounding_errors(xstr, B)
  local n, e = #xstr // 4, {}
  for b0 = 0, n - 1, B do
    local c = math.min(B, n - b0)
    local v = { string.unpack("<" .. ("f"):rep(c), xstr, 4 * b0 + 1) } -- v[c + 1]: the next position
    local amax = 0.0
    for i = 1, c do amax = math.max(amax, math.abs(v[i])) end
    e[#e + 1] = string.pack("<f", amax / 32767 * (0.5 + 2.0 ^ -6)):rep(c)
  end
  return table.concat(e)
end

-- rounded_bound(fmt, w, m, k, xstr, absdot, B) -> absdot itself where B is
-- nil (a float kernel), else a new table: absdot plus x_rounding_term for a
-- kernel with spec.x_rounding = B, at the check's TOL.
function gemv_bench.rounded_bound(fmt, w, m, k, xstr, absdot, B)
  if not B then return absdot end
  local term, bound = gemv_bench.x_rounding_term(fmt, w, m, k, xstr, B, gemv_bench.TOL), {}
  for i = 1, m do bound[i] = absdot[i] + term[i] end
  return bound
end

-- check(fmt, weights, m, k, xs, ys, tokens, refs, x_rounding) -> {ok,
-- worst_row, worst_rel, failures, worst_token}: ys (tokens * m f32,
-- token-major) against the FP64 oracle on each token's row of xs (tokens * k
-- f32), per row |y - y_ref| <= TOL * sum |w x|, plus x_rounding_term where
-- the kernel rounds x (x_rounding, its spec's). failures counts over every
-- token; worst_row and worst_rel are those of the worst token (worst_token,
-- 1-based). refs (optional): a table that keeps each token's oracle (refs[t]
-- = {y, absdot}) for the next check of the same weights and x.
function gemv_bench.check(fmt, weights, m, k, xs, ys, tokens, refs, x_rounding)
  tokens = tokens or 1
  if #xs ~= 4 * k * tokens or #ys ~= 4 * m * tokens then
    error(("gemv_bench.check: %d tokens of m=%d k=%d need %d bytes of x and %d of y, got %d and %d")
      :format(tokens, m, k, 4 * k * tokens, 4 * m * tokens, #xs, #ys), 2)
  end
  local c = { ok = true, failures = 0, worst_rel = -1 }
  if tokens > 1 and not (refs and refs[1]) then -- every row of x against one decode of the weights
    local all = ref.gemv_tokens(fmt, weights, m, k, xs, tokens)
    refs = refs or {}
    for t = 1, tokens do refs[t] = all[t] end
  end
  for t = 0, tokens - 1 do
    local xt = tokens == 1 and xs or xs:sub(4 * k * t + 1, 4 * k * (t + 1))
    local yt = tokens == 1 and ys or ys:sub(4 * m * t + 1, 4 * m * (t + 1))
    local r = refs and refs[t + 1]
    if not r then
      r = { ref.gemv(fmt, weights, m, k, xt) }
      if refs then refs[t + 1] = r end
    end
    -- a copy where x is rounded: refs keeps the float kernels' bound
    local y, absdot = r[1], gemv_bench.rounded_bound(fmt, weights, m, k, xt, r[2], x_rounding)
    local ok, worst_row, worst_rel, failures = ref.check_rows(yt, y, absdot, gemv_bench.TOL)
    c.ok = c.ok and ok
    c.failures = c.failures + failures
    -- not (a <= b) rather than a > b: a NaN relative error must win
    if t == 0 or not (worst_rel <= c.worst_rel) then
      c.worst_row, c.worst_rel, c.worst_token = worst_row, worst_rel, t + 1
    end
  end
  return c
end

-- Fails with the format, shape and worst row when the kernel's output on
-- these weights is not the oracle's (for every token).
local function verify(dev, fmt, m, k, tokens, weights, xs, wbuf, xbuf, ybuf, spec, refs)
  local ls = gemv.launches(dev, fmt, wbuf, xbuf, ybuf, m, k, tokens, spec)
  ybuf:fill("\xff") -- NaN: an unwritten row cannot pass
  for _, l in ipairs(ls) do l[1]:launch(table.unpack(l, 2)) end
  local ys = ybuf:download(0, 4 * m * tokens)
  local c = gemv_bench.check(fmt, weights, m, k, xs, ys, tokens, refs, spec.x_rounding)
  local check = { ok = c.ok, worst_row = c.worst_row, worst_rel = c.worst_rel, failures = c.failures }
  if tokens > 1 then check.worst_token = c.worst_token end
  if not c.ok then
    local where = tokens > 1 and (" tokens=%d"):format(tokens) or ""
    local row = tokens > 1 and ("token %d row %d"):format(c.worst_token, c.worst_row) or ("row %d"):format(c.worst_row)
    error(("gemv_bench: the %s %s kernel is wrong at m=%d k=%d%s: %d row(s) beyond %g of sum|w*x|, "
      .. "worst %s (relative error %g); nothing was timed")
      :format(dev.backend, fmt, m, k, where, c.failures, gemv_bench.TOL, row, c.worst_rel), 0)
  end
  return check
end

-- The data and oracle of the last prepare: a sweep (gemv_variants) prepares
-- many variants of one format and shape in a row, and generating the
-- weights and their FP64 oracle is most of a large cell's preparation.
local last = {}

local function data_of(fmt, m, k, tokens, seed, nblocks)
  if not (last.fmt == fmt and last.m == m and last.k == k and last.tokens == tokens and last.seed == seed) then
    last = {} -- the old strings are garbage before the new ones are made
    last = { fmt = fmt, m = m, k = k, tokens = tokens, seed = seed, refs = {},
             weights = ref.random_blocks(fmt, nblocks, seed), xs = ref.random_f32(k * tokens, seed + 1) }
  end
  return last.weights, last.xs, last.refs
end

-- prepare(dev, fmt, m, k, opts) -> a bench cell with the GEMV's fields
-- opts.seed (default 1): the weights' and x's seed.
-- opts.rotate: cycle through weight copies totalling >= opts.factor (4) x L2.
-- opts.l2_bytes: overrides dev.l2_bytes (rotation needs a known L2).
-- opts.spec: a kernel variant's launch geometry (default: the backend's table).
-- opts.tokens (1..8, default the spec's GEMV_TOKENS, else 1): rows of x and y;
-- the weights are the same, x is tokens * k random values (seed + 1).
-- opts.round_bytes: every weight buffer's size rounded up to a multiple of
-- this (tools/placement_probe.lua: does a 2 MiB-sized buffer run differently?).
function gemv_bench.prepare(dev, fmt, m, k, opts)
  opts = opts or {}
  local seed = opts.seed or 1
  local tokens = opts.tokens
  if tokens == nil and opts.spec then tokens = opts.spec.defines and opts.spec.defines.GEMV_TOKENS end
  tokens = tokens or 1
  if math.type(tokens) ~= "integer" or tokens < 1 or tokens > gemv.MAX_TOKENS then
    error(("gemv_bench.prepare: tokens must be an integer in 1..%d, got %s"):format(gemv.MAX_TOKENS, tostring(tokens)), 2)
  end
  local weight_bytes = gemv.weight_bytes(fmt, m, k)
  local buf_bytes = gemv.buffer_bytes(fmt, m, k)
  if opts.round_bytes then buf_bytes = (buf_bytes + opts.round_bytes - 1) // opts.round_bytes * opts.round_bytes end
  local nblocks = weight_bytes // ref.formats[fmt].block_bytes
  local buffers = {}
  local function buffer(bytes)
    local b = dev:buffer(bytes)
    buffers[#buffers + 1] = b
    return b
  end
  local ok, cell = pcall(function()
    local weights, xs, refs = data_of(fmt, m, k, tokens, seed, nblocks)
    local w, x, y = buffer(buf_bytes), buffer(4 * k * tokens), buffer(4 * m * tokens)
    w:fill(0) -- defined slack past the last block (word-reading kernels touch it)
    w:upload(weights)
    x:upload(xs)
    local spec = opts.spec or gemv.spec_for(dev, fmt, m, k, tokens)
    local check = verify(dev, fmt, m, k, tokens, weights, xs, w, x, y, spec, refs)
    local function call(wi) return gemv.launches(dev, fmt, wi, x, y, m, k, tokens, spec) end
    local prep_bytes = spec.prep and spec.prep.bytes(k) or 0
    local first = call(w)
    local sets = { first }
    if opts.rotate then
      sets = bench.rotation_sets(buf_bytes, opts.l2_bytes or dev.l2_bytes, function(i)
        if i == 1 then return first end
        local c = buffer(buf_bytes)
        c:copy_from(w)
        return call(c)
      end, opts.factor)
    end
    local c = bench.cell(dev, {
      sets = sets, set_bytes = buf_bytes, buffers = buffers,
      rotation = opts.rotate and { l2_bytes = opts.l2_bytes or dev.l2_bytes, factor = opts.factor } or nil,
      -- what stays resident between calls: every weight copy, x, y and a first launch's workspace (x's digits)
      working_set = #sets * buf_bytes + 4 * k * tokens + 4 * m * tokens + prep_bytes,
    })
    c.fmt, c.m, c.k, c.weight_bytes, c.check, c.tokens = fmt, m, k, weight_bytes, check, tokens
    c.launches_per_call = #first -- 2 where the kernel quantizes x in a first launch (XPRE)
    return c
  end)
  if not ok then
    for _, b in ipairs(buffers) do b:free() end
    error(cell, 0)
  end
  return cell
end

-- row(p, d, iters, o) -> the table row of a timed cell: d and iters as
-- Cell:time returns them; o.peak_gbs and o.read_gbs (either may be nil: no
-- percentage), o.rotate and o.l2_bytes for the `fits` label. Status "noise"
-- (and no numbers) where the time did not resolve.
function gemv_bench.row(p, d, iters, o)
  local ceilings = require "gpubench.ceilings"
  local gbs = ceilings.gbs(p.weight_bytes, d.ms)
  return {
    kernel = p.fmt, m = p.m, k = p.k, status = d.ms and "ok" or "noise",
    ms = d.ms, gbs = gbs, pct_peak = ceilings.pct(gbs, o.peak_gbs), pct_read = ceilings.pct(gbs, o.read_gbs),
    fits = o.rotate and ("DRAM x" .. p.copies) or ceilings.regime(p.working_set, o.l2_bytes),
    tokens = p.tokens,
    weight_bytes = p.weight_bytes, -- W, every token's x and y once:
    model_bytes = p.weight_bytes + (4 * p.k + 4 * p.m) * (p.tokens or 1),
    iters = iters, copies = p.copies,
    t_n = d.t_n, t_2n = d.t_2n, samples = { d.t_n, d.t_2n }, -- the fastest runner's median repeat
    repeats = d.repeats, runners = d.runners,
    max_rel_err = p.check.worst_rel,
    launches = p.launches_per_call, -- per call, all timed (2 where x is quantized in a first launch)
  }
end

-- prepare_or_skip(dev, fmt, m, k, opts) -> prepare's cell, or {skip =
-- reason} when the weights exceed the device's largest buffer (a table
-- shows the cell as n/a instead of stopping).
function gemv_bench.prepare_or_skip(dev, fmt, m, k, opts)
  local need = gemv.buffer_bytes(fmt, m, k)
  if (dev.max_buffer_bytes or 0) > 0 and need > dev.max_buffer_bytes then
    return { skip = ("%d-byte weights exceed the device's largest buffer"):format(need), fmt = fmt, m = m, k = k }
  end
  return gemv_bench.prepare(dev, fmt, m, k, opts)
end

-- measure(p, iters, timing_opts, o) -> the row of a prepared cell (see row),
-- timed with Cell:time(iters, timing_opts), or cold (Cell:cold) when
-- timing_opts.method == "cold"; a "skipped" row for a skipped one.
function gemv_bench.measure(p, iters, timing_opts, o)
  if p.skip then
    return { kernel = p.fmt, m = p.m, k = p.k, status = "skipped", note = p.skip }
  end
  if timing_opts.method == "cold" then
    local c = p:cold { flush = timing_opts.flush, rule = timing_opts.rule }
    local row = gemv_bench.row(p, { ms = c.ms }, 1, o)
    row.status = c.converged and "ok" or "not_converged"
    row.samples, row.summary, row.noise, row.n = c.samples, c.summary, c.noise, c.n
    row.min_ms, row.p95_ms, row.fixed_us = c.summary.min, c.summary.p95, c.fixed_ms * 1e3
    row.held, row.flush, row.fixed_samples = c.held, c.flush, c.fixed_samples
    row.t_n, row.t_2n, row.iters = nil, nil, nil
    return row
  end
  local d, n = p:time(iters, timing_opts)
  local row = gemv_bench.row(p, d, n, o)
  if d.converged == false and row.status == "ok" then row.status = "not_converged" end
  row.timings = d.timings
  return row
end

-- variant_notes(backend, cells [, tokens]) -> a footnote for every cell
-- ({fmt, m, k, label}) whose shape runs another variant of its kernel than the
-- default (gemv.shape_variant), and at tokens > 1 for every format whose T-row
-- rule picks another kernel (gemv.token_variant), so the table says which
-- kernel each number is. With dev, cells whose kernel dev's rule picks
-- (gemv.device_spec) get none: device_notes names theirs.
-- What a note adds for a kernel with a first launch (x quantized once per call).
local TWO_LAUNCHES = "; two launches a call, x quantized in the first, both timed"

function gemv_bench.variant_notes(backend, list, tokens, dev)
  local notes, said = {}, {}
  for _, c in ipairs(list) do
    if dev and gemv.device_spec(dev, c.fmt, c.m, c.k, tokens) then goto next_cell end
    local changed = gemv.shape_variant(backend, c.fmt, c.m, c.k, tokens)
    if changed then
      notes[#notes + 1] = ("* %s: the kernel with %s, the variant this shape measured faster with (gemv_%s.for_shape)")
        :format(c.label, changed, backend)
    end
    local by_t = gemv.token_variant(backend, c.fmt, tokens)
    if by_t and not said[c.fmt] then
      said[c.fmt] = true
      notes[#notes + 1] = ("* %s at T=%d: the kernel with %s, the variant that measured faster at this T (gemv_%s.token_changes)%s")
        :format(c.fmt, tokens, by_t, backend, gemv.spec(backend, c.fmt, c.m, c.k, tokens).prep and TWO_LAUNCHES or "")
    end
    ::next_cell::
  end
  return notes
end

-- device_notes(dev, cells [, tokens]) -> a footnote for every cell whose
-- kernel the device's rule picks (gemv.spec_for: Vulkan's integer-dot
-- kernels where the device has the feature), naming its defines.
function gemv_bench.device_notes(dev, list, tokens)
  local notes = {}
  local format_defines = require("gpubench.options").format_defines
  for _, c in ipairs(list) do
    local used = gemv.device_spec(dev, c.fmt, c.m, c.k, tokens)
    if used then
      notes[#notes + 1] = ("* %s: the kernel with %s, which this device's features select (gemv_%s.for_device)%s%s%s")
        :format(c.label, format_defines(used.defines or {}), dev.backend,
          used.x_rounding and (", x rounded to int16 per %d values"):format(used.x_rounding) or "",
          used.precision and (", " .. used.precision) or "", used.prep and TWO_LAUNCHES or "")
    end
  end
  return notes
end

-- The footnote naming the correctness check every timed cell passed.
function gemv_bench.check_note()
  return "* every kernel matched the FP64 oracle (per row |y - y_ref| <= "
    .. ("%g sum|w x|, plus the x-rounding term of a kernel that rounds x) on these weights before timing"):format(gemv_bench.TOL)
end

return gemv_bench
