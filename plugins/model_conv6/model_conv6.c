/* Conv-6 of Frankle & Carbin (2019), "cifar" variant: 3x32x32 inputs, 10 classes.
 *   conv3x3(64) conv3x3(64) maxpool2  conv3x3(128) conv3x3(128) maxpool2
 *   conv3x3(256) conv3x3(256) maxpool2  fc(256) fc(256) fc(10)
 * ReLU after every conv and fc but the last, biases everywhere, PyTorch's default
 * initialisation. Trained with softmax cross-entropy and SGD (lr 0.01, momentum 0.9).
 *
 * The parameters in_channels and image_size change the input, conv1's input channels and fc1's
 * input: the three 2x2 pools floor the size three times, so fc1 takes 256 x (s/8)^2 features
 * (rounded down at each pool: 4x4 for 32, 3x3 for Fashion-MNIST's 28 with in_channels 1). */
#include <stdio.h>
#include <string.h>

#include <xpubench/xpubench.h>

static const xpb_model_param conv6_params[] = {
    {"variant", XPB_MPARAM_STRING, "cifar", "cifar", "input size and classes: cifar = 3x32x32, 10"},
    {"in_channels", XPB_MPARAM_INT, "3", "1..64", "channels of the input images (1: grayscale)"},
    {"image_size", XPB_MPARAM_INT, "32", "8..1024", "input height and width"},
};

static xpb_status conv6_build(xpb_builder *b, const xpb_builder_api *api)
{
    int64_t in_c, size;
    XPB_TRY(api->param_int(&in_c, b, "in_channels"));
    XPB_TRY(api->param_int(&size, b, "image_size"));
    const int64_t n = api->batch_size(b), classes = 10;
    const int64_t widths[6] = {64, 64, 128, 128, 256, 256};
    xpb_value x, labels, logits;
    xpb_input_desc images = {"images", XPB_DTYPE_F32, 4, {n, in_c, size, size}, -1.0, 1.0};
    xpb_input_desc targets = {"labels", XPB_DTYPE_I32, 1, {n, 1, 1, 1}, 0, (double)(classes - 1)};
    xpb_layer_opts opts = {.group = 0, .bias = 1};
    xpb_op_attrs conv = {.pad = {1, 1}}, pool = {.kernel = {2, 2}};
    char layer[32];

    XPB_TRY(api->input(&x, b, &images));
    XPB_TRY(api->input(&labels, b, &targets));
    for (int i = 0; i < 6; i++) {
        snprintf(layer, sizeof layer, "conv%d", i + 1);
        XPB_TRY(xpb_layer_conv(&x, b, api, layer, x, in_c, widths[i], 3, 0, &conv, &opts));
        snprintf(layer, sizeof layer, "relu%d", i + 1);
        XPB_TRY(xpb_layer_unary(&x, b, api, layer, XPB_OP_RELU, x, NULL));
        in_c = widths[i];
        if (i % 2 == 1) {
            snprintf(layer, sizeof layer, "pool%d", i / 2 + 1);
            XPB_TRY(xpb_layer_unary(&x, b, api, layer, XPB_OP_MAXPOOL, x, &pool));
        }
    }
    const int64_t side = size / 2 / 2 / 2, features = 256 * side * side;
    const int64_t flat[2] = {n, features};
    XPB_TRY(api->reshape(&x, b, "flatten", x, 2, flat));
    XPB_TRY(xpb_layer_linear(&x, b, api, "fc1", x, features, 256, &opts));
    XPB_TRY(xpb_layer_unary(&x, b, api, "relu_fc1", XPB_OP_RELU, x, NULL));
    XPB_TRY(xpb_layer_linear(&x, b, api, "fc2", x, 256, 256, &opts));
    XPB_TRY(xpb_layer_unary(&x, b, api, "relu_fc2", XPB_OP_RELU, x, NULL));
    XPB_TRY(xpb_layer_linear(&logits, b, api, "fc3", x, 256, classes, &opts));
    XPB_TRY(xpb_layer_xent_head(b, api, logits, labels));
    return XPB_OK;
}

static const xpb_model_api conv6_api = {
    .struct_size = sizeof(xpb_model_api),
    .params = conv6_params,
    .n_params = sizeof conv6_params / sizeof conv6_params[0],
    .build = conv6_build,
};

XPB_DEFINE_PLUGIN(XPB_PLUGIN_MODEL, "conv6", "1.0.0",
                  "Conv-6 (Frankle & Carbin 2019): 6 conv + 3 fc, CIFAR-size inputs", 0, &conv6_api)
