/* Trying and timing engine candidates at compile (tuning.h). A candidate is chosen only after it
 * ran: cuDNN finalizes execution plans that its kernels then refuse (an unsupported launch
 * configuration, a missing kernel image on this architecture), and cuBLASLt's heuristics may
 * return algorithms that fail on the real operands. XPB_CUDA_NO_TUNE=1 takes the first candidate
 * that runs instead of timing them all. The scratch workspace the candidates run with is the
 * executable's for the duration of compile, grown to the largest one asks for. */
#include <stdlib.h>
#include <string.h>

#include "glue/status.h"
#include "glue/tuning.h"
#include "plan/sticky.h"

int cux_tuning_on(void)
{
    const char *v = getenv("XPB_CUDA_NO_TUNE");
    return !(v && v[0] && strcmp(v, "0") != 0);
}

xpb_status cux_tune_scratch(xpb_executable *exe, size_t bytes)
{
    if (bytes <= exe->tune_bytes && exe->tune_ws)
        return XPB_OK;
    cux_tune_release(exe);
    CUX_CUDA(exe, CUX_NONE, cudaMalloc(&exe->tune_ws, bytes ? bytes : CUX_ALIGN),
             "compile: tuning workspace");
    exe->tune_bytes = bytes;
    return XPB_OK;
}

void cux_tune_release(xpb_executable *exe)
{
    if (exe->tune_ws)
        cux_released(cudaFree(exe->tune_ws), "compile: cudaFree (tuning workspace)");
    exe->tune_ws = NULL;
    exe->tune_bytes = 0;
}

/* The outcome of a run whose call returned `st`: the stream is waited for, and a failure of
 * either is the candidate's (sticky: the device's). */
static xpb_status settle(xpb_executable *exe, uint32_t op, xpb_status st)
{
    cudaError_t e = cudaStreamSynchronize(exe->be->stream);
    if (e != cudaSuccess) {
        xpb_status se = cux_cuda_error(exe->err, exe->prog, op, e, "compile: trial run");
        if (cux_cuda_sticky((int)e))
            return XPB_DEVICE_ERROR;
        (void)cudaGetLastError();
        return se == XPB_OUT_OF_MEMORY ? se : XPB_UNSUPPORTED;
    }
    if (st != XPB_OK) {
        (void)cudaGetLastError();
        return st == XPB_INTERNAL || st == XPB_OUT_OF_MEMORY ? st : XPB_UNSUPPORTED;
    }
    return XPB_OK;
}

xpb_status cux_try_candidate(xpb_executable *exe, uint32_t op, cux_candidate_run run, void *ctx,
                             int timed, double *seconds)
{
    *seconds = 0.0;
    xpb_status st = settle(exe, op, run(exe, ctx));
    if (st != XPB_OK || timed <= 0)
        return st;
    cudaStream_t s = exe->be->stream;
    cudaEvent_t e0, e1;
    CUX_CUDA(exe, op, cudaEventCreate(&e0), "compile: tuning event");
    cudaError_t e = cudaEventCreate(&e1);
    if (e != cudaSuccess) {
        cux_released(cudaEventDestroy(e0), "tuning event");
        return cux_cuda_error(exe->err, exe->prog, op, e, "compile: tuning event");
    }
    double best = -1.0;
    for (int i = 0; i < timed && st == XPB_OK; i++) {
        float ms = 0.0f;
        if ((e = cudaEventRecord(e0, s)) != cudaSuccess)
            break;
        st = run(exe, ctx);
        if (st == XPB_OK && (e = cudaEventRecord(e1, s)) == cudaSuccess &&
            (e = cudaEventSynchronize(e1)) == cudaSuccess &&
            (e = cudaEventElapsedTime(&ms, e0, e1)) == cudaSuccess &&
            (best < 0.0 || ms * 1e-3 < best))
            best = ms * 1e-3;
    }
    cux_released(cudaEventDestroy(e1), "tuning event");
    cux_released(cudaEventDestroy(e0), "tuning event");
    if (e != cudaSuccess || st != XPB_OK)
        return settle(exe, op,
                      e != cudaSuccess ? cux_cuda_error(exe->err, exe->prog, op, e,
                                                        "compile: timing a candidate")
                                       : st);
    *seconds = best;
    return XPB_OK;
}
