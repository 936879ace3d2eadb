/* A model compiled against the FROZEN ABI 1.0 headers (tests/abi/1.0): its builder table has
 * no fail(), so it refuses a variant the 1.0 way, with a bare status; the host must still say
 * which model failed and why in its own words. Variant "linear" declares x[N,3] -> LINEAR(3 ->
 * 4) -> softmax cross-entropy; variant "refuse" returns XPB_UNSUPPORTED without a message. */
#include <string.h>

#include <xpubench/xpubench.h>

#if XPB_ABI_MAJOR != 1 || XPB_ABI_MINOR != 0
#error "fake_abi10_model must be compiled against the ABI 1.0 headers of tests/abi/1.0"
#endif

static const xpb_model_param params[] = {
    {"variant", XPB_MPARAM_STRING, "linear", "linear|refuse", "what the fake declares"},
};

static xpb_status build(xpb_builder *b, const xpb_builder_api *api)
{
    const char *variant;
    xpb_status st = api->param_string(&variant, b, "variant");
    if (st != XPB_OK)
        return st;
    if (strcmp(variant, "refuse") == 0)
        return XPB_UNSUPPORTED; /* ABI 1.0: no way to say why */
    const int64_t n = api->batch_size(b);
    xpb_value x, labels, logits;
    xpb_input_desc in_x = {"x", XPB_DTYPE_F32, 2, {n, 3, 1, 1}, -1.0, 1.0};
    xpb_input_desc in_labels = {"labels", XPB_DTYPE_I32, 1, {n, 1, 1, 1}, 0, 3};
    xpb_layer_opts fc = {0, 1, {0, 0, 0}, {0, 0, 0}};
    if ((st = api->input(&x, b, &in_x)) != XPB_OK ||
        (st = api->input(&labels, b, &in_labels)) != XPB_OK ||
        (st = xpb_layer_linear(&logits, b, api, "fc", x, 3, 4, &fc)) != XPB_OK)
        return st;
    return xpb_layer_xent_head(b, api, logits, labels);
}

static const xpb_model_api api = {
    .struct_size = sizeof(xpb_model_api),
    .params = params,
    .n_params = sizeof params / sizeof params[0],
    .build = build,
};

static const xpb_plugin_descriptor descriptor = {
    .struct_size = sizeof(xpb_plugin_descriptor),
    .abi_major = XPB_ABI_MAJOR,
    .abi_minor = XPB_ABI_MINOR,
    .kind = XPB_PLUGIN_MODEL,
    .name = "fake_abi10_model",
    .version = "1.0.0",
    .description = "fake model built against the frozen ABI 1.0 headers",
    .caps = 0,
    .api = &api,
};

XPB_PLUGIN_QUERY
{
    (void)host_minor, (void)host;
    *out = &descriptor;
    return host_major == XPB_ABI_MAJOR ? XPB_OK : XPB_INCOMPATIBLE;
}
