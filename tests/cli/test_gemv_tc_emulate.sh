#!/bin/bash
# Host emulation of the dense tensor-core GEMVs, bf16 and f16 (tests/cuda_host/
# gemv_tc_emulate.cu) against the FP64 reference. Needs nvcc and gcc; skipped
# (77) without nvcc. Run from the repository root; $1 (the gpubench binary)
# is not used.
set -u
. "$(dirname "$0")/emulate_lib.sh"
emu_setup ref/formats ref/blocks ref/dequant ref/gemv ref/parallel ref/random_fill core/random
# 20011/20014: the block code (__host__ __device__) calls the host context;
# it is instantiated for the host only, which is the point.
"$NVCC" -O2 -std=c++17 -arch=sm_90 -diag-suppress 20011,20014 -Ihost/ref -Ihost/core -Ikernels/cuda -Itests/cuda_host -o "$tmp/emu" \
  tests/cuda_host/gemv_tc_emulate.cu "$tmp"/*.o -lm -lpthread || exit 1
"$tmp/emu"
