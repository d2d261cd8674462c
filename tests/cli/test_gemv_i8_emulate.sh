#!/bin/bash
# Host emulation of the int8 tensor-core GEMVs, q4_k, q5_k, q6_k, q8_0 and q4_0 (tests/cuda_host/
# gemv_i8_emulate.cu) against the FP64 reference, with and without I8_GUARD. Needs nvcc and gcc; skipped
# (77) without nvcc. Run from the repository root; $1 (the gpubench binary)
# is not used.
set -u
. "$(dirname "$0")/emulate_lib.sh"
emu_gemv gemv_i8_emulate.cu || exit $?
# and the epilogues without their guard past T (I8_GUARD=0, gemv_i8_common.cuh)
echo "with -DI8_GUARD=0:"
EMU_DEFINES=-DI8_GUARD=0 emu_gemv gemv_i8_emulate.cu
