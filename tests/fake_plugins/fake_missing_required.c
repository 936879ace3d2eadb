/* A backend whose function table lacks a required entry point (compile is NULL). */
#include "fake_stub.h"

static const xpb_backend_api api = {
    .struct_size = sizeof(xpb_backend_api),
    .open = fake_open,
    .close = fake_close,
    .last_error = fake_last_error,
    .device_info = fake_device_info,
    .compile = NULL,
    .destroy = fake_destroy,
    .exe_last_error = fake_exe_last_error,
    .write = fake_write,
    .read = fake_read,
    .run = fake_run,
    .synchronize = fake_synchronize,
};

static const xpb_plugin_descriptor descriptor = {
    .struct_size = sizeof(xpb_plugin_descriptor),
    .abi_major = XPB_ABI_MAJOR,
    .abi_minor = XPB_ABI_MINOR,
    .kind = XPB_PLUGIN_BACKEND,
    .name = "fake_missing_required",
    .version = "1.0.0",
    .description = "fake backend that cannot compile",
    .api = &api,
};

XPB_PLUGIN_QUERY
{
    (void)host_major, (void)host_minor, (void)host;
    *out = &descriptor;
    return XPB_OK;
}
