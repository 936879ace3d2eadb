/* A correct backend with the same name as fake_good_backend: whichever loads second is
 * skipped, and the message names both files. */
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
    .name = "fake_good",
    .version = "9.9.9",
    .description = "another fake backend called fake_good",
    .api = &api,
};

XPB_PLUGIN_QUERY
{
    (void)host_major, (void)host_minor, (void)host;
    *out = &descriptor;
    return XPB_OK;
}
