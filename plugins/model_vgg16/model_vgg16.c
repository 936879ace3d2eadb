/* VGG16 (Simonyan & Zisserman 2015, configuration D, no batch norm) in two variants:
 *
 *   cifar     3x32x32, 10 classes: the 13 conv3x3 layers (pad 1, bias, ReLU) with a 2x2 max pool
 *             after each stage, then one fc 512 -> 10 (the 1x1 feature map is flattened).
 *   imagenet  3x224x224, 1000 classes: torchvision's vgg16: the same 13 convs, adaptive average
 *             pool to 7x7 (the identity at 224, so no op is emitted), fc 25088 -> 4096, ReLU,
 *             [Dropout], fc 4096 -> 4096, ReLU, [Dropout], fc 4096 -> 1000.
 *
 * Layer and parameter names are torchvision's module paths ("features.0.weight",
 * "classifier.6.bias"), so a state dict maps one to one. Initialisation is torchvision's:
 * conv weights kaiming_normal_(mode='fan_out', nonlinearity='relu'), i.e. N(0, sqrt(2 / (out_c
 * * 3 * 3))), conv biases 0, linear weights N(0, 0.01), linear biases 0. Trained with softmax
 * cross-entropy and SGD (lr 0.01, momentum 0.9). docs/models.md has the numbers. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <xpubench/xpubench.h>

static const xpb_model_param vgg16_params[] = {
    {"variant", XPB_MPARAM_STRING, "cifar", "cifar|imagenet",
     "cifar = 3x32x32, 10 classes, fc 512->10; imagenet = torchvision vgg16, 3x224x224, 1000"},
    {"dropout", XPB_MPARAM_BOOL, "false", NULL,
     "imagenet only: Dropout(p=0.5) after the first two fc ReLUs, as torchvision"},
};

/* Channels of the 13 convolutions; 0 marks a 2x2 max pool (torchvision's cfg "D"). */
static const int vgg16_cfg[18] = {64, 64,  0,   128, 128, 0,   256, 256, 256,
                                  0,  512, 512, 512, 0,   512, 512, 512, 0};

/* features.N: conv3x3 + ReLU pairs and max pools, numbered as torchvision's nn.Sequential. */
static xpb_status vgg16_features(xpb_value *x, int64_t *size, xpb_builder *b,
                                 const xpb_builder_api *api)
{
    xpb_op_attrs conv = {.pad = {1, 1}}, pool = {.kernel = {2, 2}, .stride = {2, 2}};
    char layer[32];
    int64_t in_c = 3;
    int index = 0;
    for (int i = 0; i < 18; i++) {
        if (vgg16_cfg[i] == 0) {
            snprintf(layer, sizeof layer, "features.%d", index++);
            XPB_TRY(xpb_layer_unary(x, b, api, layer, XPB_OP_MAXPOOL, *x, &pool));
            *size /= 2;
            continue;
        }
        int64_t out_c = vgg16_cfg[i];
        /* kaiming_normal_(fan_out, relu): std = gain / sqrt(fan_out), gain = sqrt(2). */
        xpb_layer_opts o = {.bias = 1,
                            .weight_init = {XPB_INIT_NORMAL, 0.0, sqrt(2.0 / (double)(out_c * 9))},
                            .bias_init = {XPB_INIT_ZEROS, 0, 0}};
        snprintf(layer, sizeof layer, "features.%d", index++);
        XPB_TRY(xpb_layer_conv(x, b, api, layer, *x, in_c, out_c, 3, 0, &conv, &o));
        snprintf(layer, sizeof layer, "features.%d", index++);
        XPB_TRY(xpb_layer_unary(x, b, api, layer, XPB_OP_RELU, *x, NULL));
        in_c = out_c;
    }
    return XPB_OK;
}

