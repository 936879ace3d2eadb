/* AlexNet as torchvision's `alexnet` (Krizhevsky 2014, "One weird trick", the one-GPU version):
 *
 *   features    0 conv11x11/4 pad 2 3->64, 1 ReLU, 2 maxpool 3/2,
 *               3 conv5x5 pad 2 ->192, 4 ReLU, 5 maxpool 3/2,
 *               6 conv3x3 pad 1 ->384, 7 ReLU, 8 conv3x3 ->256, 9 ReLU, 10 conv3x3 ->256,
 *               11 ReLU, 12 maxpool 3/2
 *   avgpool     AdaptiveAvgPool2d((6, 6)): the identity on the 6x6 map of a 224x224 input
 *   classifier  0 Dropout, 1 fc 9216->4096, 2 ReLU, 3 Dropout, 4 fc 4096->4096, 5 ReLU,
 *               6 fc 4096->1000
 *
 * 61,100,840 parameters. Layer and parameter names are torchvision's module paths
 * ("features.3.weight", "classifier.6.bias"); initialisation is torchvision's, i.e. PyTorch's
 * defaults for Conv2d and Linear (weight and bias U(-1/sqrt(fan_in), 1/sqrt(fan_in))).
 * Dropout is torchvision's `dropout` argument (0.5; 0 emits no op). Trained with softmax
 * cross-entropy and SGD (lr 0.01, momentum 0.9), as the other classifiers.
 *
 * image_size and fc_width exist for tests: a smaller image ends the features at a 1x1 map,
 * which the adaptive pool repeats to 6x6 (emitted as a broadcast add of zeros), or at a
 * multiple of 6, which it averages in equal windows (AVGPOOL); fc_width narrows the two hidden
 * fc layers. docs/models.md has the numbers. */
#include <stdio.h>
#include <string.h>

#include <xpubench/xpubench.h>

static const xpb_model_param alexnet_params[] = {
    {"variant", XPB_MPARAM_STRING, "imagenet", "imagenet",
     "torchvision alexnet: 3x224x224, 1000 classes (the only variant)"},
    {"dropout", XPB_MPARAM_FLOAT, "0.5", "0.0..0.99",
     "p of the classifier's two Dropout layers (torchvision's dropout argument)"},
    {"num_classes", XPB_MPARAM_INT, "1000", "2..100000", "outputs of classifier.6"},
    {"image_size", XPB_MPARAM_INT, "224", "63..1024",
     "input height and width; the features must end at 1x1 or a multiple of 6 (for tests)"},
    {"fc_width", XPB_MPARAM_INT, "4096", "1..65536",
     "outputs of classifier.1 and classifier.4 (torchvision: 4096; smaller for tests)"},
};

/* Output size of a convolution or pooling window over `size`. */
static int64_t window_out(int64_t size, int64_t k, int64_t stride, int64_t pad)
{
    return (size + 2 * pad - k) / stride + 1;
}

/* features.N: torchvision's nn.Sequential; *size follows the spatial size. */
static xpb_status alexnet_features(xpb_value *x, int64_t *size, xpb_builder *b,
                                   const xpb_builder_api *api)
{
    /* out channels, kernel, stride, pad; 0 channels = max pool 3/2 */
    static const int cfg[8][4] = {{64, 11, 4, 2}, {0, 3, 2, 0},   {192, 5, 1, 2}, {0, 3, 2, 0},
                                  {384, 3, 1, 1}, {256, 3, 1, 1}, {256, 3, 1, 1}, {0, 3, 2, 0}};
    const xpb_layer_opts o = {.bias = 1}; /* PyTorch's default initialisers */
    char layer[32];
    int64_t in_c = 3;
    int index = 0;
    for (int i = 0; i < 8; i++) {
        const int *c = cfg[i];
        xpb_op_attrs a = {.kernel = {c[1], c[1]}, .stride = {c[2], c[2]}, .pad = {c[3], c[3]}};
        snprintf(layer, sizeof layer, "features.%d", index++);
        *size = window_out(*size, c[1], c[2], c[3]);
        if (c[0] == 0) {
            XPB_TRY(xpb_layer_unary(x, b, api, layer, XPB_OP_MAXPOOL, *x, &a));
            continue;
        }
        XPB_TRY(xpb_layer_conv(x, b, api, layer, *x, in_c, c[0], c[1], 0, &a, &o));
        snprintf(layer, sizeof layer, "features.%d", index++);
        XPB_TRY(xpb_layer_unary(x, b, api, layer, XPB_OP_RELU, *x, NULL));
        in_c = c[0];
    }
    return XPB_OK;
}

