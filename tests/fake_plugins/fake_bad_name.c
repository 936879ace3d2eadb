/* A backend named "Bad Name": not [a-z0-9_]+, so it is refused. */
#include "fake_stub.h"

static const xpb_backend_api api = {
    .struct_size = sizeof(xpb_backend_api),
    FAKE_REQUIRED_ENTRY_POINTS,
};

static const xpb_plugin_descriptor descriptor = {
    .struct_size = sizeof(xpb_plugin_descriptor),
    .abi_major = XPB_ABI_MAJOR,
    .abi_minor = XPB_ABI_MINOR,
    .kind = XPB_PLUGIN_BACKEND,
    .name = "Bad Name",
    .version = "1.0.0",
    .description = "fake backend with an invalid name",
    .api = &api,
};

XPB_PLUGIN_QUERY
{
    (void)host_major, (void)host_minor, (void)host;
    *out = &descriptor;
    return XPB_OK;
}
