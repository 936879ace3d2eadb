/* A model written with the ABI 1.1 helpers (XPB_DEFINE_PLUGIN, XPB_TRY, xpb_model_fail), for
 * tests/test_loader.c. Variants:
 *   linear     x[N,3] -> LINEAR(3 -> 4) -> softmax cross-entropy: builds
 *   refuse     refuses in its own words (xpb_model_fail), which must reach the host's error
 *   bad_batch  declares an input whose first dimension is not the batch size, which the host's
 *              builder must refuse: throughput would be wrong without a word otherwise */
#include <string.h>

#include <xpubench/xpubench.h>

static const xpb_model_param params[] = {
    {"variant", XPB_MPARAM_STRING, "linear", "linear|refuse|bad_batch", "what the fake declares"},
};

static xpb_status build(xpb_builder *b, const xpb_builder_api *api)
{
    const char *variant;
    XPB_TRY(api->param_string(&variant, b, "variant"));
    if (strcmp(variant, "refuse") == 0)
        return xpb_model_fail(b, api, XPB_UNSUPPORTED,
                              "variant '%s' needs %d layers this fake does not have", variant, 3);
    const int64_t n = api->batch_size(b) + (strcmp(variant, "bad_batch") == 0 ? 1 : 0);
    xpb_value x, labels, logits;
    xpb_input_desc in_x = {"x", XPB_DTYPE_F32, 2, {n, 3, 1, 1}, -1.0, 1.0};
    xpb_input_desc in_labels = {"labels", XPB_DTYPE_I32, 1, {n, 1, 1, 1}, 0, 3};
    xpb_layer_opts fc = {.bias = 1};
    XPB_TRY(api->input(&x, b, &in_x));
    XPB_TRY(api->input(&labels, b, &in_labels));
    XPB_TRY(xpb_layer_linear(&logits, b, api, "fc", x, 3, 4, &fc));
    return xpb_layer_xent_head(b, api, logits, labels);
}

static const xpb_model_api api = {
    .struct_size = sizeof(xpb_model_api),
    .params = params,
    .n_params = sizeof params / sizeof params[0],
    .build = build,
};

XPB_DEFINE_PLUGIN(XPB_PLUGIN_MODEL, "fake_v11_model", "1.1.0",
                  "fake model written with the ABI 1.1 helpers", 0, &api)
