#!/bin/bash
# Host emulation of the multi-token CUDA GEMV kernels (GEMV_TOKENS > 1)
# against the FP64 reference and against T = 1 runs
# (tests/cuda_host/gemv_tokens_emulate.cu), the tensor-core path built with
# subnormal f16 codes (SUBN=1) and with the HSUB2 decode (SUBN=0). Needs nvcc
# and gcc; skipped (77) without nvcc. Run from the repository root; $1 (the
# gpubench binary) is not used.
set -u
. "$(dirname "$0")/gemv_emulate.sh"
gemv_emulate gemv_tokens_emulate.cu
