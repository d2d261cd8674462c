-- The gpu API fuzzer's shaders: the sources statements name as SRC.<name>,
-- what the generator knows about each loadable kernel (K), and broken sources
-- and files. Loaded by tests/fuzz/gpu_fuzz.lua (loadfile), returns them.

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


return { SRC = SRC, K = K, BAD_SRC = BAD_SRC, BAD_FILES = BAD_FILES,
         B = B, U = U, I = I, F = F, W = W }
