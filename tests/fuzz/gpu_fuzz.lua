-- The `gpu` API fuzzer's child: generates random sequences of `gpu` calls with
-- mostly wrong arguments, deterministically from a seed, and runs each call
-- under pcall. A Lua error is the expected outcome of most calls; what counts
-- as a finding is a crash, a sanitizer report, a hang (the runner,
-- tests/fuzz/run_fuzz.sh, watches for those), or an error that is not ours:
-- a non-string error object, or a Lua runtime error ("attempt to index ...")
-- raised inside the library's own code, which means a missing check there.
--
--   gpubench tests/fuzz/gpu_fuzz.lua --seed S [--count N] [--calls M]
--            [--no-debug] [--no-tamper] [--no-reenter] [--hang P] [--quiet] [--verbose]
--   gpubench tests/fuzz/gpu_fuzz.lua --seed S --dump > prog.txt   (the program, one call a line)
--   gpubench tests/fuzz/gpu_fuzz.lua --program prog.txt            (runs a saved or edited program)
--
-- Sequence j of a run uses seed S + j; each prints its calls as it runs them
-- ("S#i: <call>", flushed), so the lines before a crash show the sequence.
-- A sequence is a pure function of its seed and the options: the generator
-- never looks at results, so a seed replays the same calls on any binary.
-- Exit status: 0 clean, 3 a bad error was seen (lines "FUZZ-BAD ..."),
-- 77 no Vulkan device (a failure under CI=true), 2 usage.

local gpu = require "gpu"

local unpack = table.unpack

-- ------------------------------------------------------------------ options
local o = { seed = 1, count = 1, calls = 40, debug = true, tamper = true, reenter = true, hang = 0,
            dump = false, quiet = false, program = nil }
do
  local i = 1
  local function val(name)
    local v = arg[i + 1]
    if v == nil then io.stderr:write("gpu_fuzz: ", name, " needs a value\n"); os.exit(2) end
    i = i + 2
    return v
  end
  while arg[i] do
    local a = arg[i]
    if a == "--seed" then o.seed = math.tointeger(tonumber(val(a)))
    elseif a == "--count" then o.count = math.tointeger(tonumber(val(a)))
    elseif a == "--calls" then o.calls = math.tointeger(tonumber(val(a)))
    elseif a == "--hang" then o.hang = tonumber(val(a))
    elseif a == "--program" then o.program = val(a)
    elseif a == "--no-debug" then o.debug = false; i = i + 1
    elseif a == "--no-tamper" then o.tamper = false; i = i + 1
    elseif a == "--no-reenter" then o.reenter = false; i = i + 1
    elseif a == "--dump" then o.dump = true; i = i + 1
    elseif a == "--quiet" then o.quiet = true; i = i + 1
    elseif a == "--verbose" then o.verbose = true; i = i + 1
    else io.stderr:write("gpu_fuzz: unknown option ", a, "\n"); os.exit(2) end
  end
  if not (o.seed and o.count and o.count >= 1 and o.calls and o.calls >= 1 and o.hang) then
    io.stderr:write("gpu_fuzz: --seed, --count and --calls take integers (count, calls >= 1)\n")
    os.exit(2)
  end
end

