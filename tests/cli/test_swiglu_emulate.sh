#!/bin/bash
# Host emulation of the CUDA SwiGLU kernels (tests/cuda_host/swiglu_emulate.cu):
# their warp loop, stores and elementwise threads on the CPU against the FP64
# reference, with a host model of the mma fragments. Needs nvcc; skipped (77)
# without it. Run from the repository root; $1 (the gpubench binary) is not used.
set -u
. "$(dirname "$0")/emulate_lib.sh"
emu_setup
# 20011/20014: the kernels' __host__ __device__ loop calls the host context's
# __host__ loads; it is instantiated for the host only, which is the point.
"$NVCC" -O2 -std=c++17 -arch=sm_90 -diag-suppress 20011,20014 -Ikernels/cuda -o "$tmp/emu" tests/cuda_host/swiglu_emulate.cu || exit 1
"$tmp/emu"
