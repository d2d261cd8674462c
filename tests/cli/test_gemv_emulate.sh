#!/bin/bash
# Host emulation of the CUDA GEMV kernels against the FP64 reference
# (tests/cuda_host/gemv_emulate.cu). Needs nvcc and gcc; skipped (77) without
# nvcc. Run from the repository root; $1 (the gpubench binary) is not used.
set -u
NVCC=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; })
if [ -z "$NVCC" ]; then echo "skipped: no nvcc"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for c in formats ref_blocks ref_dequant ref_gemv random; do
  gcc -O2 -c -Ihost "host/$c.c" -o "$tmp/$c.o" || exit 1
done
"$NVCC" -O2 -std=c++17 -arch=sm_90 -Ihost -Ikernels/cuda -o "$tmp/emu" \
  tests/cuda_host/gemv_emulate.cu "$tmp"/*.o || exit 1
"$tmp/emu"
