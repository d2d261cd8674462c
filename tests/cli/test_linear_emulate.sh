#!/bin/bash
# Host emulation of the CUDA Linear kernels against the FP64 reference
# (tests/cuda_host/linear_emulate.cu): both routes of every planar format,
# one-hot exactness, random shapes, non-finite x, the access contract and
# two cp.async models. Needs nvcc and gcc; skipped (77) without nvcc. Run
# from the repository root; $1 (the gpubench binary) is not used.
set -u
. "$(dirname "$0")/emulate_lib.sh"
emu_linear linear_emulate.cu