/* avgpool: AdaptiveAvgPool2d((6, 6)) on a size x size map of 256 channels. At 6 it is the
 * identity (no op); at 6k its windows are k x k with stride k (an AVGPOOL); at 1 every output
 * cell is the one input cell, a broadcast over a [1, 1, 6, 6] constant of zeros. */
static xpb_status alexnet_avgpool(xpb_value *x, int64_t size, xpb_builder *b,
                                  const xpb_builder_api *api)
{
    if (size == 6)
        return XPB_OK;
    if (size > 6 && size % 6 == 0) {
        const int32_t k = (int32_t)(size / 6);
        xpb_op_attrs a = {.kernel = {k, k}, .stride = {k, k}};
        return xpb_layer_unary(x, b, api, "avgpool", XPB_OP_AVGPOOL, *x, &a);
    }
    if (size != 1)
        return xpb_model_fail(b, api, XPB_INVALID_ARGUMENT,
                              "image_size ends the features at %lldx%lld; the adaptive average "
                              "pool to 6x6 is built for 1x1 (sizes 63..94), 6x6 (223..254) and "
                              "multiples of 6 (415..446, ...)",
                              (long long)size, (long long)size);
    if (!XPB_HAS_MEMBER(api, xpb_builder_api, op3))
        return xpb_model_fail(b, api, XPB_UNSUPPORTED,
                              "a 1x1 feature map needs a builder of ABI 1.3 (op set 3)");
    const int64_t grid[4] = {1, 1, 6, 6};
    xpb_value zeros, in[2];
    XPB_TRY(api->constant(&zeros, b, "avgpool.zeros", 4, grid, 0.0));
    in[0] = *x, in[1] = zeros;
    return api->op3(x, b, "avgpool", XPB_OP_ADD_BROADCAST, in, 2, NULL, NULL);
}

static xpb_status alexnet_build(xpb_builder *b, const xpb_builder_api *api)
{
    double p;
    int64_t classes, size, width;
    XPB_TRY(api->param_float(&p, b, "dropout"));
    XPB_TRY(api->param_int(&classes, b, "num_classes"));
    XPB_TRY(api->param_int(&size, b, "image_size"));
    XPB_TRY(api->param_int(&width, b, "fc_width"));
    const int64_t n = api->batch_size(b);
    xpb_value x, labels, logits;
    xpb_input_desc images = {"images", XPB_DTYPE_F32, 4, {n, 3, size, size}, -1.0, 1.0};
    xpb_input_desc targets = {"labels", XPB_DTYPE_I32, 1, {n, 1, 1, 1}, 0, (double)(classes - 1)};
    const xpb_layer_opts fc = {.bias = 1};
    const xpb_op_attrs drop = {.dropout_p = (float)p};

    XPB_TRY(api->input(&x, b, &images));
    XPB_TRY(api->input(&labels, b, &targets));
    int64_t map = size;
    XPB_TRY(alexnet_features(&x, &map, b, api));
    XPB_TRY(alexnet_avgpool(&x, map, b, api));
    const int64_t flat[2] = {n, 256 * 6 * 6};
    XPB_TRY(api->reshape(&x, b, "flatten", x, 2, flat));
    if (p > 0)
        XPB_TRY(xpb_layer_unary(&x, b, api, "classifier.0", XPB_OP_DROPOUT, x, &drop));
    XPB_TRY(xpb_layer_linear(&x, b, api, "classifier.1", x, 256 * 6 * 6, width, &fc));
    XPB_TRY(xpb_layer_unary(&x, b, api, "classifier.2", XPB_OP_RELU, x, NULL));
    if (p > 0)
        XPB_TRY(xpb_layer_unary(&x, b, api, "classifier.3", XPB_OP_DROPOUT, x, &drop));
    XPB_TRY(xpb_layer_linear(&x, b, api, "classifier.4", x, width, width, &fc));
    XPB_TRY(xpb_layer_unary(&x, b, api, "classifier.5", XPB_OP_RELU, x, NULL));
    XPB_TRY(xpb_layer_linear(&logits, b, api, "classifier.6", x, width, classes, &fc));
    return xpb_layer_xent_head(b, api, logits, labels);
}

static const xpb_model_api alexnet_api = {
    .struct_size = sizeof(xpb_model_api),
    .params = alexnet_params,
    .n_params = sizeof alexnet_params / sizeof alexnet_params[0],
    .build = alexnet_build,
};

XPB_DEFINE_PLUGIN(XPB_PLUGIN_MODEL, "alexnet", "1.0.0",
                  "torchvision's AlexNet (ImageNet, 224x224, dropout 0.5)", 0, &alexnet_api)
