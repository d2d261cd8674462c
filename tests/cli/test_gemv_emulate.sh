#!/bin/bash
# Host emulation of the CUDA GEMV kernels against the FP64 reference
# (tests/cuda_host/gemv_emulate.cu), built twice: the tensor-core path with
# subnormal f16 codes (SUBN=1, the default) and with the HSUB2 decode
# (SUBN=0). Needs nvcc and gcc; skipped (77) without nvcc. Run from the
# repository root; $1 (the gpubench binary) is not used.
set -u
. "$(dirname "$0")/gemv_emulate.sh"
gemv_emulate gemv_emulate.cu
