/* ParaDnn's convolutional family (paradnn/cnn.py on resnet_model.py, TensorFlow's ResNet v1):
 *
 *   images[N, 3, image, image] -> initial_conv 7x7/2 (filters, no bias) + BN + ReLU ->
 *   initial_max_pool 3x3/2 -> group1 .. group4 (filters x 1, 2, 4, 8; the first block of
 *   groups 2-4 halves the size) -> global average pool -> final_dense to `output` logits
 *
 * Each group has `blocks` blocks; the first block of every group (group 1's too, as in
 * ParaDnn) takes its shortcut through a projection, conv 1x1 (stride of the block) + BN; the
 * others add their input. A residual block is conv 3x3 (stride) + BN + ReLU, conv 3x3 + BN; a
 * bottleneck block conv 1x1 + BN + ReLU, conv 3x3 (stride) + BN + ReLU, conv 1x1 to 4 x the
 * group's filters + BN; then the sum with the shortcut and a ReLU. Convolutions have no bias;
 * batch norm has TensorFlow's decay 0.9 (momentum 0.1) and epsilon 1e-5.
 *
 * Where this departs from the TensorFlow code (docs/models.md): padding is symmetric (k / 2 on
 * every side, PyTorch's), which gives TensorFlow's output sizes (ceil(size / 2) for every
 * stride 2) but not its windows at even sizes for the pool; convolution weights are N(0,
 * 1 / fan_in), the variance of TensorFlow's truncated variance_scaling_initializer; and the
 * last batch norm of a block starts with gamma 1, not 0 (zero would make every block's branch
 * output, and so the gradients of its convolutions, zero at the first step, which a
 * verification against the reference could not tell from a wrong kernel). final_dense is
 * N(0, 0.01) with a zero bias, as resnet_model.py. Inputs are uniform in [0, 1). */
#include "paradnn.h"

/* A bias-free convolution `layer` of k x k from in_c to out_c with stride s and padding k / 2. */
static xpb_status conv(xpb_value *x, const pdn *p, const char *layer, int64_t in_c, int64_t out_c,
                       int64_t k, int32_t s)
{
    xpb_op_attrs a = {.stride = {s, s}, .pad = {(int32_t)(k / 2), (int32_t)(k / 2)}};
    xpb_layer_opts o = {.bias = 0,
                        .weight_init = {XPB_INIT_NORMAL, 0.0, sqrt(1.0 / (double)(in_c * k * k))}};
    return xpb_layer_conv(x, p->b, p->api, layer, *x, in_c, out_c, k, 0, &a, &o);
}

/* <prefix>.<part>_conv then <prefix>.<part>_bn, and a ReLU (<prefix>.<part>_relu) when `relu`. */
static xpb_status conv_bn(xpb_value *x, const pdn *p, const char *prefix, const char *part,
                          int64_t in_c, int64_t out_c, int64_t k, int32_t s, int relu)
{
    char layer[64];
    pdn_name(layer, sizeof layer, "%s.%s_conv", prefix, part);
    XPB_TRY(conv(x, p, layer, in_c, out_c, k, s));
    pdn_name(layer, sizeof layer, "%s.%s_bn", prefix, part);
    XPB_TRY(xpb_layer_batchnorm(x, p->b, p->api, layer, *x, out_c, 0));
    if (!relu)
        return XPB_OK;
    pdn_name(layer, sizeof layer, "%s.%s_relu", prefix, part);
    return xpb_layer_unary(x, p->b, p->api, layer, XPB_OP_RELU, *x, NULL);
}

/* group<g>.block<i>: from in_c channels to the block's output channels (*in_c updated). */
static xpb_status block(xpb_value *x, const pdn *p, int g, int64_t i, int64_t *in_c,
                        int64_t filters, int32_t stride)
{
    char name[48], layer[64];
    const int64_t out_c = p->c.bottleneck ? 4 * filters : filters;
    xpb_value y = *x, skip = *x;
    pdn_name(name, sizeof name, "group%d.block%lld", g, (long long)i);
    if (i == 0)
        XPB_TRY(conv_bn(&skip, p, name, "proj", *in_c, out_c, 1, stride, 0));
    if (p->c.bottleneck) {
        XPB_TRY(conv_bn(&y, p, name, "a", *in_c, filters, 1, 1, 1));
        XPB_TRY(conv_bn(&y, p, name, "b", filters, filters, 3, stride, 1));
        XPB_TRY(conv_bn(&y, p, name, "c", filters, out_c, 1, 1, 0));
    } else {
        XPB_TRY(conv_bn(&y, p, name, "a", *in_c, filters, 3, stride, 1));
        XPB_TRY(conv_bn(&y, p, name, "b", filters, filters, 3, 1, 0));
    }
    xpb_value sum[2] = {y, skip};
    pdn_name(layer, sizeof layer, "%s.add", name);
    XPB_TRY(p->api->op(&y, p->b, layer, XPB_OP_ADD, sum, 2, NULL));
    pdn_name(layer, sizeof layer, "%s.relu", name);
    *in_c = out_c;
    return xpb_layer_unary(x, p->b, p->api, layer, XPB_OP_RELU, y, NULL);
}

xpb_status pdn_build_cnn(const pdn *p)
{
    const pdn_cfg *c = &p->c;
    xpb_value x, labels, logits;
    const xpb_input_desc images = {"images", XPB_DTYPE_F32, 4, {c->n, 3, c->image, c->image}, 0.0,
                                   1.0};
    const xpb_input_desc targets = {"labels", XPB_DTYPE_I32,          1, {c->n, 1, 1, 1},
                                    0,        (double)(c->output - 1)};
    XPB_TRY(p->api->input(&x, p->b, &images));
    XPB_TRY(p->api->input(&labels, p->b, &targets));
    XPB_TRY(conv(&x, p, "initial_conv", 3, c->filters, 7, 2));
    XPB_TRY(xpb_layer_batchnorm(&x, p->b, p->api, "initial_bn", x, c->filters, 0));
    XPB_TRY(xpb_layer_unary(&x, p->b, p->api, "initial_relu", XPB_OP_RELU, x, NULL));
    xpb_op_attrs pool = {.kernel = {3, 3}, .stride = {2, 2}, .pad = {1, 1}};
    XPB_TRY(xpb_layer_unary(&x, p->b, p->api, "initial_max_pool", XPB_OP_MAXPOOL, x, &pool));
    int64_t in_c = c->filters;
    for (int g = 0; g < 4; g++)
        for (int64_t i = 0; i < c->blocks; i++)
            XPB_TRY(block(&x, p, g + 1, i, &in_c, c->filters << g, g > 0 && i == 0 ? 2 : 1));
    XPB_TRY(xpb_layer_unary(&x, p->b, p->api, "final_avg_pool", XPB_OP_GLOBAL_AVGPOOL, x, NULL));
    const int64_t flat[2] = {c->n, in_c};
    XPB_TRY(p->api->reshape(&x, p->b, "flatten", x, 2, flat));
    xpb_layer_opts dense = {.bias = 1,
                            .weight_init = {XPB_INIT_NORMAL, 0.0, 0.01},
                            .bias_init = {XPB_INIT_ZEROS, 0, 0}};
    XPB_TRY(xpb_layer_linear(&logits, p->b, p->api, "final_dense", x, in_c, c->output, &dense));
    return pdn_classifier_head(p, logits, labels);
}
