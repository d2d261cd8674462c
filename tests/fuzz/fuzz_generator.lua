-- The gpu API fuzzer's generator: value atoms and the statement families,
-- a pure function of a seed and the options (tests/fuzz/README.md). Loaded by
-- tests/fuzz/gpu_fuzz.lua with loadfile(...)(ctx); returns generate(seed, ncalls).
local ctx = ...
local o, new_rng, unpack = ctx.o, ctx.new_rng, table.unpack
local SRC, K, BAD_SRC, BAD_FILES = ctx.SRC, ctx.K, ctx.BAD_SRC, ctx.BAD_FILES
local B, U, I, F, W = ctx.B, ctx.U, ctx.I, ctx.F, ctx.W

-- ------------------------------------------------------------------ values
-- Value atoms: {expr, value}. The value is what the expression evaluates to
-- (for the generator's bookkeeping); nil for objects and closures.
local VENV = { math = math, string = string }
local function atom(expr)
  local f = load("return " .. expr, "=atom", "t", VENV)
  local ok, v = pcall(f)
  return { expr, ok and v or nil }
end
local function atoms(list)
  local r = {}
  for _, e in ipairs(list) do r[#r + 1] = atom(e) end
  return r
end

local NUM_SMALL = atoms { "0", "1", "2", "3", "4", "5", "7", "8", "9", "12", "15", "16", "17", "31", "32",
                          "33", "63", "64", "65", "100", "127", "128", "255", "256", "257", "1000", "1024" }
local NUM_ODD = atoms { "-1", "-2", "-64", "0.5", "1.5", "-2.5", "3.0", "64.0", "-0.0", "1e-300", "2^31", "2^31-1",
                        "2^32-1", "2^32", "2^32+1", "4294967295", "4294967296", "2147483647", "2147483648",
                        "-2147483648", "-2147483649", "2^53", "2^53+1", "2^63", "-2^63", "2^64",
                        "math.maxinteger", "math.mininteger", "math.maxinteger - 1", "1e308", "-1e308",
                        "math.huge", "-math.huge", "(0/0)", "-(0/0)", "math.pi", "65535", "65536", "1025",
                        "134217728", "134217729", "16777216", "0x7fffffffffffffff", "0xffffffffffffffff" }
local STRS = atoms { '""', '"a"', '"abc"', '"16"', '" 8 "', '"0x10"', '"1e3"', '"-1"', '"nan"', '"inf"',
                     '"vulkan"', '"cuda"', '"metal"', '"VULKAN"', '"vulkan\\0x"', '"f32"', '"f16"', '"bf16"',
                     '"u8"', '"f64"', '"uniform"', '"normal"', '"clean"', '"write"', '"none"', '"main"',
                     '"buffer"', '"u32"', '"i32"', '"u64"', 'string.rep("x", 300)', 'string.rep("\\255", 257)',
                     '"\\0\\1\\2\\3"', '"%s%s%n%d"', '"gpubench"', '"64"', '"1.5"', '"  "', '"\\n"' }
local OTHER = { "nil", "true", "false", "{}", "{1}", "{1, 2, 3}", "{64, 1, 1}", "{0}", "{-1}", "{1.5}",
                "{1, 1, 1, 1}", "{x = 1}", "{nil, 2}", "{2^32}", '{"1"}', "{{}}", "function() end", "print",
                "io.stdout", "coroutine.create(print)", "gpu", "gpu.u32(1)", "gpu.f32(0.5)", "gpu.i32(-1)",
                "gpu.u64(2^40)", "FZ_BADIDX", "FZ_LIAR", "FZ_ERR", "FZ_NAMED", "FZ_HUGELEN", "math.pi",
                "setmetatable({}, {__index = function(t, k) return 64 end})", "{n = 1}", "M.buffer",
                "debug.getregistry()", "SRC" }

-- ------------------------------------------------------------------ the generator
-- Each sequence is a list of one-line Lua statements over the slots O.d1,
-- O.b2, ... (devices, buffers, kernels, timers, batches, scalars). A slot is
-- assigned once, so it holds the object its statement made or nil.
local function generate(seed, ncalls)
  local R = new_rng(seed)
  local out = {}
  local S = { d = {}, b = {}, k = {}, t = {}, x = {}, s = {} } -- slot info by kind
  local count = { d = 0, b = 0, k = 0, t = 0, x = 0, s = 0 }
  local function new_slot(kind, info)
    count[kind] = count[kind] + 1
    S[kind][count[kind]] = info or {}
    return "O." .. kind .. count[kind], count[kind]
  end
  -- an existing slot of a kind (the newest ones more often), or nil when none
  -- (slots whose statement was likely to succeed are preferred)
  local function slot(kind)
    local n = count[kind]
    if n == 0 then return nil end
    if R.chance(0.75) then
      local good = {}
      for j = 1, n do
        local info = S[kind][j]
        if info.size or info.good or (kind ~= "k" and info.kd) then good[#good + 1] = j end
      end
      if #good > 0 then
        local j = R.chance(0.5) and good[#good] or R.pick(good)
        return "O." .. kind .. j, j
      end
    end
    local i = R.chance(0.6) and n or R.int(1, n)
    return "O." .. kind .. i, i
  end
  local function any_obj()
    local kinds = {}
    for _, k in ipairs { "d", "b", "k", "t", "x", "s" } do
      if count[k] > 0 then kinds[#kinds + 1] = k end
    end
    if #kinds == 0 then return "O.b1" end
    return (slot(R.pick(kinds)))
  end
  -- any value at all: {expr, value}
  local function V()
    local c = R.int(1, 100)
    if c <= 20 then return R.pick(NUM_SMALL)
    elseif c <= 45 then return R.pick(NUM_ODD)
    elseif c <= 65 then return R.pick(STRS)
    elseif c <= 85 then return { R.pick(OTHER) }
    else return { any_obj() } end
  end
  local function Ve() return V()[1] end
  -- A tame sequence (40%) gets far fewer wrong arguments, so that its calls
  -- reach the deeper paths (batches that run, cold samples, chunked submits).
  local tame = R.chance(0.4)
  -- an object of a kind, mostly right, sometimes anything
  local function obj(kind, p_wrong)
    local e = slot(kind)
    if e and not R.chance((p_wrong or 0.1) * (tame and 0.2 or 1)) then return e end
    if R.chance(0.5) then return any_obj() end
    return "(" .. Ve() .. ")" -- parenthesized: it may be the receiver of a method call
  end
  local function num(p_odd) -- a number expression, small or odd
    if R.chance(p_odd or 0.2) then return R.pick(NUM_ODD)[1] end
    return R.pick(NUM_SMALL)[1]
  end
  -- integer value as lua_tointegerx reads it (numbers and numeric strings), or nil
  local function toint(v)
    if type(v) == "string" then v = tonumber(v) end
    if type(v) ~= "number" then return nil end
    return math.tointeger(v)
  end
  local function emit(s) out[#out + 1] = s end
  -- c in 1..100 for a choice whose valid branches are c <= valid
  local function choice(valid)
    if tame and R.chance(0.95) then return R.int(1, valid) end
    return R.int(1, 100)
  end

  local function dev() return obj("d", 0.08) end

  -- sizes, offsets and lengths ------------------------------------------------
  local SIZES = { 1, 2, 3, 4, 5, 7, 8, 12, 15, 16, 17, 31, 32, 63, 64, 100, 255, 256, 257, 1000, 1023, 1024,
                  1025, 4096, 4097, 16384, 65536, 65537, 262144 }
  local function size_atom()
    local c = choice(83)
    if c <= 80 then local n = R.pick(SIZES); return { tostring(n), n } end
    if c <= 83 then return R.pick(atoms { "1 << 20", "(1 << 24) + 3", "134217728" }) end
    if c <= 93 then return R.pick(atoms { "0", "-1", "1.5", '"16"', '"0x40"', "2^31", "2^32", "2^40", "2^62",
                                          "134217729", "math.maxinteger", "math.huge", "(0/0)", "-0.0", "64.0" }) end
    return V()
  end
  local function buf_size(e) -- known byte size of a buffer slot expression, or nil
    local i = e and tonumber(e:match("^O%.b(%d+)$"))
    return i and S.b[i] and S.b[i].size
  end
  local function offset_for(size)
    local c = R.int(1, 100)
    if c <= 25 then return nil end
    if c <= 55 then return tostring(R.pick { 0, 1, 2, 3, 4, 8, 16 }) end
    if size and c <= 80 then return tostring(R.pick { size - 1, size, size + 1, size // 2, size - 4 }) end
    return num(0.7)
  end
  local function args_str(list)
    -- trailing nils are dropped so that "absent" and "nil" both get tried
    local n = #list
    local t = {}
    for i = 1, n do t[i] = list[i] or "nil" end
    return table.concat(t, ", ")
  end
  local function maybe_trim(list)
    while #list > 0 and list[#list] == nil do list[#list] = nil end
    if #list > 0 and R.chance(0.3) then list[#list] = nil end
    return list
  end

  -- geometry -------------------------------------------------------------
  local function dims_value(e)
    -- {x, y, z} the way lb_check_dim3 reads the expression, or nil when refused
    local f = load("return " .. e, "=dim", "t", VENV)
    local ok, v = pcall(f)
    if not ok then return nil end
    local function one(x)
      local i = toint(x)
      if type(x) == "string" then return nil end -- a string is not a number here
      if not i or i < 1 or i > 0xffffffff then return nil end
      return i
    end
    if type(v) == "number" then
      local x = one(v)
      return x and { x, 1, 1 }
    end
    if type(v) ~= "table" then return nil end
    local n = #v
    if n < 1 or n > 3 then return nil end
    local r = {}
    for j = 1, 3 do
      local x = v[j]
      if x == nil then r[j] = 1
      else
        if type(x) ~= "number" then return nil end
        r[j] = one(x)
        if not r[j] then return nil end
      end
    end
    return r
  end
  local function grid_expr()
    local c = choice(80)
    if c <= 55 then return tostring(R.int(1, 64)) end
    if c <= 75 then return ("{%d, %d, %d}"):format(R.int(1, 16), R.int(1, 4), R.int(1, 2)) end
    if c <= 80 then return ("{%d}"):format(R.int(1, 64)) end
    return R.pick { "0", "-1", "1.5", "65536", "2^32", "2^32-1", "4294967296", "{0, 1, 1}", "{1, 0}",
                    "{65536, 1, 1}", "{1, 1, 1, 1}", "{}", '"4"', "{\"4\"}", "{1.5}", "nil", "(0/0)",
                    "math.huge", "{1, 65536}", "{1, 1, 2^32}", "true", "{x = 4}", "FZ_BADIDX" }
  end
  local function block_expr(kd)
    local c = choice(70)
    local ls = kd and kd.ls
    if ls and ls ~= "spec" and c <= 70 then
      if ls[2] == 1 and ls[3] == 1 and R.chance(0.7) then return tostring(ls[1]) end
      return ("{%d, %d, %d}"):format(ls[1], ls[2], ls[3])
    end
    if ls == "spec" and c <= 70 then
      -- spec: the shader's specialized dimensions take any size (kd.spec_dims of them)
      if (kd.spec_dims or 1) >= 2 and R.chance(0.4) then return R.pick { "{8, 8}", "{16, 2, 1}", "{32, 32}", "{3, 5}" } end
      return R.pick { "1", "7", "32", "64", "256", "1024", "{100}", "{48, 1, 1}" }
    end
    if c <= 85 then return R.pick { "1", "32", "64", "256", "{64, 1, 1}", "{4, 4, 4}", "16", "8" } end
    return R.pick { "0", "-1", "1025", "{1024, 2}", "{2048}", "{1, 1, 1025}", "2^32", "{}", "nil",
                    "{64, 0, 1}", "1.5", '"64"', "{33, 33}" }
  end

  -- kernel arguments -----------------------------------------------------
  -- a scalar argument of the given kind: {expr, bits} where bits is the
  -- 32-bit pattern the shader would read (nil when the value would be refused)
  local function scalar_arg(kind, small_bias)
    local c = R.int(1, 100)
    if kind == F then
      local e = R.pick { "0.5", "1", "-1.5", "0", "2.0", "1e30", "(0/0)", "math.huge", "-0.0", "gpu.f32(1.5)" }
      return { e }
    end
    if c <= 70 then
      local v = small_bias and R.int(0, small_bias) or R.int(0, 64)
      if kind == I and R.chance(0.3) then v = -v end
      if R.chance(0.25) then
        local ctor = kind == U and "u32" or kind == I and "i32" or kind == W and "u64" or "u32"
        return { ("gpu.%s(%d)"):format(ctor, v), v }
      end
      return { tostring(v), v }
    end
    local s = slot("s")
    if s and c <= 85 then
      local info = S.s[tonumber(s:match("%d+"))]
      return { s, info.bits, skind = info.kind }
    end
    local a = R.pick(NUM_ODD)
    return { a[1], toint(a[2]) }
  end

  -- arguments for a launch of kernel slot ks (info ki): a list of atoms
  -- {expr, bits=, buf=} and whether they were made to fit the kernel
  local function launch_args(ki)
    local kd = ki and ki.kd
    local list = {}
    if kd and R.chance(tame and 0.97 or 0.85) then
      for pi, kind in ipairs(ki.params) do
        if kind == B then
          local e = slot("b") or "O.b1"
          if R.chance(0.04) then e = Ve() end
          list[pi] = { e, buf = e }
        else
          local a = scalar_arg(kind, kd.spin and 2000 or nil)
          if kd.spin and pi == 2 and R.chance(o.hang) then a = { "2^32-1", 0xffffffff } end
          if R.chance(0.04) then a = V() end
          list[pi] = a
        end
      end
      if R.chance(0.03) then list[#list + 1] = { Ve() } end
      if R.chance(0.03) then list[#list] = nil end
    else
      for _ = 1, R.int(0, 5) do list[#list + 1] = V() end
    end
    return list
  end

  -- Whether a launch described by its pieces could run out of bounds (or
  -- for too long): true means the generator must not emit it as it is.
  local function launch_danger(ki, gexpr, bexpr, list, count)
    if not ki or not ki.kd then return false end
    local kd = ki.kd
    local g = dims_value(gexpr)
    local b = dims_value(bexpr)
    if not g or not b then return false end -- refused before it reaches the device
    if #list ~= #ki.params then return false end
    local sizes, vals = {}, {}
    for pi, kind in ipairs(ki.params) do
      local a = list[pi]
      if kind == B then
        local sz = buf_size(a[1])
        if a[1]:match("^O%.b%d+$") then
          if not sz then return false end -- that buffer was never made: refused
          sizes[pi] = sz
        else
          -- anything else in a buffer position is refused, but an object slot
          -- of another kind could have been given a buffer's metatable
          if a[1]:match("^O%.") and o.debug then return true end
          return false
        end
      else
        -- the 32-bit pattern the shader reads, or nil when the call is refused
        local e = a[1]
        local bits
        if e:match("^O%.s%d+$") then
          if a.skind ~= kind then return false end
          bits = a[2] -- nil for an f32 scalar (or one of unknown value)
        elseif e:match("^gpu%.") then
          if e:match("^gpu%.(%w+)%(") ~= kind then return false end
          bits = a[2]
        else
          local ok, x = pcall(load("return " .. e, "=a", "t", VENV))
          if not ok or type(x) ~= "number" then return false end
          if kind == F then
            bits = string.unpack("<I4", string.pack("<f", x))
          else
            local v = math.tointeger(x)
            if not v then return false end
            if kind == U and (v < 0 or v > 0xffffffff) then return false end
            if kind == I and (v < -2 ^ 31 or v > 2 ^ 31 - 1) then return false end
            if kind == W and v < 0 then return false end
            bits = v & 0xffffffff
          end
        end
        if bits == nil then
          if kd.params[pi] == U then return true end -- an unknown value the shader reads as a count
          bits = 0
        end
        vals[pi] = bits
      end
    end
    -- the block must match (or the launch is refused)
    if kd.ls ~= "spec" then
      if b[1] ~= kd.ls[1] or b[2] ~= kd.ls[2] or b[3] ~= kd.ls[3] then return false end
    elseif b[1] * b[2] * b[3] > 1024 then return false end
    for j = 1, 3 do if g[j] > 65535 then return false end end
    -- cost: thread-steps a CPU device runs
    local groups = g[1] * g[2] * g[3]
    local threads = groups * b[1] * b[2] * b[3]
    local iters = kd.spin and vals[2] or 1
    if kd.spin and iters == 0xffffffff then iters = 1 end -- a deliberate never-ending kernel (--hang)
    local cnt = count or 1
    if cnt == 0xffffffff then cnt = 1 end -- a deliberate never-ending batch (--hang)
    if threads * math.max(iters, 1) * cnt > 3e7 or groups * cnt > 200000 then return true end
    if kd.safe then return false end
    return not kd.check(g, b, sizes, vals)
  end

  local function kernel_info(ks)
    local i = ks and tonumber(ks:match("^O%.k(%d+)$"))
    return i and S.k[i]
  end

  -- a launch's pieces for kernel slot expression ks, made safe or nil
  local function safe_launch(ks, count)
    local ki = kernel_info(ks)
    for _ = 1, 6 do
      local g, b, list = grid_expr(), block_expr(ki and ki.kd), launch_args(ki)
      if not launch_danger(ki, g, b, list, count) then return g, b, list end
    end
    return nil
  end
  local function exprs(list)
    local t = {}
    for i, a in ipairs(list) do t[i] = a[1] end
    return t
  end

  -- statement families ---------------------------------------------------
  local F_ = {}

  F_.open = function()
    local c = R.int(1, 100)
    if count.d >= 6 then c = 90 end -- enough devices: only the refused kinds
    if c <= 55 then
      emit(new_slot("d", { good = true }) .. " = gpu.open{backend = \"vulkan\"}")
    elseif c <= 65 then
      emit(new_slot("d") .. " = " .. R.pick { "gpu.open()", "gpu.open{}", "gpu.open{index = 0}",
                                             "gpu.open{backend = \"vulkan\", index = 0}", "gpu.open(nil)",
                                             "gpu.open{index = 0.0}", "gpu.open{backend = \"vulkan\", index = \"0\"}" })
    else
      emit(R.pick {
        "gpu.open(" .. Ve() .. ")",
        "gpu.open{backend = " .. Ve() .. "}",
        "gpu.open{backend = \"vulkan\", index = " .. Ve() .. "}",
        "gpu.open{backend = " .. Ve() .. ", index = " .. Ve() .. "}",
        "gpu.open{backend = \"cuda\"}",
        "gpu.open{backend = \"vulkan\", index = 1}",
        "gpu.open{index = 2^31}",
        "gpu.open(FZ_BADIDX)",
        "gpu.open(FZ_LIAR)",
        "gpu.open({backend = \"vulkan\"}, " .. Ve() .. ")",
      })
    end
  end

  F_.discover = function()
    emit(R.pick {
      "local _ = gpu.devices()", "local _ = gpu.backends()", "local _ = gpu.live()", "local _ = gpu.clock()",
      "local _ = gpu.isatty(" .. Ve() .. ")", "local _ = gpu.root()", "local _ = gpu.version .. gpu.git",
      "local _ = gpu.max_launches + 1", "local _ = gpu.devices(" .. Ve() .. ")", "local _ = gpu.isatty(1)",
      "local _ = gpu.isatty(2^40)", "local _ = gpu.isatty(-1)",
    })
  end

  F_.device = function()
    local d = dev()
    local c = R.int(1, 100)
    if tame and c > 96 and R.chance(0.8) then c = 1 end -- tame sequences keep their devices
    if c <= 15 then emit(d .. ":sync()")
    elseif c <= 22 then emit(d .. ":flush_l2()")
    elseif c <= 29 then emit(d .. ":flush_l2(\"write\")")
    elseif c <= 33 then emit(d .. ":flush_l2(" .. Ve() .. ")")
    elseif c <= 43 then emit(d .. ":profiler_start(" .. (R.chance(0.5) and "" or Ve()) .. ")")
    elseif c <= 53 then emit(d .. ":profiler_stop(" .. (R.chance(0.5) and "" or Ve()) .. ")")
    elseif c <= 70 then
      emit("local _ = " .. d .. R.pick { ".name", ".info", ".closed", ".backend", ".flush_bytes", ".max_groups",
                                         "[" .. Ve() .. "]", ".sync", ".free" })
    elseif c <= 72 then emit("local _ = tostring(" .. d .. ")")
    elseif c <= 75 then
      emit(R.pick { "local _ = " .. d .. ":clocks()", "local _ = " .. d .. ":clocks(" .. Ve() .. ")",
                    ("local _ = %s:vendor_gemm{n = %s, k = %s, t = %s}"):format(d, R.pick { "64", Ve() }, R.pick { "64", Ve() }, R.pick { "1", Ve() }),
                    ("local _ = %s:vendor_gemm(%s)"):format(d, Ve()),
                    ("local _ = %s:vendor_gemm{n = 8, k = 8, t = 1, %s = 1}"):format(d, R.pick { "m", "x", "[1]", "[true]" }) })
    elseif c <= 83 then
      local m = R.pick { "sync", "flush_l2", "profiler_start", "profiler_stop", "buffer", "kernel", "timer",
                         "record", "batch", "free", "clocks", "vendor_gemm" }
      emit(("M.device.%s(%s, %s)"):format(m, Ve(), Ve()))
    elseif c <= 89 then emit(("MT.device.__index(%s, %s)"):format(Ve(), Ve()))
    elseif c <= 96 then emit(("MT.device.__tostring(%s)"):format(Ve()))
    else emit(d .. ":free()") end
  end

  F_.buffer_new = function()
    local a = size_atom()
    local d = dev()
    local name, i = new_slot("b")
    emit(("%s = %s:buffer(%s)"):format(name, d, a[1]))
    local n = toint(a[2])
    S.b[i].size = (n and n >= 1 and n <= 134217728 and type(a[2]) ~= "table") and n or nil
  end

  local function fill_random_table(size)
    local f = {}
    if R.chance(0.7) then f[#f + 1] = "dtype = " .. R.pick { '"f32"', '"f16"', '"bf16"', '"u8"', '"f64"', '""',
                                                              "1", "nil", "{}", Ve() } end
    if R.chance(0.5) then f[#f + 1] = "dist = " .. R.pick { '"uniform"', '"normal"', '"gauss"', "2", Ve() } end
    if R.chance(0.4) then f[#f + 1] = "seed = " .. num(0.5) end
    for _, k in ipairs { "lo", "hi", "mean", "std" } do
      if R.chance(0.25) then f[#f + 1] = k .. " = " .. R.pick { "0", "1", "-1", "2.5", "-3", "1e38", "1e300",
                                                                "(0/0)", "math.huge", "-math.huge", '"1"', Ve() } end
    end
    if R.chance(0.35) then f[#f + 1] = "offset = " .. (offset_for(size) or "0") end
    if R.chance(0.35) then f[#f + 1] = "n = " .. (offset_for(size and size // 4) or "1") end
    return "{" .. table.concat(f, ", ") .. "}"
  end

  F_.buffer_op = function()
    local b = obj("b", 0.07)
    local size = buf_size(b)
    local c = R.int(1, 100)
    if c <= 18 then
      local s = R.pick { '""', '"x"', '"abcd"', 'string.rep("\\1", 3)', 'string.rep("\\7", 16)',
                         'string.rep("z", 64)', 'string.rep("q", 1000)', 'string.rep("w", 65537)',
                         'string.rep("\\0", 4096)', "FZ_STR", Ve() }
      if size and R.chance(0.3) then s = ('string.rep("u", %d)'):format(R.pick { size, size + 1, math.max(size - 1, 0) }) end
      emit(("%s:upload(%s)"):format(b, args_str(maybe_trim { s, offset_for(size) })))
    elseif c <= 33 then
      emit(("local _ = %s:download(%s)"):format(b, args_str(maybe_trim { offset_for(size), offset_for(size) })))
    elseif c <= 50 then
      local p = R.pick { "0", "255", "256", "-1", "1.5", "7", '"ab"', '"abcd"', '"abc"', '""', 'string.rep("p", 256)',
                         'string.rep("p", 257)', '"\\0"', "{}", Ve() }
      emit(("%s:fill(%s)"):format(b, args_str(maybe_trim { p, offset_for(size), offset_for(size) })))
    elseif c <= 63 then
      local t = R.chance(0.9) and fill_random_table(size) or Ve()
      emit(("%s:fill_random(%s)"):format(b, t))
    elseif c <= 78 then
      local src = R.chance(0.15) and b or obj("b", 0.1)
      local ss = buf_size(src)
      emit(("%s:copy_from(%s)"):format(b, args_str(maybe_trim { src, offset_for(size), offset_for(ss), offset_for(size) })))
    elseif c <= 86 then
      emit("local _ = " .. R.pick { "#" .. b, b .. ".size", b .. ".closed", b .. "[" .. Ve() .. "]",
                                    "tostring(" .. b .. ")", b .. ".upload" })
    elseif c <= 93 then
      local m = R.pick { "upload", "download", "fill", "fill_random", "copy_from", "free" }
      emit(("M.buffer.%s(%s)"):format(m, args_str { Ve(), Ve(), R.chance(0.5) and Ve() or nil }))
    elseif c <= 95 then
      emit(R.pick { "MT.buffer.__len(" .. Ve() .. ")", "MT.buffer.__index(" .. Ve() .. ", \"size\")",
                    "MT.buffer.__tostring(" .. Ve() .. ")" })
    else
      if tame and R.chance(0.8) then emit("local _ = " .. b .. ".size") else emit(b .. ":free()") end
    end
  end

  local function defines_expr()
    local c = R.int(1, 100)
    if c <= 50 then return nil end
    if c <= 85 then
      local f = {}
      for _ = 1, R.int(0, 3) do
        local name = R.pick { "FOO", "BAR", "FAST", "ROWS", "_Z9", "FUZZ_X", "FOO", "FAST" }
        local v = R.pick { "true", "false", "1", "0", '""', '"1"', '"x y"', '"2.5"', '"(("', "64", "1.5",
                           '"1\\n#define FUZZ_INJECTED 1"', '"\\\\"', "2^40", "(0/0)" }
        f[#f + 1] = name .. " = " .. v
      end
      return "{" .. table.concat(f, ", ") .. "}"
    end
    return R.pick { "{[1] = 2}", '{["1X"] = 1}', '{["A B"] = 1}', '{[""] = 1}', '{["a-b"] = 1}', "{FOO = {}}",
                    "{FOO = print}", "{FOO = io.stdout}", "{[true] = 1}", "42", '"FOO"', "true", "FZ_BADIDX",
                    "{FOO = FZ_ERR}", '{[string.rep("D", 5000)] = 1}', "{FOO = string.rep(\"v\", 100000)}",
                    '{GL_core_profile = 1}', '{__LINE__ = 1}' }
  end

  local function params_expr(kd)
    local c = R.int(1, 100)
    if c <= 75 then return nil end
    if kd and c <= 88 then
      -- same sizes, other integer kinds: accepted by the check, read differently
      local p = {}
      for i, k in ipairs(kd.params) do
        if k == U or k == I or k == F then p[i] = '"' .. R.pick { U, I, F } .. '"' else p[i] = '"' .. k .. '"' end
      end
      if R.chance(0.2) then p[#p + 1] = '"u32"' end
      if R.chance(0.1) and #p > 0 then p[#p] = nil end
      return "{" .. table.concat(p, ", ") .. "}"
    end
    return R.pick { "{}", '{"buffer"}', '{"u32"}', '{"float"}', '{1}', '{"buffer", "buffer", "u32"}', "true",
                    '"buffer"', "{FZ_ERR}", "{{}}", '{"u64", "u64"}', '{"buffer", nil, "u32"}',
                    "{" .. string.rep('"u32", ', 33) .. "}", "FZ_BADIDX" }
  end

  -- the kinds a params expression gives read_params, or nil when it is refused
  local function params_list(pe)
    local f = load("return " .. pe, "=p", "t", VENV)
    local ok, t = pcall(f)
    if not ok or type(t) ~= "table" then return nil end
    local r = {}
    for j = 1, #t do
      local q = t[j]
      if not (q == B or q == U or q == I or q == F or q == W) then return nil end
      r[j] = q
    end
    return r
  end

  F_.kernel_new = function(force_plain)
    local c = force_plain and 1 or R.int(1, 100)
    local d = force_plain and "O.d1" or dev()
    local name, i = new_slot("k")
    local fields = {}
    if c <= 70 then
      local kd = R.pick(K)
      -- most loads are plain (they succeed, and later calls find a kernel);
      -- the rest add random defines, include_dirs, entries and params
      local plain = force_plain or R.chance(tame and 0.95 or 0.6)
      if kd.file then fields[#fields + 1] = ("file = %q"):format(kd.file)
      else fields[#fields + 1] = "source = SRC." .. kd.src end
      if kd.defines then fields[#fields + 1] = "defines = " .. kd.defines
      elseif plain then -- nothing more
      else
        local de = defines_expr()
        if de then fields[#fields + 1] = "defines = " .. de end
      end
      if kd.include_dirs then fields[#fields + 1] = ("include_dirs = {%q}"):format(kd.include_dirs[1])
      elseif not plain and R.chance(0.2) then
        fields[#fields + 1] = "include_dirs = " .. R.pick { "{}", '{"tests/kernels/vulkan"}', '{"/nonexistent"}',
                                                            "{1}", '"tests"', '{"", "/"}', "{FZ_ERR}" }
      end
      if not plain and R.chance(0.2) then fields[#fields + 1] = "entry = " .. R.pick { '"main"', '"foo"', '""', "1", Ve() } end
      local pe = not plain and params_expr(kd) or nil
      if pe then fields[#fields + 1] = "params = " .. pe end
      -- what the load gives when it succeeds: the declared (or overriding) kinds
      local params = kd.params
      if pe then
        local list = params_list(pe)
        local ok = list and #list == #kd.params
        for j = 1, ok and #list or 0 do
          if (list[j] == B) ~= (kd.params[j] == B) or (list[j] == W) ~= (kd.params[j] == W) then ok = false end
        end
        params = ok and list or nil -- nil: the load is refused
      end
      S.k[i] = params and { kd = kd, params = params, good = plain } or {}
    elseif c <= 85 then
      fields[#fields + 1] = "source = SRC." .. R.pick(BAD_SRC)
      if R.chance(0.3) then fields[#fields + 1] = "include_dirs = {\"tests/fuzz/kernels\", \"tests/kernels/vulkan\"}" end
      if R.chance(0.2) then fields[#fields + 1] = "defines = " .. (defines_expr() or "{}") end
    elseif c <= 93 then
      fields[#fields + 1] = ("file = %q"):format(R.pick(BAD_FILES))
      if R.chance(0.3) then fields[#fields + 1] = "include_dirs = {\"tests/fuzz/kernels\"}" end
    else
      -- broken field combinations
      local pick = R.int(1, 8)
      if pick == 1 then fields = { 'file = "tests/kernels/vulkan/inc.comp"', "source = SRC.inc" }
      elseif pick == 2 then fields = {}
      elseif pick == 3 then fields = { "file = " .. Ve() }
      elseif pick == 4 then fields = { "source = " .. Ve() }
      elseif pick == 5 then fields = { "source = SRC.inc", "entry = " .. Ve() }
      elseif pick == 6 then fields = { "source = SRC.inc", "include_dirs = " .. Ve() }
      elseif pick == 7 then fields = { "source = SRC.inc", "params = " .. Ve() }
      else fields = { "source = SRC.inc", "defines = " .. Ve() } end
      -- these load the increment shader when the odd field happens to be harmless
      if pick >= 5 then S.k[i] = { kd = K.inc_src, params = K.inc_src.params } end
    end
    if c > 93 and R.chance(0.3) then
      emit(("%s = %s:kernel(%s)"):format(name, d, R.pick { Ve(), "nil", "FZ_BADIDX", "FZ_LIAR" }))
    else
      emit(("%s = %s:kernel{%s}"):format(name, d, table.concat(fields, ", ")))
    end
  end

  F_.compile = function()
    local f = {}
    f[#f + 1] = "backend = " .. R.pick { '"vulkan"', '"vulkan"', '"cuda"', "nil", Ve() }
    if R.chance(0.5) then
      f[#f + 1] = "source = SRC." .. (R.chance(0.5) and R.pick(BAD_SRC) or R.pick(K).src or "safe3")
    else
      f[#f + 1] = ("file = %q"):format(R.chance(0.7) and (R.pick(K).file or "kernels/vulkan/copy.comp") or R.pick(BAD_FILES))
    end
    if R.chance(0.4) then f[#f + 1] = "target = " .. R.pick { '"vulkan1.0"', '"vulkan1.1"', '"vulkan1.2"',
                                                              '"vulkan1.3"', '"vulkan9.9"', '"sm_90"', '""',
                                                              '"vulkan"', '"spirv1.6"', Ve() } end
    if R.chance(0.2) then f[#f + 1] = "defines = " .. (defines_expr() or "{}") end
    if R.chance(0.15) then f[#f + 1] = "params = " .. (params_expr() or "{}") end
    if R.chance(0.9) then emit("local _ = gpu.compile{" .. table.concat(f, ", ") .. "}")
    else emit("local _ = gpu.compile(" .. Ve() .. ")") end
  end

  F_.kernel_op = function()
    local ks = obj("k", 0.06)
    local c = R.int(1, 100)
    if c <= 55 then
      local g, b, list = safe_launch(ks, 1)
      if not g then emit("-- (a launch that could run out of bounds was left out)") return end
      local a = exprs(list)
      emit(("%s:launch(%s)"):format(ks, args_str { g, b, unpack(a, 1, #list) }))
    elseif c <= 72 then
      emit("local _ = " .. R.pick { ks .. ".entry", ks .. ".label", ks .. ".params", ks .. ".local_size",
                                    ks .. ".cache_hit", ks .. ".backend", ks .. "[" .. Ve() .. "]",
                                    "tostring(" .. ks .. ")", ks .. ".launch" })
    elseif c <= 85 then
      emit(("M.kernel.launch(%s)"):format(args_str { Ve(), R.pick { "1", Ve() }, R.pick { "64", Ve() },
                                                     R.chance(0.5) and Ve() or nil }))
    elseif c <= 90 then
      emit(R.pick { "MT.kernel.__index(" .. Ve() .. ", \"params\")", "MT.kernel.__tostring(" .. Ve() .. ")",
                    "MT.kernel.__gc(" .. Ve() .. ")" })
    else
      if tame and R.chance(0.8) then emit("local _ = " .. ks .. ".params") else emit(ks .. ":free()") end
    end
  end

  F_.scalar = function()
    local kind = R.pick { "u32", "i32", "f32", "u64" }
    local a = R.chance(0.5) and R.pick(NUM_SMALL) or V()
    if R.chance(0.6) then
      local name, i = new_slot("s")
      emit(("%s = gpu.%s(%s)"):format(name, kind, a[1]))
      local v = a[2]
      local bits
      if kind ~= "f32" and (type(v) == "number" or type(v) == "string") then
        local n = toint(v)
        if n and not (kind == "u32" and (n < 0 or n > 0xffffffff)) and not (kind == "i32" and (n < -2 ^ 31 or n > 2 ^ 31 - 1))
           and not (kind == "u64" and n < 0) then bits = n & 0xffffffff end
      end
      S.s[i] = { kind = kind, bits = bits }
    else
      emit(R.pick {
        ("local _ = gpu.%s(%s, %s)"):format(kind, a[1], Ve()),
        ("local _ = gpu.%s()"):format(kind),
        ("local _ = tostring(gpu.%s(%s))"):format(kind, a[1]),
        ("local _ = MT.scalar.__tostring(%s)"):format(Ve()),
      })
    end
  end

  F_.timer = function()
    local c = R.int(1, 100)
    if c <= 20 or count.t == 0 then
      local d = dev()
      local name = new_slot("t", { good = true })
      emit(("%s = %s:timer(%s)"):format(name, d, R.chance(0.9) and "" or Ve()))
      return
    end
    local t = obj("t", 0.08)
    if c <= 45 then emit(t .. ":start()")
    elseif c <= 70 then emit(t .. ":stop()")
    elseif c <= 88 then emit("local _ = " .. t .. ":ms()")
    elseif c <= 94 then
      emit(("M.timer.%s(%s)"):format(R.pick { "start", "stop", "ms", "free" }, Ve()))
    elseif tame and R.chance(0.8) then emit(t .. ":start()")
    else emit(t .. ":free()") end
  end

  local function count_expr()
    local c = choice(90)
    -- --hang: a count the device cannot finish in time (the watchdog's job)
    if R.chance(o.hang) then return "2^32-1" end
    if c <= 87 then return tostring(R.pick { 1, 1, 2, 3, 7, 16, 33, 64 }) end
    -- more than one recorded chunk (16384 launches) of a cheap kernel
    if c <= 90 then return tostring(R.pick { 16384, 16385, 32769 }) end
    return R.pick { "0", "-1", "1.5", "2^32", "4294967296", "2^53", "math.huge", "(0/0)", '"3"', "nil", "{}",
                    "math.maxinteger", "-2^31", "true", "FZ_BADIDX" }
  end
  local function count_value(e)
    local ok, v = pcall(load("return " .. e, "=c", "t", VENV))
    local n = ok and toint(v)
    if n and n >= 1 and n <= 0xffffffff then return n end
    return nil
  end

  -- a launch table {k, grid, block, args...} for record/batch, safe for count
  local function launch_table(cnt)
    local ks = obj("k", 0.05)
    if R.chance(0.05) then return Ve() end
    local g, b, list = safe_launch(ks, cnt)
    if not g then return nil end
    return "{" .. args_str { ks, g, b, unpack(exprs(list), 1, #list) } .. "}"
  end

  F_.record = function()
    local ce = count_expr()
    local cnt = count_value(ce) or 1
    if R.chance(0.5) then
      local ks = obj("k", 0.05)
      local g, b, list = safe_launch(ks, cnt)
      if not g then emit("-- (a record that could run out of bounds was left out)") return end
      emit(("%s:record(%s)"):format(dev(), args_str { ce, ks, g, b, unpack(exprs(list), 1, #list) }))
    else
      local sets = {}
      for _ = 1, R.pick { 1, 1, 2, 3, 5 } do
        local t = launch_table(cnt)
        if not t then emit("-- (a record that could run out of bounds was left out)") return end
        sets[#sets + 1] = t
      end
      emit(("%s:record(%s, %s)"):format(dev(), ce, table.concat(sets, ", ")))
    end
  end

  F_.batch_new = function()
    local ce = count_expr()
    local cnt = count_value(ce) or 1
    local f = {}
    if R.chance(0.95) then f[#f + 1] = "count = " .. ce end
    if R.chance(0.4) then f[#f + 1] = "graph = " .. R.pick { "true", "false", "1", "nil", Ve() } end
    local n = R.pick { 1, 1, 1, 2, 3, 4, tame and 1 or 0 }
    for _ = 1, n do
      local t = launch_table(cnt)
      if not t then emit("-- (a batch that could run out of bounds was left out)") return end
      f[#f + 1] = t
    end
    local d = dev()
    local name = new_slot("x", { good = n > 0 and count_value(ce) ~= nil })
    emit(("%s = %s:batch{%s}"):format(name, d, table.concat(f, ", ")))
  end

  F_.batch_op = function()
    if count.x == 0 then return F_.batch_new() end
    local x = obj("x", 0.07)
    local c = R.int(1, 100)
    if c <= 35 then emit(x .. ":submit()")
    elseif c <= 65 then
      local opts = R.pick { "", ", {}", ", {flush = \"none\"}", ", {flush = false}", ", {hold = false}",
                            ", {flush = \"none\", hold = false}", ", {flush = \"write\"}", ", {flush = \"clean\"}",
                            ", {flush = true, hold = true}", ", {flush = " .. Ve() .. "}",
                            ", {hold = " .. Ve() .. "}", ", " .. Ve(), ", {flush = \"none\", hold = 1}" }
      -- the clean flush reads 128 MiB: keep it rare
      if (opts == "" or opts == ", {}" or opts:find("clean") or opts:find("true, hold") or opts == ", {hold = false}")
         and R.chance(0.6) then opts = ", {flush = \"none\"}" end
      emit(("local _ = %s:cold_sample(%s%s)"):format(x, obj("t", 0.1), opts))
    elseif c <= 80 then
      emit("local _ = " .. R.pick { x .. ".count", x .. ".graph", x .. ".launches", x .. "[" .. Ve() .. "]",
                                    x .. ".submit", "tostring(" .. x .. ")" })
    elseif c <= 90 then
      emit(("M.batch.%s(%s)"):format(R.pick { "submit", "cold_sample", "free" }, args_str { Ve(), R.chance(0.5) and Ve() or nil }))
    elseif tame and R.chance(0.8) then emit(x .. ":submit()")
    else emit(x .. ":free()") end
  end

  F_.gc = function()
    local c = choice(45)
    if c <= 30 then emit("collectgarbage()")
    elseif c <= 45 then emit("collectgarbage(\"step\")")
    elseif c <= 75 then
      local e = any_obj()
      emit(e .. " = nil")
    elseif c <= 88 then
      emit(("do local c <close> = %s end"):format(any_obj()))
    else
      emit(("coroutine.wrap(function() local c <close> = %s; coroutine.yield() end)()"):format(any_obj()))
    end
  end

  -- the Lua metatables of gpu objects are reachable with getmetatable (no
  -- debug library): fields replaced there must not crash the library
  F_.tamper = function()
    local mts = { "device", "buffer", "kernel", "timer", "batch", "scalar" }
    local a, b = R.pick(mts), R.pick(mts)
    emit(R.pick {
      ("MT.%s.__gc = MT.%s.__gc"):format(a, b),
      ("MT.%s.__index = MT.%s.__index"):format(a, b),
      ("MT.%s.__close = MT.%s.__close"):format(a, b),
      ("MT.%s.__name = %s"):format(a, Ve()),
      ("MT.%s.__index = %s"):format(a, Ve()),
      ("MT.%s.__tostring = MT.%s.__tostring"):format(a, b),
      ("MT.%s.__len = MT.buffer.__len"):format(a),
    })
  end

  -- the debug library can give an object another type's metatable, or replace
  -- its user value (the device's info table, the batch's anchors)
  F_.debug = function()
    local c = R.int(1, 100)
    local x = any_obj()
    if c <= 35 then
      emit(("debug.setmetatable(%s, getmetatable(%s))"):format(x, any_obj()))
    elseif c <= 42 then
      emit(("debug.setmetatable(%s, %s)"):format(x, R.pick { "nil", "{}", "{__index = {}}", "getmetatable(\"\")" }))
    elseif c <= 75 then
      emit(("debug.setuservalue(%s, %s)"):format(x, R.pick { Ve(), "{}", "{1, 2}", "{FZ_ERR}", "{\"s\"}", "{{}}",
                                                           "{io.stdout}", "{" .. any_obj() .. "}", "nil", "5",
                                                           "\"str\"" }))
    elseif c <= 80 then
      emit(("debug.setuservalue(%s, %s, %s)"):format(x, Ve(), R.pick { "2", "0", "-1", "1" }))
    elseif c <= 92 then
      emit(("local _ = debug.getuservalue(%s%s)"):format(x, R.pick { "", ", 1", ", 2", ", 0" }))
    else
      local a, b = R.pick { "gpu.device", "gpu.buffer", "gpu.kernel", "gpu.timer", "gpu.batch", "gpu.scalar" },
                   R.pick { "device", "buffer", "kernel", "timer", "batch", "scalar" }
      emit(("debug.getregistry()[%q] = MT.%s"):format(a, b))
    end
  end

  -- Lua code that runs inside a library call: an argument table's __index
  -- (read by lua_getfield / lua_geti while the call holds raw pointers to
  -- its objects) or a finalizer run by a collection the call's own
  -- allocations trigger, freeing an object the call is using
  F_.reenter = function()
    local c = R.int(1, 100)
    local ks = obj("k", 0.05)
    local victim = R.chance(0.6) and ks or any_obj()
    if c <= 20 then
      local g, b, list = safe_launch(ks, 1)
      if not g then return end
      local where = R.int(1, 2)
      local gb = where == 1 and ("FZ_FREEING({%s}, %s)"):format(R.int(1, 4), victim) or g
      local bb = where == 2 and ("FZ_FREEING({%s}, %s)"):format(R.pick { "64", "1", "256", "4" }, victim) or b
      emit(("%s:launch(%s)"):format(ks, args_str { gb, bb, unpack(exprs(list), 1, #list) }))
    elseif c <= 35 then
      local ce = tostring(R.pick { 1, 2, 5 })
      local g, b, list = safe_launch(ks, 5)
      if not g then return end
      local gb = ("FZ_FREEING({%s}, %s)"):format(R.int(1, 4), victim)
      if R.chance(0.5) then
        emit(("%s:record(%s)"):format(dev(), args_str { ce, ks, gb, b, unpack(exprs(list), 1, #list) }))
      else
        emit(("%s:record(%s, {%s})"):format(dev(), ce, args_str { ks, gb, b, unpack(exprs(list), 1, #list) }))
      end
    elseif c <= 45 then
      local t = launch_table(3)
      if not t then return end
      emit(("%s = %s:batch(FZ_FREEING({%s}, %s))"):format(new_slot("x"), dev(), t, victim))
    elseif c <= 60 then
      local b = obj("b", 0.05)
      local v = R.chance(0.7) and b or any_obj()
      emit(("%s:fill_random(FZ_FREEING({%s}, %s))"):format(b, R.pick { "", "dtype = \"u8\"", "n = 1", "seed = 3" }, v))
    elseif c <= 75 then
      local x = obj("x", 0.05)
      local t = obj("t", 0.05)
      local v = R.pick { x, t, any_obj(), obj("b", 0.1), ks }
      emit(("local _ = %s:cold_sample(%s, FZ_FREEING({%s}, %s))"):format(x, t, R.pick { "", "hold = false", "flush = \"none\"" }, v))
    elseif c <= 83 then
      -- a device whose only handle the source table's __index releases
      emit(("do local d = gpu.open{backend = \"vulkan\"}; %s = d:kernel(FZ_FREEING({source = SRC.%s}, d)) end")
           :format(new_slot("k"), R.pick { "safe_none", "safe3", "syntax" }))
    elseif c <= 86 then
      emit(("local _ = gpu.open(FZ_FREEING({backend = \"vulkan\"}, %s))"):format(any_obj()))
    elseif c <= 89 then
      -- a device whose only handle the table's __index releases (then answers 8)
      emit(("do local d = gpu.open{backend = \"vulkan\"}; local _ = d:vendor_gemm(FZ_FREEING_RET(8, {%s}, d)) end")
           :format(R.pick { "k = 8, t = 1", "n = 8, t = 1", "n = 8, k = 8" }))
    else
      -- finalizers of garbage tables free the object; the call that follows allocates
      local b = obj("b", 0.05)
      local v = R.chance(0.7) and b or any_obj()
      emit(("FZ_BOMB(%s, %d); %s"):format(v, R.pick { 1, 20, 200 }, R.pick {
        ("local _ = %s:download()"):format(b), ("%s:fill_random{}"):format(b),
        ("%s:upload(string.rep(\"x\", 100))"):format(b), ("local _ = %s.size"):format(b),
        ("%s:copy_from(%s)"):format(b, obj("b", 0.1)), ("%s = %s:kernel{source = SRC.safe3}"):format(new_slot("k"), dev()),
      }))
    end
  end

  -- calls with very many arguments or launch sets
  F_.many = function()
    local c = R.int(1, 100)
    local ks = obj("k", 0.05)
    if c <= 40 then
      local t = launch_table(1)
      if not t then return end
      emit(("%s:record(1, table.unpack(FZ_MANY(%s, %d)))"):format(dev(), t, R.pick { 2, 100, 4096, 4097 }))
    elseif c <= 70 then
      local n = R.pick { 100, 4096, 4097 }
      local cnt = R.pick { 1, 3, n }
      local t = launch_table(cnt)
      if not t then return end
      emit(("%s = %s:batch(FZ_MANY(%s, %d, {count = %d}))"):format(new_slot("x"), dev(), t, n, cnt))
    else
      emit(("%s:launch(1, 64, table.unpack(FZ_MANY(%s, %d)))"):format(ks, R.pick { obj("b", 0.1), "1", "gpu.u32(1)" },
                                                                       R.pick { 31, 32, 33, 200, 7000 }))
    end
  end

  local families = {
    { 6, "open" }, { 3, "discover" }, { 10, "device" }, { 9, "buffer_new" }, { 18, "buffer_op" },
    { 7, "kernel_new" }, { 2, "compile" }, { 14, "kernel_op" }, { 5, "scalar" }, { 8, "timer" },
    { 6, "record" }, { 4, "batch_new" }, { 8, "batch_op" }, { 5, "gc" },
  }
  if o.tamper then families[#families + 1] = { 1, "tamper" } end
  if o.debug then families[#families + 1] = { 3, "debug" } end
  if o.reenter then families[#families + 1] = { 3, "reenter" } end
  families[#families + 1] = { 1, "many" }

  -- Every sequence starts with a device, a few buffers and a kernel, so the
  -- random calls find something to work on.
  emit(new_slot("d", { good = true }) .. " = gpu.open{backend = \"vulkan\"}")
  if R.chance(0.8) then F_.buffer_new() end
  if R.chance(0.6) then F_.buffer_new() end
  if tame or R.chance(0.6) then F_.kernel_new(true) end
  if tame and R.chance(0.5) then F_.kernel_new(true) end
  while #out < ncalls do
    local fam = R.wpick(families)
    if (fam == "buffer_op" and count.b == 0) then fam = "buffer_new" end
    if ((fam == "kernel_op" or fam == "record" or fam == "batch_new") and count.k == 0) then fam = "kernel_new" end
    F_[fam]()
  end
  while #out > ncalls do out[#out] = nil end
  return out, tame
end


return generate
