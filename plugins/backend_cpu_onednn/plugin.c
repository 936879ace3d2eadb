/* The cpu_onednn backend's ABI glue: the device context (one oneDNN CPU engine and stream), the
 * device listing (one device, this host's CPUs), the function table with thin entry points
 * over compile.c, transfer.c, run.c and device.c, and the descriptor (XPB_DEFINE_PLUGIN). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "odn.h"

/* Message of the last failed open, device_count or describe_device; static storage
 * (backend.h: last_error(NULL)). */
static char open_err[ODN_ERR_SIZE];

/* The number of devices: 1 when oneDNN has a CPU engine. */
static xpb_status odn_device_count(uint32_t *count)
{
    if (!count)
        return odn_set_error(open_err, XPB_INVALID_ARGUMENT, "device_count: count is NULL");
    *count = 0;
    if (dnnl_engine_get_count(dnnl_cpu) < 1)
        return odn_set_error(open_err, XPB_NO_DEVICE,
                             "oneDNN reports no CPU engine (a build of oneDNN without CPU "
                             "support)");
    *count = 1;
    return XPB_OK;
}

static xpb_status no_such_device(const char *what, uint32_t index)
{
    return odn_set_error(open_err, XPB_NO_DEVICE,
                         "%s: no device %u: the oneDNN CPU backend has one device, 0 (this host's "
                         "CPUs)",
                         what, index);
}

static xpb_status odn_describe_device(uint32_t index, xpb_device_info *out)
{
    if (!out || out->struct_size < sizeof(size_t))
        return odn_set_error(open_err, XPB_INVALID_ARGUMENT,
                             "describe_device: out is NULL or its struct_size is 0");
    uint32_t n = 0;
    xpb_status st = odn_device_count(&n);
    if (st != XPB_OK)
        return st;
    if (index >= n)
        return no_such_device("describe_device", index);
    odn_device_describe(out, NULL);
    return XPB_OK;
}

static xpb_status odn_open(xpb_backend **out, uint32_t device_index)
{
    if (!out)
        return odn_set_error(open_err, XPB_INVALID_ARGUMENT, "open: out is NULL");
    *out = NULL;
    uint32_t n = 0;
    xpb_status st = odn_device_count(&n);
    if (st != XPB_OK)
        return st;
    if (device_index >= n)
        return no_such_device("open", device_index);
    xpb_backend *be = calloc(1, sizeof *be);
    if (!be)
        return odn_set_error(open_err, XPB_OUT_OF_MEMORY, "open: out of memory");
    dnnl_status_t s = dnnl_engine_create(&be->engine, dnnl_cpu, 0);
    if (s != dnnl_success)
        goto free_backend;
    s = dnnl_stream_create(&be->stream, be->engine, dnnl_stream_default_flags);
    if (s != dnnl_success)
        goto destroy_engine;
    be->device = device_index;
    be->default_threads = odn_default_threads();
    open_err[0] = '\0';
    *out = be;
    return XPB_OK;

destroy_engine:
    dnnl_engine_destroy(be->engine);
free_backend:
    free(be);
    return odn_set_error(open_err, XPB_DEVICE_ERROR, "open: oneDNN engine/stream: %s",
                         dnnl_status2str(s));
}

static void odn_close(xpb_backend *be)
{
    if (!be)
        return;
    dnnl_stream_destroy(be->stream);
    dnnl_engine_destroy(be->engine);
    free(be);
}

/* Owned by the backend (or static for NULL), valid until the next call on it. */
static const char *odn_last_error(const xpb_backend *be)
{
    return be ? be->err : open_err;
}

static xpb_status odn_device_info(xpb_backend *be, xpb_device_info *out)
{
    if (!be)
        return XPB_INVALID_ARGUMENT;
    if (!out || out->struct_size < sizeof(size_t))
        return odn_set_error(be->err, XPB_INVALID_ARGUMENT,
                             "device_info: out is NULL or its struct_size is 0");
    odn_device_describe(out, be);
    return XPB_OK;
}

static xpb_status odn_compile(xpb_executable **out, xpb_backend *be, const xpb_program *prog,
                              const xpb_compile_options *opts)
{
    if (!be)
        return XPB_INVALID_ARGUMENT;
    if (!out || !prog)
        return odn_set_error(be->err, XPB_INVALID_ARGUMENT, "compile: out or program is NULL");
    return odn_compile_program(out, be, prog, opts);
}

/* Owned by the executable (static for NULL), valid until the next call on it. */
static const char *odn_exe_last_error(const xpb_executable *exe)
{
    return exe ? exe->err : "no executable (NULL handle)";
}

static xpb_status odn_api_write(xpb_executable *exe, uint32_t tensor, const void *data,
                                size_t bytes)
{
    return exe ? odn_write(exe, tensor, data, bytes) : XPB_INVALID_ARGUMENT;
}

static xpb_status odn_api_write_async(xpb_executable *exe, uint32_t tensor, const void *data,
                                      size_t bytes)
{
    return exe ? odn_write_async(exe, tensor, data, bytes) : XPB_INVALID_ARGUMENT;
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
        return odn_fail(exe, XPB_DEVICE_ERROR, "synchronize: %s", dnnl_status2str(s));
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
    .device_count = odn_device_count,
    .describe_device = odn_describe_device,
    .write_async = odn_api_write_async,
    .host_alloc = NULL, /* host memory is the device's: the host's malloc is as good */
    .host_free = NULL,
};

XPB_DEFINE_PLUGIN(XPB_PLUGIN_BACKEND, "cpu_onednn", "1.3.0",
                  "fast CPU backend on oneDNN: blocked layouts, fusion, fp32 and bf16-mixed",
                  XPB_CAP_FUSION | XPB_CAP_THREADS, &odn_api)
