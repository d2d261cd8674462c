#!/usr/bin/env bash
# Packs what a GPU server needs from build/ into build-dist/ (stripped): the
# gpubench binary, its bundled Lua files and the C device tests. The whole
# build folder is too large to send (every test executable links the GLSL
# compiler statically). Run scripts/gpu-session.sh there with BIN=build-dist.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
rm -rf build-dist
mkdir -p build-dist
cp -r build/lua build-dist/lua
for f in gpubench test_cuda_backend test_vulkan_backend test_vulkan_batch test_nvrtc_compile test_vendor_gemm; do
  strip -o "build-dist/$f" "build/$f"
done
du -sh build-dist
