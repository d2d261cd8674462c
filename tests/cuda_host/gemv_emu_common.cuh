// The common start of the host emulations of the CUDA GEMV kernels
// (gemv_emulate.cu, T = 1; gemv_tokens_emulate.cu, T > 1), included first:
// the kernels compiled as host code, the FP64 reference, the reporting
// (emu_report.cuh) and the emulated hardware and runners (emu_host.cuh).
//
// The kernels take their geometry from defines (lib/gpubench/gemv_cuda.lua
// holds the defaults). The entries compiled here get one valid geometry and
// are never run; the emulations run their own template instances. SUBN comes
// from the command line.
#ifndef GPUBENCH_GEMV_EMU_COMMON_CUH
#define GPUBENCH_GEMV_EMU_COMMON_CUH
#include <sys/mman.h>
#include <algorithm>
#include <unistd.h>
#include <cassert>
#include <cstdarg>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define GB_LAUNCH_OVERLAP_NO_SYMBOL // the kernel files below each declare it
#define MMA 1
#define XQ 0
#define ROWS 16
#define WARPS 1
#define STAGES 2
#define KSPLIT 1
#define PARTS 1
#define GEMV_TOKENS 1
#include "gemv_q4_0.cu"
#include "gemv_q8_0.cu"
#include "gemv_q4_k.cu"
#include "gemv_q5_k.cu"
#include "gemv_q6_k.cu"
#undef ROWS
#undef WARPS
#define ROWS 4
#define WARPS 2
#define UNROLL 2
#undef MMA
#define MMA 0 // the dense FMA kernels (MMA=1 is gemv_<fmt>_tc.cu, tests/cuda_host/gemv_tc_emulate.cu)
#include "gemv_f32.cu"
#include "gemv_f16.cu"
#include "gemv_bf16.cu"
#undef MMA
#define MMA 1

extern "C" {
#include "formats.h"
#include "ref_blocks.h"
#include "ref_dequant.h"
#include "ref_gemv.h"
#include "random.h"
}

#include "emu_report.cuh"
#include "emu_host.cuh"
#endif
