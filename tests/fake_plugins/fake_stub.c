/* The do-nothing backend behind the fake plugins (see fake_stub.h). */
#include "fake_stub.h"

#include <stdio.h>
#include <stdlib.h>

#ifndef FAKE_NAME
#error "FAKE_NAME must name the fake plugin"
#endif

struct xpb_backend {
    uint32_t device;
};

struct xpb_executable {
    uint32_t runs;
};

xpb_status fake_open(xpb_backend **out, uint32_t device_index)
{
    if (device_index != 0)
        return XPB_NO_DEVICE;
    *out = malloc(sizeof **out);
    if (!*out)
        return XPB_OUT_OF_MEMORY;
    (*out)->device = device_index;
    return XPB_OK;
}

void fake_close(xpb_backend *backend)
{
    free(backend);
}

const char *fake_last_error(const xpb_backend *backend)
{
    return backend ? "no error" : "only device 0 exists";
}

xpb_status fake_device_info(xpb_backend *backend, xpb_device_info *out)
{
    (void)backend;
    if (XPB_HAS_MEMBER(out, xpb_device_info, name))
        snprintf(out->name, sizeof out->name, "%s%s", FAKE_DEVICE_PREFIX, FAKE_NAME);
    if (XPB_HAS_MEMBER(out, xpb_device_info, precisions))
        out->precisions = XPB_PRECISION_BIT(XPB_PRECISION_FP32);
    return XPB_OK;
}

xpb_status fake_compile(xpb_executable **out, xpb_backend *backend, const xpb_program *program,
                        const xpb_compile_options *options)
{
    (void)backend, (void)program, (void)options;
    *out = calloc(1, sizeof **out);
    return *out ? XPB_OK : XPB_OUT_OF_MEMORY;
}

void fake_destroy(xpb_executable *exe)
{
    free(exe);
}

const char *fake_exe_last_error(const xpb_executable *exe)
{
    (void)exe;
    return "no error";
}

xpb_status fake_write(xpb_executable *exe, uint32_t tensor, const void *data, size_t bytes)
{
    (void)exe, (void)tensor, (void)data, (void)bytes;
    return XPB_UNSUPPORTED;
}

xpb_status fake_read(xpb_executable *exe, uint32_t tensor, void *data, size_t bytes)
{
    (void)exe, (void)tensor, (void)data, (void)bytes;
    return XPB_UNSUPPORTED;
}

xpb_status fake_run(xpb_executable *exe, uint32_t phase)
{
    (void)phase;
    exe->runs++;
    return XPB_OK;
}

xpb_status fake_synchronize(xpb_executable *exe)
{
    (void)exe;
    return XPB_OK;
}

xpb_status fake_profile_read(xpb_executable *exe, xpb_op_profile *out, uint32_t capacity,
                             uint32_t *count)
{
    (void)exe, (void)out, (void)capacity;
    *count = 0;
    return XPB_OK;
}

xpb_status fake_memory_stats(xpb_executable *exe, xpb_memory_stats *out)
{
    (void)exe;
    if (XPB_HAS_MEMBER(out, xpb_memory_stats, peak_bytes))
        out->bytes_in_use = out->peak_bytes = 0;
    return XPB_OK;
}

xpb_status fake_energy_read(xpb_backend *backend, double *joules)
{
    (void)backend;
    *joules = 0.0;
    return XPB_OK;
}
