#!/bin/bash
# The layering rule (docs/DESIGN.md): nothing under host/ includes Lua's
# headers (only cli/, the executable, and bindings/ do); the bindings and the
# executable include no GPU API header; host/core and host/ref include neither. The include paths of each CMake library already make most of this
# impossible to compile; this test names the file when someone works around them.
set -u
cd "$(dirname "$0")/../.."
status=0
bad() { echo "layering: $1"; status=1; }
lua='#include *[<"](lua|lauxlib|lualib)\.h[>"]'
gpu='#include *[<"](cuda|cuda_runtime|cudaProfiler|nvrtc|vulkan/vulkan|vulkan_core)\.h[>"]'
for f in $(git ls-files 'host/*.c' 'host/*.h'); do
  grep -qE "$lua" "$f" && bad "$f includes a Lua header; only cli/ and bindings/ may"
done
for f in $(git ls-files 'bindings/*.c' 'bindings/*.h' 'host/core/*' 'host/ref/*' 'cli/*'); do
  grep -qE "$gpu" "$f" && bad "$f includes a CUDA or Vulkan header"
done
((status == 0)) && echo "layering: ok ($(git ls-files 'host/*' 'bindings/*' 'cli/*' | wc -l) files)"
exit $status
