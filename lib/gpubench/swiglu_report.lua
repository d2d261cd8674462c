-- gpubench.swiglu_report: the outputs of experiments/swiglu_ab.lua -- the
-- console table, one JSON document (--output) and the Markdown tables
-- (--markdown-output), from the rows gpubench.swiglu_bench measures.
--
-- Why: AstrAI's JSON kept every sample, p50/p90/p99, the launch count and
-- the error figures, which is what let its L2-resident headline be
-- re-measured; its Markdown then presented that L2 figure as if it were
-- DRAM bandwidth. So the JSON keeps everything here too, and every table
-- row says where its weights were read from: an L2-resident row's GB/s is
-- labelled L2 and never set against the DRAM read ceiling.

local report = require "gpubench.report"
local swiglu = require "gpubench.swiglu"

local R = {}

-- ------------------------------------------------------------ cells

-- The text of one path's cell: p50 in µs, or why there is none.
function R.path_text(p)
  if p.us then return ("%.2f"):format(p.us) end
  if p.status == "wrong" then return "wrong (not timed)" end
  if p.status == "n/a" then return "n/a" end
  return tostring(p.status)
end

-- "+3.2 % (1.032x)": the fused path against the best unfused one.
function R.vs_text(row)
  local v = row.vs_best_unfused
  if not v then return "-" end
  return ("%+.1f %% (%.3fx)"):format(100 * (v - 1), v)
end

-- Where a row's weights were read from, in words.
function R.weights_text(row)
  local size = report.format_bytes
  if row.regime == "rotated" then
    return ("DRAM: %d rotated copies of %s, %s >= 4x L2"):format(row.copies, size(row.weight_bytes),
      size(row.copies * row.weight_bytes))
  end
  if row.fits == "L2" then
    return ("L2-resident: one %s copy in a %s L2"):format(size(row.weight_bytes), size(row.l2_bytes))
  end
  if row.fits == "DRAM" then return ("DRAM: one %s copy, larger than L2"):format(size(row.weight_bytes)) end
  return ("one %s copy, L2 size unknown"):format(size(row.weight_bytes))
end

-- The fused path's GB/s, labelled L2 on an L2-resident row.
function R.gbs_text(row)
  local f = row.paths.fused
  if not f.gbs then return "-" end
  local v = (f.gbs >= 100 and "%.0f" or "%.3g"):format(f.gbs)
  if row.fits == "L2" then return v .. " (L2, not DRAM)" end
  return v
end

function R.pct_text(row)
  local f = row.paths.fused
  if f.pct_read then return ("%.1f"):format(f.pct_read) end
  if row.fits == "L2" and f.gbs then return "n/a (L2)" end
  return "-"
end

-- ------------------------------------------------------------ console

R.CONSOLE = {
  { key = "shape", width = 12 }, { key = "regime", width = 7 }, { key = "mode", width = 5 },
  { key = "m", title = "M", width = 2, align = "right" },
  { key = "vendor", title = "vendor (µs)", width = 12, align = "right" },
  { key = "chain", title = "chain (µs)", width = 11, align = "right" },
  { key = "fused", title = "fused (µs)", width = 11, align = "right" },
  { key = "vs", title = "vs best unfused", width = 16, align = "right" },
  { key = "gbs", title = "fused GB/s", width = 10, align = "right" },
  { key = "pct", title = "% read", width = 7, align = "right" },
  { key = "fits", width = 8 },
}

-- console_row(row) -> the row of text the console table prints.
function R.console_row(row)
  return {
    shape = row.shape, regime = row.regime, mode = row.mode, m = row.m, fits = row.fits,
    vendor = R.path_text(row.paths.vendor), chain = R.path_text(row.paths.chain),
    fused = R.path_text(row.paths.fused), vs = R.vs_text(row), gbs = R.gbs_text(row), pct = R.pct_text(row),
    status = row.status,
  }
end

-- ------------------------------------------------------------ JSON

-- document{env =, settings =, rows =, notes =, interrupted =} -> the JSON
-- document's table.
function R.document(o)
  local paths = {}
  for _, p in ipairs(swiglu.PATHS) do
    paths[p] = { launches_per_call = swiglu.LAUNCHES[p], what = swiglu.WHAT[p], h_rounded_to_bf16 = swiglu.ROUNDS_H[p] }
  end
  return {
    type = "swiglu_ab", version = 1, environment = o.env, settings = o.settings, paths = paths,
    groups = o.rows, notes = o.notes, interrupted = o.interrupted and true or false,
  }
end

-- ------------------------------------------------------------ Markdown

local COLUMNS = {
  { key = "m", title = "M", align = "right" },
  { key = "vendor", title = "vendor (µs)", align = "right" },
  { key = "chain", title = "chain (µs)", align = "right" },
  { key = "fused", title = "fused (µs)", align = "right" },
  { key = "vs", title = "vs best unfused", align = "right" },
  { key = "gbs", title = "fused GB/s", align = "right" },
  { key = "pct", title = "fused % of read ceiling", align = "right" },
  { key = "weights", title = "weights read from" },
}

