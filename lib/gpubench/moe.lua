-- gpubench.moe: the mixture-of-experts Q4_K GEMV of experiments/moe_scaling.lua
-- behind one interface: model geometries, routing, byte counts, and the
-- launches of one decode step for each variant on either backend.
--
-- A step multiplies m tokens by the top_k experts each selects: pair
-- p = t * top_k + s uses expert ids[p] of a stack of E q4_k matrices N x K
-- (ferrum's strides: nb01 = K / 256 * 144 bytes per row, nb02 = N * nb01 per
-- expert) and the activation row at float t * outer + s * inner (ferrum's
-- two-stride walk: gate/up outer = K, inner = 0, a token's row shared by its
-- slots; down outer = top_k * K, inner = K, one row per pair), and writes
-- y[p * N .. p * N + N - 1]. The variants (docs/kernels/moe.md):
--   per_token      the top_k experts of one token per dispatch: m dispatches
--   batched        one dispatch over every pair (ferrum's batched kernel)
--   grouped        pairs grouped by expert on the device, each selected
--                  expert's weights streamed once for all its tokens
--   fused_gate_up  batched gate and up from two stacks, silu(gate) * up in
--                  the epilogue (gate/up only)
--
--   local moe = require "gpubench.moe"
--   local shape = moe.shape("qwen3_30b_a3b", "gate_up")
--   local ids = moe.routing("uniform", m, shape.experts, shape.top_k, {seed = 1})
--   local launches = moe.launches(dev, "grouped", shape, m, bufs)

local moe = {}

-- The model geometries: experts, top_k, and each projection's N x K per expert.
moe.CONFIGS = {
  qwen3_30b_a3b = { experts = 128, top_k = 8, gate_up = { n = 768, k = 2048 }, down = { n = 2048, k = 768 } },
  mixtral_8x7b = { experts = 8, top_k = 2, gate_up = { n = 14336, k = 4096 }, down = { n = 4096, k = 14336 } },
  -- ferrum's microbenchmark: 8 of Qwen3-30B-A3B's experts, all selected by every token
  ferrum_subset = { experts = 8, top_k = 8, gate_up = { n = 768, k = 2048 }, down = { n = 2048, k = 768 } },
}
moe.CONFIG_NAMES = { "qwen3_30b_a3b", "mixtral_8x7b", "ferrum_subset" }
moe.VARIANTS = { "per_token", "batched", "grouped", "fused_gate_up" }
-- The entry of a backend's kernel table (moe_cuda, moe_vulkan) each variant launches.
moe.KERNEL_OF = { per_token = "pairs", batched = "pairs", grouped = "grouped", fused_gate_up = "fused" }
-- kernel_of(variant, m [, specs]) -> the entry a step of m tokens launches: KERNEL_OF's, but
-- grouped at one token runs the pairs kernel (its batched step): every routing gives a token
-- top_k distinct experts, so each pair is its expert's whole group and there is nothing to
-- group (ids that repeat an expert inside a token are still computed right, that expert read
-- once per pair). A --grouped-geometry (specs.grouped) keeps the grouped kernel, whose A/B it is.
function moe.kernel_of(variant, m, specs)
  local k = moe.KERNEL_OF[variant] or "pairs"
  if k == "grouped" and m == 1 and not (specs and specs.grouped) then return "pairs" end
  return k
end
moe.PROJECTIONS = { "gate_up", "down" }
moe.ROUTINGS = { "uniform", "zipf", "modulo" }

-- q4_k: 144-byte super-blocks of 256 weights (docs/FORMATS.md).
moe.QK, moe.BLOCK_BYTES = 256, 144
-- Experts the grouped kernels' presence mask holds.
moe.MAX_EXPERTS = 1024

local function check_int(v, what, fn, min)
  if math.type(v) ~= "integer" or v < (min or 1) then
    error(("moe.%s: %s must be an integer >= %d, got %s"):format(fn, what, min or 1, tostring(v)), 3)
  end
  return v
end

local function config_of(name, fn)
  local c = type(name) == "table" and name or moe.CONFIGS[name]
  if type(c) ~= "table" then
    error(("moe.%s: unknown config %s (known: %s)"):format(fn, tostring(name), table.concat(moe.CONFIG_NAMES, ", ")), 3)
  end
  return c
end

-- shape(config, projection) -> {config, projection, experts, top_k, n, k,
-- nb01, nb02, stack_bytes, buffer_bytes, outer, inner}: the strides of a
-- stack and of the projection's activations (outer/inner in floats).
-- config: a name of moe.CONFIGS or a table of the same fields.
function moe.shape(config, projection)
  local c = config_of(config, "shape")
  local p = c[projection]
  if type(p) ~= "table" then
    error(("moe.shape: unknown projection %s (gate_up or down)"):format(tostring(projection)), 2)
  end
  check_int(c.experts, "experts", "shape")
  check_int(c.top_k, "top_k", "shape")
  check_int(p.n, "n", "shape")
  check_int(p.k, "k", "shape")
  if p.k % moe.QK ~= 0 then
    error(("moe.shape: k=%d is not a multiple of %d (the q4_k super-block)"):format(p.k, moe.QK), 2)
  end
  if c.experts > moe.MAX_EXPERTS then
    error(("moe.shape: %d experts, more than the %d the grouped kernels hold"):format(c.experts, moe.MAX_EXPERTS), 2)
  end
  local nb01 = p.k // moe.QK * moe.BLOCK_BYTES
  local nb02 = p.n * nb01
  local gate_up = projection == "gate_up"
  return {
    config = type(config) == "string" and config or "custom", projection = projection,
    experts = c.experts, top_k = c.top_k, n = p.n, k = p.k, nb01 = nb01, nb02 = nb02,
    stack_bytes = c.experts * nb02,
    -- whole 16-byte words past the last block (the CUDA copies), as gemv.buffer_bytes
    buffer_bytes = (c.experts * nb02 + 15) // 16 * 16 + 16,
    outer = gate_up and p.k or c.top_k * p.k, inner = gate_up and 0 or p.k,
  }
end

-- x_floats(shape, m): the activation buffer's floats for m tokens;
-- x_rows(shape, m): its rows of k (gate/up: one per token, down: per pair).
function moe.x_rows(shape, m)
  return shape.projection == "gate_up" and m or m * shape.top_k
end
function moe.x_floats(shape, m) return moe.x_rows(shape, m) * shape.k end

-- ------------------------------------------------------------ routing

-- routing(kind, m, experts, top_k, {seed =, zipf_s =}) -> ids (a list of
-- m * top_k expert indices, pair order). uniform: per token top_k distinct
-- experts, uniformly; zipf: per token top_k distinct experts drawn in turn
-- with probability proportional to 1 / rank^s over a seeded ranking of the
-- experts; modulo: ferrum's ids[p] = p % experts. Tokens are drawn in order
-- from one seeded stream, so fewer tokens from the same seed are a prefix of
-- more (the experiment checks every m against one reference).
function moe.routing(kind, m, experts, top_k, o)
  o = o or {}
  check_int(m, "m", "routing")
  check_int(experts, "experts", "routing")
  check_int(top_k, "top_k", "routing")
  local ids = {}
  if kind == "modulo" then
    for p = 0, m * top_k - 1 do ids[p + 1] = p % experts end
    return ids
  end
  if kind ~= "uniform" and kind ~= "zipf" then
    error(("moe.routing: unknown routing %s (uniform, zipf or modulo)"):format(tostring(kind)), 2)
  end
  if top_k > experts then
    error(("moe.routing: %s routing picks top_k=%d distinct experts of %d"):format(kind, top_k, experts), 2)
  end
  local r = require("gpubench.rng").new(o.seed or 1)
  if kind == "uniform" then
    local perm = {}
    for t = 0, m - 1 do
      for e = 1, experts do perm[e] = e - 1 end
      for s = 1, top_k do -- a partial Fisher-Yates shuffle: the first top_k of a random permutation
        local j = s - 1 + r:int(experts - s + 1)
        perm[s], perm[j] = perm[j], perm[s]
        ids[t * top_k + s] = perm[s]
      end
    end
    return ids
  end
  local zs = o.zipf_s or 1.0
  if type(zs) ~= "number" or not (zs > 0) or zs == math.huge then
    error(("moe.routing: zipf_s must be a finite positive number, got %s"):format(tostring(zs)), 2)
  end
  local rank = {}
  for e = 1, experts do rank[e] = e - 1 end
  for i = experts, 2, -1 do local j = r:int(i); rank[i], rank[j] = rank[j], rank[i] end
  local weight = {}
  for i = 1, experts do weight[i] = 1.0 / (i ^ zs) end
  for t = 0, m - 1 do
    local taken, left = {}, 0.0
    for i = 1, experts do left = left + weight[i] end
    for s = 1, top_k do
      local u, pick = r:float() * left, nil
      for i = 1, experts do
        if not taken[i] then
          u = u - weight[i]
          pick = i
          if u < 0 then break end
        end
      end
      taken[pick] = true
      left = left - weight[pick]
      ids[t * top_k + s] = rank[pick]
    end
  end
  return ids
end

-- The routing edge cases the kernels are tested on: edge(name, m, experts,
-- top_k) -> ids. one_expert: every pair on expert experts-1 (one expert, a
-- token's slots repeating it); distinct: every pair its own expert (needs
-- m * top_k <= experts), the experts in a scrambled order; overflow:
-- m * top_k > experts pairs, uniform routing, so experts repeat across tokens
-- (needs it: an error otherwise).
moe.EDGE_CASES = { "one_expert", "distinct", "overflow" }

function moe.edge(name, m, experts, top_k)
  local pairs_ = m * top_k
  if name == "one_expert" then
    local ids = {}
    for i = 1, pairs_ do ids[i] = experts - 1 end
    return ids
  elseif name == "distinct" then
    if pairs_ > experts then
      error(("moe.edge: distinct needs m * top_k <= experts, got %d pairs of %d experts"):format(pairs_, experts), 2)
    end
    local ids = {}
    for i = 1, pairs_ do ids[i] = (i * 7 + 3) % experts end -- 7 is prime to every test's expert count
    if moe.unique(ids, pairs_) ~= pairs_ then
      for i = 1, pairs_ do ids[i] = experts - i end
    end
    return ids
  elseif name == "overflow" then
    if pairs_ <= experts then
      error(("moe.edge: overflow needs m * top_k > experts, got %d pairs of %d experts"):format(pairs_, experts), 2)
    end
    return moe.routing("uniform", m, experts, top_k, { seed = 5 })
  end
  error(("moe.edge: unknown case %s (known: %s)"):format(tostring(name), table.concat(moe.EDGE_CASES, ", ")), 2)
end

-- ids_string(ids [, count]) -> the first count ids as little-endian i32.
function moe.ids_string(ids, count)
  count = count or #ids
  local parts = {}
  for i = 1, count do parts[i] = string.pack("<i4", ids[i]) end
  return table.concat(parts)
end

-- check_ids(ids, count, experts): every one of the first count ids names an
-- expert of the stack (the kernels would clamp a bad one).
function moe.check_ids(ids, count, experts)
  for i = 1, count do
    local e = ids[i]
    if math.type(e) ~= "integer" or e < 0 or e >= experts then
      error(("moe: pair %d routes to expert %s, the stack has 0..%d"):format(i - 1, tostring(e), experts - 1), 2)
    end
  end
end

-- unique(ids, count) -> the number of distinct experts among the first count ids.
function moe.unique(ids, count)
  local seen, n = {}, 0
  for i = 1, count do
    if not seen[ids[i]] then seen[ids[i]] = true; n = n + 1 end
  end
  return n
end

-- stacks(variant): the weight stacks a variant reads (fused: gate and up).
function moe.stacks(variant) return variant == "fused_gate_up" and 2 or 1 end

-- unique_bytes(shape, variant, unique): the weight bytes a step must read at
-- least, each selected expert's matrix once per stack.
function moe.unique_bytes(shape, variant, unique)
  return unique * shape.nb02 * moe.stacks(variant)
end

-- applies(variant, projection): fused_gate_up exists for gate/up only.
function moe.applies(variant, projection)
  return variant ~= "fused_gate_up" or projection == "gate_up"
end

-- ------------------------------------------------------------ launches

-- moe.unmet(dev, spec) -> nil where dev can run spec, else what spec asks that
-- dev lacks (moe_vulkan's integer path: integer dot products, subgroups of
-- spec.min_subgroup lanes, spec.shared_bytes): the one rule behind
-- moe.launches' refusals and moe_vulkan.rule_for's fallback to the float path.
-- A device that does not report its subgroup size lacks them.
function moe.unmet(dev, spec)
  local name = tostring(dev.name or "the device")
  if spec.needs_integer_dot and not dev.integer_dot_product then
    return ("integer dot products (shaderIntegerDotProduct), which %s lacks"):format(name)
  end
  local sg = dev.subgroup_size or 0
  if spec.min_subgroup and sg < spec.min_subgroup then
    return sg > 0 and ("subgroups of %d or more lanes, %s has %d"):format(spec.min_subgroup, name, sg)
      or ("subgroups of %d or more lanes, and %s does not report its subgroup size"):format(spec.min_subgroup, name)
  end
  local max = dev.max_shared_bytes or 0
  if spec.shared_bytes and max > 0 and spec.shared_bytes > max then
    return ("%d bytes of shared memory, %s has %d (fewer MOE_XB or MOE_TC)"):format(spec.shared_bytes, name, max)
  end
end

local function specs_of(backend)
  local ok, s = pcall(require, "gpubench.moe_" .. tostring(backend))
  if not ok then error(("moe: no MoE kernels for backend %s (%s)"):format(tostring(backend), tostring(s)), 3) end
  return s
end

-- dispatches(backend, variant, m): launches per step (grouped: the backend's
-- count, one on both today: the grouping is inside the kernel).
function moe.dispatches(backend, variant, m)
  if variant == "per_token" then return m end
  if variant == "grouped" then return specs_of(backend).grouped_dispatches end
  return 1
end

-- Compiled kernels, once per device and spec (gpubench.kernels.cache);
-- release(dev) frees dev's (leak-checked tests).
local cache = require("gpubench.kernels").cache()
moe.kernel = cache.get
moe.release = cache.release

local function need(buf, bytes, what, variant)
  if type(buf) ~= "userdata" then
    error(("moe.launches: %s needs the buffer %s"):format(variant, what), 3)
  end
  if buf.size < bytes then
    error(("moe.launches: %s buffer is %d bytes, %s needs %d"):format(what, buf.size, variant, bytes), 3)
  end
end

-- launches(dev, variant, shape, m, bufs [, specs]) -> the launches of one
-- step ({kernel, grid, block, args...} each, for bench cells and batches).
-- bufs: w (the stack; fused: gate), up (fused), x, ids, y. Buffer sizes are
-- checked here. specs: kernel geometries replacing the backend's table
-- (moe_<backend>.variant).
-- spec(dev, variant, shape, m [, specs]) -> the kernel spec moe.launches
-- takes for that step (the geometry table's, a rule's or specs').
function moe.spec(dev, variant, shape, m, specs)
  return specs_of(dev.backend).spec_of(variant, shape, m, specs, dev)
end

function moe.launches(dev, variant, shape, m, bufs, specs)
  check_int(m, "m", "launches")
  if not moe.applies(variant, shape.projection) then
    error(("moe.launches: %s applies to the gate_up projection only"):format(variant), 2)
  end
  local pairs_ = m * shape.top_k
  need(bufs.w, shape.buffer_bytes, "w", variant)
  if variant == "fused_gate_up" then need(bufs.up, shape.buffer_bytes, "up", variant) end
  need(bufs.x, 4 * moe.x_floats(shape, m), "x", variant)
  need(bufs.ids, 4 * pairs_, "ids", variant)
  need(bufs.y, 4 * pairs_ * shape.n, "y", variant)
  local s = specs_of(dev.backend)
  if s.MAX_STACK_BYTES and shape.buffer_bytes > s.MAX_STACK_BYTES then
    error(("moe.launches: a %d-byte stack is more than the %s kernels address"):format(shape.buffer_bytes, dev.backend), 2)
  end
  local sg = dev.subgroup_size or 0
  if dev.backend == "vulkan" and sg > 0 and sg < 4 then
    error(("moe.launches: the Vulkan kernels need subgroups of 4 or more lanes, %s has %d"):format(dev.name, sg), 2)
  end
  local build = s.launches[variant]
  if not build then error(("moe.launches: unknown variant %s (known: %s)"):format(tostring(variant),
    table.concat(moe.VARIANTS, ", ")), 2) end
  return build(function(spec)
    local why = moe.unmet(dev, spec)
    if why then
      error(("moe.launches: %s (%s) needs %s"):format((spec.file or "?"):match("[^/]+$"),
        require("gpubench.options").format_defines(spec.defines), why), 0)
    end
    return moe.kernel(dev, spec)
  end, shape, m, bufs, specs, dev)
end

return moe
