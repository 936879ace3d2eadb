/* A backend as built against the oldest supported header: its function table stops right
 * after `synchronize` (struct_size says so), and the memory after it holds non-NULL
 * pointers that are NOT optional entry points. The host must see no profile_read,
 * memory_stats or energy_read (XPB_HAS_MEMBER) and never call what lies past struct_size. */
#include <stdlib.h>

#include "fake_stub.h"

/* Would be called if the host read past struct_size. */
static xpb_status trap_profile_read(xpb_executable *exe, xpb_op_profile *out, uint32_t capacity,
                                    uint32_t *count)
{
    (void)exe, (void)out, (void)capacity, (void)count;
    abort();
}

static xpb_status trap_memory_stats(xpb_executable *exe, xpb_memory_stats *out)
{
    (void)exe, (void)out;
    abort();
}

static xpb_status trap_energy_read(xpb_backend *backend, double *joules)
{
    (void)backend, (void)joules;
    abort();
}

static const xpb_backend_api api = {
    .struct_size = offsetof(xpb_backend_api, synchronize) + sizeof api.synchronize,
    FAKE_REQUIRED_ENTRY_POINTS,
    .profile_read = trap_profile_read,
    .memory_stats = trap_memory_stats,
    .energy_read = trap_energy_read,
};

static const xpb_plugin_descriptor descriptor = {
    .struct_size = offsetof(xpb_plugin_descriptor, api) + sizeof descriptor.api,
    .abi_major = 1,
    .abi_minor = 0,
    .kind = XPB_PLUGIN_BACKEND,
    .name = "fake_oldest_header",
    .version = "1.0.0",
    .description = "fake backend built against the oldest ABI 1 header",
    .caps = XPB_CAP_PROFILING | XPB_CAP_MEMORY_STATS | XPB_CAP_ENERGY,
    .api = &api,
};

XPB_PLUGIN_QUERY
{
    (void)host_major, (void)host_minor, (void)host;
    *out = &descriptor;
    return XPB_OK;
}
