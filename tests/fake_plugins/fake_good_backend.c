/* A correct ABI 1.0 backend with every optional entry point: it must load. */
#include "fake_stub.h"

static const xpb_backend_api api = {
    .struct_size = sizeof(xpb_backend_api),
    FAKE_REQUIRED_ENTRY_POINTS,
    .profile_read = fake_profile_read,
    .memory_stats = fake_memory_stats,
    .energy_read = fake_energy_read,
};

static const xpb_plugin_descriptor descriptor = {
    .struct_size = sizeof(xpb_plugin_descriptor),
    .abi_major = XPB_ABI_MAJOR,
    .abi_minor = XPB_ABI_MINOR,
    .kind = XPB_PLUGIN_BACKEND,
    .name = "fake_good",
    .version = "1.0.0",
    .description = "fake backend that does nothing, correctly",
    .caps = XPB_CAP_PROFILING | XPB_CAP_MEMORY_STATS | XPB_CAP_ENERGY,
    .api = &api,
};

XPB_PLUGIN_QUERY
{
    (void)host_major, (void)host_minor, (void)host;
    *out = &descriptor;
    return XPB_OK;
}
