/* A backend that says it was built for ABI 2.0: the host must refuse it by major. */
#include "fake_stub.h"

static const xpb_backend_api api = {
    .struct_size = sizeof(xpb_backend_api),
    FAKE_REQUIRED_ENTRY_POINTS,
};

static const xpb_plugin_descriptor descriptor = {
    .struct_size = sizeof(xpb_plugin_descriptor),
    .abi_major = 2,
    .abi_minor = 0,
    .kind = XPB_PLUGIN_BACKEND,
    .name = "fake_wrong_major",
    .version = "2.1.0",
    .description = "fake backend from the future",
    .api = &api,
};

XPB_PLUGIN_QUERY
{
    (void)host_major, (void)host_minor, (void)host;
    *out = &descriptor;
    return XPB_OK;
}
