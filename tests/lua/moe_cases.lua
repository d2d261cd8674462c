-- tests/lua/moe_cases.lua: the mixture-of-experts checks shared by the tests
-- of both backends (test_moe_cuda.lua, test_moe_vulkan.lua), each through the
-- experiment's own code (gpubench.moe, gpubench.moe_bench).
--
--   local mc = dofile("tests/lua/moe_cases.lua")(t)
--   mc.check_all(dev, moe.shape(mc.SMALL, "down"), ids, 5, "uniform", { 1, 2, 5 })

local moe = require "gpubench.moe"
local mb = require "gpubench.moe_bench"

return function(t)
  local mc = {}

  -- n = 40 and 24 leave rows past the end in the last block (CUDA's 14-row
  -- warps and 64-row grouped blocks, Vulkan's workgroups); k = 256: one
  -- super-block, fewer than the grouped stages; 6 experts, top-3.
  mc.SMALL = { experts = 6, top_k = 3, gate_up = { n = 40, k = 512 }, down = { n = 24, k = 256 } }

  -- Every variant that applies to the projection against the FP64 reference
  -- of m tokens; each of ms (default { m }) checks that reference's prefix,
  -- and batched must equal per_token bit for bit.
  function mc.check_all(dev, shape, ids, m, what, ms)
    local F <close>, g = mb.case(dev, shape, ids, m)
    for _, mm in ipairs(ms or { m }) do
      for _, v in ipairs(moe.VARIANTS) do
        if moe.applies(v, shape.projection) then
          local c = mb.check(dev, g, v, mm) -- raises on a wrong output or a write past them
          t.truthy(c.worst_rel <= mb.TOL, ("%s %s %s m=%d"):format(what, v, shape.projection, mm))
          if v == "batched" then t.eq(c.bit_exact, true, what .. ": batched == per_token") end
        end
      end
    end
  end

  -- The routing edge cases on both projections of SMALL: every pair on one
  -- expert (12 pairs: three grouped passes of 4 tokens), all experts
  -- distinct, more pairs than experts.
  function mc.edge_cases(dev)
    for _, proj in ipairs(moe.PROJECTIONS) do
      local sh = moe.shape(mc.SMALL, proj)
      mc.check_all(dev, sh, moe.edge("one_expert", 4, sh.experts, sh.top_k), 4, "one_expert")
      mc.check_all(dev, sh, moe.edge("distinct", 2, sh.experts, sh.top_k), 2, "distinct")
      mc.check_all(dev, sh, moe.edge("overflow", 3, sh.experts, sh.top_k), 3, "overflow")
    end
  end

  -- Weights changed after the reference: each of `variants` must fail the
  -- check, the error naming the backend, the variant and m.
  function mc.wrong_kernel_fails(dev, variants)
    local sh = moe.shape(mc.SMALL, "gate_up")
    local F <close>, g = mb.case(dev, sh, moe.routing("uniform", 2, sh.experts, sh.top_k, { seed = 6 }), 2)
    g.stacks.w[1]:upload(require("gpubench.ref").random_blocks("q4_k", sh.stack_bytes // 144, 99))
    for _, v in ipairs(variants) do
      t.errors(function() mb.check(dev, g, v, 2) end,
        ("the %s %s kernel is wrong at m=2 (gate_up)"):format(dev.backend, v), true)
    end
  end

  return mc
end
