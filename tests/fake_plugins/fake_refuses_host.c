/* A backend that needs a host speaking ABI 1.9 or later: it answers XPB_INCOMPATIBLE and
 * still sets its descriptor, so the host can name it in the message. */
#include "fake_stub.h"

static const xpb_backend_api api = {
    .struct_size = sizeof(xpb_backend_api),
    FAKE_REQUIRED_ENTRY_POINTS,
};

static const xpb_plugin_descriptor descriptor = {
    .struct_size = sizeof(xpb_plugin_descriptor),
    .abi_major = 1,
    .abi_minor = 9,
    .kind = XPB_PLUGIN_BACKEND,
    .name = "fake_refuses_host",
    .version = "0.9.0",
    .description = "fake backend that needs ABI 1.9",
    .api = &api,
};

XPB_PLUGIN_QUERY
{
    (void)host;
    *out = &descriptor;
    if (host_major != 1 || host_minor < 9)
        return XPB_INCOMPATIBLE;
    return XPB_OK;
}
