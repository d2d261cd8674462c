-- gpubench.gemv_vulkan: launch geometry of the Vulkan GEMV kernels (kernels/vulkan/gemv_*.comp).
--
-- Every kernel runs GEMV_WG = 256 invocations per workgroup (gemv_common.glsl's
-- default, repeated here as `block`; variant's GEMV_WG another), cut into lane groups of GEMV_T
-- lanes; a lane group computes GEMV_NR rows, so a workgroup computes
-- (256 / GEMV_T) * GEMV_NR rows: `rows_per_group`. gemv.lua launches
-- grid = {ceil(m / rows_per_group), 1, 1}. The defines are passed to the
-- compiler, and the shaders refuse to compile without them, so the numbers
-- below are the only copy of the geometry.
--
-- GEMV_T = 32 is one subgroup per lane group on NVIDIA (subgroup 32); 64
-- spreads a row over two. GEMV_NR rows share each chunk of x. GEMV_TOKENS
-- (1..8) is how many rows of x (tokens) each launch multiplies, every weight
-- decoded once for all of them: 1 in the table (y = W x), others through
-- variant (gemv.spec with tokens).
--
-- q8_0, q4_0 and q4_k also have an integer-dot-product kernel (GEMV_IDOT = 1,
-- kernels/vulkan/gemv_idot.glsl): x quantized to int16 per 32-block into
-- shared memory once per workgroup, packed 4x8-bit dots, workgroups looping
-- over row tiles (q4_k's for any GEMV_TOKENS). for_device(dev, fmt, m, k,
-- tokens) is the one place that picks it, and f16/bf16's tensor-core kernel
-- at T >= 5 (gemv.launch_args and gemv.run ask it); everything else keeps the
-- float kernels of this table.

local WG = 256

-- The shaders address the weights with 32-bit byte offsets (and read up to 4
-- bytes past the last block), so one matrix stays below 4 GiB.
local MAX_WEIGHT_BYTES = (1 << 32) - 64

local MAX_TOKENS = 8
local pick_token_rule = require "gpubench.token_rules"

-- wg: invocations per workgroup (default WG; another is passed to the shader as GEMV_WG)
local function entry(fmt, t, nr, tokens, wg)
  wg = wg or WG
  local e = {
    file = "kernels/vulkan/gemv_" .. fmt .. ".comp",
    entry = "main",
    block = { wg, 1, 1 },
    rows_per_group = (wg // t) * nr,
    defines = { GEMV_T = t, GEMV_NR = nr, GEMV_TOKENS = tokens or 1 },
    max_weight_bytes = MAX_WEIGHT_BYTES,
  }
  if wg ~= WG then e.defines.GEMV_WG = wg end
  return e
end

-- Defaults: the fastest of the experiments/gemv_variants.lua sweeps at
-- 14336x5120 with rotated weights (docs/kernels/vulkan-gemv.md, "Work
-- split"): one row per lane group for the dense formats, 64-lane groups of 4
-- rows for q4_0/q8_0/q4_k, 32 lanes and 2 rows for q5_k/q6_k.
local M = {
  f32 = entry("f32", 32, 1),
  f16 = entry("f16", 32, 1),
  bf16 = entry("bf16", 32, 1),
  q4_0 = entry("q4_0", 64, 4),
  q8_0 = entry("q8_0", 64, 4),
  q4_k = entry("q4_k", 64, 4),
  q5_k = entry("q5_k", 32, 2),
  q6_k = entry("q6_k", 32, 2),
}

-- ------------------------------------------------------------ integer path

-- Formats with an integer kernel, and the shared bytes one 32-block of x (of
-- one token) takes there, by GEMV_IDOT layout (gemv_idot.glsl): two byte
-- planes and the scale, plus q4_0's and q4_k's sum of xq. Layout 1: planes of
-- 8 words, the weights funnel-shifted (q4_k's are aligned: nothing to shift);
-- layout 2: x laid out like the raw weight words (q8_0 9 words, q4_0 10), no
-- funnel, for k a multiple of 64. q6_k's GEMV_IDOT=2 is another kernel on
-- layout 1: unsigned codes, the -32 through the sums of xq per 16-element
-- half (two more words a block).
local IDOT_BLOCK_BYTES = { q8_0 = { 68, 76 }, q4_0 = { 72, 88 }, q4_k = { 72 }, q5_k = { 72 }, q6_k = { 68, 76 } }
-- Where for_device takes GEMV_IDOT=2: q8_0 and q4_0's layout 2 where k fits
-- it ("layout"); q6_k's always, at any T (unsigned codes spare it the
-- per-code conversion of GEMV_IDOT=1: docs/kernels/vulkan-gemv.md, "q6_k").
local IDOT2_PICKED = { q8_0 = "layout", q4_0 = "layout", q6_k = "always" }
-- How the integer kernel of a format takes GEMV_TOKENS, x of every token in
-- shared memory, sliced per row tile where it does not fit: "any" (q4_k,
-- q5_k: one main loop at every T, x sliced at any T, for_device's pick at
-- every T) or "multi" (q8_0, q4_0: T = 1 keeps its single-token loop with x
-- whole; the T > 1 loop slices, layout 1 and one workgroup per row tile, as
-- timed: IDOT_MULTI_TOKENS). GEMV_XB must be a multiple of IDOT_XB_MULTIPLE
-- (q4_k, q5_k: whole super-blocks per slice of x; gemv_q4_k.comp).
local IDOT_TOKENS = { q4_k = "any", q5_k = "any", q6_k = "any", q8_0 = "multi", q4_0 = "multi" }
local IDOT_XB_MULTIPLE = { q4_k = 8, q5_k = 8, q6_k = 8 }
-- q8_0 and q4_0 at T > 1: the T-token integer loop in layout 1, one workgroup
-- per row tile (x is quantized per tile there anyway): the A/B's pick over the
-- float kernels and layout 2 (docs/kernels/vulkan-gemv.md, "q8_0 and q4_0 at T > 1").
local IDOT_MULTI_TOKENS = { mode = 1, cap = 0 }
-- Whether fmt's integer kernel of tokens rows slices x past GEMV_XB (no k limit).
local function idot_slices(fmt, tokens)
  return IDOT_TOKENS[fmt] == "any" or (IDOT_TOKENS[fmt] == "multi" and (tokens or 1) > 1)
end
-- Layout 2 needs an even number of blocks per row (rows a multiple of 4 bytes).
local IDOT2_K_MULTIPLE = 64
-- The integer kernels' geometry, {GEMV_T, GEMV_NR}, at T > 1 and where a
-- variant names none: the sweeps' picks (docs/kernels/vulkan-gemv.md,
-- "Geometry at T > 1", has what was swept and the figures). More rows per lane
-- group share each x load across the T tokens. q6_k takes {16, 8} at T = 3 and
-- 4 only (IDOT_FEW_TOKENS), where the same section shows it ahead.
local IDOT_GEOMETRY = { q8_0 = { 16, 8 }, q4_0 = { 16, 8 }, q4_k = { 8, 4 }, q5_k = { 8, 4 }, q6_k = { 8, 4 } }
local IDOT_FEW_TOKENS = { q6_k = { min_tokens = 3, max_tokens = 4, geometry = { 16, 8 } } }
-- At one token, by rows: below IDOT_TALL_ROWS and from it, the sweeps' picks
-- at 14336 and 131072 rows, k = 5120 (docs/kernels/vulkan-gemv.md, "Geometry
-- at one token"). Smaller row tiles where the rows are few (enough
-- workgroups), larger where they are many. q6_k's short tile: {16, 4} since its
-- GEMV_IDOT = 2 kernel's A/B of 2026-12-06 ("... at T < 8" in the same doc).
local IDOT_ONE_TOKEN = {
  q8_0 = { short = { 32, 8 }, tall = { 16, 8 } },
  q4_0 = { short = { 32, 8 }, tall = { 16, 8 } },
  q4_k = { short = { 8, 2 }, tall = { 8, 8 } },
  q5_k = { short = { 8, 2 }, tall = { 8, 2 } },
  q6_k = { short = { 16, 4 }, tall = { 16, 2 } },
}
local IDOT_TALL_ROWS = 65536

-- idot_geometry(fmt, m [, tokens]) -> {GEMV_T, GEMV_NR} of fmt's integer
-- kernel for m rows and tokens tokens (default 1), or nil without one.
function M.idot_geometry(fmt, m, tokens)
  local one = IDOT_ONE_TOKEN[fmt]
  if not one then return nil end
  tokens = tokens or 1
  if tokens == 1 and math.type(m) == "integer" then return m >= IDOT_TALL_ROWS and one.tall or one.short end
  local few = IDOT_FEW_TOKENS[fmt]
  if few and tokens >= few.min_tokens and tokens <= few.max_tokens then return few.geometry end
  return IDOT_GEOMETRY[fmt]
end
-- Blocks of x in shared memory are allotted in steps of 32 (k in steps of
-- 1024), so a sweep over k compiles a handful of kernels, not one per k.
local IDOT_XB_STEP = 32
-- Grid of the integer kernels: workgroups loop over row tiles (the x
-- quantization is paid once per workgroup). At most idot_per_sm(fmt, m)
-- workgroups per SM, or IDOT_GRID_UNKNOWN in all where the device does not
-- report its SMs; then evened out so that every workgroup takes the same
-- number of tiles. The cap, 2 per SM (8 for q8_0 from 65536 rows), is the
-- grid sweep's pick (docs/kernels/vulkan-gemv.md, "Integer path"). q4_k takes
-- q4_0's rule (the same bytes per weight, not yet swept).
-- q4_k's workgroups are not capped (one per row tile), its A/B's pick
-- (docs/kernels/vulkan-gemv.md, "q4_k").
local IDOT_UNCAPPED = { q4_k = true, q5_k = true, q6_k = true } -- q5_k, q6_k: q4_k's, not swept
local function idot_per_sm(fmt, m)
  if fmt == "q8_0" and (m or 0) >= 65536 then return 8 end
  return 2
end
local IDOT_GRID_UNKNOWN = 256
-- The 8 invocations that load a block find its amax with subgroup shuffles.
local IDOT_MIN_SUBGROUP = 8

M.IDOT_FORMATS = { "q8_0", "q4_0", "q4_k", "q5_k", "q6_k" }

-- Bytes of shared memory the integer kernel of fmt needs for xb blocks of x of
-- each of tokens rows: the blocks plus gemv_common's reduction array (one
-- float per invocation and row).
local function idot_shared(fmt, mode, xb, nr, tokens, wg)
  return xb * IDOT_BLOCK_BYTES[fmt][mode] * tokens + 4 * (wg or WG) * nr
end

-- The most blocks of x per token that fit max_shared bytes beside the
-- reduction array of nr rows (default: the integer geometry's), in fmt's
-- multiple (0: none fits).
local function idot_fit_xb(fmt, max_shared, mode, tokens, nr)
  local bytes = IDOT_BLOCK_BYTES[fmt] and IDOT_BLOCK_BYTES[fmt][mode or 1]
  if not bytes then return 0 end
  local step = IDOT_XB_MULTIPLE[fmt] or 1
  nr = nr or IDOT_GEOMETRY[fmt][2]
  local xb = ((max_shared or 0) - 4 * WG * nr) // (bytes * (tokens or 1))
  return xb > 0 and xb // step * step or 0
end

-- The largest k whose x (tokens rows, default 1) the integer kernel of fmt with
-- layout mode (default 1, which takes every k) and nr rows per lane group
-- (default IDOT_GEOMETRY's: the reduction array beside x) holds whole on a
-- device with max_shared bytes of shared memory per workgroup (0: none fits).
function M.idot_max_k(fmt, max_shared, mode, tokens, nr)
  return 32 * idot_fit_xb(fmt, max_shared, mode, tokens, nr)
end

-- Workgroups for m rows in tiles of rpg rows with at most cap workgroups
-- (cap 0: one per tile): every workgroup takes ceil(tiles / groups) tiles.
local function idot_grid(m, rpg, cap)
  local tiles = (m + rpg - 1) // rpg
  if cap == 0 or tiles <= cap then return { tiles, 1, 1 } end
  local per = (tiles + cap - 1) // cap
  return { (tiles + per - 1) // per, 1, 1 }
end

-- GEMV_XPRE = 1 (q4_k, q5_k: the k-quant loop, gemv_idot_kquant.glsl; q6_k's
-- loops, both layout 1; q8_0, q4_0: gemv_idot_blocks.glsl, layout 1 only): x
-- quantized once per call by a first dispatch (kernels/vulkan/gemv_idot_xprep.comp)
-- into a workspace of 80 bytes per block of 32 values and token (its record: 8
-- words of high bytes, 8 of low bytes, s_b, the sum of xq, the sums of its two
-- halves), which the kernel reads in x's place: no x in shared memory, no k
-- limit, no slices. A spec with `prep` (gemv.launches runs it first).
-- The value: the GEMV_IDOT modes whose loop reads the records (layout 1: q6_k's both).
local XPRE_FORMATS = { q4_k = { 1 }, q5_k = { 1 }, q6_k = { 1, 2 }, q8_0 = { 1 }, q4_0 = { 1 } }
-- Switches of the integer loops, 0 or 1: the formats that take each and the x path it needs.
-- GEMV_KHALF (the k-quant loop, gemv_idot_kquant.glsl): a lane's unit half a chunk, half the
-- registers a unit (x's records, GEMV_XPRE = 1); GEMV_KPF (that loop, q8_0/q4_0's in
-- gemv_idot_blocks.glsl and q6_k's): the first unit's weights loaded before the workgroup
-- quantizes x (x in shared memory, GEMV_XPRE = 0).
local LOOP_SWITCHES = {
  GEMV_KHALF = { xpre = 1, formats = { q4_k = true, q5_k = true } },
  GEMV_KPF = { xpre = 0, formats = { q4_k = true, q5_k = true, q8_0 = true, q4_0 = true, q6_k = true } },
}
local SWITCH_NAMES = { "GEMV_KHALF", "GEMV_KPF" } -- LOOP_SWITCHES' keys in a fixed order (messages, cache keys)
local function takes_switch(fmt, name) return LOOP_SWITCHES[name] ~= nil and LOOP_SWITCHES[name].formats[fmt] end
-- The integer kernel's defines, the loop switches last (what a cooperative-matrix variant refuses).
local INTEGER_DEFINES = { "GEMV_T", "GEMV_NR", "GEMV_WG", "GEMV_IDOT", "GEMV_XB", "GEMV_GRID", "GEMV_XPRE",
                          table.unpack(SWITCH_NAMES) }
-- ", NAME" for each switch fmt takes, in SWITCH_NAMES' order (variant's list of its defines).
local function switches_text(fmt)
  local out = {}
  for _, name in ipairs(SWITCH_NAMES) do
    if takes_switch(fmt, name) then out[#out + 1] = ", " .. name end
  end
  return table.concat(out)
end
-- Where for_device takes it, by T: a format's ranges are tried in order, the
-- first holding T applies ({GEMV_T, GEMV_NR}, and the GEMV_IDOT mode, 1 unless
-- named). Each range won a validated A/B against the table's kernel (x
-- quantized per workgroup) in both orders and at a second ITERS at the T it
-- names or at both ends of it; a T no range holds keeps x per workgroup
-- (docs/kernels/vulkan-gemv.md, "x quantized once per call" and "... at T < 8").
-- A range's switches (LOOP_SWITCHES) won their own A/B against the range's kernel
-- without them, both orders (the same doc, "Half chunks").
local XPRE_RULES = {
  q4_k = { { from = 2, to = 4, geometry = { 16, 4 }, switches = { GEMV_KHALF = 1 } },
           { from = 5, geometry = { 16, 8 } } },
  q5_k = { { from = 2, to = 3, geometry = { 8, 4 } }, { from = 4, to = 4, geometry = { 16, 4 }, switches = { GEMV_KHALF = 1 } },
           { from = 5, geometry = { 8, 4 } } },
  q8_0 = { { from = 2, geometry = { 16, 4 } } },
  q4_0 = { { from = 2, geometry = { 16, 4 } } },
  q6_k = { { from = 4, to = 4, geometry = { 16, 8 }, mode = 2 } },
}
-- The first range of rules (a list like XPRE_RULES') holding tokens, or nil.
local function rule_for(rules, tokens)
  for _, r in ipairs(rules or {}) do
    if tokens >= r.from and tokens <= (r.to or math.maxinteger) then return r end
  end
  return nil
end
local function xpre_rule(fmt, tokens) return rule_for(XPRE_RULES[fmt], tokens) end
-- Loop switches of the kernels with x per workgroup, by T, each the winner of a validated
-- A/B against the same kernel without it, both orders (docs/kernels/vulkan-gemv.md,
-- "Weights ahead of x's quantization"; it lost at T = 1 for every format it takes).
local SWITCH_RULES = {
  q6_k = { { from = 2, to = 2, switches = { GEMV_KPF = 1 } } },
}
local XPRE_BLOCK = 256
local xprep_specs = {} -- one table per T: gemv.kernel caches compiled kernels by spec table
local function xprep(tokens)
  local p = xprep_specs[tokens]
  if not p then
    local spec = { file = "kernels/vulkan/gemv_idot_xprep.comp", entry = "main", block = { XPRE_BLOCK, 1, 1 },
                   defines = { GEMV_TOKENS = tokens } }
    p = {
      spec = spec,
      -- 8 invocations per block of 32 values and token
      grid = function(k) return { (k // 32 * tokens * 8 + XPRE_BLOCK - 1) // XPRE_BLOCK, 1, 1 } end,
      bytes = function(k) return 80 * tokens * (k // 32) end,
    }
    xprep_specs[tokens] = p
  end
  return p
end

-- ------------------------------------------------------------ cooperative matrices

-- GEMV_COOP = 1 (q8_0, q4_0, q4_k, q5_k, q6_k): the int8 tensor-core kernels through
-- VK_NV_cooperative_matrix (kernels/vulkan/gemv_b32_coop.comp, gemv_q4k_q5k_coop.comp,
-- gemv_q6_k_coop.comp; f16 and bf16: fp16 products, gemv_dense_coop.comp;
-- docs/kernels/vulkan-gemv.md, "Tensor cores through int8 cooperative
-- matrices"): COOP_WR subgroups of 16 rows times COOP_KS slices of k per
-- workgroup, COOP_U blocks loaded per step (q8_0, q4_0; the k-quants load a
-- super-block); x quantized once per call (signed digits, records for 8
-- tokens). A device without NV int8 16x8x32 matrices and subgroups of 32 is
-- refused (`requires`); nothing picks it by default but f16/bf16's COOP_REG=3 (for_device,
-- DENSE_COOP); the others were slower than the table's kernels where timed
-- (docs/kernels/vulkan-gemv.md).
-- GEMV_COOP = 2: the same kernels with the matrices emulated (COOP_EMULATE,
-- coop_common.glsl), which any device runs: the tests' check of everything
-- but the matrix instructions.
local COOP_FMT = { q8_0 = 1, q4_0 = 2, q4_k = 3, q5_k = 4, q6_k = 5, f16 = 6, bf16 = 7, f32 = 8 }
local COOP_FILE = { "gemv_b32_coop", "gemv_b32_coop", "gemv_q4k_q5k_coop", "gemv_q4k_q5k_coop", "gemv_q6_k_coop",
                    "gemv_dense_coop", "gemv_dense_coop" }
-- How f16 / bf16 fill A: staged (the default), COOP_DIRECT = 1 (f16 only): loaded from W
-- itself (m a multiple of 16), COOP_REG = 1: its components written from registers, COOP_REG
-- = 2: from 16-byte loads in the fragments' own k order (gemv_dense_wide.comp, its own first
-- dispatch; k a multiple of 32; COOP_RT tiles of 16 rows a subgroup, COOP_U units of 32 k,
-- COOP_PF = 1 the next COOP_U units loaded while these are multiplied), COOP_REG = 3: W in B
-- (gemv_dense_wideb.comp, its own first dispatch; k a multiple of 64; COOP_RT tiles of 8 rows,
-- COOP_U units of 64 k). q8_0's and q4_0's COOP_REG = 3: W in B of the int8 matrices (gemv_b32_wideb.comp,
-- x's records in A's order: XPREP_COOP=2; k a multiple of 256, units of 8 blocks staged per
-- subgroup, COOP_RT tiles of 8 rows; COOP_U not read). f32: W in B only (COOP_REG = 3, each weight
-- times 2^8 as f16 hi + lo, two products a step; |w| < 256)
local COOP_DEFAULTS = { COOP_WR = 4, COOP_KS = 2, COOP_U = 4, COOP_DIRECT = 0, COOP_REG = 0, COOP_RT = 1, COOP_PF = 0 }
local function coop_dense(fmt) return COOP_FMT[fmt] >= 6 end
local function coop_takes(fmt, name)
  if name == "COOP_DIRECT" then return fmt == "f16" end
  if name == "COOP_REG" or name == "COOP_RT" then return COOP_FMT[fmt] ~= 3 and COOP_FMT[fmt] ~= 4 and COOP_FMT[fmt] ~= 5 end
  -- (q8_0, q4_0, f32: W in B only besides the staged kernel)
  if name == "COOP_PF" then return coop_dense(fmt) and fmt ~= "f32" end
  return name ~= "COOP_U" or COOP_FMT[fmt] <= 2 or coop_dense(fmt)
end
-- The first dispatch: the quantized formats' signed digits (gemv_idot_xprep.comp, XPREP_COOP),
-- the dense formats' f16 hi + lo of x / s_t (gemv_dense_coop_xprep.comp: one workgroup a token)
local coop_prep_specs = {}
-- the dense formats' workspace, whatever its order: 8 scales, then hi and lo of 8 tokens (f16)
local function dense_prep_bytes(k) return 32 + 2 * 8 * k * 2 end
local function coop_prep(tokens, dense, wide, f32)
  local key = (not dense and (wide == 3 and "q3" or "q") or wide == 3 and (f32 and "bf" or "b") or wide and "w" or "d")
    .. tokens
  local p = coop_prep_specs[key]
  if not p and not dense and wide == 3 then
    -- q8_0's and q4_0's W in B: the same records, their digits in the order of A's fragments
    p = {
      spec = { file = "kernels/vulkan/gemv_idot_xprep.comp", entry = "main", block = { XPRE_BLOCK, 1, 1 },
               defines = { GEMV_TOKENS = tokens, XPREP_COOP = 2 } },
      grid = function(k) return { (k // 32 * 8 * 8 + XPRE_BLOCK - 1) // XPRE_BLOCK, 1, 1 } end,
      bytes = function(k) return 80 * 8 * (k // 32) end,
    }
  elseif not p and wide == 3 then
    p = {
      -- f32's k order differs (WIDEB_F32: gemv_dense_wideb.comp)
      spec = { file = "kernels/vulkan/gemv_dense_wideb_xprep.comp", entry = "main", block = { 256, 1, 1 },
               defines = { GEMV_TOKENS = tokens, WIDEB_F32 = f32 and 1 or nil } },
      grid = function(k) return { 8 * ((k // 64 + 63) // 64), 1, 1 } end, -- a token and 64 units each
      bytes = dense_prep_bytes,
    }
  elseif not p and wide then
    p = {
      spec = { file = "kernels/vulkan/gemv_dense_wide_xprep.comp", entry = "main", block = { 256, 1, 1 },
               defines = { GEMV_TOKENS = tokens } },
      grid = function(k) return { 4 * ((k // 32 + 31) // 32), 1, 1 } end, -- a token pair and 32 units each
      bytes = dense_prep_bytes,
    }
  elseif not p and dense then
    p = {
      spec = { file = "kernels/vulkan/gemv_dense_coop_xprep.comp", entry = "main", block = { 256, 1, 1 },
               defines = { GEMV_TOKENS = tokens } },
      grid = function() return { 8, 1, 1 } end,
      bytes = dense_prep_bytes,
    }
  elseif not p then
    p = {
      spec = { file = "kernels/vulkan/gemv_idot_xprep.comp", entry = "main", block = { XPRE_BLOCK, 1, 1 },
               defines = { GEMV_TOKENS = tokens, XPREP_COOP = 1 } },
      -- 8 invocations per block of 32 values, for all 8 tokens (zeros past GEMV_TOKENS)
      grid = function(k) return { (k // 32 * 8 * 8 + XPRE_BLOCK - 1) // XPRE_BLOCK, 1, 1 } end,
      bytes = function(k) return 80 * 8 * (k // 32) end,
    }
  end
  coop_prep_specs[key] = p
  return p
end

-- coop_requires(what, shared, dense) -> requires(dev) -> true | false, why: a device check for
-- kernels on NV cooperative matrices (16x8x32 s8, or 16x8x16 f16 into f32 when dense; subgroups
-- of 32; `shared` bytes when given); `what` ("GEMV_COOP=1") starts each message. The Vulkan
-- SwiGLU kernels' check too (swiglu_vulkan, SW_COOP=1).
function M.coop_requires(what, shared, dense)
  local shape = dense and { k = 16, a = "f16", c = "f32", says = "16x8x16 f16 x f16 + f32" }
    or { k = 32, a = "s8", c = "s32", says = "16x8x32 s8 x s8 + s32" }
  return function(dev)
    local name = tostring(dev.name or "the device")
    if dev.cooperative_matrix ~= "nv" then
      return false, ("%s needs VK_NV_cooperative_matrix, which %s does not offer"):format(what, name)
    end
    local found = false
    for _, c in ipairs(dev.cooperative_matrix_shapes or {}) do
      if c.m == 16 and c.n == 8 and c.k == shape.k and c.a == shape.a and c.b == shape.a and c.c == shape.c
          and c.d == shape.c then
        found = true
      end
    end
    if not found then
      return false, ("%s needs %s cooperative matrices, which %s does not list"):format(what, shape.says, name)
    end
    if dev.subgroup_size ~= 32 then
      return false, ("%s needs subgroups of 32; %s reports %s"):format(what, name, tostring(dev.subgroup_size))
    end
    local max = dev.max_shared_bytes or 0
    if shared and max > 0 and shared > max then
      return false, ("%s needs %d bytes of shared memory; %s allows %d"):format(what, shared, name, max)
    end
    return true
  end
end

local coop_specs = {} -- one table per configuration: gemv.kernel caches compiled kernels by spec table
local function coop_spec(fmt, tokens, wr, ks, u, mode, direct, reg, rt, pf)
  if not coop_takes(fmt, "COOP_U") then u = COOP_DEFAULTS.COOP_U end -- not read by the k-quant kernels
  if direct == 1 then u = 1 end -- no stage: COOP_U is not read
  if direct == 1 and reg >= 1 then
    error(("gemv_vulkan.variant: COOP_DIRECT=1 and COOP_REG=%d are two ways to fill A: name one"):format(reg), 3)
  end
  if rt ~= 1 and reg < 2 then
    error(("gemv_vulkan.variant: COOP_RT=%d is COOP_REG=2's and 3's (row tiles a subgroup): the other kernels have one")
      :format(rt), 3)
  end
  if rt > 4 then error(("gemv_vulkan.variant: COOP_RT=%d is not in 1..4"):format(rt), 3) end
  if not coop_dense(fmt) and reg ~= 0 and reg ~= 3 then
    error(("gemv_vulkan.variant: %s COOP_REG=%d: its kernels are the staged one (0) and W in B (3)"):format(fmt, reg), 3)
  end
  if fmt == "f32" and reg ~= 3 then
    error(("gemv_vulkan.variant: f32 GEMV_COOP=1 or 2 is W in B only: it needs COOP_REG=3, got %d"):format(reg), 3)
  end
  local b32_wb = not coop_dense(fmt) and reg == 3
  if b32_wb then u = 1 end -- a unit is 8 blocks: COOP_U is not read
  if pf == 1 and reg ~= 2 then
    error("gemv_vulkan.variant: COOP_PF=1 is COOP_REG=2's (the next units loaded while these are multiplied)", 3)
  end
  local key = ("%s:%d:%d:%d:%d:%d:%d:%d:%d:%d"):format(fmt, tokens, wr, ks, u, mode, direct, reg, rt, pf)
  if coop_specs[key] then return coop_specs[key] end
  local sgs = wr * ks
  if sgs * 32 > 1024 then
    error(("gemv_vulkan.variant: COOP_WR=%d x COOP_KS=%d subgroups of 32 are more than a workgroup's 1024 invocations")
      :format(wr, ks), 3)
  end
  if u > 8 then error(("gemv_vulkan.variant: COOP_U=%d is not in 1..8"):format(u), 3) end
  local code = COOP_FMT[fmt]
  -- per subgroup the staged blocks (16 rows of 48 bytes each: COOP_U blocks; q4_k, q5_k: a
  -- pair of sub-blocks; q6_k: a sub-block's two halves) and their rows' scales (d; d sc and
  -- dmin m of the pair; d sc of both halves), then the indices and the slices' sums
  local per_sg = ({ u * 16 * (48 + 4), u * 16 * (48 + 4), 2 * 16 * (48 + 8), 2 * 16 * (48 + 8), 2 * 16 * 48 + 16 * 8,
    u * 16 * 48, u * 16 * 48 })[code]
  if direct == 1 then per_sg = 0 end
  -- from registers: the index matrices (256 f16); emulated, each subgroup's A and B go through 384 floats
  if reg >= 1 then per_sg = mode == 2 and 1536 or 0 end
  -- q8_0, q4_0 W in B: each subgroup's stage (8 rows x 8 blocks a tile), emulated its A and B in 768 ints
  if b32_wb then per_sg = 64 * (code == 1 and 34 or 18) * rt + (mode == 2 and 3072 or 0) end
  local shared = sgs * per_sg + 128 * 4 + sgs * 128 * 4 * rt + (reg >= 1 and mode == 1 and 512 or 0)
  local defines = { GEMV_COOP = mode, COOP_FMT = code, COOP_WR = wr, COOP_KS = ks, COOP_U = u, GEMV_TOKENS = tokens }
  if code >= 3 and code <= 5 then defines.COOP_U = nil end
  if direct == 1 then defines.COOP_DIRECT = 1 end
  if reg == 1 then defines.COOP_REG = 1 end
  if reg >= 2 then defines.COOP_RT = rt end -- their own files: COOP_REG is not read
  if b32_wb then defines.COOP_U = nil end
  if pf == 1 then defines.COOP_PF = 1 end
  if mode == 2 then defines.COOP_EMULATE = 1 end
  coop_specs[key] = {
    file = "kernels/vulkan/" .. (b32_wb and "gemv_b32_wideb" or reg == 3 and "gemv_dense_wideb" or reg == 2 and "gemv_dense_wide"
      or COOP_FILE[code]) .. ".comp",
    entry = "main",
    block = { 32 * sgs, 1, 1 },
    rows_per_group = (reg == 3 and 8 or 16) * wr * rt,
    defines = defines,
    max_weight_bytes = MAX_WEIGHT_BYTES,
    prep = coop_prep(tokens, coop_dense(fmt), reg >= 2 and reg, fmt == "f32"),
    shared_bytes = shared,
    -- the emulation (GEMV_COOP=2) runs anywhere (its shared memory is what every device has)
    requires = mode == 1 and M.coop_requires("GEMV_COOP=1", shared, coop_dense(fmt)) or nil,
    -- the quantized formats' x rounded per 32-block (s_b = amax / 32639: within gemv_bench's
    -- bound); the dense formats' x kept to about 22 bits of its row's range: the plain bound
    x_rounding = not coop_dense(fmt) and 32 or nil,
    -- what the fp16 products keep of an f32 operand (the notes print it)
    precision = coop_dense(fmt) and (fmt == "f32" and "x and W each as f16 hi + lo (about 22 bits; |w| < 256)"
      or "x as f16 hi + lo (about 22 bits)") or nil,
    -- steps of 16 k, COOP_REG=2, 3's units; q8_0, q4_0 W in B: units of 8 blocks, 16-byte aligned rows
    k_multiple = coop_dense(fmt) and (({ [2] = 32, [3] = 64 })[reg] or 16) or b32_wb and 256 or nil,
    m_multiple = direct == 1 and 16 or nil, -- whole groups of 16 rows read from W
  }
  return coop_specs[key]
end

local function idot_entry(fmt, mode, t, nr, xb, cap, tokens, xpre, wg, switches)
  local e = entry(fmt, t, nr, tokens, wg)
  e.defines.GEMV_IDOT, e.defines.GEMV_XB = mode, xb
  if xpre == 1 then
    e.defines.GEMV_XPRE = 1 -- 0 is not passed: the other kernels compile as before
    e.prep = xprep(tokens or 1)
  end
  for _, name in ipairs(SWITCH_NAMES) do
    if switches and switches[name] == 1 then e.defines[name] = 1 end -- 0 is not passed
  end
  if mode == 2 and IDOT2_PICKED[fmt] == "layout" then e.k_multiple = IDOT2_K_MULTIPLE end
  local rpg = e.rows_per_group
  e.grid = function(m) return idot_grid(m, rpg, cap) end
  e.grid_cap = cap
  -- q8_0/q4_0 at one token hold x whole; q4_k (and q8_0/q4_0 at T > 1)
  -- quantize it past 32 * xb values in slices (per row tile): any k.
  if not idot_slices(fmt, tokens) and xpre ~= 1 then e.max_k = 32 * xb end
  e.shared_bytes = xpre == 1 and 4 * (wg or WG) * nr or idot_shared(fmt, mode, xb, nr, tokens, wg)
  -- x is rounded to int16 per 32-block: the oracle check widens its bound by
  -- that rounding (gemv_bench.x_rounding_term).
  e.x_rounding = 32
  return e
end

-- The shared-memory blocks for k: k/32 rounded up to IDOT_XB_STEP, but never
-- past what the limit max_xb allows. Where k/32 itself is past it (q4_k's
-- slices), the largest multiple of IDOT_XB_STEP within it, so that every slice
-- but the last spreads evenly over the lanes (or max_xb below one step).
local function idot_xb(k, max_xb)
  local nb = k // 32
  local xb = (nb + IDOT_XB_STEP - 1) // IDOT_XB_STEP * IDOT_XB_STEP
  if max_xb and nb > max_xb and max_xb >= IDOT_XB_STEP then return max_xb // IDOT_XB_STEP * IDOT_XB_STEP end
  if max_xb and xb > max_xb then xb = max_xb end
  return xb
end

-- shape_changes has no device: it sizes q4_k's x for 48 KiB of shared memory,
-- NVIDIA's maxComputeSharedMemorySize (the H200's), so that an A/B there runs
-- the GEMV_XB for_device picks (and slices where x does not fit). On a device
-- with less, give GEMV_XB in the --grid.
local SHAPE_SHARED_BYTES = 49152

-- One table per (fmt, defines, cap): gemv.kernel caches compiled kernels by
-- spec table.
local idot_specs = {}
local function idot_spec(fmt, mode, t, nr, xb, cap, tokens, xpre, wg, switches)
  tokens, xpre, wg = tokens or 1, xpre or 0, wg or WG
  if xpre == 1 then xb = IDOT_XB_MULTIPLE[fmt] or 1 end -- not read: one kernel whatever GEMV_XB said
  local on = {}
  for _, name in ipairs(SWITCH_NAMES) do
    if switches and switches[name] == 1 then on[#on + 1] = name end
  end
  local key = ("%s:%d:%d:%d:%d:%d:%d:%d:%d:%s"):format(fmt, mode, t, nr, xb, cap, tokens, xpre, wg, table.concat(on, ","))
  local s = idot_specs[key]
  if not s then
    s = idot_entry(fmt, mode, t, nr, xb, cap, tokens, xpre, wg, switches)
    idot_specs[key] = s
  end
  return s
end

-- f16 and bf16 from min_tokens rows of x: W in B (COOP_REG=3) at the geometry below, where
-- the device passes its check (NV fp16 cooperative matrices, subgroups of 32) and k is a
-- multiple of 64: it won the validated A/Bs from T = 5 and tied at T = 4, its time flat over T
-- (docs/kernels/vulkan-gemv.md, "W in B", has the figures).
local DENSE_COOP_RULE = { min_tokens = 5, wr = 2, ks = 4, u = 2, rt = 4 }
-- f32 from T = 6 (it tied the FMA kernel at T = 5, won from 6: the same doc, "f32 with W in B"),
-- its weights as two f16 products (spec.precision says what that keeps)
local DENSE_COOP = { f16 = DENSE_COOP_RULE, bf16 = DENSE_COOP_RULE,
                     f32 = { min_tokens = 6, wr = 1, ks = 4, u = 1, rt = 2 } }
local function dense_coop_for(dev, fmt, k, tokens)
  local r = DENSE_COOP[fmt]
  if tokens < r.min_tokens or math.type(k) ~= "integer" then return nil end
  local s = coop_spec(fmt, tokens, r.wr, r.ks, r.u, 1, 0, 3, r.rt, 0)
  if k % s.k_multiple ~= 0 or not s.requires(dev) then return nil end
  return s
end

-- for_device(dev, fmt, m, k [, tokens]) -> the integer spec (f16, bf16: the
-- cooperative-matrix one) when dev can run it for this shape, else nil
-- (gemv.spec's float kernel). dev is a device or any table with its info
-- fields: integer_dot_product, subgroup_size, max_shared_bytes, sm_count
-- (cooperative_matrix and its shapes for f16, bf16). The rule, in one place:
--   * f16 and bf16: DENSE_COOP's rule (W in B from T = 5, NV devices; f32 from T = 6);
--   * fmt is q8_0, q4_0, q4_k or q5_k, any tokens (every integer kernel
--     reads each weight once for all T tokens; q8_0 and q4_0 at T > 1 take
--     IDOT_MULTI_TOKENS' layout and grid; q5_k's by its A/B against the
--     float kernel: docs/kernels/vulkan-gemv.md, "q5_k");
--   * the device has shaderIntegerDotProduct and subgroups of >= 8;
--   * k <= idot_max_k(fmt, dev.max_shared_bytes, mode, tokens) (x of k values
--     of every token must fit in shared memory; larger k runs the float
--     kernel), except where the kernel quantizes x in slices per row tile
--     (q4_k and q5_k at any T, q8_0 and q4_0 at T > 1): x in slices still
--     pays against the float kernel (docs/kernels/vulkan-gemv.md, "q4_k");
--   * at one token, layout 2 (no funnel shifts) where k is a multiple of 64
--     and fits its larger blocks (q8_0, q4_0), else layout 1;
--   * q6_k: GEMV_IDOT=2 (unsigned codes, the -32 through x's half sums);
--   * where an XPRE_RULES range holds T, x quantized once per call (GEMV_XPRE=1,
--     one workgroup per row tile, any k) at the range's geometry, mode and loop
--     switches; else a SWITCH_RULES range's switches on x per workgroup.
function M.for_device(dev, fmt, m, k, tokens)
  tokens = tokens or 1
  if DENSE_COOP[fmt] then return dense_coop_for(dev, fmt, k, tokens) end
  if not IDOT_BLOCK_BYTES[fmt] then return nil end
  if not dev.integer_dot_product or (dev.subgroup_size or 0) < IDOT_MIN_SUBGROUP then return nil end
  if type(k) ~= "number" then return nil end
  local xp = xpre_rule(fmt, tokens)
  if xp then return idot_spec(fmt, xp.mode or 1, xp.geometry[1], xp.geometry[2], nil, 0, tokens, 1, nil, xp.switches) end
  local multi = IDOT_TOKENS[fmt] == "multi" and tokens > 1
  local g = M.idot_geometry(fmt, m, tokens)
  local mode = 1
  if multi then
    mode = IDOT_MULTI_TOKENS.mode
  elseif IDOT2_PICKED[fmt] == "always" then
    mode = 2
  elseif IDOT2_PICKED[fmt] == "layout" and k % IDOT2_K_MULTIPLE == 0
    and k <= M.idot_max_k(fmt, dev.max_shared_bytes, 2, tokens, g[2]) then
    mode = 2
  end
  local max_k = M.idot_max_k(fmt, dev.max_shared_bytes, mode, tokens, g[2])
  if k > max_k and not (idot_slices(fmt, tokens) and max_k >= 32 * (IDOT_XB_MULTIPLE[fmt] or 1)) then return nil end
  local sms = dev.sm_count or 0
  local cap = multi and IDOT_MULTI_TOKENS.cap or IDOT_UNCAPPED[fmt] and 0
    or sms > 0 and sms * idot_per_sm(fmt, m) or IDOT_GRID_UNKNOWN
  local sw = rule_for(SWITCH_RULES[fmt], tokens)
  return idot_spec(fmt, mode, g[1], g[2], idot_xb(k, max_k // 32), cap, tokens, nil, nil, sw and sw.switches)
end

-- The defines a variant of fmt takes, with the default of each (what
-- experiments/gemv_variants.lua checks --grid names against). GEMV_IDOT = 1
-- or 2 selects the integer kernel (q8_0, q4_0, q4_k; 2: the layout without
-- funnel shifts, k a multiple of 64, q8_0 and q4_0), GEMV_XB its shared blocks
-- of x per token (shape_changes gives them for a k; q4_k slices x past them),
-- GEMV_GRID its most workgroups (0: one per row tile; a launch setting, not a
-- shader define), GEMV_XPRE (q4_k, q5_k, q6_k, q8_0, q4_0) x quantized once per call by a first
-- dispatch, GEMV_KHALF and GEMV_KPF switches of the integer loops (LOOP_SWITCHES).
-- The integer kernel's GEMV_T and GEMV_NR default to its own
-- geometry (IDOT_GEOMETRY), not the float entry's.
function M.variant_defines(fmt)
  local base = rawget(M, fmt)
  if type(base) ~= "table" then return nil end
  local d = {}
  for k, v in pairs(base.defines) do d[k] = v end
  d.GEMV_WG = WG
  if IDOT_BLOCK_BYTES[fmt] then d.GEMV_IDOT, d.GEMV_XB, d.GEMV_GRID = 0, 0, 0 end
  if XPRE_FORMATS[fmt] then d.GEMV_XPRE = 0 end
  for _, name in ipairs(SWITCH_NAMES) do
    if takes_switch(fmt, name) then d[name] = 0 end
  end
  if COOP_FMT[fmt] then
    d.GEMV_COOP = 0
    for k, v in pairs(COOP_DEFAULTS) do if coop_takes(fmt, k) then d[k] = v end end
  end
  return d
end

-- ------------------------------------------------------------ T > 1 rows of x

-- The dense kernels' geometry at T > 1 (the entries' is T = 1's): 8 rows per
-- lane group, so each x chunk of a token meets 8 rows instead of 1, and 16
-- lanes a row group from T = 4: the sweep's picks at T = 2, 4 and 8
-- (docs/kernels/vulkan-gemv.md, "Several tokens, dense"); T = 3 and 5..7 take
-- their neighbours' (not measured).
local DENSE_TOKENS = {
  { min_tokens = 2, max_tokens = 3, changes = { GEMV_NR = 8 } },
  { min_tokens = 4, max_tokens = 8, changes = { GEMV_T = 16, GEMV_NR = 8 } },
}
local TOKEN_RULES = { f32 = DENSE_TOKENS, f16 = DENSE_TOKENS, bf16 = DENSE_TOKENS }

-- token_changes(fmt, tokens) -> the defines fmt's T-row kernel changes
-- besides GEMV_TOKENS (a fresh table; empty when no rule applies).
function M.token_changes(fmt, tokens)
  if type(fmt) ~= "string" or type(rawget(M, fmt)) ~= "table" then
    error(("gemv_vulkan.token_changes: unknown format %s"):format(tostring(fmt)), 2)
  end
  return pick_token_rule(TOKEN_RULES[fmt], tokens)
end

-- shape_changes(fmt, m, k [, over]) -> the defines a shape needs on top of
-- over when over selects the integer kernel (GEMV_IDOT >= 1), nothing
-- otherwise: GEMV_T and GEMV_NR for m rows where over names neither and
-- idot_geometry's differ from variant's default, and GEMV_XB for k where over
-- has none. Where the kernel slices x (q4_k, q5_k, q6_k; q8_0 and q4_0 at GEMV_TOKENS > 1) GEMV_XB is the
-- most that fits a device of SHAPE_SHARED_BYTES for over's GEMV_IDOT,
-- GEMV_TOKENS and rows: x whole where it fits, else slices (for_device's).
function M.shape_changes(fmt, m, k, over)
  if not (over and (over.GEMV_IDOT or 0) >= 1 and IDOT_BLOCK_BYTES[fmt]) then return {} end
  local out, nr = {}, over.GEMV_NR
  local g = M.idot_geometry(fmt, m, over.GEMV_TOKENS)
  if over.GEMV_T == nil and over.GEMV_NR == nil and g ~= IDOT_GEOMETRY[fmt] then -- variant's default otherwise
    out.GEMV_T, out.GEMV_NR, nr = g[1], g[2], g[2]
  end
  if over.GEMV_XB == nil then
    if idot_slices(fmt, over.GEMV_TOKENS) then
      local max_xb = idot_fit_xb(fmt, SHAPE_SHARED_BYTES, over.GEMV_IDOT, over.GEMV_TOKENS, nr)
      out.GEMV_XB = idot_xb(k, math.max(max_xb, IDOT_XB_MULTIPLE[fmt] or 1))
    else
      out.GEMV_XB = idot_xb(k)
    end
  end
  return out
end

-- A spec for fmt with other defines ({GEMV_T = 64, GEMV_NR = 4},
-- {GEMV_TOKENS = 2}), with rows_per_group to match; for tuning runs
-- (experiments/gemv_variants.lua) and the multi-token kernels (gemv.spec with
-- tokens). Not stored in this table, so gemv.spec keeps returning the defaults.
function M.variant(fmt, changes)
  local base = type(fmt) == "string" and rawget(M, fmt) or nil
  if type(base) ~= "table" then
    error(("gemv_vulkan.variant: unknown format %s"):format(tostring(fmt)), 2)
  end
  local t, nr, tokens = base.defines.GEMV_T, base.defines.GEMV_NR, base.defines.GEMV_TOKENS
  local idot, xb, cap, xpre, coop, wg, switches = 0, nil, 0, 0, {}, WG, {}
  local modes = IDOT_BLOCK_BYTES[fmt] and #IDOT_BLOCK_BYTES[fmt] or 0
  for k, v in pairs(changes) do
    if IDOT_BLOCK_BYTES[fmt] and (k == "GEMV_IDOT" or k == "GEMV_XB" or k == "GEMV_GRID") then
      if math.type(v) ~= "integer" or v < 0 or (k == "GEMV_IDOT" and v > modes) then
        error(("gemv_vulkan.variant: %s=%s is not %s"):format(k, tostring(v),
          k ~= "GEMV_IDOT" and "a non-negative integer" or modes == 2 and "0, 1 or 2" or "0 or 1"), 2)
      end
      if k == "GEMV_IDOT" then idot = v elseif k == "GEMV_XB" then xb = v else cap = v end
    elseif COOP_FMT[fmt] and (k == "GEMV_COOP" or (COOP_DEFAULTS[k] and coop_takes(fmt, k))) then
      local zero_to = (k == "COOP_REG" and 3) or (k == "GEMV_COOP" and 2) or ((k == "COOP_DIRECT" or k == "COOP_PF") and 1)
        or nil
      if math.type(v) ~= "integer" or (zero_to and (v < 0 or v > zero_to)) or (not zero_to and v < 1) then
        error(("gemv_vulkan.variant: %s=%s is not %s"):format(k, tostring(v), zero_to == 3 and "0, 1, 2 or 3" or
          zero_to == 2 and "0, 1 or 2" or zero_to == 1 and "0 or 1" or "a positive integer"), 2)
      end
      coop[k] = v
    elseif k == "GEMV_XPRE" and XPRE_FORMATS[fmt] then
      if v ~= 0 and v ~= 1 then error(("gemv_vulkan.variant: GEMV_XPRE=%s is not 0 or 1"):format(tostring(v)), 2) end
      xpre = v
    elseif takes_switch(fmt, k) then
      if v ~= 0 and v ~= 1 then error(("gemv_vulkan.variant: %s=%s is not 0 or 1"):format(k, tostring(v)), 2) end
      switches[k] = v
    elseif k == "GEMV_TOKENS" then
      -- the shared message of both backends (gemv_cuda.variant says the same)
      if math.type(v) ~= "integer" or v < 1 or v > MAX_TOKENS then
        error(("gemv_vulkan.variant: GEMV_TOKENS=%s must be an integer in 1..%d"):format(tostring(v), MAX_TOKENS), 2)
      end
      tokens = v
    else
      if math.type(v) ~= "integer" or v < 1 then
        error(("gemv_vulkan.variant: %s=%s is not a positive integer"):format(tostring(k), tostring(v)), 2)
      end
      if k == "GEMV_T" then t = v
      elseif k == "GEMV_NR" then nr = v
      elseif k == "GEMV_WG" then
        if v < 32 or v > 1024 or v & (v - 1) ~= 0 then
          error(("gemv_vulkan.variant: GEMV_WG=%d is not a power of two in 32..1024"):format(v), 2)
        end
        wg = v
      else
        error(("gemv_vulkan.variant: %s has no define %s (GEMV_T, GEMV_NR, GEMV_WG, GEMV_TOKENS%s%s%s)"):format(fmt,
          tostring(k), IDOT_BLOCK_BYTES[fmt] and ", GEMV_IDOT, GEMV_XB, GEMV_GRID" or "",
          XPRE_FORMATS[fmt] and (", GEMV_XPRE" .. switches_text(fmt)) or "",
          COOP_FMT[fmt] and (", GEMV_COOP, COOP_WR, COOP_KS" .. (coop_takes(fmt, "COOP_U") and ", COOP_U" or "")
            .. (coop_takes(fmt, "COOP_DIRECT") and ", COOP_DIRECT" or "")
            .. (coop_takes(fmt, "COOP_REG") and ", COOP_REG, COOP_RT" or "") .. (coop_takes(fmt, "COOP_PF") and ", COOP_PF" or ""))
          or ""), 2)
      end
    end
  end
  if (coop.GEMV_COOP or 0) >= 1 then
    local defaults = M.variant_defines(fmt) -- a grid names every define at its default
    for _, k in ipairs(INTEGER_DEFINES) do
      if changes[k] ~= nil and changes[k] ~= defaults[k] then
        error(("gemv_vulkan.variant: %s GEMV_COOP=1 or 2 is its own kernel: it takes COOP_WR, COOP_KS%s and GEMV_TOKENS, not %s")
          :format(fmt, coop_takes(fmt, "COOP_U") and ", COOP_U" or "", k), 2)
      end
    end
    local spec = coop_spec(fmt, tokens, coop.COOP_WR or COOP_DEFAULTS.COOP_WR, coop.COOP_KS or COOP_DEFAULTS.COOP_KS,
      coop.COOP_U or COOP_DEFAULTS.COOP_U, coop.GEMV_COOP, coop.COOP_DIRECT or COOP_DEFAULTS.COOP_DIRECT,
      coop.COOP_REG or COOP_DEFAULTS.COOP_REG, coop.COOP_RT or COOP_DEFAULTS.COOP_RT, coop.COOP_PF or COOP_DEFAULTS.COOP_PF)
    return spec -- not a tail call: coop_spec's errors name variant's caller
  end
  for k in pairs(COOP_DEFAULTS) do
    if coop[k] and coop[k] ~= COOP_DEFAULTS[k] then
      error(("gemv_vulkan.variant: %s %s is the cooperative-matrix kernel's: it needs GEMV_COOP=1"):format(fmt, k), 2)
    end
  end
  if idot >= 1 then
    -- the integer kernel's own geometry unless the changes name one
    if changes.GEMV_T == nil then t = IDOT_GEOMETRY[fmt][1] end
    if changes.GEMV_NR == nil then nr = IDOT_GEOMETRY[fmt][2] end
  end
  if wg % t ~= 0 then
    error(("gemv_vulkan.variant: GEMV_T=%d does not divide the workgroup of %d"):format(t, wg), 2)
  end
  if xpre == 1 and idot ~= XPRE_FORMATS[fmt][1] and idot ~= XPRE_FORMATS[fmt][2] then
    error(("gemv_vulkan.variant: %s GEMV_XPRE=1 is the integer kernel's in layout 1: it needs GEMV_IDOT=%s"):format(fmt,
      table.concat(XPRE_FORMATS[fmt], " or ")), 2)
  end
  for _, name in ipairs(SWITCH_NAMES) do
    local sw = LOOP_SWITCHES[name]
    if switches[name] == 1 and (xpre ~= sw.xpre or idot < 1) then
      error(("gemv_vulkan.variant: %s %s=1 is the integer kernel's with x %s: it needs GEMV_IDOT >= 1 and GEMV_XPRE=%d")
        :format(fmt, name, sw.xpre == 1 and "quantized once per call" or "quantized per workgroup", sw.xpre), 2)
    end
  end
  if idot >= 1 then
    local step = IDOT_XB_MULTIPLE[fmt] or 1
    if xpre == 1 and xb == nil then xb = step end -- no x in shared memory: GEMV_XB is not read
    if not xb or xb < 1 or xb % step ~= 0 then
      error(("gemv_vulkan.variant: GEMV_IDOT=%d needs GEMV_XB >= 1%s, the blocks of x in shared memory "
        .. "(gemv_vulkan.shape_changes gives it for a k)"):format(idot,
        step > 1 and (" and a multiple of %d"):format(step) or ""), 2)
    end
    return idot_spec(fmt, idot, t, nr, xb, cap, tokens, xpre, wg, switches)
  end
  if (xb and xb ~= 0) or cap ~= 0 then
    error(("gemv_vulkan.variant: GEMV_XB and GEMV_GRID apply to the integer kernel only (GEMV_IDOT=1 or 2)"), 2)
  end
  return entry(fmt, t, nr, tokens, wg)
end

return M
