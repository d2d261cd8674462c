-- gpubench.linear_cuda: the route table of the CUDA Linear kernels
-- (kernels/cuda/linear_*.cu), y[T, N] = x[T, K] . W[N, K]^T (docs/LINEAR.md).
--
-- For each qtype (q4 q5 q6 w8 nvfp4 bf16) an ordered list of routes; the
-- T ranges of a qtype's routes tile 1 .. 65535 without overlap, except that
-- a route with a device requirement is followed by one of the same range for
-- the devices without it; gpubench.linear takes the first route whose range
-- holds T and whose requirement the device meets. A route is
--   { name = "dot" | "gemv" | "mma" | "wgmma", min_t =, max_t =, file =, entry =, defines =,
--     block = {x, y, z}, grid = function(N, K, T) -> {gx, gy, gz}, requires = nil | function(dev) }
-- and every kernel takes (W, x, y, u32 N, u32 K, u32 T, f32 gscale).
-- The defines go to the compiler and this table is their only copy: the
-- kernels refuse to compile without them (kernels/cuda/linear_geometry.cuh),
-- and each kernel's first `// gpubench-compile:` line repeats the geometry
-- of its first route here for the NVRTC test.
--
-- Memory-bound route "gemv" (linear_gemv_<q>.cu; docs/kernels/cuda-linear.md,
-- "Memory-bound route"): every weight byte read once, for all T rows.
--   LN_NW  warps per block, splitting K (block = 32 LN_NW threads);
--   LN_RT  m16 row tiles per block: 16 LN_RT rows (grid = ceil(N / (16 LN_RT)));
--   LN_NJ  n8 column tiles: the route covers T <= 8 LN_NJ;
--   LN_U   units (a group of 64, 32 for w8) each warp loads before decoding;
--   LN_KC  1: a warp's LN_U units of a round are consecutive; 0: interleaved;
--   LN_STAGE  0: weights straight into registers; S >= 2: a round's weights
--             copied into S shared-memory stages, S - 1 rounds ahead
--             ("Staged memory-bound route"; S x the stage must fit 48 KiB).
-- Integer-dot route "dot" (linear_dot_<q>.cu, q4 q5 q6 w8 only; "Integer-dot
-- route"): every weight byte read once, x quantized to int16 per lane and
-- tile, dp2a on the weight codes, scales after the integer sums.
--   LN_NW  row warps per block, each owning LN_R rows (grid = ceil(N / (LN_NW LN_R)));
--   LN_R   rows per warp (every lane holds a partial sum of each);
--   LN_TT  rows of x per pass: the route covers T <= LN_TT (a larger T is
--          still correct, the weights read once per LN_TT rows of x);
--   LN_U   tiles (32 lanes x 32 elements, 16 for w8) loaded per round;
--   LN_KS  slices of K: LN_KS warps on each warp's rows, one slice each, their
--          sums added in shared memory (block = 32 LN_NW LN_KS).
-- Tensor-core route "mma" (linear_mma_<q>.cu; "Tensor-core route"):
--   LN_NW      warps per block, 32 rows each (block tile 32 LN_NW rows);
--   LN_BN      rows of x per block tile (grid.y = ceil(T / LN_BN));
--   LN_STAGES  shared-memory stages of the x tile, LN_STAGES - 1 in flight
--              (LN_STAGES x LN_BN x 128 bytes must fit 48 KiB).
-- wgmma route "wgmma" (linear_wgmma_<q>.cu; "wgmma route"; sm_90 only,
-- compiled for sm_90a: GB_ARCH_SPECIFIC = 1):
--   LN_WG      warpgroups per block (block = 128 LN_WG threads);
--   LN_MT      m64 row tiles per warpgroup (block tile 64 LN_MT LN_WG rows of W);
--   LN_BN      rows of x per block tile, 64, 128 or 256 (grid.x = ceil(T / LN_BN));
--   LN_STAGES  shared-memory stages of weights (decoded, bf16) and x, >= 3;
--   LN_WPF     units of weights loaded ahead into registers, 1, 2 or 4;
--   LN_WS      0: every thread fills the stages and multiplies, one barrier a
--              unit; 1: one more warpgroup fills them, mbarriers between;
--   LN_KSPLIT  slices of K (grid.z, LN_WS = 0 only): each writes its fp32 sums
--              to a workspace and a second launch (linear_reduce.cu) adds them;
--   LN_CLOSE   0: the last unit waits for its products inside the loop; 1: the
--              products stay in flight across every back-edge and the wait
--              follows the loop (no wait injected by ptxas; the table's:
--              docs/kernels/cuda-linear.md, "Closing the pipeline").
--   LN_STAGGER 1: the last warpgroup multiplies each unit half a unit after
--              the first (LN_WG = 2, LN_WS = 0, LN_CLOSE = 1).
--   LN_HALF    1 (q4, q5, q6, w8): the weights decoded to fp16 with their
--              scales applied and x rounded to fp16 by a first launch
--              (linear_half_prep.cu: the route's `prep`), each row scaled by a
--              power of two ("Weights in fp16"); 0: bf16 codes, the scales
--              applied to the sums.
--   LN_XCOPY   1: each thread's copies of x from addresses set once (its
--              chunk and rows are the same every unit); 0: computed per copy.
--   LN_CLUSTER 1 (2 <= LN_KSPLIT <= 8): the slices of a tile are one thread
--              block cluster and add their sums in shared memory, no
--              workspace and no second launch; 0: linear_reduce.cu adds them.
--   LN_TAIL    1: grid.y counts the tiles of W from the last, so that a launch
--              of fewer tile rows covers the ones a launch over the first
--              rows left: the second launch of a route with a `tail` (below).
--   LN_XTILE   1 (LN_HALF = 1): the prepass writes x as the kernel's tiles
--              (each unit's LN_BN rows of 64, swizzled, zeros past T and K)
--              and one thread copies a unit's x by one bulk copy counted on an
--              mbarrier; 2: the same without the block barrier in the loop
--              (each warpgroup stages its own rows, mbarriers release the
--              stages; LN_CLOSE = 1); 0: every thread's cp.async of its share
--              ("x by bulk copies"). The route's `xtile` is then LN_BN.
--   LN_EPI     1: a tile's sums leave through shared memory (each thread's
--              fragment stored there, then 8-byte stores of 4 rows of W a
--              column, a warp a column) and LN_HALF's factors 2^g, 2^f are
--              read once a block into shared memory while its first units
--              load; 0: each sum stored from the fragment, 2 bytes at a
--              time, the factors read there ("The epilogue's factors").
-- A route with a `tail` (`with_tail`, the `TAIL` key of `variant`) is two
-- launches of one call: its own kernel (`head`) over the first whole waves of
-- tiles, then `tail`, its KS slices in clusters (LN_TAIL = 1) over the rest;
-- `grids(N, K, T, sms)` gives the two grids ("The last wave in slices").
-- A route with `slices` takes an eighth argument, that workspace (y when 1),
-- and a ninth, the exponents of LN_HALF (y when 0).
-- The integer-dot route takes T = 1 (q6) and T = 1, 2 (q4, q5, w8), where it
-- beats the memory-bound route (DOT below; "Integer-dot route on the H200");
-- its dp2a count grows with T and passes the mma route's instruction count at T = 3.
-- The crossover at T = 16 | 17: up to 16 rows of x the memory-bound route
-- decodes each weight once for two n8 tiles and stays at the cost of reading
-- W; from 17 on the tensor-core route's tiles of 64 or 128 rows of x reuse a
-- decoded weight 8 or 16 times. The geometries are the fastest of the
-- experiments/linear_variants.lua sweeps in docs/kernels/cuda-linear.md
-- ("Measured on the H200"); not every T and shape was timed.

local M = {}

local function ceil_div(a, b) return (a + b - 1) // b end

local function gemv(q, min_t, max_t, d)
  local rows = 16 * d.LN_RT
  return {
    name = "gemv", min_t = min_t, max_t = max_t,
    file = "kernels/cuda/linear_gemv_" .. q .. ".cu", entry = "linear_gemv_" .. q,
    defines = d, block = { 32 * d.LN_NW, 1, 1 },
    grid = function(N, K, T) return { ceil_div(N, rows), 1, 1 } end,
  }
end

local function mma(q, min_t, max_t, d)
  local rows = 32 * d.LN_NW
  return {
    name = "mma", min_t = min_t, max_t = max_t,
    file = "kernels/cuda/linear_mma_" .. q .. ".cu", entry = "linear_mma_" .. q,
    defines = d, block = { 32 * d.LN_NW, 1, 1 },
    grid = function(N, K, T) return { ceil_div(N, rows), ceil_div(T, d.LN_BN), 1 } end,
  }
end

-- Devices whose tensor cores take wgmma: sm_90 only (the kernels are compiled
-- for sm_90a, which runs on 9.0 alone; sm_100 has other tensor-core
-- instructions).
local function wgmma_requires(dev)
  local arch = dev.info and dev.info.arch or ""
  if dev.backend == "cuda" and arch == "sm_90" then return true end
  return false, ("wgmma needs sm_90, this device is %s"):format(arch ~= "" and arch or "not an NVIDIA GPU")
end

-- The first launch of an LN_HALF = 1 call: one kernel spec per format (the
-- kernel cache compiles each once), nil for the formats without fp16 group scales.
-- With LN_XTILE the prepass writes x as the kernel's tiles of LN_BN rows
-- (LN_PREP_TILE; 0: row by row): one spec per format and tile, made once;
-- with LN_XTILE = 3 or 4 (the weights from registers) with k permuted inside each
-- unit as the kernel's A fragments take it (LN_PREP_PERM = 1).
-- Rows of x of PREP_HOLD_FROM_K elements or more take the prepass's twin
-- (`long`: gpubench.linear picks it by K) that reads a row once and holds it
-- in registers, LN_PREP_HOLD = 12 chunks of 16 bytes a thread; its 64
-- registers halve the blocks an SM, which costs more than the second read of
-- a shorter row saves (docs/kernels/cuda-linear.md, "The prepass by 16 bytes").
local PREP_Q, PREP = { q4 = 4, q5 = 5, q6 = 6, w8 = 8 }, {}
local PREP_HOLD, PREP_HOLD_FROM_K = 12, 16384
for q in pairs(PREP_Q) do PREP[q] = {} end
local function prep_spec(q, tile, hold, perm)
  return { file = "kernels/cuda/linear_half_prep.cu", entry = "linear_half_prep",
           defines = { LN_PREP_Q = PREP_Q[q], LN_PREP_TILE = tile, LN_PREP_HOLD = hold, LN_PREP_PERM = perm or 0 } }
end
local function prep_for(q, d)
  if d.LN_HALF ~= 1 then return nil end
  local tile = d.LN_XTILE == 0 and 0 or d.LN_BN
  local perm = d.LN_XTILE >= 3 and 1 or 0
  local key = tile .. "/" .. perm
  if not PREP[q][key] then
    local s = prep_spec(q, tile, 0, perm)
    s.long, s.long_from_k = prep_spec(q, tile, PREP_HOLD, perm), PREP_HOLD_FROM_K
    PREP[q][key] = s
  end
  return PREP[q][key]
end

-- The most blocks a thread block cluster portably takes: LN_CLUSTER's most slices.
local CLUSTER_MAX = 8
-- The SMs a device that does not say its count is taken to have (the wgmma rules').
local WGMMA_UNKNOWN_SMS = 132

local function wgmma(q, min_t, max_t, d)
  local rows = 64 * d.LN_MT * d.LN_WG
  if d.LN_HALF == 1 and not PREP_Q[q] then
    error(("linear_cuda: LN_HALF=1 is for the formats with fp16 group scales (q4 q5 q6 w8), not %s"):format(q), 3)
  end
  if d.LN_TAIL == 1 and d.LN_WS ~= 0 then
    error("linear_cuda: LN_TAIL=1 is the lockstep kernel's (LN_WS=0)", 3)
  end
  if d.LN_XTILE > 4 or (d.LN_XTILE >= 1 and (d.LN_HALF ~= 1 or d.LN_WS ~= 0 or (d.LN_XTILE >= 2 and d.LN_CLOSE ~= 1))) then
    error(("linear_cuda: LN_XTILE=1 to 4 takes the prepass's x (LN_HALF=1) and the lockstep kernel (LN_WS=0; 2 to 4: LN_CLOSE=1), not LN_XTILE=%d LN_HALF=%d LN_WS=%d LN_CLOSE=%d")
      :format(d.LN_XTILE, d.LN_HALF, d.LN_WS, d.LN_CLOSE), 3)
  end
  -- the weights from registers (linear_wgmma.cuh, lw_ra_loop; 4: each unit's products
  -- waited for at its end, a diagnostic): its static_asserts, said here first
  if d.LN_XTILE >= 3 and (d.LN_WG ~= 2 or d.LN_MT ~= 1 or d.LN_STAGGER ~= 0 or d.LN_WPF ~= 1 or d.LN_STAGES < 4) then
    error(("linear_cuda: LN_XTILE=3 or 4 takes LN_WG=2, LN_MT=1, LN_STAGGER=0, LN_WPF=1 and at least 4 stages, not LN_WG=%d LN_MT=%d LN_STAGGER=%d LN_WPF=%d LN_STAGES=%d")
      :format(d.LN_WG, d.LN_MT, d.LN_STAGGER, d.LN_WPF, d.LN_STAGES), 3)
  end
  if d.LN_CLUSTER == 1 and (d.LN_KSPLIT < 2 or d.LN_KSPLIT > CLUSTER_MAX or d.LN_WS ~= 0) then
    error(("linear_cuda: LN_CLUSTER=1 takes 2 to %d slices of K (LN_KSPLIT) and LN_WS=0, not LN_KSPLIT=%d LN_WS=%d")
      :format(CLUSTER_MAX, d.LN_KSPLIT, d.LN_WS), 3)
  end
  return {
    name = "wgmma", min_t = min_t, max_t = max_t,
    file = "kernels/cuda/linear_wgmma_" .. q .. ".cu", entry = "linear_wgmma_" .. q,
    defines = d, block = { 128 * (d.LN_WG + d.LN_WS), 1, 1 }, requires = wgmma_requires, slices = d.LN_KSPLIT,
    cluster = d.LN_CLUSTER == 1,
    prep = prep_for(q, d), xtile = d.LN_XTILE >= 1 and d.LN_BN or nil,
    grid = function(N, K, T) return { ceil_div(T, d.LN_BN), ceil_div(N, rows), d.LN_KSPLIT } end,
  }
end

-- rules: {max_row_warps =, ks =} in order; the route's for_shape(N, K) then
-- gives its variant with LN_KS = ks for the first rule whose max_row_warps
-- ceil(N / LN_R) does not pass (one spec table per rule: the kernel cache's key).
local function dot(q, min_t, max_t, d, rules)
  local rows = d.LN_NW * d.LN_R
  local r = {
    name = "dot", min_t = min_t, max_t = max_t,
    file = "kernels/cuda/linear_dot_" .. q .. ".cu", entry = "linear_dot_" .. q,
    defines = d, block = { 32 * d.LN_NW * d.LN_KS, 1, 1 },
    grid = function(N, K, T) return { ceil_div(N, rows), 1, 1 } end,
  }
  if rules then
    local by = {}
    r.for_shape = function(N, K)
      local warps = ceil_div(N, d.LN_R)
      for i, rule in ipairs(rules) do
        if warps <= rule.max_row_warps then
          by[i] = by[i] or M.variant(q, r, { LN_KS = rule.ks })
          return by[i]
        end
      end
      return r
    end
  end
  return r
end

-- with_tail(qtype, route, ks) -> route (one slice, the lockstep kernel) as
-- the first of two launches: its whole tiles over the first tile rows of W
-- that make whole waves on the device's SMs, then the rest's ks slices in
-- clusters (LN_TAIL = 1, grid.y from the last tile) in a second launch, so
-- that the last wave's tiles, spread over the SMs, take 1 / ks of a tile's
-- time (docs/kernels/cuda-linear.md, "The last wave in slices"). Both
-- launches take the call's arguments; linear.launches adds the second.
-- The tile rows of W that make whole waves of tiles on `sms` SMs (`across`
-- tiles of x a row, `down` rows): a tail's first launch.
local function whole_wave_rows(across, down, sms)
  return (across * down // sms) * sms // across
end

local function with_tail(qtype, route, ks)
  local d = route.defines
  if route.name ~= "wgmma" or d.LN_KSPLIT ~= 1 or d.LN_WS ~= 0 or d.LN_TAIL ~= 0 then
    error(("linear_cuda: a tail of slices follows a wgmma route of one slice (LN_KSPLIT=1, LN_WS=0, LN_TAIL=0), not %s LN_KSPLIT=%s LN_WS=%s")
      :format(route.name, tostring(d.LN_KSPLIT), tostring(d.LN_WS)), 3)
  end
  if math.type(ks) ~= "integer" or ks < 2 or ks > CLUSTER_MAX then
    error(("linear_cuda: a tail takes 2 to %d slices (one cluster each tile), not %s"):format(CLUSTER_MAX, tostring(ks)), 3)
  end
  local r = {}
  for k, v in pairs(route) do r[k] = v end
  r.head, r.tail_slices = route, ks
  r.tail = M.variant(qtype, route, { LN_KSPLIT = ks, LN_CLUSTER = 1, LN_TAIL = 1 })
  local rows = 64 * d.LN_MT * d.LN_WG
  -- grids(N, K, T, sms) -> the first launch's grid, then the second's (nil
  -- when the whole waves are all the tiles, or there are none)
  r.grids = function(N, K, T, sms)
    if not sms or sms <= 0 then sms = WGMMA_UNKNOWN_SMS end
    local across, down = ceil_div(T, d.LN_BN), ceil_div(N, rows)
    local head = whole_wave_rows(across, down, sms)
    if head <= 0 or head >= down then return { across, down, 1 }, nil end
    return { across, head, 1 }, { across, down - head, ks }
  end
  return r
end

-- The defines that take 0 (switches and counts that may be none); the others are at least 1.
local MAY_BE_ZERO = { LN_KC = true, LN_STAGE = true, LN_WS = true, LN_CLOSE = true, LN_STAGGER = true, LN_HALF = true,
                      LN_XCOPY = true, LN_CLUSTER = true, LN_TAIL = true, LN_XTILE = true, LN_EPI = true }
-- variant(qtype, route, changes) -> a copy of a route of qtype's list with
-- other defines ({LN_NW = 2}), block and grid to match: a geometry sweep's
-- (experiments/linear_variants.lua); the table itself is unchanged. LN_HALF
-- = 0 or LN_WS = 1 without LN_XTILE also sets LN_XTILE = 0. The key
-- TAIL (not a define) gives the wgmma route a tail of that many slices
-- (with_tail; 0: none); a route with a tail keeps it unless TAIL is given.
-- PREP_HOLD (not a route define) takes the prepass with LN_PREP_HOLD = that
-- at every K, instead of the table's twin by K (PREP_HOLD_FROM_K).
function M.variant(qtype, route, changes)
  if changes.PREP_HOLD ~= nil then
    local hold, rest = changes.PREP_HOLD, {}
    for k, v in pairs(changes) do if k ~= "PREP_HOLD" then rest[k] = v end end
    local base = M.variant(qtype, route, rest)
    if not base.prep then
      error(("linear_cuda.variant: PREP_HOLD is for a route with the prepass (LN_HALF=1), not %s LN_HALF=%s")
        :format(base.name, tostring(base.defines.LN_HALF)), 2)
    end
    if math.type(hold) ~= "integer" or hold < 0 or hold > 64 then
      error(("linear_cuda.variant: PREP_HOLD=%s is not an integer from 0 to 64"):format(tostring(hold)), 2)
    end
    local r = {}
    for k, v in pairs(base) do r[k] = v end
    r.prep = prep_spec(qtype, base.prep.defines.LN_PREP_TILE, hold, base.prep.defines.LN_PREP_PERM) -- that prepass at every K (no twin)
    return r
  end
  if route.head then
    local c = { TAIL = route.tail_slices }
    for k, v in pairs(changes) do c[k] = v end
    return M.variant(qtype, route.head, c)
  end
  if changes.TAIL ~= nil then
    local ks, rest = changes.TAIL, {}
    for k, v in pairs(changes) do if k ~= "TAIL" then rest[k] = v end end
    local base = next(rest) and M.variant(qtype, route, rest) or route
    if ks == 0 then return base end
    return with_tail(qtype, base, ks)
  end
  local d = {}
  for k, v in pairs(route.defines) do d[k] = v end
  -- x by bulk copies needs the prepass and the lockstep kernel: a change to
  -- either that does not name LN_XTILE takes it off
  if d.LN_XTILE and changes.LN_XTILE == nil and (changes.LN_HALF == 0 or (changes.LN_WS or 0) > 0) then d.LN_XTILE = 0 end
  for k, v in pairs(changes) do
    if d[k] == nil then error(("linear_cuda.variant: the %s route has no define %s"):format(route.name, tostring(k)), 2) end
    if math.type(v) ~= "integer" or v < (MAY_BE_ZERO[k] and 0 or 1) then
      error(("linear_cuda.variant: %s=%s is not a positive integer"):format(k, tostring(v)), 2)
    end
    d[k] = v
  end
  if route.name == "dot" then
    -- the T range follows LN_TT (a sweep's T must lie in it)
    return dot(qtype, math.min(route.min_t, d.LN_TT), d.LN_TT, d)
  end
  local make = { gemv = gemv, mma = mma, wgmma = wgmma }
  return make[route.name](qtype, route.min_t, route.max_t, d)
end

M.qtypes = { "q4", "q5", "q6", "w8", "nvfp4", "bf16" }

-- w8 and bf16 keep tiles of 64 rows of x for every T >= 17: at 128 their
-- accumulators and runs (W8: two groups' codes and scales per run; BF16: 32
-- bytes per run) spill, the others' spills stay outside the mma loop
-- (ptxas's figures: docs/kernels/cuda-linear.md, "Tensor-core route").
local BN64_ONLY = { w8 = true, bf16 = true }
-- Units in flight per warp at T <= 8: 2 for q4, q6 and bf16; 4 for w8
-- (32-element units: 2 leave too few bytes in flight), q5 and nvfp4: the
-- sweeps' picks (docs/kernels/cuda-linear.md, "Measured on the H200").
-- Staged (LN_STAGE = 3) for q4 and q5 with U = 2, q6 and bf16 with U = 1: the
-- sweeps' picks; nvfp4 stays direct, and w8's stages do not fit at its U
-- (docs/kernels/cuda-linear.md, "Staged memory-bound route").
local GEMV_U = { q4 = 2, q5 = 2, q6 = 1, w8 = 4, nvfp4 = 4, bf16 = 1 }
local GEMV_STAGE = { q4 = 3, q5 = 3, q6 = 3, bf16 = 3 }
-- The integer-dot route per format: its geometry at T = 1 and, where it has
-- one, at T = 2 (absent: no such route), the linear_variants sweeps' picks;
-- q6 has no T = 2 entry, as the route gains nothing there over the
-- memory-bound one (docs/kernels/cuda-linear.md, "Integer-dot route on the H200").
local DOT = {
  q4 = { { LN_NW = 8, LN_R = 8, LN_U = 1 }, { LN_NW = 4, LN_R = 8, LN_U = 1 } },
  q5 = { { LN_NW = 4, LN_R = 16, LN_U = 1 }, { LN_NW = 4, LN_R = 8, LN_U = 1 } },
  q6 = { { LN_NW = 8, LN_R = 4, LN_U = 1 } },
  w8 = { { LN_NW = 4, LN_R = 16, LN_U = 1 }, { LN_NW = 4, LN_R = 8, LN_U = 1 } },
}
-- Slices of K where the rows give too few warps for the SMs (ceil(N / LN_R)
-- row warps; thresholds set for 132 SMs, between the points swept): at T = 1
-- for every format, at T = 2 (R = 8) for w8 only (docs/kernels/cuda-linear.md,
-- "Slices of K").
local DOT_KS = { { max_row_warps = 340, ks = 4 }, { max_row_warps = 2200, ks = 2 } }
local DOT_KS_T2 = { w8 = { { max_row_warps = 640, ks = 2 } } }
-- The wgmma route (sm_90) from T = 65; the mma route on other devices and
-- where the rules below give it. 2 warpgroups of one m64 tile (128 rows of
-- W) by 256 rows of x, 4 stages, units of weights in flight: 4 for q4, 2 for
-- the others; the second warpgroup's products half a unit behind the
-- first's (LN_STAGGER = 1) for q5, q6, nvfp4 and bf16, not q4 and w8; no
-- warpgroup that only fills the stages (LN_WS = 0); x's copies from addresses
-- set once (LN_XCOPY = 1, faster or equal at every point of its A/B); with
-- the weights in fp16, x from the prepass as the kernel's tiles, one bulk
-- copy a unit (LN_XTILE = 1, faster at every point of its A/B). The sweeps' picks:
-- docs/kernels/cuda-linear.md, "Loads that waited", "Staggered warpgroups",
-- "Copies of x", "x by bulk copies".
local WGMMA_FROM = 65
local WGMMA_WPF = { q4 = 4 }
-- Weights and x in fp16 (LN_HALF = 1, staggered) for the formats with fp16
-- group scales on grids of at least a tile per SM without slices, and with
-- slices from T = 256 for w8, and for q4, q5, q6 where K has HALF_SLICE_UNITS
-- units or more (below, the prepass and the fp16 kernel's setup cost more than
-- its faster loop saves): where the evidence says it pays
-- (docs/kernels/cuda-linear.md, "Weights in fp16", "The prepass by 16 bytes");
-- elsewhere the bf16 codes with the scales after the sum, staggered where
-- WGMMA_STAGGER says.
local WGMMA_STAGGER = { q5 = 1, q6 = 1, nvfp4 = 1, bf16 = 1 }
local WGMMA_HALF = { q4 = true, q5 = true, q6 = true, w8 = true }
local HALF_SLICE_UNITS = 64
-- The weights from registers (LN_XTILE = 3; docs/kernels/cuda-linear.md,
-- "The weights from registers"): 0 none; 1 every pick with fp16 weights
-- takes them; 2 also the picks with the bf16 codes take fp16 weights from
-- registers. (A setting, so that a suite can run each: -e "r.WGMMA_RA = 2".)
M.WGMMA_RA = 0
local RA_STAGES = 6
local function half_for(q, T, ks, tiles, sms, units)
  if not WGMMA_HALF[q] then return 0 end
  if M.WGMMA_RA >= 2 then return 1 end
  if ks > 1 then return (T >= 256 and (q == "w8" or units >= HALF_SLICE_UNITS)) and 1 or 0 end
  return tiles >= sms and 1 or 0
end
-- LN_EPI = 1, the sums through shared memory and the factors read once:
-- faster or equal at every point of its A/B (docs/kernels/cuda-linear.md,
-- "The epilogue's factors").
local WGMMA_EPI = 1
local function wgmma_geometry(q)
  local half = WGMMA_HALF[q] and 1 or 0
  return { GB_ARCH_SPECIFIC = 1, LN_WG = 2, LN_MT = 1, LN_BN = 256, LN_STAGES = 4, LN_WPF = WGMMA_WPF[q] or 2,
           LN_WS = 0, LN_KSPLIT = 1, LN_CLOSE = 1, LN_STAGGER = half == 1 and 1 or WGMMA_STAGGER[q] or 0, LN_HALF = half,
           LN_XCOPY = 1, LN_CLUSTER = 0, LN_TAIL = 0, LN_XTILE = half, LN_EPI = WGMMA_EPI }
end
-- By the grid of 128-row tiles against the SMs (132 where the device does
-- not say), tiles of 128 rows of x below T = 256, of 256 from it, the
-- sweeps' picks (docs/kernels/cuda-linear.md, "wgmma route", "By grid",
-- "Slices in one wave", "Slices in a cluster", "The last wave in slices"):
-- * from CLUSTER_FROM_T (256) with TAIL_SLICES >= 2, grids of one to
--   TAIL_BELOW waves whose last wave is short: that wave's tiles in slices in a
--   second launch (the tail, below);
-- * from CLUSTER_FROM_T (256) with CLUSTER_SLICES >= 2 the slices of a tile
--   are one thread block cluster, whose blocks add their sums in shared memory:
--   - under half a tile per SM, the most slices up to CLUSTER_SLICES that
--     keep the blocks in one wave and 4 units a slice;
--   - w8 and q5 from half a tile to 3.5 tiles per SM with 64 units or
--     more, 2 slices: twice the waves, each half as long, fill the last
--     wave's idle SMs (more tiles: the unsplit kernel, fewer units: the
--     slices' prologues, were faster);
-- * otherwise (CLUSTER_SLICES < 2, or below CLUSTER_FROM_T) slices of K add
--   their fp32 sums through a workspace and a second launch
--   (LN_KSPLIT, the largest power of two up to 16 that keeps 4 units a slice
--   and the blocks within 2.5 per SM below T = 256, within one wave from
--   it); for w8 and q5 from T = 256 also under 1.5 tiles per SM, within 5
--   blocks per SM and 64 units a slice;
-- * else below T = 256 the mma route (its tiles of 128 rows of x and 256 of W
--   suit large grids there);
-- * else w8 takes the mma route below one tile per SM (its mma tiles of 64
--   rows of x give 4x the blocks), and nvfp4 and bf16 take tiles of 128 rows
--   of x below one tile per SM.
local PRESCALED = { nvfp4 = true, bf16 = true }
-- {below tiles per SM, blocks per SM at most, units a slice at least, from T, to T, formats (nil: all)}
local SPLITS = { { 0.5, 2.5, 4, 1, 255 }, { 0.5, 1, 4, 256, math.maxinteger },
                 { 1.5, 5, 64, 256, math.maxinteger, { w8 = true, q5 = true } } }
local SPLIT_MAX = 16
-- The cluster rules: the formats of two slices from half a tile per SM, to
-- that many tiles per SM, from that many units.
local CLUSTER_PAIR = { w8 = true, q5 = true }
local CLUSTER_PAIR_BELOW, CLUSTER_PAIR_UNITS = 3.5, 64
-- The most slices the rules put in one cluster (at most CLUSTER_MAX); 0: the
-- workspace rules instead. The A/B of the whole suite sets it with
-- gpubench -e 'require("gpubench.linear_cuda").CLUSTER_SLICES = 0' SCRIPT
M.CLUSTER_SLICES = 4
-- The least T the cluster rules take; below it the workspace rules (not
-- measured with clusters below 256; an A/B sets it as CLUSTER_SLICES above).
M.CLUSTER_FROM_T = 256
-- The last wave in slices (with_tail; docs/kernels/cuda-linear.md, "The last
-- wave in slices"): from CLUSTER_FROM_T, on grids of one to TAIL_BELOW waves
-- of tiles whose last wave holds at most half the SMs' worth, the whole waves
-- in one launch and the last wave's tiles in the most slices up to
-- TAIL_SLICES (at most CLUSTER_MAX) that keep them in one wave and TAIL_UNITS
-- units a slice (past 9 waves its A/B found no gain).
-- 0: no tail (an A/B sets it as CLUSTER_SLICES above).
M.TAIL_SLICES = 8
local TAIL_UNITS, TAIL_BELOW = 4, 9
local function wgmma_for_shape(q, r, fallback)
  local by = {}
  local function variant(bn, ks, half, cluster)
    local stagger = half == 1 and 1 or WGMMA_STAGGER[q] or 0
    local ra = half == 1 and M.WGMMA_RA >= 1
    local key = bn .. "/" .. ks .. "/" .. half .. "/" .. cluster .. (ra and "/ra" or "")
    if not by[key] then
      if ra then
        by[key] = M.variant(q, r, { LN_BN = bn, LN_KSPLIT = ks, LN_WS = 0, LN_HALF = 1, LN_STAGGER = 0, LN_CLUSTER = cluster,
                                    LN_XTILE = 3, LN_WPF = 1, LN_STAGES = RA_STAGES })
      else
        by[key] = (bn == r.defines.LN_BN and ks == 1 and half == r.defines.LN_HALF) and r
          or M.variant(q, r, { LN_BN = bn, LN_KSPLIT = ks, LN_WS = ks > 1 and 0 or r.defines.LN_WS, LN_HALF = half,
                               LN_STAGGER = stagger, LN_CLUSTER = cluster, LN_XTILE = half })
      end
    end
    return by[key]
  end
  local tails = {}
  local function tail_of(base, ks)
    local key = tostring(base) .. "/" .. ks
    tails[key] = tails[key] or M.variant(q, base, { TAIL = ks })
    return tails[key]
  end
  -- the slices of the last wave's tiles, or nil
  local function tail_slices(tiles, units, sms, bn, T)
    if M.TAIL_SLICES < 2 or tiles < sms or tiles >= TAIL_BELOW * sms then return nil end
    local across = ceil_div(T, bn)
    local rest = tiles - whole_wave_rows(across, tiles // across, sms) * across
    if rest <= 0 or rest > sms / 2 then return nil end
    local ks, most = 1, math.min(M.TAIL_SLICES, CLUSTER_MAX)
    while ks < most and rest * (ks + 1) <= sms and units >= TAIL_UNITS * (ks + 1) do ks = ks + 1 end
    return ks > 1 and ks or nil
  end
  local function clustered(tiles, units, sms, bn, T)
    local most = math.min(M.CLUSTER_SLICES, CLUSTER_MAX)
    if tiles < sms / 2 then
      local ks = 1
      while ks < most and tiles * (ks + 1) <= sms and units >= 4 * (ks + 1) do ks = ks + 1 end
      if ks > 1 then return variant(bn, ks, half_for(q, T, ks, tiles, sms, units), 1) end
    elseif CLUSTER_PAIR[q] and tiles < CLUSTER_PAIR_BELOW * sms and units >= CLUSTER_PAIR_UNITS then
      -- the weights in fp16 where the unsplit kernel has them (w8 always with slices)
      return variant(bn, 2, q == "w8" and 1 or half_for(q, T, 1, tiles, sms, units), 1)
    end
  end
  return function(N, K, dev, T)
    local sms = dev and dev.sm_count or 0
    if sms <= 0 then sms = WGMMA_UNKNOWN_SMS end
    T = T or r.min_t
    local bn = T < 256 and 128 or 256
    local tiles = ceil_div(N, 64 * r.defines.LN_MT * r.defines.LN_WG) * ceil_div(T, bn)
    local units = ceil_div(K, 64)
    if T >= M.CLUSTER_FROM_T then
      local ks = tail_slices(tiles, units, sms, bn, T)
      if ks then return tail_of(variant(bn, 1, half_for(q, T, 1, tiles, sms, units), 0), ks) end
    end
    if T >= M.CLUSTER_FROM_T and M.CLUSTER_SLICES >= 2 then
      local c = clustered(tiles, units, sms, bn, T)
      if c then return c end
    else
      for _, rule in ipairs(SPLITS) do
        local below, per_sm, min_units, from_t, to_t, formats = table.unpack(rule)
        if tiles < below * sms and T >= from_t and T <= to_t and (not formats or formats[q]) then
          local ks = 1
          while 2 * ks <= SPLIT_MAX and tiles * 2 * ks <= per_sm * sms and units >= min_units * 2 * ks do ks = 2 * ks end
          if ks > 1 then return variant(bn, ks, half_for(q, T, ks, tiles, sms, units), 0) end
          break
        end
      end
    end
    if T < 256 then return fallback end
    if q == "w8" and tiles < sms then return fallback end
    if PRESCALED[q] and tiles < sms then return variant(128, 1, 0, 0) end
    local half = half_for(q, T, 1, tiles, sms, units)
    if half ~= r.defines.LN_HALF or (half == 1 and M.WGMMA_RA >= 1) then return variant(bn, 1, half, 0) end
    return r
  end
end
for _, q in ipairs(M.qtypes) do
  local list = {}
  local geo = DOT[q] or {}
  for t, g in ipairs(geo) do
    list[#list + 1] = dot(q, t, t, { LN_NW = g.LN_NW, LN_R = g.LN_R, LN_TT = t, LN_U = g.LN_U, LN_KS = 1 },
      t == 1 and DOT_KS or t == 2 and DOT_KS_T2[q] or nil)
  end
  local dmax = #geo
  list[#list + 1] = gemv(q, dmax + 1, 8,
    { LN_NW = 4, LN_RT = 2, LN_NJ = 1, LN_U = GEMV_U[q], LN_KC = 0, LN_STAGE = GEMV_STAGE[q] or 0 })
  list[#list + 1] = gemv(q, 9, 16, { LN_NW = 4, LN_RT = 2, LN_NJ = 2, LN_U = 2, LN_KC = 0, LN_STAGE = 0 })
  list[#list + 1] = mma(q, 17, 64, { LN_NW = 4, LN_BN = 64, LN_STAGES = 4 })
  local large = BN64_ONLY[q] and { LN_NW = 4, LN_BN = 64, LN_STAGES = 4 } or { LN_NW = 8, LN_BN = 128, LN_STAGES = 3 }
  local wg, fallback = wgmma(q, WGMMA_FROM, 65535, wgmma_geometry(q)), mma(q, WGMMA_FROM, 65535, large)
  wg.for_shape = wgmma_for_shape(q, wg, fallback)
  list[#list + 1] = wg
  list[#list + 1] = fallback
  M[q] = list
end

return M
