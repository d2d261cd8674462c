-- gpubench.token_rules: the T-row rules of the GEMV kernel tables
-- (gemv_cuda.lua, gemv_vulkan.lua). A table's rules for a format are a list
-- of { min_tokens =, max_tokens = (optional), changes = { define = value } }
-- tried in order; the first whose range holds T applies.

-- pick(rules, tokens) -> a fresh table of the defines the first matching
-- rule changes (empty when none matches or rules is nil).
return function(rules, tokens)
  local c = {}
  for _, rule in ipairs(rules or {}) do
    if tokens >= rule.min_tokens and tokens <= (rule.max_tokens or math.maxinteger) then
      for name, v in pairs(rule.changes) do c[name] = v end
      break
    end
  end
  return c
end
