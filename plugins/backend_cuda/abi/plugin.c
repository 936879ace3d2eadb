/* The cuda backend's ABI glue (ABI 1.2), the backend proper that loader/loader.c loads on the
 * host's first call: descriptor, function table, device listing without a
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

#include "abi/compile.h"
#include "abi/identity.h"
#include "abi/run.h"
#include "glue/backend.h"
#include "glue/bandwidth.h"
#include "glue/device.h"
#include "glue/energy.h"
#include "glue/log.h"
#include "glue/status.h"
#include "glue/transfer.h"
#include "plan/reason.h"

/* The host's services (XPB_DEFINE_PLUGIN, at the end of this file, defines it). */
static inline const xpb_host_services *xpb_plugin_host(void);

/* Hands the host's services to the log (glue/log.c) before a call that may log. */
static void attach_log(void)
{
    cux_log_attach(xpb_plugin_host());
}

/* Message of the last failed open / device_count / describe_device (last_error(NULL)). */
static char open_err[CUX_ERR_SIZE];

static xpb_status set_open_err(xpb_status st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static xpb_status set_open_err(xpb_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(open_err, sizeof open_err, fmt, ap);
    va_end(ap);
    return st;
}

/* ---- devices ---- */

static xpb_status cux_api_device_count(uint32_t *count)
{
    attach_log();
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
    attach_log();
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

static void cux_api_close(xpb_backend *be)
{
    if (!be)
        return;
    cux_backend_release(be);
    free(be);
}

static xpb_status cux_api_open(xpb_backend **out, uint32_t device_index)
{
    attach_log();
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
    xpb_status st = cux_usable(open_err, be->device, "open");
    if (st == XPB_OK)
        st = cux_backend_acquire(be, open_err);
    if (st != XPB_OK) {
        cux_api_close(be);
        return st;
    }
    open_err[0] = '\0';
    *out = be;
    return XPB_OK;
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
    if (XPB_HAS_MEMBER(out, xpb_device_info, memory_bandwidth_source))
        out->memory_bandwidth = cux_measure_bandwidth(be, out->memory_bandwidth_source,
                                                      sizeof out->memory_bandwidth_source);
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
    attach_log();
    if (!out || !prog)
        return cux_error_msg(be->err, XPB_INVALID_ARGUMENT, "compile: out or program is NULL");
    *out = NULL;
    xpb_status st = cux_usable(be->err, be->device, "compile");
    if (st != XPB_OK)
        return st;
    return cux_compile(out, be, prog, opts);
}

/* Frees everything the executable holds (abi/compile.c; logs what the fp16 loss scaler did). */
static void cux_api_destroy(xpb_executable *exe)
{
    attach_log();
    cux_destroy(exe);
}

static const char *cux_api_exe_last_error(const xpb_executable *exe)
{
    return exe ? exe->err : "no executable (NULL handle)";
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

XPB_DEFINE_PLUGIN(XPB_PLUGIN_BACKEND, CUX_PLUGIN_NAME, CUX_PLUGIN_VERSION, CUX_PLUGIN_DESCRIPTION,
                  CUX_PLUGIN_CAPS, &cux_api)
