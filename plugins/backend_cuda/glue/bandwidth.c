/* The bandwidth device memory sustains, for xpb_device_info.memory_bandwidth (ABI 1.3): the
 * roofline of show --profile places each op against it. A cudaMemcpyAsync from device to device
 * reads and writes every byte once, as NVIDIA's bandwidthTest counts it (2 x bytes per copy).
 * Events on the backend's own stream time each copy; the best of CUX_BW_REPS after one warm-up
 * copy is kept, as a STREAM-like figure is the best of its repetitions. */
#include <stdio.h>

#include "glue/bandwidth.h"
#include "glue/status.h"

#define CUX_BW_BYTES ((size_t)64 << 20)
#define CUX_BW_REPS 5

/* One timed copy of CUX_BW_BYTES from src to dst, in seconds into *out. */
static cudaError_t timed_copy(double *out, xpb_backend *be, void *dst, const void *src,
                              cudaEvent_t start, cudaEvent_t stop)
{
    cudaError_t e;
    float ms = 0.0f;
    if ((e = cudaEventRecord(start, be->stream)) != cudaSuccess ||
        (e = cudaMemcpyAsync(dst, src, CUX_BW_BYTES, cudaMemcpyDeviceToDevice, be->stream)) !=
            cudaSuccess ||
        (e = cudaEventRecord(stop, be->stream)) != cudaSuccess ||
        (e = cudaEventSynchronize(stop)) != cudaSuccess ||
        (e = cudaEventElapsedTime(&ms, start, stop)) != cudaSuccess)
        return e;
    *out = (double)ms * 1e-3;
    return cudaSuccess;
}

/* The best rate of CUX_BW_REPS copies, bytes/s; 0 when a call failed. */
static double measure(xpb_backend *be)
{
    void *a = NULL, *b = NULL;
    cudaEvent_t start = NULL, stop = NULL;
    double best = 0.0;
    if (cudaMalloc(&a, CUX_BW_BYTES) != cudaSuccess)
        goto free_buffers;
    if (cudaMalloc(&b, CUX_BW_BYTES) != cudaSuccess)
        goto free_buffers;
    if (cudaEventCreate(&start) != cudaSuccess)
        goto destroy_events;
    if (cudaEventCreate(&stop) != cudaSuccess)
        goto destroy_events;
    if (cudaMemsetAsync(a, 0, CUX_BW_BYTES, be->stream) != cudaSuccess)
        goto destroy_events;
    for (int r = 0; r <= CUX_BW_REPS; r++) {
        double s = 0.0;
        if (timed_copy(&s, be, r % 2 ? a : b, r % 2 ? b : a, start, stop) != cudaSuccess) {
            best = 0.0;
            break;
        }
        double rate = s > 0.0 ? 2.0 * (double)CUX_BW_BYTES / s : 0.0;
        if (r > 0 && rate > best) /* r == 0: the warm-up */
            best = rate;
    }
destroy_events:
    if (stop)
        cux_released(cudaEventDestroy(stop), "device_info: cudaEventDestroy");
    if (start)
        cux_released(cudaEventDestroy(start), "device_info: cudaEventDestroy");
free_buffers:
    if (b)
        cux_released(cudaFree(b), "device_info: cudaFree");
    if (a)
        cux_released(cudaFree(a), "device_info: cudaFree");
    (void)cudaGetLastError(); /* a failed measurement must not linger as the last error */
    return best;
}

double cux_measure_bandwidth(xpb_backend *be, char *source, size_t size)
{
    source[0] = '\0';
    if (cux_lost(be->device))
        return 0.0;
    if (!be->bandwidth_done) {
        be->bandwidth = measure(be);
        be->bandwidth_done = 1;
    }
    if (be->bandwidth > 0.0)
        snprintf(source, size, "measured: cudaMemcpyAsync device to device, %zu MiB, best of %d",
                 CUX_BW_BYTES >> 20, CUX_BW_REPS);
    return be->bandwidth;
}
