-- gpubench.moe_launch: the launch builders of the MoE variants, shared by
-- both backends' geometry tables (gpubench.moe_cuda, gpubench.moe_vulkan),
-- whose kernels take the same parameters but for the expert stride: a u64
-- on CUDA (a stack may pass 4 GiB), a u32 on Vulkan, and CUDA's grouped
-- kernel also takes the row stride nb01.
--
--   M.launches = require("gpubench.moe_launch")(M, { stride = gpu.u64, grouped_strides = function(sh) ... end,
--                                                     rule_for = function(kernel, sh, m, dev) ... end (optional) })
--
-- Each builder: (kernel_of, shape, m, bufs [, specs [, dev]]) -> the launches
-- of one step, {kernel, grid, block, args...} each; specs replaces M's
-- geometries. The factory's second result, spec_of(variant, shape, m [,
-- specs [, dev]]), is the kernel spec those launches take (moe.spec): specs'
-- where it has one for the kernel (moe.kernel_of's), else o.rule_for's pick for the step and
-- device (kernel: "pairs", "fused" or "grouped"; nil: the table's), else M's. per_token and
-- batched take the same spec for a step, so they stay bit for bit alike (and grouped at one
-- token, which runs batched's step).

local function ceil_div(a, b) return (a + b - 1) // b end
local function u32(v) return require("gpu").u32(v) end

return function(M, o)
  local stride = o.stride
  local L = {}

  local function spec_of(variant, sh, m, specs, dev)
    local kernel = require("gpubench.moe").kernel_of(variant, m, specs)
    if specs and specs[kernel] then return specs[kernel] end
    return o.rule_for and o.rule_for(kernel, sh, m, dev) or M[kernel]
  end

  local function pair_launch(kernel_of, s, sh, b, pair0, count)
    return { kernel_of(s), { ceil_div(sh.n, s.rows_per_group), count, 1 }, s.block, b.w, b.x, b.ids, b.y,
             u32(sh.n), u32(sh.k), u32(sh.experts), stride(sh.nb02), u32(sh.top_k), u32(pair0), u32(sh.outer),
             u32(sh.inner) }
  end

  function L.batched(kernel_of, sh, m, b, specs, dev)
    return { pair_launch(kernel_of, spec_of("batched", sh, m, specs, dev), sh, b, 0, m * sh.top_k) }
  end

  function L.per_token(kernel_of, sh, m, b, specs, dev)
    local l = {}
    local s = spec_of("per_token", sh, m, specs, dev)
    for t = 0, m - 1 do l[t + 1] = pair_launch(kernel_of, s, sh, b, t * sh.top_k, sh.top_k) end
    return l
  end

  function L.fused_gate_up(kernel_of, sh, m, b, specs, dev)
    local s = spec_of("fused_gate_up", sh, m, specs, dev)
    return { { kernel_of(s), { ceil_div(sh.n, s.rows_per_group), m * sh.top_k, 1 }, s.block, b.w, b.up, b.x, b.ids,
               b.y, u32(sh.n), u32(sh.k), u32(sh.experts), stride(sh.nb02), u32(sh.top_k), u32(sh.outer),
               u32(sh.inner) } }
  end

  function L.grouped(kernel_of, sh, m, b, specs, dev)
    -- one token: the batched step (moe.kernel_of says why)
    if require("gpubench.moe").kernel_of("grouped", m, specs) == "pairs" then return L.batched(kernel_of, sh, m, b, specs, dev) end
    local g = spec_of("grouped", sh, m, specs, dev)
    local pairs_ = m * sh.top_k
    local l = { kernel_of(g), { ceil_div(sh.n, g.rows_per_group), math.min(sh.experts, pairs_), 1 }, g.block,
                b.w, b.x, b.ids, b.y, u32(sh.n), u32(sh.k), u32(sh.experts) }
    for _, v in ipairs(o.grouped_strides(sh)) do l[#l + 1] = v end
    for _, v in ipairs { u32(sh.top_k), u32(pairs_), u32(sh.outer), u32(sh.inner) } do l[#l + 1] = v end
    return { l }
  end

  return L, spec_of
end
