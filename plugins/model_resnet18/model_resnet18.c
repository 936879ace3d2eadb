/* ResNet18 (He et al. 2016) with BasicBlocks [2, 2, 2, 2] at 64/128/256/512 channels:
 *
 *   imagenet  torchvision's resnet18: conv7x7/2 pad 3 stem (64, no bias) + BN + ReLU + maxpool
 *             3x3/2 pad 1, the four stages, global average pool, fc 512 -> 1000; 3x224x224.
 *   cifar     the usual CIFAR adaptation: conv3x3/1 pad 1 stem, no maxpool, fc 512 -> 10;
 *             3x32x32.
 *
 * The parameters in_channels and image_size change only the input and the stem's input
 * channels: the stages halve the size three times (rounding up: (s + 1) / 2) and the global
 * average pool makes any size end at 512 features, so Fashion-MNIST's 1x28x28 trains with
 * in_channels 1, image_size 28 (28 -> 14 -> 7 -> 4 in the cifar variant).
 *
 * A BasicBlock is conv3x3 (stride 2 in the first block of stages 2-4) + BN + ReLU, conv3x3 + BN,
 * plus the shortcut -- the input itself, or conv1x1/2 (no bias) + BN where the shape changes --
 * then ReLU. Convolutions have no bias; batch norm keeps running statistics (eps 1e-5,
 * momentum 0.1), updated in training and used in inference.
 *
 * Layer and parameter names are torchvision's module paths ("layer2.0.downsample.0.weight",
 * "layer3.1.bn2.running_var", "fc.bias"). Initialisation is torchvision's: conv weights
 * kaiming_normal_(mode='fan_out', nonlinearity='relu') = N(0, sqrt(2 / (out_c * k * k))),
 * BN weight 1 and bias 0, fc PyTorch's Linear default U(-1/sqrt(512), 1/sqrt(512)) for weight
 * and bias. Trained with softmax cross-entropy and SGD (lr 0.01, momentum 0.9). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <xpubench/xpubench.h>

static const xpb_model_param resnet18_params[] = {
    {"variant", XPB_MPARAM_STRING, "cifar", "cifar|imagenet",
     "cifar = 3x3 stem, no maxpool, 3x32x32, 10 classes; imagenet = torchvision resnet18"},
    {"in_channels", XPB_MPARAM_INT, "3", "1..64", "channels of the input images (1: grayscale)"},
    {"image_size", XPB_MPARAM_INT, "0", "0..1024",
     "input height and width; 0 = the variant's (32 cifar, 224 imagenet); other sizes are for "
     "quick tests"},
};

/* A bias-free convolution with torchvision's ResNet initialisation. */
static xpb_status conv(xpb_value *out, xpb_builder *b, const xpb_builder_api *api,
                       const char *layer, xpb_value x, int64_t in_c, int64_t out_c, int64_t k,
                       int32_t stride, int32_t pad)
{
    xpb_op_attrs a = {.stride = {stride, stride}, .pad = {pad, pad}};
    xpb_layer_opts o = {.bias = 0,
                        .weight_init = {XPB_INIT_NORMAL, 0.0, sqrt(2.0 / (double)(out_c * k * k))}};
    return xpb_layer_conv(out, b, api, layer, x, in_c, out_c, k, 0, &a, &o);
}

/* layer<stage>.<block>: a BasicBlock from in_c to out_c channels. */
static xpb_status basic_block(xpb_value *x, xpb_builder *b, const xpb_builder_api *api,
                              const char *name, int64_t in_c, int64_t out_c, int32_t stride)
{
    char layer[64];
    xpb_value y, skip = *x;
    snprintf(layer, sizeof layer, "%s.conv1", name);
    XPB_TRY(conv(&y, b, api, layer, *x, in_c, out_c, 3, stride, 1));
    snprintf(layer, sizeof layer, "%s.bn1", name);
    XPB_TRY(xpb_layer_batchnorm(&y, b, api, layer, y, out_c, 0));
    snprintf(layer, sizeof layer, "%s.relu1", name);
    XPB_TRY(xpb_layer_unary(&y, b, api, layer, XPB_OP_RELU, y, NULL));
    snprintf(layer, sizeof layer, "%s.conv2", name);
    XPB_TRY(conv(&y, b, api, layer, y, out_c, out_c, 3, 1, 1));
    snprintf(layer, sizeof layer, "%s.bn2", name);
    XPB_TRY(xpb_layer_batchnorm(&y, b, api, layer, y, out_c, 0));
    if (stride != 1 || in_c != out_c) {
        snprintf(layer, sizeof layer, "%s.downsample.0", name);
        XPB_TRY(conv(&skip, b, api, layer, *x, in_c, out_c, 1, stride, 0));
        snprintf(layer, sizeof layer, "%s.downsample.1", name);
        XPB_TRY(xpb_layer_batchnorm(&skip, b, api, layer, skip, out_c, 0));
    }
    xpb_value sum[2] = {y, skip};
    snprintf(layer, sizeof layer, "%s.add", name);
    XPB_TRY(api->op(&y, b, layer, XPB_OP_ADD, sum, 2, NULL));
    snprintf(layer, sizeof layer, "%s.relu2", name);
    return xpb_layer_unary(x, b, api, layer, XPB_OP_RELU, y, NULL);
}