-- The (shape, mode, regime) tables in the order their rows first appear.
local function tables_of(rows)
  local list, by = {}, {}
  for _, row in ipairs(rows) do
    local key = ("%s|%d|%d|%s|%s"):format(row.shape, row.n, row.k, row.mode, row.regime)
    local t = by[key]
    if not t then
      t = { first = row, rows = {} }
      by[key] = t
      list[#list + 1] = t
    end
    t.rows[#t.rows + 1] = row
  end
  return list
end

local function launches_line(row)
  local parts = {}
  for _, p in ipairs(swiglu.PATHS) do
    parts[#parts + 1] = ("%s %d%s"):format(p, row.paths[p].launches_per_call,
      row.paths[p].overlap and " (overlapped)" or "")
  end
  return "launches per call: " .. table.concat(parts, ", ")
end

-- markdown{title =, env_lines =, rows =, notes =, interrupted =} -> text: one
-- table per shape, mode and regime, then the notes.
function R.markdown(o)
  local out = {}
  if o.title then out[#out + 1] = "## " .. o.title .. "\n" end
  if o.env_lines and #o.env_lines > 0 then out[#out + 1] = table.concat(o.env_lines, "  \n") .. "\n" end
  for _, t in ipairs(tables_of(o.rows)) do
    local r = t.first
    local regime = r.regime == "rotated" and "rotated (DRAM)"
      or (r.fits == "L2" and "l2 (L2-resident)" or "l2 (one copy)")
    out[#out + 1] = ("### %s (N = %d, K = %d) · %s · %s\n"):format(r.shape, r.n, r.k, r.mode, regime)
    local md = {}
    for i, row in ipairs(t.rows) do
      md[i] = {
        m = tostring(row.m), vendor = R.path_text(row.paths.vendor), chain = R.path_text(row.paths.chain),
        fused = R.path_text(row.paths.fused), vs = R.vs_text(row), gbs = R.gbs_text(row), pct = R.pct_text(row),
        weights = R.weights_text(row), status = row.status,
      }
    end
    out[#out + 1] = report.markdown(COLUMNS, md)
    out[#out + 1] = launches_line(r) .. "\n"
  end
  if o.notes and #o.notes > 0 then out[#out + 1] = table.concat(o.notes, "\n") .. "\n" end
  if o.interrupted then
    out[#out + 1] = "**interrupted**: the run ended early; the rows above are the groups that finished.\n"
  end
  return table.concat(out, "\n")
end

-- notes(rows, settings) -> the footnotes: the method, the bytes, the
-- tolerance, and every path without a number and why.
function R.notes(rows, s)
  local notes = {
    ("* µs: the p50 of %d samples per path (%d trials in A-B-C-C-B-A order); a sample is the time per call "
      .. "(t(2n) - t(n)) / n, n = %d calls (at least one per weight copy), each after an L2 flush, %d warm-up "
      .. "calls and one untimed run of n; graph: each point one graph replay (CUDA) or pre-recorded command "
      .. "buffer (Vulkan); eager: the calls' launches queued from the host"):format(2 * s.trials, s.trials,
      s.iterations, s.warmup),
    "* fused GB/s = (weights + x + y bytes) / p50, 1 GB = 1e9 B; the unfused paths' h round trip is not counted",
    s.read_gbs and ("* %% of read ceiling: of %.1f GB/s (%s), rotated and DRAM rows only"):format(s.read_gbs,
      s.read_source or "given") or "* % of read ceiling: unknown read ceiling",
    "* vs best unfused: the faster of vendor and chain over fused (p50s); > 1 means fused is faster",
    "* correctness (before timing, per path and M): " .. require("gpubench.swiglu_check").TOLERANCE,
  }
  -- which geometry each shape's kernels ran (a shape rule or --geometry)
  local function text(g) return swiglu.geometry_text(g, " ") end
  if s.geometry then
    notes[#notes + 1] = ("* kernel geometry (--geometry), every shape: %s"):format(text(s.geometry))
  else
    for _, sg in ipairs(s.shape_geometries or {}) do
      if sg.rule then
        notes[#notes + 1] = ("* kernel geometry of %s (N=%d): %s, the table's shape rule (docs/kernels/swiglu.md)")
          :format(sg.name, sg.n, text(sg.geometry))
      end
      if sg.device then
        local ms = {}
        for _, m in ipairs(sg.device.m_values) do ms[#ms + 1] = tostring(m) end
        notes[#notes + 1] = ("* kernel geometry of %s (N=%d) at M=%s: %s, which this device's features select "
          .. "(swiglu_%s.for_device, docs/kernels/swiglu.md)"):format(sg.name, sg.n, table.concat(ms, ","),
          text(sg.device.geometry), sg.device.backend)
      end
    end
  end
  local seen = {}
  for _, row in ipairs(rows) do
    for _, p in ipairs(swiglu.PATHS) do
      local x = row.paths[p]
      if x.why then
        local line -- n/a holds for the run, wrong for a shape and M, noise for one group
        if x.status == "n/a" then line = ("* %s: %s"):format(p, x.why)
        elseif x.status == "wrong" then line = ("* %s, %s M=%d: %s"):format(p, row.shape, row.m, x.why)
        else line = ("* %s, %s M=%d %s %s: %s"):format(p, row.shape, row.m, row.mode, row.regime, x.why) end
        if not seen[line] then seen[line] = true; notes[#notes + 1] = line end
      end
    end
  end
  return notes
end

return R