local function flags()
  local f = {}
  if not o.debug then f[#f + 1] = "--no-debug" end
  if not o.tamper then f[#f + 1] = "--no-tamper" end
  if not o.reenter then f[#f + 1] = "--no-reenter" end
  if o.hang ~= 0 then f[#f + 1] = "--hang " .. o.hang end
  return table.concat(f, " ")
end

-- ------------------------------------------------------------------ the PRNG
-- splitmix64 on Lua's 64-bit integers (wrapping arithmetic, logical shifts):
-- the same numbers on every machine, and math.random's state is never touched.
local function new_rng(seed)
  local s = seed * 0x2545F4914F6CDD1D + 0x1234567
  local R = {}
  local function nxt()
    s = s + 0x9E3779B97F4A7C15
    local z = s
    z = (z ~ (z >> 30)) * 0xBF58476D1CE4E5B9
    z = (z ~ (z >> 27)) * 0x94D049BB133111EB
    return z ~ (z >> 31)
  end
  function R.int(a, b) return a + (nxt() >> 1) % (b - a + 1) end
  function R.chance(p) return ((nxt() >> 11) * 2.0 ^ -53) < p end
  function R.pick(t) return t[R.int(1, #t)] end
  -- weighted choice over {{w, value}, ...}
  function R.wpick(t)
    local sum = 0
    for _, e in ipairs(t) do sum = sum + e[1] end
    local x = R.int(1, sum)
    for _, e in ipairs(t) do
      x = x - e[1]
      if x <= 0 then return e[2] end
    end
    return t[#t][2]
  end
  return R
end

-- ------------------------------------------------------------------ shaders
-- Sources the statements name as SRC.<name> (kept out of the call lines, so
-- each call stays one short line). "safe" shaders clamp every index with
-- .length(), so any arguments that pass the checks run in bounds; the
-- repository's shaders (FILES) index by their arguments, and the generator
-- makes sure a launch of one that could run stays inside its buffers
-- (robustBufferAccess is off: an out-of-bounds kernel would corrupt memory,
-- which is the kernel's bug, not the library's).
local SRC = {
  safe3 = [[
#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer A { uint a[]; };
layout(std430, binding = 1) buffer B { uint b[]; };
layout(std430, binding = 2) buffer C { uint c[]; };
layout(push_constant) uniform P { uint n; int k; float f; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < n && i < a.length() && i < b.length()) a[i] = b[i] + uint(k) + uint(f);
  if (i < c.length()) c[i] += 1u;
}
]],
  safe_push = [[
#version 450
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer A { uint a[]; };
layout(push_constant) uniform P { float x; int y; uint z; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < a.length()) a[i] = z + uint(y) + uint(x);
}
]],
  safe_none = "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {}\n",
  safe_u64 = [[
#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 16) in;
layout(std430, binding = 0) buffer A { uint a[]; };
layout(push_constant) uniform P { uint64_t w; uint n; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < n && i < a.length()) a[i] = uint(w >> 3);
}
]],
  safe_spec = [[
#version 450
layout(local_size_x_id = 0, local_size_y_id = 1) in;
layout(std430, binding = 0) buffer A { uint a[]; };
layout(push_constant) uniform P { uint n; };
void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * 7u;
  if (i < n && i < a.length()) a[i] = gl_WorkGroupSize.x;
}
]],
  safe_3d = [[
#version 450
layout(local_size_x = 4, local_size_y = 4, local_size_z = 4) in;
layout(std430, binding = 0) buffer A { uint a[]; };
void main() {
  uint i = gl_LocalInvocationIndex;
  if (i < a.length()) atomicAdd(a[i], 1u);
}
]],
  safe_many = [[
#version 450
layout(local_size_x = 8) in;
layout(std430, binding = 0) buffer B0 { uint b0[]; };
layout(std430, binding = 1) buffer B1 { uint b1[]; };
layout(std430, binding = 2) buffer B2 { uint b2[]; };
layout(std430, binding = 3) buffer B3 { uint b3[]; };
layout(std430, binding = 4) buffer B4 { uint b4[]; };
layout(std430, binding = 5) buffer B5 { uint b5[]; };
layout(std430, binding = 6) buffer B6 { uint b6[]; };
layout(std430, binding = 7) buffer B7 { uint b7[]; };
layout(push_constant) uniform P { uint n; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= n) return;
  if (i < b0.length()) b0[i] += 1u;
  if (i < b1.length()) b1[i] += 1u;
  if (i < b2.length()) b2[i] += 1u;
  if (i < b3.length()) b3[i] += 1u;
  if (i < b4.length()) b4[i] += 1u;
  if (i < b5.length()) b5[i] += 1u;
  if (i < b6.length()) b6[i] += 1u;
  if (i < b7.length()) b7[i] += 1u;
}
]],
  -- a buffer and 31 push constants: the most parameters a kernel may have
  safe_max = (function()
    local m = {}
    for j = 0, 30 do m[#m + 1] = "uint p" .. j .. ";" end
    local s = {}
    for j = 0, 30 do s[#s + 1] = "p" .. j end
    return "#version 450\nlayout(local_size_x = 1) in;\n" ..
           "layout(std430, binding = 0) buffer A { uint a[]; };\n" ..
           "layout(push_constant) uniform P { " .. table.concat(m, " ") .. " };\n" ..
           "void main() { if (a.length() > 0) a[0] = " .. table.concat(s, " + ") .. "; }\n"
  end)(),
  -- the same with 33 members: refused (too many parameters, or too many push bytes)
  over_max = (function()
    local m = {}
    for j = 0, 32 do m[#m + 1] = "uint p" .. j .. ";" end
    return "#version 450\nlayout(local_size_x = 1) in;\n" ..
           "layout(push_constant) uniform P { " .. table.concat(m, " ") .. " };\n" ..
           "void main() { }\n"
  end)(),
  -- never ends while flag[0] is 0 on a GPU: the watchdog's case (llvmpipe
  -- caps every shader loop at 65535 iterations, so on lavapipe it ends, as
  -- spin.comp does; there only huge launch counts outlast GPUBENCH_TIMEOUT)
  forever = [[
#version 450
layout(local_size_x = 1) in;
layout(std430, binding = 0) coherent buffer F { uint flag[]; };
void main() {
  if (flag.length() == 0) return;
  while (atomicAdd(flag[0], 0u) == 0u) { }
}
]],
  -- the repository's increment shader as a string (tests/lua/test_gpu_module.lua's INC)
  inc = [[
#version 450
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) buffer X { uint x[]; };
layout(push_constant) uniform P { uint n; uint add; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < n) x[i] += add;
}
]],
  -- shaders the library must refuse (or at least never crash on)
  ubo = "#version 450\nlayout(local_size_x=1) in;\nlayout(binding=0) uniform U { uint x; };\n" ..
        "layout(std430, binding=1) buffer B { uint b[]; };\nvoid main() { b[0] = x; }\n",
  set1 = "#version 450\nlayout(local_size_x=1) in;\nlayout(std430, set=1, binding=0) buffer B { uint b[]; };\n" ..
         "void main() { b[0] = 1u; }\n",
  gap = "#version 450\nlayout(local_size_x=1) in;\nlayout(std430, binding=0) buffer A { uint a[]; };\n" ..
        "layout(std430, binding=2) buffer C { uint c[]; };\nvoid main() { a[0] = c[0]; }\n",
  dup = "#version 450\nlayout(local_size_x=1) in;\nlayout(std430, binding=0) buffer A { uint a[]; };\n" ..
        "layout(std430, binding=0) buffer C { uint c[]; };\nvoid main() { a[0] = c[0]; }\n",
  bufarray = "#version 450\nlayout(local_size_x=1) in;\nlayout(std430, binding=0) buffer A { uint a[]; } bs[2];\n" ..
             "void main() { bs[0].a[0] = bs[1].a[0]; }\n",
  image = "#version 450\nlayout(local_size_x=1) in;\nlayout(binding=0, r32ui) uniform uimage2D img;\n" ..
          "void main() { imageStore(img, ivec2(0), uvec4(1)); }\n",
  push_array = "#version 450\nlayout(local_size_x=1) in;\nlayout(push_constant) uniform P { uint a[4]; };\n" ..
               "layout(std430, binding=0) buffer B { uint b[]; };\nvoid main() { if (b.length() > 0) b[0] = a[1]; }\n",
  push_struct = "#version 450\nlayout(local_size_x=1) in;\nstruct S { uint x; float y; };\n" ..
                "layout(push_constant) uniform P { S s; };\nlayout(std430, binding=0) buffer B { uint b[]; };\n" ..
                "void main() { if (b.length() > 0) b[0] = s.x; }\n",
  push_vec = "#version 450\nlayout(local_size_x=1) in;\nlayout(push_constant) uniform P { uvec2 v; };\n" ..
             "layout(std430, binding=0) buffer B { uint b[]; };\nvoid main() { if (b.length() > 0) b[0] = v.y; }\n",
  push_double = "#version 450\nlayout(local_size_x=1) in;\nlayout(push_constant) uniform P { double d; };\n" ..
                "layout(std430, binding=0) buffer B { uint b[]; };\nvoid main() { if (b.length() > 0) b[0] = uint(d); }\n",
  push_offset = "#version 450\nlayout(local_size_x=1) in;\n" ..
                "layout(push_constant) uniform P { layout(offset=124) uint n; };\n" ..
                "layout(std430, binding=0) buffer B { uint b[]; };\nvoid main() { if (b.length() > 0) b[0] = n; }\n",
  push_far = "#version 450\nlayout(local_size_x=1) in;\n" ..
             "layout(push_constant) uniform P { layout(offset=4096) uint n; };\n" ..
             "layout(std430, binding=0) buffer B { uint b[]; };\nvoid main() { if (b.length() > 0) b[0] = n; }\n",
  push_gap = "#version 450\nlayout(local_size_x=1) in;\n" ..
             "layout(push_constant) uniform P { uint a; layout(offset=64) float f; };\n" ..
             "layout(std430, binding=0) buffer B { uint b[]; };\nvoid main() { if (b.length() > 0) b[0] = a + uint(f); }\n",
  push_i8 = "#version 450\n#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require\n" ..
            "layout(local_size_x=1) in;\nlayout(push_constant) uniform P { uint8_t v; };\n" ..
            "layout(std430, binding=0) buffer B { uint b[]; };\nvoid main() { if (b.length() > 0) b[0] = uint(v); }\n",
  big_shared = "#version 450\nlayout(local_size_x=64) in;\nshared uint s[20000];\n" ..
               "layout(std430, binding=0) buffer B { uint b[]; };\n" ..
               "void main() { s[gl_LocalInvocationIndex] = 1u; barrier(); if (gl_LocalInvocationIndex < b.length()) b[gl_LocalInvocationIndex] = s[0]; }\n",
  wide = "#version 450\nlayout(local_size_x=1024, local_size_y=2) in;\n" ..
         "layout(std430, binding=0) buffer B { uint b[]; };\nvoid main() { if (b.length() > 0) b[0] = 1u; }\n",
  no_size = "#version 450\nlayout(std430, binding=0) buffer B { uint b[]; };\nvoid main() { b[0] = 1u; }\n",
  syntax = "#version 450\nlayout(local_size_x = 64) in;\nvoid main() { uint x = ; }\n",
  undeclared = "#version 450\nlayout(local_size_x = 1) in;\nvoid main() { y = 1; }\n",
  no_main = "#version 450\nlayout(local_size_x = 1) in;\nvoid notmain() {}\n",
  no_version = "layout(local_size_x = 1) in;\nvoid main() {}\n",
  bad_version = "#version 9999\nlayout(local_size_x = 1) in;\nvoid main() {}\n",
  hash_error = "#version 450\n#error fuzz says no\nvoid main() {}\n",
  include_missing = "#version 450\n#extension GL_GOOGLE_include_directive : require\n" ..
                    "#include \"does/not/exist.glsl\"\nlayout(local_size_x=1) in;\nvoid main() {}\n",
  include_helper = "#version 450\n#include \"inc/helper.glsl\"\nlayout(local_size_x=1) in;\n" ..
                   "layout(std430, binding=0) buffer B { uint b[]; };\nvoid main() { if (b.length() > 0) b[0] = helper(1u); }\n",
  include_abs = "#version 450\n#include </etc/passwd>\nlayout(local_size_x=1) in;\nvoid main() {}\n",
  include_self = "#version 450\n#include \"self_include.comp\"\nlayout(local_size_x=1) in;\nvoid main() {}\n",
  fragment = "#version 450\nlayout(location=0) out vec4 c;\nvoid main() { c = vec4(1); }\n",
  empty = "",
  nul = "#version 450\n\0layout(local_size_x=1) in;\nvoid main() {}\n",
  binary = "\3\2\35\7\0\0\1\0\255\255\255\255",
  huge_comment = "#version 450\nlayout(local_size_x=1) in;\n/*" .. string.rep("x", 1 << 20) .. "*/\nvoid main() {}\n",
  deep_parens = "#version 450\nlayout(local_size_x=1) in;\nvoid main() { uint x = " ..
                string.rep("(", 3000) .. "1" .. string.rep(")", 3000) .. "; }\n",
  long_ident = "#version 450\nlayout(local_size_x=1) in;\nvoid main() { uint " .. string.rep("v", 5000) .. " = 1u; }\n",
  many_buffers = (function()
    local t = { "#version 450\nlayout(local_size_x=1) in;\n" }
    for j = 0, 32 do t[#t + 1] = ("layout(std430, binding=%d) buffer B%d { uint b%d[]; };\n"):format(j, j, j) end
    t[#t + 1] = "void main() {"
    for j = 0, 32 do t[#t + 1] = (" b%d[0] = 1u;"):format(j) end
    t[#t + 1] = " }\n"
    return table.concat(t)
  end)(),
  -- 17 buffers: within gpubench's 32 parameters, maybe beyond the device's per-stage limit
  buffers17 = (function()
    local t = { "#version 450\nlayout(local_size_x=1) in;\n" }
    for j = 0, 16 do t[#t + 1] = ("layout(std430, binding=%d) buffer B%d { uint b%d[]; };\n"):format(j, j, j) end
    t[#t + 1] = "void main() {"
    for j = 0, 16 do t[#t + 1] = (" if (b%d.length() > 0) b%d[0] = 1u;"):format(j, j) end
    t[#t + 1] = " }\n"
    return table.concat(t)
  end)(),
}

-- What the generator knows about each loadable kernel: its parameters (checked
-- against gpu.compile's reflection at start-up), its local size ("spec": any
-- block) and, for shaders that index by their arguments, a check that a
-- launch stays in bounds: check(grid, block, sizes, vals) with sizes[i] the
-- byte size of buffer argument i and vals[i] the 32-bit value of scalar
-- argument i, as the shader reads it.
local K = {}
local function kdef(name, t) t.name = name; K[name] = t; K[#K + 1] = t; return t end
local B, U, I, F, W = "buffer", "u32", "i32", "f32", "u64"
local function lim(n, threads) return math.min(n, threads) end

kdef("safe3", { src = "safe3", params = { B, B, B, U, I, F }, ls = { 64, 1, 1 }, safe = true })
kdef("safe_push", { src = "safe_push", params = { B, F, I, U }, ls = { 32, 1, 1 }, safe = true })
kdef("safe_none", { src = "safe_none", params = {}, ls = { 1, 1, 1 }, safe = true })
kdef("safe_u64", { src = "safe_u64", params = { B, W, U }, ls = { 16, 1, 1 }, safe = true })
kdef("safe_spec", { src = "safe_spec", params = { B, U }, ls = "spec", spec_dims = 2, safe = true })
kdef("safe_3d", { src = "safe_3d", params = { B }, ls = { 4, 4, 4 }, safe = true })
kdef("safe_many", { src = "safe_many", params = { B, B, B, B, B, B, B, B, U }, ls = { 8, 1, 1 }, safe = true })
do
  local p = { B }
  for _ = 1, 31 do p[#p + 1] = U end
  kdef("safe_max", { src = "safe_max", params = p, ls = { 1, 1, 1 }, safe = true })
end
kdef("push_offset", { src = "push_offset", params = { B, U }, ls = { 1, 1, 1 }, safe = true })
kdef("push_gap", { src = "push_gap", params = { B, U, F }, ls = { 1, 1, 1 }, safe = true })
kdef("include_helper", { src = "include_helper", params = { B }, ls = { 1, 1, 1 }, safe = true,
                         include_dirs = { "tests/kernels/vulkan" } })
kdef("inc_src", { src = "inc", params = { B, U, U }, ls = { 64, 1, 1 },
                  check = function(g, _, s, v) return s[1] >= 4 * lim(v[2], g[1] * 64) end })
kdef("inc", { file = "tests/kernels/vulkan/inc.comp", params = { B, U }, ls = { 64, 1, 1 },
              check = function(g, _, s, v) return s[1] >= 4 * lim(v[2], g[1] * 64) end })
kdef("args", { file = "tests/kernels/vulkan/args.comp", params = { B, B, B, U, I, F }, ls = { 64, 1, 1 },
               check = function(g, _, s, v)
                 local n = lim(v[4], g[1] * 64)
                 return s[1] >= 4 * n and s[2] >= 4 * n and s[3] >= 4 * n
               end })
kdef("args_u64", { file = "tests/kernels/vulkan/args.comp", defines = "{HAVE_U64 = true}",
                   params = { B, B, B, U, I, F, W }, ls = { 64, 1, 1 },
                   check = function(g, _, s, v)
                     local n = lim(v[4], g[1] * 64)
                     return s[1] >= 4 * n and s[2] >= 4 * n and s[3] >= 4 * (v[4] + 2)
                   end })
kdef("copy", { file = "kernels/vulkan/copy.comp", params = { B, B, U }, ls = { 256, 1, 1 },
               check = function(_, _, s, v) return s[1] >= 16 * v[3] and s[2] >= 16 * v[3] end })
kdef("read", { file = "kernels/vulkan/read.comp", params = { B, B, U, U }, ls = { 256, 1, 1 },
               check = function(g, _, s, v) return s[1] >= 16 * v[3] and s[2] >= 4 * g[1] * 256 end })
kdef("spin", { file = "tests/kernels/vulkan/spin.comp", params = { B, U }, ls = { 64, 1, 1 }, spin = true,
               check = function(g, _, s, _) return s[1] >= 4 * g[1] * 64 end })
kdef("spec_size", { file = "tests/kernels/vulkan/spec_size.comp", params = { B, U }, ls = "spec",
                    check = function(g, b, s, v) return s[1] >= 4 * lim(v[2], g[1] * b[1]) end })
kdef("uses_include", { file = "tests/kernels/vulkan/uses_include.comp", params = { B, U }, ls = { 64, 1, 1 },
                       defines = "{SCALE = 3, OFFSET = 1}", include_dirs = { "tests/kernels/vulkan/idir" },
                       check = function(g, _, s, v) return s[1] >= 4 * lim(v[2], g[1] * 64) end })

-- Sources and files a kernel load must refuse with a Lua error.
local BAD_SRC = { "over_max", "ubo", "set1", "gap", "dup", "bufarray", "image", "push_array", "push_struct",
                  "push_vec", "push_double", "push_far", "push_i8", "big_shared", "wide", "no_size",
                  "syntax", "undeclared", "no_main", "no_version", "bad_version", "hash_error",
                  "include_missing", "include_abs", "include_self", "fragment", "empty", "nul", "binary",
                  "huge_comment", "deep_parens", "long_ident", "many_buffers", "buffers17" }
local BAD_FILES = { "tests/kernels/vulkan/bad_syntax.comp", "tests/kernels/vulkan/include_error.comp",
                    "tests/kernels/vulkan/uses_include.comp", -- without its defines
                    "tests/fuzz/kernels/self_include.comp", "tests/kernels/vulkan/does_not_exist.comp",
                    "tests/kernels/vulkan", "/dev/null", "", "/", "kernels/cuda/copy.cu",
                    "tests/kernels/vulkan/inc/helper.glsl", "/proc/self/status", "README.md",
                    string.rep("a/", 3000) .. "x.comp" }

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
  -- A tame sequence (40%) gets far fewer wrong arguments, so that its calls
  -- reach the deeper paths (batches that run, cold samples, chunked submits).
  local tame = R.chance(0.4)
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

-- ------------------------------------------------------------------ running
local function die(msg) io.stderr:write("gpu_fuzz: ", msg, "\n"); io.stderr:flush(); os.exit(2) end

-- The methods and metatables, read once (before any sequence can swap them).
local REG = debug.getregistry()
local MT, M, SAVED = {}, {}, {}
for _, n in ipairs { "device", "buffer", "kernel", "timer", "batch", "scalar" } do
  local mt = REG["gpu." .. n]
  if type(mt) ~= "table" then die("no metatable gpu." .. n .. " in the registry") end
  MT[n] = mt
  local idx = mt.__index
  local methods = idx
  if type(idx) == "function" then methods = select(2, debug.getupvalue(idx, 1)) end
  local m = {}
  for k, v in pairs(methods or {}) do m[k] = v end
  m.free = m.free or mt.__gc
  M[n] = m
  SAVED[n] = {}
  for k, v in pairs(mt) do SAVED[n][k] = v end
end
local function restore_metatables()
  for n, fields in pairs(SAVED) do
    local mt = MT[n]
    for k in pairs(mt) do mt[k] = nil end
    for k, v in pairs(fields) do mt[k] = v end
    REG["gpu." .. n] = mt
  end
end

local FZ_ERR = setmetatable({}, { __name = "FZ_ERR", __tostring = function() return "FZ_ERR (the fuzzer's own error object)" end })

-- The environment every statement of a sequence runs in.
local function new_env()
  local O = {}
  local env = {
    O = O, gpu = gpu, M = M, MT = MT, SRC = SRC, FZ_ERR = FZ_ERR,
    -- a table whose every field read raises our error object
    FZ_BADIDX = setmetatable({}, { __index = function() error(FZ_ERR) end }),
    -- a table whose fields answer differently on every read
    FZ_LIAR = (function()
      local n = 0
      return setmetatable({}, { __index = function(_, k)
        n = n + 1
        local v = { "vulkan", 0, 1.5, "x", 64, {}, true, "f32", 2 ^ 40, -1 }
        return v[n % #v + 1]
      end, __len = function() return 3 end })
    end)(),
    FZ_NAMED = setmetatable({}, { __name = "gpu.buffer" }), -- a table that claims a gpu type name
    FZ_HUGELEN = setmetatable({ 1, 2, 3 }, { __len = function() return 2 ^ 40 end }),
    FZ_STR = setmetatable({}, { __tostring = function() return "s" end }),
    -- base, with an __index that releases the objects given (the library
    -- reads its argument tables with lua_getfield / lua_geti, which call it)
    FZ_FREEING = function(base, ...)
      local victims = table.pack(...)
      return setmetatable(base, { __index = function()
        for i = 1, victims.n do
          local v = victims[i]
          pcall(function() v:free() end)
        end
        return nil
      end })
    end,
    -- the same, answering ret
    FZ_FREEING_RET = function(ret, base, ...)
      local victims = table.pack(...)
      return setmetatable(base, { __index = function()
        for i = 1, victims.n do
          local v = victims[i]
          pcall(function() v:free() end)
        end
        return ret
      end })
    end,
    -- n garbage tables whose finalizers release obj
    FZ_BOMB = function(victim, n)
      for _ = 1, n do
        setmetatable({}, { __gc = function() pcall(function() victim:free() end) end })
      end
    end,
    -- a table of n copies of v (and the fields of extra)
    FZ_MANY = function(v, n, extra)
      local t = extra or {}
      for i = 1, n do t[i] = v end
      return t
    end,
  }
  return setmetatable(env, { __index = _G }), O
end

-- The error a call raised, judged: nil when it is an ordinary error of ours,
-- else a description of what is wrong with it.
local function judge(err)
  if rawequal(err, FZ_ERR) then return nil end
  if type(err) ~= "string" then
    return "a non-string error object (" .. type(err) .. ": " .. tostring(err) .. ")"
  end
  -- Runtime errors of the statement's own code carry its position ("fz:1:"
  -- then "attempt to index a nil value (field 'b3')"); the same error raised
  -- inside a C function of the library has no position.
  if err:find("attempt to ", 1, true) and not err:match("^fz:%d+: attempt to ") then
    return "a Lua runtime error from inside the library: " .. err
  end
  if err:find("unknown error", 1, true) or err:find("(null)", 1, true) then
    return "an error without a proper message: " .. err
  end
  return nil
end

local stats = { seqs = 0, calls = 0, ok = 0, errors = 0, bad = 0 }
local baseline = gpu.live()

local function say(s)
  if not o.quiet then io.stdout:write(s, "\n"); io.stdout:flush() end
end

local function run_sequence(label, stmts, replay, tame)
  stats.seqs = stats.seqs + 1
  io.stdout:write(("=== seq %s: %d calls%s (replay: %s)\n"):format(label, #stmts, tame and ", tame" or "", replay))
  io.stdout:flush()
  local env, O = new_env()
  local broke, weird = false, false
  for i, s in ipairs(stmts) do
    say(("%s#%d: %s"):format(label, i, s))
    if s:find("debug%.") or s:find("^MT%.") then weird = true end
    local f, cerr = load(s, "=fz", "t", env)
    if not f then
      stats.bad = stats.bad + 1
      io.stdout:write(("FUZZ-BAD %s#%d: the generator made a statement that does not compile: %s\n"):format(label, i, cerr))
    else
      stats.calls = stats.calls + 1
      local ok, err = pcall(f)
      if ok then stats.ok = stats.ok + 1 end
      if o.verbose then say(ok and "  -> ok" or "  -> error: " .. tostring(err):sub(1, 200):gsub("\n", " ")) end
      if not ok then
        stats.errors = stats.errors + 1
        local bad = judge(err)
        if type(err) == "string" and (err:find("GPUBENCH_TIMEOUT", 1, true) or err:find("can no longer be used", 1, true)) then
          broke = true
        end
        if bad then
          stats.bad = stats.bad + 1
          io.stdout:write(("FUZZ-BAD %s#%d: %s\n  call: %s\n  replay: %s\n"):format(label, i, bad, s, replay))
          io.stdout:flush()
        end
      end
    end
  end
  -- Drop the sequence's objects; with no debug-library or metatable games and
  -- no broken device, every C object must be gone after a full collection.
  for k in pairs(O) do O[k] = nil end
  env = nil
  collectgarbage(); collectgarbage()
  restore_metatables()
  collectgarbage(); collectgarbage()
  if not weird and not broke then
    local now = gpu.live()
    local diff = {}
    for k, v in pairs(now) do
      if v ~= baseline[k] then diff[#diff + 1] = ("%s %d -> %d"):format(k, baseline[k], v) end
    end
    if #diff > 0 then
      table.sort(diff)
      stats.bad = stats.bad + 1
      io.stdout:write(("FUZZ-BAD %s: live objects left after the sequence and a full collection: %s\n  replay: %s\n")
                      :format(label, table.concat(diff, ", "), replay))
      baseline = now
    end
  else
    baseline = gpu.live()
  end
end

-- Self-check: the kernels the generator relies on reflect the parameters it assumes.
local function self_check()
  for _, kd in ipairs(K) do
    local t = { backend = "vulkan" }
    if kd.file then t.file = kd.file else t.source = SRC[kd.src] end
    if kd.defines then t.defines = load("return " .. kd.defines)() end
    if kd.include_dirs then t.include_dirs = kd.include_dirs end
    local ok, r = pcall(gpu.compile, t)
    if not ok then die("self-check: kernel " .. kd.name .. " does not compile: " .. tostring(r)) end
    if table.concat(r.params, ",") ~= table.concat(kd.params, ",") then
      die(("self-check: kernel %s reflects (%s), the generator assumes (%s)"):format(
        kd.name, table.concat(r.params, ","), table.concat(kd.params, ",")))
    end
  end
end

if o.dump then
  for _, s in ipairs(generate(o.seed, o.calls)) do print(s) end
  os.exit(0)
end

-- A Vulkan device is needed (lavapipe suffices).
do
  local ok, d = pcall(gpu.open, { backend = "vulkan" })
  if not ok then
    io.stdout:write("gpu_fuzz: no Vulkan device: ", tostring(d), "\n")
    os.exit(os.getenv("CI") == "true" and 1 or 77)
  end
  d:free()
end
if warn then warn("@on") end -- errors in __gc show up as warnings
self_check()

local t0 = gpu.clock()
if o.program then
  local f = io.open(o.program) or die("cannot open " .. o.program)
  local stmts = {}
  for line in f:lines() do
    if line:match("%S") and not line:match("^%s*%-%-") then stmts[#stmts + 1] = line end
  end
  f:close()
  run_sequence(o.program, stmts, "gpubench tests/fuzz/gpu_fuzz.lua --program " .. o.program)
else
  for j = 0, o.count - 1 do
    local seed = o.seed + j
    local replay = ("gpubench tests/fuzz/gpu_fuzz.lua --seed %d --count 1 --calls %d %s"):format(seed, o.calls, flags())
    local stmts, tame = generate(seed, o.calls)
    run_sequence(tostring(seed), stmts, replay, tame)
  end
end
io.stdout:write(("gpu_fuzz: %d sequences, %d calls (%d returned, %d raised errors, %d bad) in %.1f s; git %s\n"):format(
  stats.seqs, stats.calls, stats.ok, stats.errors, stats.bad, gpu.clock() - t0, gpu.git))
io.stdout:flush()
-- Ends through gpubench's own exit path, not os.exit: it closes the Lua state
-- and, when the watchdog broke a device, leaves without the exit handlers
-- (host/cli/main.c), as any script would.
if stats.bad > 0 then error({ gpubench_exit = 3 }, 0) end