static xpb_status vgg16_build(xpb_builder *b, const xpb_builder_api *api)
{
    const char *variant;
    int dropout;
    XPB_TRY(api->param_string(&variant, b, "variant"));
    XPB_TRY(api->param_bool(&dropout, b, "dropout"));
    const int imagenet = strcmp(variant, "imagenet") == 0;
    if (dropout && !imagenet)
        return xpb_model_fail(b, api, XPB_INVALID_ARGUMENT,
                              "parameter 'dropout' applies to the imagenet variant only (the "
                              "%s variant has a single fc layer)",
                              variant);
    const int64_t n = api->batch_size(b), classes = imagenet ? 1000 : 10;
    int64_t size = imagenet ? 224 : 32;
    xpb_value x, labels, logits;
    xpb_input_desc images = {"images", XPB_DTYPE_F32, 4, {n, 3, size, size}, -1.0, 1.0};
    xpb_input_desc targets = {"labels", XPB_DTYPE_I32, 1, {n, 1, 1, 1}, 0, (double)(classes - 1)};
    const xpb_layer_opts fc = {.bias = 1,
                               .weight_init = {XPB_INIT_NORMAL, 0.0, 0.01},
                               .bias_init = {XPB_INIT_ZEROS, 0, 0}};

    XPB_TRY(api->input(&x, b, &images));
    XPB_TRY(api->input(&labels, b, &targets));
    XPB_TRY(vgg16_features(&x, &size, b, api));
    if (!imagenet) {
        /* 32 / 2^5 = 1: the 512x1x1 feature map is the classifier's input. */
        const int64_t flat[2] = {n, 512};
        XPB_TRY(api->reshape(&x, b, "flatten", x, 2, flat));
        XPB_TRY(xpb_layer_linear(&logits, b, api, "classifier", x, 512, classes, &fc));
    } else {
        /* torchvision applies AdaptiveAvgPool2d((7, 7)) here; with a 7x7 map every output
         * cell averages exactly one input cell, so it is the identity and is left out. */
        if (size != 7)
            return xpb_model_fail(b, api, XPB_INTERNAL,
                                  "the feature map is %lldx%lld, not 7x7: adaptive pooling "
                                  "would not be the identity",
                                  (long long)size, (long long)size);
        const int64_t flat[2] = {n, 512 * 7 * 7};
        xpb_op_attrs drop = {.dropout_p = 0.5f};
        XPB_TRY(api->reshape(&x, b, "flatten", x, 2, flat));
        XPB_TRY(xpb_layer_linear(&x, b, api, "classifier.0", x, 512 * 7 * 7, 4096, &fc));
        XPB_TRY(xpb_layer_unary(&x, b, api, "classifier.1", XPB_OP_RELU, x, NULL));
        if (dropout)
            XPB_TRY(xpb_layer_unary(&x, b, api, "classifier.2", XPB_OP_DROPOUT, x, &drop));
        XPB_TRY(xpb_layer_linear(&x, b, api, "classifier.3", x, 4096, 4096, &fc));
        XPB_TRY(xpb_layer_unary(&x, b, api, "classifier.4", XPB_OP_RELU, x, NULL));
        if (dropout)
            XPB_TRY(xpb_layer_unary(&x, b, api, "classifier.5", XPB_OP_DROPOUT, x, &drop));
        XPB_TRY(xpb_layer_linear(&logits, b, api, "classifier.6", x, 4096, classes, &fc));
    }
    XPB_TRY(xpb_layer_xent_head(b, api, logits, labels));
    return XPB_OK;
}

static const xpb_model_api vgg16_api = {
    .struct_size = sizeof(xpb_model_api),
    .params = vgg16_params,
    .n_params = sizeof vgg16_params / sizeof vgg16_params[0],
    .build = vgg16_build,
};

XPB_DEFINE_PLUGIN(XPB_PLUGIN_MODEL, "vgg16", "1.0.0",
                  "VGG16 without batch norm: CIFAR (13 conv + fc) and torchvision's ImageNet", 0,
                  &vgg16_api)
