// Shared code of the CUDA GEMV kernels (kernels/cuda/gemv_<fmt>.cu):
// y[m] = W[m,k] . x[k], W in a GGML format (docs/FORMATS.md), x and y f32,
// fp32 accumulation; with GEMV_TOKENS = T > 1, y[T,m] = x[T,k] . W^T, every
// weight read and decoded once for the T rows of x. Design, measurements and
// instruction budgets: docs/kernels/cuda-gemv.md.
//
// The code is split by job into parts, included below in the order the
// compiler sees them (each part also includes the one it builds on):
//   gemv_bits.cuh    build switches, types, bit helpers, staged-byte reads
//   gemv_decode.cuh  the scalar path's decodes: the f32 magic decode (XQ=0),
//                    the integer dot (XQ=1) and the x tiles it reads
//   gemv_warp.cuh    the per-warp pipeline: format interface, staging ring,
//                    k-quant prep step, main loop, split-K helpers
//   gemv_device.cuh  cp.async and mbarrier primitives, the GPU context, the
//                    quantized kernel body
//   gemv_dense.cuh   the dense GEMV (f32, f16, bf16)
// The tensor-core path, gemv_mma.cuh (and its T > 1 block,
// gemv_mma_tokens.cuh), builds on all of them.
//
// The parts include nothing but each other, so NVRTC compiles them without
// host headers. The decode helpers and the per-warp main loop are
// __host__ __device__ templates over a "context" that does the copies and
// barriers: on the GPU it issues cp.async and __syncwarp; in a host build
// (nvcc, no __CUDA_ARCH__) tests/cuda_host/gemv_emulate.cu supplies one that
// copies with memcpy, so the exact decode and index arithmetic of every kernel
// is checked against the FP64 reference on a machine without a GPU
// (docs/kernels/cuda-gemv.md, "How this was verified without a GPU").
#ifndef GPUBENCH_GEMV_COMMON_CUH
#define GPUBENCH_GEMV_COMMON_CUH

#include "gemv_bits.cuh"
#include "gemv_decode.cuh"
#include "gemv_warp.cuh"
#include "gemv_device.cuh"
#include "gemv_dense.cuh"

#endif
