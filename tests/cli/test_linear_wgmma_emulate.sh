#!/bin/bash
# Host emulation of the CUDA Linear wgmma route against the FP64 reference
# (tests/cuda_host/linear_wgmma_emulate.cu): every planar format, the route
# table's geometries, slices of K and the warp-specialized kernel, and the
# LN_HALF prepass's kernel code (row by row and tiled, rows held or read twice), with
# shared memory, cp.async, barriers, mbarriers and wgmma modelled and
# checked. Needs nvcc and gcc; skipped (77) without nvcc. Run from the
# repository root; $1 (the gpubench binary) is not used.
set -u
. "$(dirname "$0")/emulate_lib.sh"
EMU_ARCH="-gencode arch=compute_90a,code=sm_90a -diag-suppress 20011,20014" emu_linear linear_wgmma_emulate.cu
