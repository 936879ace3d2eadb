/* The cuda backend's ABI glue (ABI 1.2): descriptor, function table, device listing without a
 * context (device_count, describe_device), open / close (one stream pair, one cuDNN handle,
 * one cuBLASLt handle, NVML when present) and the move of a data-parallel rank to its device,
 * device_info, energy, pinned host memory, and the thin entry points over compile.c, run.c and
 * transfer.c. No call here aborts or prints: a
 * missing driver or GPU is XPB_NO_DEVICE with the reason in last_error(NULL). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xpubench/xpubench.h>

#include "glue/cux.h"
#include "plan/reason.h"

/* The host's services (XPB_DEFINE_PLUGIN, at the end of this file, defines it). */
static inline const xpb_host_services *xpb_plugin_host(void);

/* Message of the last failed open / device_count / describe_device (last_error(NULL)). */
static char open_err[CUX_ERR_SIZE];

static xpb_status set_open_err(xpb_status st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static xpb_status set_open_err(xpb_status st, const char *fmt, ...)
{
    int n = snprintf(open_err, sizeof open_err, "cuda: ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(open_err + n, sizeof open_err - (size_t)n, fmt, ap);
    va_end(ap);
    return st;
}

void cux_log(xpb_log_level level, const char *fmt, ...)
{
    const xpb_host_services *host = xpb_plugin_host();
    if (!host || !XPB_HAS_MEMBER(host, xpb_host_services, log) || !host->log)
        return;
    char msg[CUX_ERR_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    host->log(host->ctx, level, "cuda", msg);
}

/* ---- devices ---- */

static xpb_status cux_api_device_count(uint32_t *count)
{
    if (!count)
        return set_open_err(XPB_INVALID_ARGUMENT, "device_count: count is NULL");
    char reason[768];
    int n = cux_probe_devices(reason, sizeof reason);
    *count = (uint32_t)n;
    if (n == 0) /* the host prints "no device: " before this */
        return set_open_err(XPB_NO_DEVICE, "%s", reason);
    return XPB_OK;
}

static xpb_status cux_api_describe_device(uint32_t index, xpb_device_info *out)
{
    if (!out || out->struct_size < sizeof(size_t))
        return set_open_err(XPB_INVALID_ARGUMENT, "describe_device: out is NULL or its "
                                                  "struct_size is 0");
    char reason[768];
    xpb_status st = cux_describe((int)index, out, NULL, reason, sizeof reason);
    if (st != XPB_OK)
        return set_open_err(st, "%s", reason);
    return XPB_OK;
}

/* ---- open / close ---- */

/* Releases the streams, handles and NVML of the backend (not the backend itself). */
static void release_device(xpb_backend *be)
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

static void cux_api_close(xpb_backend *be)
{
    if (!be)
        return;
    release_device(be);
    free(be);
}

/* The context (the primary one), streams, handles and NVML of device be->device; message in
 * err (CUX_ERR_SIZE bytes). */
static xpb_status acquire_device(xpb_backend *be, char *err)
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

static xpb_status cux_api_open(xpb_backend **out, uint32_t device_index)
{
    if (!out)
        return set_open_err(XPB_INVALID_ARGUMENT, "open: out is NULL");
    *out = NULL;
    char reason[768];
    int n = cux_probe_devices(reason, sizeof reason);
    if (n == 0)
        return set_open_err(XPB_NO_DEVICE, "no device: %s", reason);
    if (device_index >= (uint32_t)n) {
        cux_bad_index_reason(reason, sizeof reason, device_index, n);
        return set_open_err(XPB_NO_DEVICE, "%s", reason);
    }
    xpb_backend *be = calloc(1, sizeof *be);
    if (!be)
        return set_open_err(XPB_OUT_OF_MEMORY, "open: out of memory");
    be->device = (int)device_index;
    xpb_status st = acquire_device(be, open_err);
    if (st != XPB_OK) {
        cux_api_close(be);
        return st;
    }
    open_err[0] = '\0';
    *out = be;
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
    release_device(be);
    be->device = device;
    char err[CUX_ERR_SIZE];
    xpb_status st = acquire_device(be, err);
    if (st != XPB_OK)
        snprintf(be->err, sizeof be->err, "%s", err);
    return st;
}

/* The backend's message (valid until its next call), or the last failed open's. Never NULL. */
static const char *cux_api_last_error(const xpb_backend *be)
{
    return be ? be->err : open_err;
}

static xpb_status cux_api_device_info(xpb_backend *be, xpb_device_info *out)
{
    if (!be)
        return XPB_INVALID_ARGUMENT;
    if (!out || out->struct_size < sizeof(size_t))
        return cux_error_msg(be->err, XPB_INVALID_ARGUMENT,
                             "device_info: out is NULL or its struct_size is 0");
    char reason[768];
    xpb_status st = cux_describe(be->device, out, be->nvml, reason, sizeof reason);
    if (st != XPB_OK)
        return cux_error_msg(be->err, st, "device_info: %s", reason);
    return XPB_OK;
}

static xpb_status cux_api_energy_read(xpb_backend *be, double *joules)
{
    if (!be)
        return XPB_INVALID_ARGUMENT;
    if (!joules)
        return cux_error_msg(be->err, XPB_INVALID_ARGUMENT, "energy_read: joules is NULL");
    return cux_nvml_energy(be->nvml, joules, be->err, sizeof be->err);
}

/* Page-locked host memory (cudaHostAlloc): *out is owned by the backend, released with
 * host_free before close. */
static xpb_status cux_api_host_alloc(xpb_backend *be, size_t bytes, void **out)
{
    if (!be)
        return XPB_INVALID_ARGUMENT;
    if (!out)
        return cux_error_msg(be->err, XPB_INVALID_ARGUMENT, "host_alloc: out is NULL");
    *out = NULL;
    cudaError_t e = cudaSetDevice(be->device);
    if (e == cudaSuccess)
        e = cudaHostAlloc(out, bytes ? bytes : 1, cudaHostAllocDefault);
    if (e != cudaSuccess) {
        *out = NULL;
        (void)cudaGetLastError();
        return cux_error_msg(be->err, XPB_OUT_OF_MEMORY,
                             "host_alloc: cudaHostAlloc of %zu bytes: %s", bytes,
                             cudaGetErrorString(e));
    }
    return XPB_OK;
}

static void cux_api_host_free(xpb_backend *be, void *ptr)
{
    if (!be || !ptr)
        return;
    cux_released(cudaFreeHost(ptr), "host_free: cudaFreeHost");
}

/* ---- executables ---- */

static xpb_status cux_api_compile(xpb_executable **out, xpb_backend *be, const xpb_program *prog,
                                  const xpb_compile_options *opts)
{
    if (!be)
        return XPB_INVALID_ARGUMENT;
    if (!out || !prog)
        return cux_error_msg(be->err, XPB_INVALID_ARGUMENT, "compile: out or program is NULL");
    *out = NULL;
    cudaError_t e = cudaSetDevice(be->device);
    if (e != cudaSuccess)
        return cux_cuda_error(be->err, NULL, CUX_NONE, e, "compile: cudaSetDevice");
    return cux_compile(out, be, prog, opts);
}

/* Logs what the fp16 loss scaler did, then frees everything the executable holds. */
static void cux_api_destroy(xpb_executable *exe)
{
    if (!exe)
        return;
    const xpb_host_services *host = xpb_plugin_host();
    if (host && XPB_HAS_MEMBER(host, xpb_host_services, log) && host->log && exe->plan &&
        exe->plan->scaled && exe->host_rec)
        for (uint32_t k = 0; k < exe->prog->n_phases; k++) {
            const cux_phase_rec *r = &exe->host_rec[k];
            if (!r->steps)
                continue;
            char msg[256];
            snprintf(msg, sizeof msg,
                     "fp16 loss scaling, phase %u: %u of %u steps overflowed and skipped their "
                     "update; final scale %g",
                     k, r->overflows, r->steps, (double)r->scale);
            host->log(host->ctx, r->overflows ? XPB_LOG_WARN : XPB_LOG_INFO, "cuda", msg);
        }
    cux_destroy(exe);
}

static const char *cux_api_exe_last_error(const xpb_executable *exe)
{
    return exe ? exe->err : "cuda: no executable (NULL handle)";
}

static xpb_status cux_api_write(xpb_executable *exe, uint32_t tensor, const void *data,
                                size_t bytes)
{
    return exe ? cux_write(exe, tensor, data, bytes) : XPB_INVALID_ARGUMENT;
}

static xpb_status cux_api_read(xpb_executable *exe, uint32_t tensor, void *data, size_t bytes)
{
    return exe ? cux_read(exe, tensor, data, bytes) : XPB_INVALID_ARGUMENT;
}

static xpb_status cux_api_write_async(xpb_executable *exe, uint32_t tensor, const void *data,
                                      size_t bytes)
{
    return exe ? cux_write_async(exe, tensor, data, bytes) : XPB_INVALID_ARGUMENT;
}

static xpb_status cux_api_run(xpb_executable *exe, uint32_t phase)
{
    return exe ? cux_run(exe, phase) : XPB_INVALID_ARGUMENT;
}

static xpb_status cux_api_synchronize(xpb_executable *exe)
{
    return exe ? cux_synchronize(exe) : XPB_INVALID_ARGUMENT;
}

static xpb_status cux_api_profile_read(xpb_executable *exe, xpb_op_profile *out, uint32_t capacity,
                                       uint32_t *count)
{
    return exe ? cux_profile_read(exe, out, capacity, count) : XPB_INVALID_ARGUMENT;
}

static xpb_status cux_api_memory_stats(xpb_executable *exe, xpb_memory_stats *out)
{
    return exe ? cux_memory_stats(exe, out) : XPB_INVALID_ARGUMENT;
}

static const xpb_backend_api cux_api = {
    .struct_size = sizeof(xpb_backend_api),
    .open = cux_api_open,
    .close = cux_api_close,
    .last_error = cux_api_last_error,
    .device_info = cux_api_device_info,
    .compile = cux_api_compile,
    .destroy = cux_api_destroy,
    .exe_last_error = cux_api_exe_last_error,
    .write = cux_api_write,
    .read = cux_api_read,
    .run = cux_api_run,
    .synchronize = cux_api_synchronize,
    .profile_read = cux_api_profile_read,
    .memory_stats = cux_api_memory_stats,
    .energy_read = cux_api_energy_read,
    .device_count = cux_api_device_count,
    .describe_device = cux_api_describe_device,
    .write_async = cux_api_write_async,
    .host_alloc = cux_api_host_alloc,
    .host_free = cux_api_host_free,
};

XPB_DEFINE_PLUGIN(XPB_PLUGIN_BACKEND, "cuda", "1.1.0",
                  "NVIDIA GPUs (sm_75+): cuDNN 9 graphs, cuBLASLt, one CUDA graph per phase, "
                  "NCCL for data-parallel runs; fp32, tf32, bf16-mixed, fp16-mixed",
                  XPB_CAP_FUSION, &cux_api)
