-- gpubench.linear_suites: the Linear benchmark's curated points, as data.
--
-- ninfer's model suites (its Linear benchmark contract, section 2): each entry
-- is a label, a qtype, (N, K) and a T class; `all` is their union, one point
-- per (qtype, policy, N, K, T) with every role label kept. `nvfp4` is the
-- five NVFP4 development problems, outside the model suites as in ninfer.
--
--   local suites = require "gpubench.linear_suites"
--   local points = suites.expand("all")     --> {{qtype, policy, n, k, t, labels = {...}}, ...}

local suites = {}

suites.T_CLASSES = {
  continuous = { 1, 16, 128, 1024 }, -- small-T bandwidth, the route change, large-T compute
  vision_step4 = { 4, 128, 1024 },   -- valid for every Vision geometry (steps of 4)
}

local function entry(label, qtype, n, k, class) return { label = label, qtype = qtype, n = n, k = k, class = class } end

local VISION = {
  { "vision_patch", "q6", 1152, 1536 },
  { "vision_qkv", "q4", 3456, 1152 },
  { "vision_attn_out", "q5", 1152, 1152 },
  { "vision_fc1", "q4", 4304, 1152 },
  { "vision_fc2", "q5", 1152, 4304 },
  { "vision_merger_fc1", "w8", 4608, 4608 },
}

local function vision(prefix, merger_out_n)
  local out = {}
  for _, v in ipairs(VISION) do out[#out + 1] = entry(prefix .. v[1], v[2], v[3], v[4], "vision_step4") end
  out[#out + 1] = entry(prefix .. "vision_merger_fc2", "w8", merger_out_n, 4608, "vision_step4")
  return out
end

local function concat(a, b)
  local out = {}
  for _, e in ipairs(a) do out[#out + 1] = e end
  for _, e in ipairs(b) do out[#out + 1] = e end
  return out
end

suites.entries = {
  qwen3_6_27b = concat({
    entry("27b.output_head", "q6", 248320, 5120, "continuous"),
    entry("27b.draft_head", "q4", 131072, 5120, "continuous"),
    entry("27b.gdn_output_gate", "q5", 6144, 5120, "continuous"),
    entry("27b.mtp_input", "w8", 5120, 10240, "continuous"),
    entry("27b.mtp_attention", "w8", 14336, 5120, "continuous"),
    entry("27b.mtp_gate_up", "w8", 34816, 5120, "continuous"),
    entry("27b.mtp_down", "w8", 5120, 17408, "continuous"),
  }, vision("27b.", 5120)),
  qwen3_6_35b_a3b = concat({
    entry("35b.output_head", "q6", 248320, 2048, "continuous"),
    entry("35b.draft_head", "q4", 131072, 2048, "continuous"),
    entry("35b.mtp_projection", "w8", 2048, 4096, "continuous"),
    entry("35b.dflash_feature", "w8", 2048, 16384, "continuous"),
  }, vision("35b.", 2048)),
}

-- The NVFP4 development problems: T = 1 (the A16 decode point), 17 and 1024
-- (the prefill chunk, the A4 surface's main point where FP4 tensor cores exist).
suites.NVFP4 = {
  { "nvfp4.attention_input", 14336, 5120 },
  { "nvfp4.gdn_input", 16384, 5120 },
  { "nvfp4.mlp_gate_up", 34816, 5120 },
  { "nvfp4.attn_gdn_output", 5120, 6144 },
  { "nvfp4.mlp_down", 5120, 17408 },
}
suites.NVFP4_T = { 1, 17, 1024 }

suites.names = { "qwen3_6_27b", "qwen3_6_35b_a3b", "all", "nvfp4" }

local function key(p) return ("%s|%s|%d|%d|%d"):format(p.qtype, p.policy, p.n, p.k, p.t) end

-- expand(name [, policy]) -> points, each {qtype, policy, n, k, t, labels},
-- in suite order; a point repeated (the union's shared Vision geometries)
-- appears once, with all its labels. policy: the nvfp4 suite's ("a16" default).
function suites.expand(name, policy)
  local lists
  if name == "all" then
    lists = { suites.entries.qwen3_6_27b, suites.entries.qwen3_6_35b_a3b }
  elseif name == "nvfp4" then
    local l = {}
    for _, p in ipairs(suites.NVFP4) do l[#l + 1] = entry(p[1], "nvfp4", p[2], p[3], "nvfp4") end
    lists = { l }
  elseif suites.entries[name] then
    lists = { suites.entries[name] }
  else
    error(("linear_suites: unknown suite %s (known: %s)"):format(tostring(name), table.concat(suites.names, ", ")), 2)
  end
  local points, by_key = {}, {}
  for _, list in ipairs(lists) do
    for _, e in ipairs(list) do
      local ts = e.class == "nvfp4" and suites.NVFP4_T or suites.T_CLASSES[e.class]
      for _, t in ipairs(ts) do
        local p = { qtype = e.qtype, policy = e.class == "nvfp4" and (policy or "a16") or "a16", n = e.n, k = e.k, t = t }
        local id = key(p)
        local old = by_key[id]
        if old then
          old.labels[#old.labels + 1] = e.label
        else
          p.labels = { e.label }
          by_key[id] = p
          points[#points + 1] = p
        end
      end
    end
  end
  return points
end

-- groups(points) -> groups, each {qtype, policy, n, k, t_max, points}: one
-- weight allocation per (qtype, policy, N, K), activations for its largest T;
-- groups in the order their first point appears, points in T order.
function suites.groups(points)
  local groups, by = {}, {}
  for _, p in ipairs(points) do
    local id = ("%s|%s|%d|%d"):format(p.qtype, p.policy, p.n, p.k)
    local g = by[id]
    if not g then
      g = { qtype = p.qtype, policy = p.policy, n = p.n, k = p.k, t_max = 0, points = {} }
      by[id] = g
      groups[#groups + 1] = g
    end
    g.points[#g.points + 1] = p
    if p.t > g.t_max then g.t_max = p.t end
  end
  for _, g in ipairs(groups) do
    table.sort(g.points, function(a, b) return a.t < b.t end)
  end
  return groups
end

return suites
