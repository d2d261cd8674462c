-- Multi-token GEMV, y[T,m] = x[T,k] . W[m,k]^T for T = 1..8 (issue 17), on the
-- Vulkan kernels (lavapipe in CI, so shapes stay small): the GEMV_TOKENS
-- variants against the FP64 reference per token row, the argument checks, and
-- experiments/gemv_table.lua --tokens end to end.
--
-- Criterion (the GEMV contract): per token and row |y - y_ref| <= 1e-4 * sum_j |w_ij x_j|.

local t = dofile("tests/lua/harness.lua")
local gemv = require "gpubench.gemv"
local gemv_bench = require "gpubench.gemv_bench"
local specs = require "gpubench.gemv_vulkan"

local gc = dofile("tests/lua/gemv_check.lua")(t)
local releasing = gc.releasing -- frees the compiled kernels

-- fn's error text without its "file:line: " prefix must be exactly msg.
local function refused(fn, msg)
  local text = t.errors(fn, msg, true)
  t.eq((text:gsub("^[^:\n]+:%d+: ", "")), msg)
end

local BAD = { { 0, "0" }, { 9, "9" }, { 1.5, "1.5" }, { "x", "x" } }

t.test("every default entry is the one-token kernel, and variant(GEMV_TOKENS = 1) is that entry", function()
  for _, fmt in ipairs(gemv.formats) do
    t.eq(specs[fmt].defines.GEMV_TOKENS, 1, fmt)
    t.eq(specs.variant(fmt, { GEMV_TOKENS = 1 }), specs[fmt], fmt)
    t.truthy(gemv.spec("vulkan", fmt, 1) == specs[fmt], fmt .. ": gemv.spec with tokens = 1 is the table's entry")
    local s2 = gemv.spec("vulkan", fmt, 2)
    t.truthy(gemv.spec("vulkan", fmt, 2) == s2, fmt .. ": one table per tokens (the kernel cache's key)")
    -- the T-row rule's geometry where the format has one (the dense formats), else the entry's
    local changes = specs.token_changes(fmt, 2)
    changes.GEMV_TOKENS = 2
    t.eq(s2, specs.variant(fmt, changes), fmt)
    t.eq(s2.defines.GEMV_T, changes.GEMV_T or specs[fmt].defines.GEMV_T, fmt)
    t.eq(s2.defines.GEMV_NR, changes.GEMV_NR or specs[fmt].defines.GEMV_NR, fmt)
    if not changes.GEMV_T and not changes.GEMV_NR then
      t.eq(gemv.grid(s2, 300, 512), gemv.grid(specs[fmt], 300, 512), fmt .. ": the same grid")
    end
    t.truthy(gemv.spec("vulkan", fmt, 300, 512, 3) == gemv.spec("vulkan", fmt, 3), fmt .. ": with a shape too")
  end
end)

t.test("GEMV_TOKENS outside 1..8 is refused by variant and by gemv's tokens argument", function()
  for _, b in ipairs(BAD) do
    refused(function() specs.variant("q4_k", { GEMV_TOKENS = b[1] }) end,
      ("gemv_vulkan.variant: GEMV_TOKENS=%s must be an integer in 1..8"):format(b[2]))
    refused(function() gemv.spec("vulkan", "q4_k", b[1]) end,
      ("gemv.spec: tokens must be an integer in 1..8, got %s"):format(b[2]))
    refused(function() gemv.spec("vulkan", "q4_k", 64, 256, b[1]) end,
      ("gemv.spec: tokens must be an integer in 1..8, got %s"):format(b[2]))
  end
  t.eq(specs.variant("f32", { GEMV_TOKENS = 8 }).defines.GEMV_TOKENS, 8, "8 is the largest")
end)

t.test("the kernels refuse to compile without GEMV_TOKENS or with it out of range", function()
  local dev = t.device("vulkan")
  for _, fmt in ipairs { "f32", "q6_k" } do
    local d = specs[fmt].defines
    t.errors(function() dev:kernel { file = specs[fmt].file, defines = { GEMV_T = d.GEMV_T, GEMV_NR = d.GEMV_NR } } end,
      "GEMV_TOKENS (token rows of x and y) must be defined", true)
    t.errors(function()
      dev:kernel { file = specs[fmt].file, defines = { GEMV_T = d.GEMV_T, GEMV_NR = d.GEMV_NR, GEMV_TOKENS = 9 } }
    end, "GEMV_TOKENS must be in 1..8", true)
  end
end)

