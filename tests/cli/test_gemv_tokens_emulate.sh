#!/bin/bash
# Host emulation of the multi-token CUDA GEMV kernels (GEMV_TOKENS > 1)
# against the FP64 reference and against T = 1 runs
# (tests/cuda_host/gemv_tokens_emulate.cu), the tensor-core path built with
# subnormal f16 codes (SUBN=1) and with the HSUB2 decode (SUBN=0). Needs nvcc
# and gcc; skipped (77) without nvcc. Run from the repository root; $1 (the
# gpubench binary) is not used.
set -u
NVCC=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; })
if [ -z "$NVCC" ]; then echo "skipped: no nvcc"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for c in ref/formats ref/blocks ref/dequant ref/gemv core/random; do
  gcc -O2 -c -Ihost/ref -Ihost/core "host/$c.c" -o "$tmp/$(basename $c).o" || exit 1
done
for subn in 1 0; do
  "$NVCC" -O2 -Xcompiler -fno-strict-aliasing -std=c++17 -arch=sm_90 -DSUBN=$subn -Ihost/ref -Ihost/core -Ikernels/cuda -o "$tmp/emu$subn" \
    tests/cuda_host/gemv_tokens_emulate.cu "$tmp"/*.o || exit 1
done
"$tmp/emu1" || exit 1
"$tmp/emu0"
