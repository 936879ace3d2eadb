/* A correct ABI 1.0 model with two declared parameters. Its query logs one line through the
 * host services, which the test reads back. */
#include <stdio.h>

#include <xpubench/xpubench.h>

static xpb_status build(xpb_builder *b, const xpb_builder_api *api)
{
    (void)b, (void)api;
    return XPB_OK;
}

static const xpb_model_param params[] = {
    {"variant", XPB_MPARAM_STRING, "small", "small|large", "network size"},
    {"dropout", XPB_MPARAM_BOOL, "false", NULL, "dropout after the first layer"},
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
    .name = "fake_model",
    .version = "0.3.0",
    .description = "fake model that declares nothing",
    .caps = 0,
    .api = &api,
};

XPB_PLUGIN_QUERY
{
    if (XPB_HAS_MEMBER(host, xpb_host_services, log) && host->log) {
        char line[128];
        snprintf(line, sizeof line, "queried by a host speaking ABI %u.%u", host_major, host_minor);
        host->log(host->ctx, XPB_LOG_INFO, "fake_model", line);
    }
    *out = &descriptor;
    return XPB_OK;
}
