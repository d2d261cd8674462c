#!/bin/bash
# Host emulation of the dense tensor-core GEMVs, bf16 and f16 (tests/cuda_host/
# gemv_tc_emulate.cu) against the FP64 reference. Needs nvcc and gcc; skipped
# (77) without nvcc. Run from the repository root; $1 (the gpubench binary)
# is not used.
set -u
. "$(dirname "$0")/emulate_lib.sh"
emu_gemv gemv_tc_emulate.cu
