/* A backend that claims profiling, memory statistics and energy but leaves those optional
 * entry points NULL: it loads, and the host must treat them as unsupported. */
#include "fake_stub.h"

static const xpb_backend_api api = {
    .struct_size = sizeof(xpb_backend_api),
    FAKE_REQUIRED_ENTRY_POINTS,
    .profile_read = NULL,
    .memory_stats = NULL,
    .energy_read = NULL,
};

static const xpb_plugin_descriptor descriptor = {
    .struct_size = sizeof(xpb_plugin_descriptor),
    .abi_major = XPB_ABI_MAJOR,
    .abi_minor = XPB_ABI_MINOR,
    .kind = XPB_PLUGIN_BACKEND,
    .name = "fake_null_optional",
    .version = "1.0.0",
    .description = "fake backend without optional entry points",
    .caps = XPB_CAP_PROFILING | XPB_CAP_MEMORY_STATS | XPB_CAP_ENERGY | XPB_CAP_FUSION,
    .api = &api,
};

XPB_PLUGIN_QUERY
{
    (void)host_major, (void)host_minor, (void)host;
    *out = &descriptor;
    return XPB_OK;
}
