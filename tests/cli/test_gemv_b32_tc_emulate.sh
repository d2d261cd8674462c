#!/bin/bash
# Host emulation of the f16 tensor-core q8_0 GEMV (tests/cuda_host/
# gemv_b32_tc_emulate.cu) against the FP64 reference. Needs nvcc and gcc;
# skipped (77) without nvcc. Run from the repository root; $1 (the gpubench
# binary) is not used.
set -u
. "$(dirname "$0")/emulate_lib.sh"
emu_gemv gemv_b32_tc_emulate.cu
