/* The C interface of the CPU stand-in of the CUDA runtime, cuDNN and cuBLASLt (tests only, never
 * shipped; tests/cuda_standin/README.md): what a stand-in build of the plugin and the stand-in's
 * own tests may call besides NVIDIA's documented API, which the stand-in implements under
 * NVIDIA's own names and headers. */
#ifndef XPBSI_STANDIN_H
#define XPBSI_STANDIN_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Fills [device_ptr, device_ptr + bytes) with 0xFF bytes, a NaN in fp32, fp16 and bf16 (and -1
 * in int32), at once (every stand-in stream runs its work when it is enqueued): where a tensor's
 * lifetime ends in an arena plan, so that a later read through an alias of those bytes becomes a
 * wrong number. The range must lie inside one live cudaMalloc allocation; anything else is a
 * misuse of the stand-in and aborts the process with a message naming the range. Inside a stream
 * capture, poison with xpbsi_poison_async instead (this call is not captured). */
void xpbsi_poison(void *device_ptr, size_t bytes);

/* The same as a stream operation: enqueued on `stream` (recorded into the graph while the stream
 * captures, like cudaMemsetAsync(device_ptr, 0xFF, bytes, stream)). Returns what cudaMemsetAsync
 * would return. */
cudaError_t xpbsi_poison_async(void *device_ptr, size_t bytes, cudaStream_t stream);

/* 1 when [p, p + bytes) lies inside one live device allocation (cudaMalloc), else 0. */
int xpbsi_is_device_range(const void *p, size_t bytes);

/* How many kernel grids have been executed so far in this process (graph launches included):
 * a test of stream capture checks that capturing executes nothing. */
unsigned long long xpbsi_grids_executed(void);

/* The compute capability the stand-in reports (major * 10 + minor), from XPB_STANDIN_CC
 * ("7.5", "8.0", "9.0" ...; default 8.0). */
int xpbsi_compute_capability(void);

#ifdef __cplusplus
}
#endif
#endif