static xpb_status resnet18_build(xpb_builder *b, const xpb_builder_api *api)
{
    const char *variant;
    int64_t size, in_channels;
    XPB_TRY(api->param_string(&variant, b, "variant"));
    XPB_TRY(api->param_int(&size, b, "image_size"));
    XPB_TRY(api->param_int(&in_channels, b, "in_channels"));
    const int imagenet = strcmp(variant, "imagenet") == 0;
    if (size < 0 || size > 1024) /* the declared range, checked here too */
        return xpb_model_fail(b, api, XPB_INVALID_ARGUMENT,
                              "parameter 'image_size' must be 0..1024, found %lld",
                              (long long)size);
    if (size == 0)
        size = imagenet ? 224 : 32;
    const int64_t n = api->batch_size(b), classes = imagenet ? 1000 : 10;
    xpb_value x, labels, logits;
    xpb_input_desc images = {"images", XPB_DTYPE_F32, 4, {n, in_channels, size, size}, -1.0, 1.0};
    xpb_input_desc targets = {"labels", XPB_DTYPE_I32, 1, {n, 1, 1, 1}, 0, (double)(classes - 1)};

    XPB_TRY(api->input(&x, b, &images));
    XPB_TRY(api->input(&labels, b, &targets));
    if (imagenet)
        XPB_TRY(conv(&x, b, api, "conv1", x, in_channels, 64, 7, 2, 3));
    else
        XPB_TRY(conv(&x, b, api, "conv1", x, in_channels, 64, 3, 1, 1));
    XPB_TRY(xpb_layer_batchnorm(&x, b, api, "bn1", x, 64, 0));
    XPB_TRY(xpb_layer_unary(&x, b, api, "relu", XPB_OP_RELU, x, NULL));
    if (imagenet) {
        xpb_op_attrs pool = {.kernel = {3, 3}, .stride = {2, 2}, .pad = {1, 1}};
        XPB_TRY(xpb_layer_unary(&x, b, api, "maxpool", XPB_OP_MAXPOOL, x, &pool));
    }
    static const int64_t widths[4] = {64, 128, 256, 512};
    int64_t in_c = 64;
    for (int s = 0; s < 4; s++)
        for (int k = 0; k < 2; k++) {
            char name[32];
            snprintf(name, sizeof name, "layer%d.%d", s + 1, k);
            XPB_TRY(basic_block(&x, b, api, name, in_c, widths[s], s > 0 && k == 0 ? 2 : 1));
            in_c = widths[s];
        }
    /* torchvision's AdaptiveAvgPool2d((1, 1)) is a global average pool at any size. */
    XPB_TRY(xpb_layer_unary(&x, b, api, "avgpool", XPB_OP_GLOBAL_AVGPOOL, x, NULL));
    const int64_t flat[2] = {n, 512};
    XPB_TRY(api->reshape(&x, b, "flatten", x, 2, flat));
    xpb_layer_opts fc = {.bias = 1}; /* PyTorch's Linear default initialisation */
    XPB_TRY(xpb_layer_linear(&logits, b, api, "fc", x, 512, classes, &fc));
    XPB_TRY(xpb_layer_xent_head(b, api, logits, labels));
    return XPB_OK;
}

static const xpb_model_api resnet18_api = {
    .struct_size = sizeof(xpb_model_api),
    .params = resnet18_params,
    .n_params = sizeof resnet18_params / sizeof resnet18_params[0],
    .build = resnet18_build,
};

XPB_DEFINE_PLUGIN(XPB_PLUGIN_MODEL, "resnet18", "1.0.0",
                  "ResNet18 with batch norm: CIFAR (3x3 stem) and torchvision's ImageNet", 0,
                  &resnet18_api)
