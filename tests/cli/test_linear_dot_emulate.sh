#!/bin/bash
# Host emulation of the integer-dot route of the CUDA Linear kernels against
# the FP64 reference (tests/cuda_host/linear_dot_emulate.cu): q4, q5, q6 and
# w8 at several geometries, one-hot exactness, random shapes, non-finite x,
# x with outliers, the access contract. Needs nvcc and gcc; skipped (77)
# without nvcc. Run from the repository root; $1 (the gpubench binary) is not used.
set -u
. "$(dirname "$0")/emulate_lib.sh"
emu_linear linear_dot_emulate.cu
