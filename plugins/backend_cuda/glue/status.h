/* CUDA runtime, cuDNN and cuBLASLt statuses into xpb_status values with messages (status.c). */
#ifndef XPB_CUX_STATUS_H
#define XPB_CUX_STATUS_H

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cudnn_graph.h>

#include "glue/exe.h"

/* "<label>: <what>: <details>" into err (CUX_ERR_SIZE bytes), the label naming op `op`
 * and its layer (CUX_NONE: no label); returns the xpb_status the failure maps to. A sticky CUDA
 * error is remembered for the current device (plan/sticky.h). */
xpb_status cux_cuda_error(char *err, const xpb_program *prog, uint32_t op, cudaError_t e,
                          const char *what);
xpb_status cux_cudnn_error(char *err, const xpb_program *prog, uint32_t op, cudnnStatus_t s,
                           const char *what);
xpb_status cux_cublas_error(char *err, const xpb_program *prog, uint32_t op, cublasStatus_t s,
                            const char *what);
xpb_status cux_error_msg(char *err, xpb_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* XPB_OK while `device` has not lost its CUDA context in this process; else XPB_DEVICE_ERROR with
 * "<what>: device D is unusable: ... (<the first sticky failure>) ..." in err. */
xpb_status cux_usable(char *err, int device, const char *what);
/* True when `device` lost its CUDA context in this process (a sticky error was met). */
int cux_lost(int device);
/* Release calls (destroy, close) return nothing to the host: a failure is logged as a warning
 * naming `what`, and the runtime's error state is cleared. */
void cux_released(cudaError_t e, const char *what);
void cux_released_dnn(cudnnStatus_t s, const char *what);
void cux_released_lt(cublasStatus_t s, const char *what);

/* Evaluates a CUDA runtime call; on failure returns the mapped status from the enclosing
 * function with a message in exe->err naming op `op`. */
#define CUX_CUDA(exe, op, call, what)                                                              \
    do {                                                                                           \
        cudaError_t cux_e_ = (call);                                                               \
        if (cux_e_ != cudaSuccess)                                                                 \
            return cux_cuda_error((exe)->err, (exe)->prog, (op), cux_e_, (what));                  \
    } while (0)
#define CUX_CUDNN(exe, op, call, what)                                                             \
    do {                                                                                           \
        cudnnStatus_t cux_s_ = (call);                                                             \
        if (cux_s_ != CUDNN_STATUS_SUCCESS)                                                        \
            return cux_cudnn_error((exe)->err, (exe)->prog, (op), cux_s_, (what));                 \
    } while (0)
#define CUX_CUBLAS(exe, op, call, what)                                                            \
    do {                                                                                           \
        cublasStatus_t cux_b_ = (call);                                                            \
        if (cux_b_ != CUBLAS_STATUS_SUCCESS)                                                       \
            return cux_cublas_error((exe)->err, (exe)->prog, (op), cux_b_, (what));                \
    } while (0)

#endif
