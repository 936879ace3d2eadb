// Helpers shared by the own kernels (k_*.cu): typed loads and stores with the element type
// chosen at run time (one kernel serves fp32, fp16, bf16 and int32 storage: the switch is
// uniform across a launch, and these kernels are bound by memory, not by instructions),
// element addressing across layouts, launch geometry, block reductions, and the launchers each
// k_*.cu file provides to k_launch.cu.
#ifndef XPB_CUX_K_COMMON_CUH
#define XPB_CUX_K_COMMON_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "kernels/elem_math.h"
#include "kernels/fault.h"
#include "kernels/index_math.h"
#include "kernels/kernels.h"

#define CUX_THREADS 256

// The one launch syntax of the own kernels: XPB_LAUNCH(k_relu, grid, CUX_THREADS, 0, s)(args...).
// Under nvcc it is CUDA's k<<<grid, block, smem, stream>>>; built for the host against the CPU
// stand-in of the test suite (tests/cuda_standin, XPB_CUDA_STANDIN), it is the stand-in's
// launcher, which runs every block with the same grid, block and dynamic shared memory. Nothing
// else in the kernels changes for the stand-in.
#if defined(XPB_CUDA_STANDIN)
#include "xpbsi/launch.hpp"
#define XPB_LAUNCH(k, grid, block, smem, stream) xpbsi::launch(k, grid, block, smem, stream)
#else
#define XPB_LAUNCH(k, grid, block, smem, stream) k<<<grid, block, smem, stream>>>
#endif

__device__ __forceinline__ float cux_ld(const cux_tview &v, int64_t i)
{
    switch (v.type) {
    case CUX_F16:
        return __half2float(static_cast<const __half *>(v.p)[i]);
    case CUX_BF16:
        return __bfloat162float(static_cast<const __nv_bfloat16 *>(v.p)[i]);
    case CUX_I32:
        return static_cast<float>(static_cast<const int32_t *>(v.p)[i]);
    default:
        return static_cast<const float *>(v.p)[i];
    }
}

__device__ __forceinline__ void cux_st(const cux_tview &v, int64_t i, float x)
{
    switch (v.type) {
    case CUX_F16:
        static_cast<__half *>(v.p)[i] = __float2half_rn(x);
        break;
    case CUX_BF16:
        static_cast<__nv_bfloat16 *>(v.p)[i] = __float2bfloat16_rn(x);
        break;
    case CUX_I32:
        static_cast<int32_t *>(v.p)[i] = static_cast<int32_t>(x);
        break;
    default:
        static_cast<float *>(v.p)[i] = x;
        break;
    }
}

__host__ __device__ __forceinline__ int64_t cux_numel(const cux_tview &v)
{
    return v.n * v.c * v.h * v.w;
}

// The offset in `v` of the element stored at offset i of `out` (both of one logical shape).
__device__ __forceinline__ int64_t cux_same(const cux_tview &out, const cux_tview &v, int64_t i)
{
    if (v.layout == out.layout)
        return i;
    int64_t n, c, h, w;
    cux_coords(out.layout, out.c, out.h, out.w, i, &n, &c, &h, &w);
    return cux_offset(v.layout, v.c, v.h, v.w, n, c, h, w);
}

// The channel (dimension 1) of the element stored at offset i of `v`.
__device__ __forceinline__ int64_t cux_channel(const cux_tview &v, int64_t i)
{
    if (v.layout == CUX_NHWC)
        return i % v.c;
    return (i / (v.h * v.w)) % v.c;
}

// Grid-stride loop over [0, total).
#define CUX_FOR(i, total)                                                                          \
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (total);     \
         i += static_cast<int64_t>(gridDim.x) * blockDim.x)

// Blocks for a grid-stride loop over `total` elements: enough to fill the device a few times.
static inline unsigned cux_blocks(int64_t total, int sm_count)
{
    int64_t want = (total + CUX_THREADS - 1) / CUX_THREADS;
    int64_t cap = static_cast<int64_t>(sm_count > 0 ? sm_count : 80) * 32;
    if (want > cap)
        want = cap;
    return static_cast<unsigned>(want < 1 ? 1 : want);
}

// The sum of `v` over the block's threads (blockDim.x == CUX_THREADS); valid in thread 0.
__device__ __forceinline__ double cux_block_sum(double v)
{
    __shared__ double part[CUX_THREADS / 32];
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0)
        part[threadIdx.x >> 5] = v;
#if defined(XPB_CUDA_STANDIN)
    if (!cux_fault("block_sum_no_barrier")) // thread 0 may read the partials before they exist
#endif
        __syncthreads();
    double s = 0.0;
    if (threadIdx.x == 0)
        for (int k = 0; k < CUX_THREADS / 32; k++)
            s += part[k];
    __syncthreads();
    return s;
}

// Records the first data-dependent error of a phase (ops.md "Errors at run time").
__device__ __forceinline__ void cux_error(cux_phase_rec *rec, uint32_t code, int32_t op, int64_t a,
                                          int64_t b)
{
    if (atomicCAS(&rec->err_code, 0u, code) == 0u) {
        rec->err_op = static_cast<uint32_t>(op);
        rec->err_a = a;
        rec->err_b = b;
    }
}

// Launchers of each file (they enqueue and return cudaGetLastError()).
cudaError_t cux_launch_elem(const cux_kparams &kp, cudaStream_t s);  // k_elem.cu
cudaError_t cux_launch_norm(const cux_kparams &kp, cudaStream_t s);  // k_norm.cu
cudaError_t cux_launch_pool(const cux_kparams &kp, cudaStream_t s);  // k_pool.cu
cudaError_t cux_launch_loss(const cux_kparams &kp, cudaStream_t s);  // k_loss.cu
cudaError_t cux_launch_optim(const cux_kparams &kp, cudaStream_t s); // k_optim.cu
cudaError_t cux_launch_shape(const cux_kparams &kp, cudaStream_t s); // k_shape.cu (op set 3)
cudaError_t cux_launch_seq(const cux_kparams &kp, cudaStream_t s);   // k_seq.cu (op set 3)
cudaError_t cux_launch_lstm(const cux_kparams &kp, cudaStream_t s);  // k_lstm.cu (op set 3)

#endif
