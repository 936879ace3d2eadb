/* The device a backend has opened: its context (the primary one), its streams, its cuDNN and
 * cuBLASLt handles and NVML's, made at open and again when a data-parallel rank moves to its own
 * device, and released at close. */
#include <stdio.h>

#include "glue/backend.h"
#include "glue/device.h"
#include "glue/energy.h"
#include "glue/status.h"
#include "plan/target.h"

/* Releases the streams, handles and NVML of the backend (not the backend itself). */
void cux_backend_release(xpb_backend *be)
{
    if (be->stream || be->cudnn || be->lt)
        cux_released(cudaSetDevice(be->device), "close: cudaSetDevice");
    cux_nvml_close(be->nvml);
    be->nvml = NULL;
    if (be->lt)
        cux_released_lt(cublasLtDestroy(be->lt), "close: cublasLtDestroy");
    if (be->cudnn)
        cux_released_dnn(cudnnDestroy(be->cudnn), "close: cudnnDestroy");
    if (be->copy_stream)
        cux_released(cudaStreamDestroy(be->copy_stream), "close: cudaStreamDestroy");
    if (be->stream)
        cux_released(cudaStreamDestroy(be->stream), "close: cudaStreamDestroy");
    be->lt = NULL;
    be->cudnn = NULL;
    be->copy_stream = be->stream = NULL;
}

xpb_status cux_backend_acquire(xpb_backend *be, char *err)
{
    xpb_status st;
    cudaError_t e = cudaSetDevice(be->device);
    if (e != cudaSuccess)
        return cux_cuda_error(err, NULL, CUX_NONE, e, "open: cudaSetDevice");
    if ((st = cux_read_properties(be)) != XPB_OK) {
        snprintf(err, CUX_ERR_SIZE, "%s", be->err);
        return st;
    }
    cux_target t = {be->cc_major, be->cc_minor};
    if (!cux_target_precisions(&t))
        return cux_error_msg(err, XPB_NO_DEVICE, "device %d is %s (sm_%d%d): %s", be->device,
                             be->name, be->cc_major, be->cc_minor,
                             cux_target_refusal(&t, XPB_PRECISION_FP32));
    if ((e = cudaStreamCreateWithFlags(&be->stream, cudaStreamNonBlocking)) != cudaSuccess ||
        (e = cudaStreamCreateWithFlags(&be->copy_stream, cudaStreamNonBlocking)) != cudaSuccess)
        return cux_cuda_error(err, NULL, CUX_NONE, e, "open: cudaStreamCreate");
    cudnnStatus_t s = cudnnCreate(&be->cudnn);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnSetStream(be->cudnn, be->stream);
    if (s != CUDNN_STATUS_SUCCESS)
        return cux_cudnn_error(err, NULL, CUX_NONE, s, "open: cudnnCreate");
    cublasStatus_t b = cublasLtCreate(&be->lt);
    if (b != CUBLAS_STATUS_SUCCESS)
        return cux_cublas_error(err, NULL, CUX_NONE, b, "open: cublasLtCreate");
    be->nvml = cux_nvml_open(be->device); /* NULL: energy not measured */
    return XPB_OK;
}

xpb_status cux_backend_move(xpb_backend *be, int device)
{
    if (device == be->device)
        return XPB_OK;
    if (be->live_exes)
        return cux_error_msg(be->err, XPB_INVALID_ARGUMENT,
                             "compile: this data-parallel rank must run on device %d, but the "
                             "backend was opened on device %d and already holds %u executables "
                             "there: open it on device %d",
                             device, be->device, be->live_exes, device);
    cux_backend_release(be);
    be->device = device;
    char err[CUX_ERR_SIZE];
    xpb_status st = cux_backend_acquire(be, err);
    if (st != XPB_OK)
        snprintf(be->err, sizeof be->err, "%s", err);
    return st;
}
