/* A model that declares a parameter twice: refused. */
#include <xpubench/xpubench.h>

static xpb_status build(xpb_builder *b, const xpb_builder_api *api)
{
    (void)b, (void)api;
    return XPB_OK;
}

static const xpb_model_param params[] = {
    {"width", XPB_MPARAM_INT, "64", "1..1024", "channels"},
    {"width", XPB_MPARAM_INT, "32", NULL, "channels again"},
};

static const xpb_model_api api = {
    .struct_size = sizeof(xpb_model_api),
    .params = params,
    .n_params = 2,
    .build = build,
};

static const xpb_plugin_descriptor descriptor = {
    .struct_size = sizeof(xpb_plugin_descriptor),
    .abi_major = XPB_ABI_MAJOR,
    .abi_minor = XPB_ABI_MINOR,
    .kind = XPB_PLUGIN_MODEL,
    .name = "fake_bad_params",
    .version = "1.0.0",
    .description = "fake model with a duplicate parameter",
    .api = &api,
};

XPB_PLUGIN_QUERY
{
    (void)host_major, (void)host_minor, (void)host;
    *out = &descriptor;
    return XPB_OK;
}