-- m = 300 is not a multiple of any rows_per_group (the last workgroup has rows
-- past the end); k = 512 and 1024. Where the device's rule picks another kernel
-- (Vulkan's integer q4_k at every T), the float T-token kernel, the fallback, too.
for _, fmt in ipairs(gemv.formats) do
  t.test(fmt .. ": T = 1, 2, 3, 8 match the FP64 reference on every token row", function()
    local dev = t.device("vulkan")
    releasing(dev, function()
      for _, tokens in ipairs { 1, 2, 3, 8 } do
        local k = tokens == 3 and 1024 or 512
        local ys = gc.check_tokens(dev, fmt, 300, k, tokens, 100 + tokens)
        if tokens > 1 then
          t.truthy(ys:sub(1, 4 * 300) ~= ys:sub(4 * 300 + 1, 8 * 300), fmt .. ": token rows 0 and 1 differ")
          if gemv.device_spec(dev, fmt, 300, k, tokens) then
            gc.check_tokens(dev, fmt, 300, k, tokens, 100 + tokens, gemv.spec("vulkan", fmt, tokens))
          end
        end
      end
    end)
  end)
end

t.test("the check looks at every token row: token 0's y copied into token 1 fails it", function()
  local dev = t.device("vulkan")
  releasing(dev, function()
    local m, k = 300, 512
    for _, fmt in ipairs { "q4_k", "bf16" } do
      local ys, w, xs = gc.check_tokens(dev, fmt, m, k, 3, 7)
      t.truthy(xs:sub(1, 4 * k) ~= xs:sub(4 * k + 1, 8 * k), "x rows differ")
      local rounding = gemv.spec_for(dev, fmt, m, k, 3).x_rounding -- the integer q4_k's bound
      t.eq(gemv_bench.check(fmt, w, m, k, xs, ys, 3, nil, rounding).ok, true, fmt .. ": the kernel's own y passes")
      local row0 = ys:sub(1, 4 * m)
      local wrong = row0 .. row0 .. ys:sub(8 * m + 1)
      local c = gemv_bench.check(fmt, w, m, k, xs, wrong, 3, nil, rounding)
      t.eq(c.ok, false, fmt .. ": a kernel that reuses token 0 fails")
      t.eq(c.worst_token, 2, fmt .. ": the failing token is named")
      t.truthy(c.failures > m // 2, fmt .. ": most of token 1's rows are off")
      -- and the last token: a kernel that writes only T - 1 rows of y
      local short = ys:sub(1, 8 * m) .. string.rep("\0", 4 * m)
      local c3 = gemv_bench.check(fmt, w, m, k, xs, short, 3, nil, rounding)
      t.eq({ c3.ok, c3.worst_token }, { false, 3 }, fmt .. ": a zero third token fails")
    end
  end)
end)

-- The shared-memory path (lane groups wider than a subgroup) stores one token
-- at a time between barriers; the butterfly and subgroupAdd paths reduce all
-- T * GEMV_NR sums at once. Every path with T = 3 and T = 8.
t.test("reduction paths with tokens: lane groups narrower than, equal to and wider than a subgroup", function()
  local dev = t.device("vulkan")
  local sg = dev.subgroup_size
  local widths = gc.lane_widths(sg)
  releasing(dev, function()
    for _, fmt in ipairs { "f32", "q4_k", "q6_k" } do
      for _, T in ipairs(widths) do
        for _, tokens in ipairs { 3, 8 } do
          local spec = specs.variant(fmt, { GEMV_T = T, GEMV_NR = 3, GEMV_TOKENS = tokens })
          gc.check_tokens(dev, fmt, 29, 512, tokens, 200 + T + tokens, spec)
        end
      end
    end
  end)
end)

t.test("gemv.run and launch_args: tokens checked, buffers sized for T rows of x and y", function()
  local dev = t.device("vulkan")
  local ref = require "gpubench.ref"
  releasing(dev, function()
    local m, k = 4, 256
    local w = ref.random_blocks("q6_k", m, 1)
    local x2 = ref.random_f32(2 * k, 2)
    for _, b in ipairs(BAD) do
      refused(function() gemv.run(dev, "q6_k", w, m, k, x2, b[1]) end,
        ("gemv.run: tokens must be an integer in 1..8, got %s"):format(b[2]))
    end
    refused(function() gemv.run(dev, "q6_k", w, m, k, x2:sub(5), 2) end,
      "gemv.run: x is 2044 bytes, expected tokens*k=2*256=512 f32 values (2048 bytes)")
    refused(function() gemv.run(dev, "q6_k", w, m, k, { 1, 2, 3 }, 2) end,
      "gemv.run: x has 3 entries, expected tokens*k=2*256=512")
    refused(function() gemv.run(dev, "q6_k", w, m, k, x2, 2, specs.q6_k) end,
      "gemv.run: tokens=2, but the given spec's kernel computes GEMV_TOKENS=1")
    local wb <close> = dev:buffer(gemv.buffer_bytes("q6_k", m, k))
    local xb1 <close> = dev:buffer(4 * k)
    local xb2 <close> = dev:buffer(8 * k)
    local yb1 <close> = dev:buffer(4 * m)
    local yb2 <close> = dev:buffer(8 * m)
    for _, b in ipairs(BAD) do
      refused(function() gemv.launch_args(dev, "q6_k", wb, xb2, yb2, m, k, b[1]) end,
        ("gemv.launch_args: tokens must be an integer in 1..8, got %s"):format(b[2]))
    end
    refused(function() gemv.launch_args(dev, "q6_k", wb, xb1, yb2, m, k, 2) end,
      "gemv.launch_args: x buffer is 1024 bytes, q6_k m=4 k=256 tokens=2 needs 2048")
    refused(function() gemv.launch_args(dev, "q6_k", wb, xb2, yb1, m, k, 2) end,
      "gemv.launch_args: y buffer is 16 bytes, q6_k m=4 k=256 tokens=2 needs 32")
    -- A spec in the tokens place (the older form) brings its own tokens. s2 is
    -- the kernel a launch with tokens = 2 uses (the integer q6_k on a device with
    -- integer dot products, else the float one; one launch at T = 2, where x is
    -- quantized per workgroup).
    local s2 = gemv.spec_for(dev, "q6_k", m, k, 2)
    t.eq(s2.defines.GEMV_TOKENS, 2)
    refused(function() gemv.launch_args(dev, "q6_k", wb, xb1, yb2, m, k, s2) end,
      "gemv.launch_args: x buffer is 1024 bytes, q6_k m=4 k=256 tokens=2 needs 2048")
    local kern, grid = gemv.launch_args(dev, "q6_k", wb, xb2, yb2, m, k, 2)
    t.truthy(kern == gemv.kernel(dev, "q6_k", s2), "tokens = 2 launches the GEMV_TOKENS = 2 kernel")
    t.eq(grid, gemv.grid(s2, m, k))
    local y_a = { gemv.run(dev, "q6_k", w, m, k, x2, 2) }
    local y_b = { gemv.run(dev, "q6_k", w, m, k, x2, s2) }
    t.eq(y_b[2], y_a[2], "a spec in the tokens place runs the same kernel")
  end)
end)

t.test("tokens = 1 (and nil) is today's single-vector call", function()
  local dev = t.device("vulkan")
  local ref = require "gpubench.ref"
  releasing(dev, function()
    local w = ref.random_blocks("q6_k", 37, 3)
    local x = ref.random_f32(256, 4)
    local _, y_nil = gemv.run(dev, "q6_k", w, 37, 256, x)
    local _, y_one = gemv.run(dev, "q6_k", w, 37, 256, x, 1)
    t.eq(y_one, y_nil)
    t.truthy(gemv.kernel(dev, "q6_k", gemv.spec("vulkan", "q6_k", 1)) == gemv.kernel(dev, "q6_k"),
      "the same compiled kernel")
  end)
end)

t.test("gemv_bench.prepare with tokens: a checked cell whose x and y hold T rows", function()
  local dev = t.device("vulkan")
  releasing(dev, function()
    local m, k = 64, 512
    local cell <close> = gemv_bench.prepare(dev, "q6_k", m, k, { tokens = 3 })
    t.eq({ cell.check.ok, cell.tokens, cell.check.failures }, { true, 3, 0 })
    local l = cell.launches[1] -- kern, grid, block, w, x, y, m, k
    t.eq({ l[5].size, l[6].size }, { 4 * 3 * k, 4 * 3 * m })
    t.truthy(l[1] == gemv.kernel(dev, "q6_k", gemv.spec_for(dev, "q6_k", m, k, 3)), "the 3-token kernel the device takes (one launch: x per workgroup)")
    t.eq(cell.working_set, gemv.buffer_bytes("q6_k", m, k) + 4 * 3 * k + 4 * 3 * m)
    local row = gemv_bench.row(cell, { ms = 1 }, 1, { l2_bytes = 0 })
    t.eq({ row.tokens, row.gbs, row.model_bytes },
      { 3, cell.weight_bytes / 1e6, cell.weight_bytes + 4 * (3 * k + 3 * m) }, "GB/s counts the weights once")
    local spec_cell <close> = gemv_bench.prepare(dev, "f16", m, k, { spec = specs.variant("f16", { GEMV_TOKENS = 3 }) })
    t.eq(spec_cell.tokens, 3, "a variant's GEMV_TOKENS gives the tokens")
    t.errors(function() gemv_bench.prepare(dev, "f16", m, k, { tokens = 9 }) end,
      "gemv_bench.prepare: tokens must be an integer in 1..8, got 9", true)
  end)
end)

-- experiments/gemv_table.lua in a child process; returns the output, the exit
-- code and the JSON records (when it wrote them).
local function gemv_table(env, args)
  local report = require "gpubench.report"
  local js = os.tmpname()
  local cmd = ("%s %q --backend vulkan experiments/gemv_table.lua %s --json %q 2>&1")
    :format(env, t.interpreter(), args, js)
  local p = assert(io.popen(cmd))
  local out = p:read("a")
  local _, _, code = p:close()
  local ok, recs = pcall(report.read_jsonl, js)
  os.remove(js)
  return out, code, ok and recs or nil
end

t.test("gemv_table --tokens 2: every row is T = 2, checked against the oracle", function()
  t.device("vulkan") -- skips unless a Vulkan device exists
  local out, code, recs = gemv_table("M=512 K=512 ITERS=4",
    "--tokens 2 --kernels q4_k,bf16 --rounds 1 --read-gbs 10 --peak-gbs 10")
  t.eq(code, 0, out)
  t.truthy(out:find("matched the FP64 oracle", 1, true), out)
  t.truthy(out:find("T=2 tokens per launch", 1, true), "the title says T: " .. out)
  t.truthy(out:find("\nkernel +shape +m +k +T +ms +GB/s") ~= nil, "a T column: " .. out)
  local cells = {}
  for _, r in ipairs(recs) do
    if r.type == "cell" then cells[#cells + 1] = r end
  end
  t.eq(#cells, 2)
  for _, c in ipairs(cells) do
    t.eq({ c.tokens, c.m, c.k }, { 2, 512, 512 }, c.kernel)
    t.truthy(c.max_rel_err < 1e-4, c.kernel .. " oracle error")
    t.eq(c.weight_bytes, gemv.weight_bytes(c.kernel, 512, 512))
    -- ms is JSON null where the two-point time was refused as noise (CI's ASan build at ITERS=4)
    if type(c.ms) == "number" then
      t.near(c.gbs, c.weight_bytes / (c.ms * 1e6), 1e-9 * c.gbs, c.kernel .. ": GB/s = weight bytes / time")
    else
      t.eq(c.status, "noise", c.kernel .. ": no time only where it was noise")
    end
  end
  t.eq(cells[1].kernel, "q4_k")
  t.eq(cells[2].kernel, "bf16")
end)

t.test("gemv_table refuses tokens outside 1..8 (flag and T) with exit status 2", function()
  t.device("vulkan")
  local out, code = gemv_table("M=512 K=512", "--tokens 9 --kernels q4_k")
  t.eq(code, 2, out)
  t.truthy(out:find("--tokens=9 is out of range: must be at most 8", 1, true), out)
  out, code = gemv_table("T=0 M=512 K=512", "--kernels q4_k")
  t.eq(code, 2, out)
  t.truthy(out:find("T=0 is out of range: must be at least 1", 1, true), out)
  out, code = gemv_table("M=512 K=512", "--tokens 1.5 --kernels q4_k")
  t.eq(code, 2, out)
  t.truthy(out:find("--tokens=1.5 is not a positive integer", 1, true), out)
end)

t.run()
