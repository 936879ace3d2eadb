/* A backend built against a future ABI 1.7 whose descriptor and function table are longer
 * than this host's: the host must accept it and read only the members it knows. */
#include "fake_stub.h"

static xpb_status future_entry_point(xpb_executable *exe)
{
    (void)exe;
    return XPB_OK;
}

/* What a 1.7 header might look like: this host's (1.1) structs with members appended. */
struct backend_api_1_7 {
    xpb_backend_api v1_0;
    xpb_status (*future_entry_point)(xpb_executable *exe);
    uint64_t future_flags;
};

struct descriptor_1_7 {
    xpb_plugin_descriptor v1_0;
    const char *homepage;
    uint64_t future_caps;
};

static const struct backend_api_1_7 api = {
    .v1_0 =
        {
            .struct_size = sizeof(struct backend_api_1_7),
            FAKE_REQUIRED_ENTRY_POINTS,
            .memory_stats = fake_memory_stats,
        },
    .future_entry_point = future_entry_point,
    .future_flags = ~0ull,
};

static const struct descriptor_1_7 descriptor = {
    .v1_0 =
        {
            .struct_size = sizeof(struct descriptor_1_7),
            .abi_major = 1,
            .abi_minor = 7,
            .kind = XPB_PLUGIN_BACKEND,
            .name = "fake_newer_minor",
            .version = "1.7.0",
            .description = "fake backend built against ABI 1.7",
            .caps = XPB_CAP_MEMORY_STATS | (1ull << 40),
            .api = &api.v1_0,
        },
    .homepage = "https://example.invalid/",
    .future_caps = ~0ull,
};

XPB_PLUGIN_QUERY
{
    (void)host_major, (void)host_minor, (void)host;
    *out = &descriptor.v1_0;
    return XPB_OK;
}
