/* A backend whose function table's struct_size stops before `synchronize`, a required
 * member: the host must refuse it without reading past struct_size. */
#include "fake_stub.h"

static const xpb_backend_api api = {
    .struct_size = offsetof(xpb_backend_api, synchronize),
    FAKE_REQUIRED_ENTRY_POINTS,
};

static const xpb_plugin_descriptor descriptor = {
    .struct_size = sizeof(xpb_plugin_descriptor),
    .abi_major = XPB_ABI_MAJOR,
    .abi_minor = XPB_ABI_MINOR,
    .kind = XPB_PLUGIN_BACKEND,
    .name = "fake_short_table",
    .version = "1.0.0",
    .description = "fake backend with a truncated function table",
    .api = &api,
};

XPB_PLUGIN_QUERY
{
    (void)host_major, (void)host_minor, (void)host;
    *out = &descriptor;
    return XPB_OK;
}
