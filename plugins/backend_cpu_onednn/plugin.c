/* The cpu_onednn backend's ABI glue: descriptor, device context (one oneDNN CPU engine and
 * stream), device_info, and the thin entry points over compile.c, transfer.c and run.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "odn.h"

/* Message of the last failed open(); static storage (backend.h: last_error(NULL)). */
static char open_err[ODN_ERR_SIZE];

xpb_status odn_compile_program(xpb_executable **out, xpb_backend *be, const xpb_program *prog,
                               const xpb_compile_options *opts);
void odn_destroy(xpb_executable *exe);
xpb_status odn_run(xpb_executable *exe, uint32_t phase);
xpb_status odn_profile_read(xpb_executable *exe, xpb_op_profile *out, uint32_t capacity,
                            uint32_t *count);
xpb_status odn_memory_stats(xpb_executable *exe, xpb_memory_stats *out);

static xpb_status be_fail(char *buf, xpb_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Formats "cpu_onednn: ..." into `buf` (ODN_ERR_SIZE bytes) and returns `st`. */
static xpb_status be_fail(char *buf, xpb_status st, const char *fmt, ...)
{
    int n = snprintf(buf, ODN_ERR_SIZE, "cpu_onednn: ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, ODN_ERR_SIZE - (size_t)n, fmt, ap);
    va_end(ap);
    return st;
}

static xpb_status odn_open(xpb_backend **out, uint32_t device_index)
{
    if (!out)
        return be_fail(open_err, XPB_INVALID_ARGUMENT, "open: out is NULL");
    *out = NULL;
    if (device_index != 0)
        return be_fail(open_err, XPB_NO_DEVICE,
                       "no device %u: the oneDNN CPU backend has one device, 0 (this host's "
                       "CPUs)",
                       device_index);
    if (dnnl_engine_get_count(dnnl_cpu) < 1)
        return be_fail(open_err, XPB_NO_DEVICE, "oneDNN reports no CPU engine");
    xpb_backend *be = calloc(1, sizeof *be);
    if (!be)
        return be_fail(open_err, XPB_OUT_OF_MEMORY, "open: out of memory");
    dnnl_status_t s = dnnl_engine_create(&be->engine, dnnl_cpu, 0);
    if (s == dnnl_success)
        s = dnnl_stream_create(&be->stream, be->engine, dnnl_stream_default_flags);
    if (s != dnnl_success) {
        if (be->engine)
            dnnl_engine_destroy(be->engine);
        free(be);
        return be_fail(open_err, XPB_DEVICE_ERROR, "open: oneDNN engine/stream: %s",
                       dnnl_status2str(s));
    }
    be->device = device_index;
    be->default_threads = (uint32_t)omp_get_max_threads();
    open_err[0] = '\0';
    *out = be;
    return XPB_OK;
}

static void odn_close(xpb_backend *be)
{
    if (!be)
        return;
    dnnl_stream_destroy(be->stream);
    dnnl_engine_destroy(be->engine);
    free(be);
}

static const char *odn_last_error(const xpb_backend *be)
{
    return be ? be->err : open_err;
}

static xpb_status odn_device_info(xpb_backend *be, xpb_device_info *out)
{
    if (!be)
        return XPB_INVALID_ARGUMENT;
    if (!out || out->struct_size < sizeof(size_t))
        return be_fail(be->err, XPB_INVALID_ARGUMENT,
                       "device_info: out is NULL or its struct_size is 0");
    if (XPB_HAS_MEMBER(out, xpb_device_info, name))
        odn_cpu_name(out->name, sizeof out->name);
    if (XPB_HAS_MEMBER(out, xpb_device_info, driver))
        out->driver[0] = '\0';
    if (XPB_HAS_MEMBER(out, xpb_device_info, libraries))
        odn_library_string(out->libraries, sizeof out->libraries);
    uint32_t precisions = XPB_PRECISION_BIT(XPB_PRECISION_FP32);
    if (odn_bf16_supported())
        precisions |= XPB_PRECISION_BIT(XPB_PRECISION_BF16_MIXED);
    if (XPB_HAS_MEMBER(out, xpb_device_info, precisions))
        out->precisions = precisions;
    if (XPB_HAS_MEMBER(out, xpb_device_info, threads))
        out->threads = be->default_threads;
    if (XPB_HAS_MEMBER(out, xpb_device_info, memory_bytes))
        out->memory_bytes = 0; /* host memory */
    if (XPB_HAS_MEMBER(out, xpb_device_info, peak_flops)) {
        odn_measure_peaks(be);
        for (int p = 0; p < XPB_PRECISION_COUNT; p++)
            out->peak_flops[p] = (precisions & XPB_PRECISION_BIT(p)) ? be->peak[p] : 0.0;
    }
    return XPB_OK;
}

static xpb_status odn_compile(xpb_executable **out, xpb_backend *be, const xpb_program *prog,
                              const xpb_compile_options *opts)
{
    if (!be)
        return XPB_INVALID_ARGUMENT;
    if (!out || !prog)
        return be_fail(be->err, XPB_INVALID_ARGUMENT, "compile: out or program is NULL");
    return odn_compile_program(out, be, prog, opts);
}

static const char *odn_exe_last_error(const xpb_executable *exe)
{
    return exe ? exe->err : "cpu_onednn: no executable (NULL handle)";
}

static xpb_status odn_api_write(xpb_executable *exe, uint32_t tensor, const void *data,
                                size_t bytes)
{
    return exe ? odn_write(exe, tensor, data, bytes) : XPB_INVALID_ARGUMENT;
}

static xpb_status odn_api_read(xpb_executable *exe, uint32_t tensor, void *data, size_t bytes)
{
    return exe ? odn_read(exe, tensor, data, bytes) : XPB_INVALID_ARGUMENT;
}

static xpb_status odn_synchronize(xpb_executable *exe)
{
    if (!exe)
        return XPB_INVALID_ARGUMENT;
    dnnl_status_t s = dnnl_stream_wait(exe->be->stream);
    if (s != dnnl_success)
        return be_fail(exe->err, XPB_DEVICE_ERROR, "synchronize: %s", dnnl_status2str(s));
    return XPB_OK;
}

static const xpb_backend_api odn_api = {
    .struct_size = sizeof(xpb_backend_api),
    .open = odn_open,
    .close = odn_close,
    .last_error = odn_last_error,
    .device_info = odn_device_info,
    .compile = odn_compile,
    .destroy = odn_destroy,
    .exe_last_error = odn_exe_last_error,
    .write = odn_api_write,
    .read = odn_api_read,
    .run = odn_run,
    .synchronize = odn_synchronize,
    .profile_read = odn_profile_read,
    .memory_stats = odn_memory_stats,
    .energy_read = NULL,
};

static const xpb_plugin_descriptor odn_descriptor = {
    .struct_size = sizeof(xpb_plugin_descriptor),
    .abi_major = XPB_ABI_MAJOR,
    .abi_minor = XPB_ABI_MINOR,
    .kind = XPB_PLUGIN_BACKEND,
    .name = "cpu_onednn",
    .version = "1.0.0",
    .description = "fast CPU backend on oneDNN: blocked layouts, fusion, fp32 and bf16-mixed",
    .caps = XPB_CAP_PROFILING | XPB_CAP_MEMORY_STATS | XPB_CAP_FUSION | XPB_CAP_THREADS,
    .api = &odn_api,
};

XPB_PLUGIN_QUERY
{
    (void)host_minor; /* minor versions only append: any minor of our major works */
    (void)host;
    if (!out)
        return XPB_INVALID_ARGUMENT;
    *out = &odn_descriptor; /* set even when incompatible, so that the host can name us */
    if (host_major != XPB_ABI_MAJOR)
        return XPB_INCOMPATIBLE;
    return XPB_OK;
}
