/* Turning CUDA runtime, cuDNN and cuBLASLt statuses into xpb_status values with one-line
 * messages that name the op and its layer, the call that failed and the library's own words
 * (cuDNN's cudnnGetLastErrorString says which attribute or shape it refused). A sticky CUDA
 * error (plan/sticky.h) is remembered for its device, and the entry points then refuse to use
 * the device with a sentence naming that first failure (cux_usable). */
#include <stdarg.h>
#include <stdio.h>

#include "glue/log.h"
#include "glue/status.h"
#include "plan/plan_error.h"
#include "plan/sticky.h"

/* plan/sticky.h restates these so that it needs no CUDA header. */
_Static_assert(cudaErrorContained == 226 && cudaErrorIllegalAddress == 700 &&
                   cudaErrorLaunchTimeout == 702 && cudaErrorAssert == 710 &&
                   cudaErrorHardwareStackError == 714 && cudaErrorIllegalInstruction == 715 &&
                   cudaErrorMisalignedAddress == 716 && cudaErrorInvalidAddressSpace == 717 &&
                   cudaErrorInvalidPc == 718 && cudaErrorLaunchFailure == 719 &&
                   cudaErrorTensorMemoryLeak == 721 && cudaErrorMpsClientTerminated == 810 &&
                   cudaErrorExternalDevice == 911,
               "the sticky cudaError_t values of plan/sticky.h");

xpb_status cux_error_msg(char *err, xpb_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, CUX_ERR_SIZE, fmt, ap);
    va_end(ap);
    return st;
}

/* "op 12 CONV2D (layer conv3): " or "" into buf. */
static void label(char *buf, size_t size, const xpb_program *prog, uint32_t op)
{
    buf[0] = '\0';
    if (!prog || op == CUX_NONE || op >= prog->n_ops)
        return;
    char l[256];
    cux_op_label(prog, op, l, sizeof l);
    snprintf(buf, size, "%s: ", l);
}

xpb_status cux_cuda_error(char *err, const xpb_program *prog, uint32_t op, cudaError_t e,
                          const char *what)
{
    char l[300];
    label(l, sizeof l, prog, op);
    xpb_status st;
    switch (e) {
    case cudaErrorMemoryAllocation:
        st = XPB_OUT_OF_MEMORY;
        break;
    case cudaErrorInsufficientDriver:
    case cudaErrorNoDevice:
    case cudaErrorInvalidDevice:
        st = XPB_NO_DEVICE;
        break;
    default:
        st = XPB_DEVICE_ERROR;
        break;
    }
    st =
        cux_error_msg(err, st, "%s%s: %s: %s", l, what, cudaGetErrorName(e), cudaGetErrorString(e));
    if (cux_cuda_sticky((int)e)) { /* the context is lost: remember the one real failure */
        int device = 0;
        if (cudaGetDevice(&device) != cudaSuccess)
            device = 0;
        cux_sticky_note(device, err);
    }
    return st;
}

int cux_lost(int device)
{
    char msg[8];
    return cux_sticky_refusal(msg, sizeof msg, device, "") != 0;
}

xpb_status cux_usable(char *err, int device, const char *what)
{
    char msg[CUX_ERR_SIZE - 8];
    if (cux_sticky_refusal(msg, sizeof msg, device, what) == 0)
        return XPB_OK;
    return cux_error_msg(err, XPB_DEVICE_ERROR, "%s", msg);
}

xpb_status cux_cudnn_error(char *err, const xpb_program *prog, uint32_t op, cudnnStatus_t s,
                           const char *what)
{
    char l[300], detail[512];
    label(l, sizeof l, prog, op);
    cudnnGetLastErrorString(detail, sizeof detail);
    xpb_status st;
    switch (CUDNN_STATUS_CATEGORY(s)) {
    case CUDNN_STATUS_NOT_SUPPORTED:
        st = XPB_UNSUPPORTED;
        break;
    case CUDNN_STATUS_BAD_PARAM:
        st = XPB_INTERNAL; /* the backend built a descriptor cuDNN refuses: a bug here */
        break;
    default:
        st = s == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
                     s == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED
                 ? XPB_OUT_OF_MEMORY
                 : XPB_DEVICE_ERROR;
        break;
    }
    return cux_error_msg(err, st, "%s%s: %s%s%s", l, what, cudnnGetErrorString(s),
                         detail[0] ? ": " : "", detail);
}

xpb_status cux_cublas_error(char *err, const xpb_program *prog, uint32_t op, cublasStatus_t s,
                            const char *what)
{
    char l[300];
    label(l, sizeof l, prog, op);
    xpb_status st = s == CUBLAS_STATUS_NOT_SUPPORTED   ? XPB_UNSUPPORTED
                    : s == CUBLAS_STATUS_ALLOC_FAILED  ? XPB_OUT_OF_MEMORY
                    : s == CUBLAS_STATUS_INVALID_VALUE ? XPB_INTERNAL
                                                       : XPB_DEVICE_ERROR;
    return cux_error_msg(err, st, "%s%s: %s", l, what, cublasLtGetStatusString(s));
}

void cux_released(cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return;
    cux_log(XPB_LOG_WARN, "releasing: %s: %s: %s", what, cudaGetErrorName(e),
            cudaGetErrorString(e));
    (void)cudaGetLastError();
}

void cux_released_dnn(cudnnStatus_t s, const char *what)
{
    if (s != CUDNN_STATUS_SUCCESS)
        cux_log(XPB_LOG_WARN, "releasing: %s: %s", what, cudnnGetErrorString(s));
}

void cux_released_lt(cublasStatus_t s, const char *what)
{
    if (s != CUBLAS_STATUS_SUCCESS)
        cux_log(XPB_LOG_WARN, "releasing: %s: %s", what, cublasLtGetStatusString(s));
}
