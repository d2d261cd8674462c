#!/bin/bash
# Host emulation of the int8 tensor-core GEMVs, q4_k, q5_k, q6_k, q8_0 and q4_0 (tests/cuda_host/
# gemv_i8_emulate.cu) against the FP64 reference. Needs nvcc and gcc; skipped
# (77) without nvcc. Run from the repository root; $1 (the gpubench binary)
# is not used.
set -u
. "$(dirname "$0")/emulate_lib.sh"
emu_gemv gemv_i8_emulate.cu
