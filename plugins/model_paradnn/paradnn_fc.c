/* ParaDnn's fully connected family (paradnn/fc.py): inputs[N, input] -> `layers` dense layers
 * of `nodes` units with ReLU -> a dense layer to `output` logits, softmax cross-entropy against
 * labels[N]. Layers fc_0 .. fc_<layers>, each with a bias, TensorFlow's dense initialisation
 * (glorot-uniform weights, zero biases). Inputs are uniform in [-0.5, 0.5) as fc.py draws them.
 * Parameters: input x nodes + nodes + (layers - 1) x (nodes^2 + nodes) + nodes x output +
 * output; forward FLOPs per sample 2 x (input x nodes + (layers - 1) x nodes^2 + nodes x
 * output), fc.py's own count. */
#include "paradnn.h"

/* fc_<i>: weight [out, in] and bias [out], then LINEAR. */
static xpb_status dense(xpb_value *x, const pdn *p, int64_t i, int64_t in, int64_t out)
{
    char layer[32], name[48];
    xpb_value w, bias;
    pdn_name(layer, sizeof layer, "fc_%lld", (long long)i);
    pdn_name(name, sizeof name, "%s.weight", layer);
    XPB_TRY(pdn_param(&w, p, name, out, in, pdn_glorot(in, out)));
    pdn_name(name, sizeof name, "%s.bias", layer);
    XPB_TRY(pdn_param(&bias, p, name, out, 0, (xpb_init){XPB_INIT_ZEROS, 0, 0}));
    xpb_value in_v[3] = {*x, w, bias};
    return p->api->op(x, p->b, layer, XPB_OP_LINEAR, in_v, 3, NULL);
}

xpb_status pdn_build_fc(const pdn *p)
{
    const pdn_cfg *c = &p->c;
    xpb_value x, labels;
    const xpb_input_desc inputs = {"inputs", XPB_DTYPE_F32, 2, {c->n, c->input}, -0.5, 0.5};
    const xpb_input_desc targets = {"labels", XPB_DTYPE_I32,          1, {c->n, 1, 1, 1},
                                    0,        (double)(c->output - 1)};
    XPB_TRY(p->api->input(&x, p->b, &inputs));
    XPB_TRY(p->api->input(&labels, p->b, &targets));
    int64_t width = c->input;
    for (int64_t i = 0; i < c->layers; i++) {
        char relu[32];
        XPB_TRY(dense(&x, p, i, width, c->nodes));
        pdn_name(relu, sizeof relu, "relu_%lld", (long long)i);
        XPB_TRY(xpb_layer_unary(&x, p->b, p->api, relu, XPB_OP_RELU, x, NULL));
        width = c->nodes;
    }
    XPB_TRY(dense(&x, p, c->layers, width, c->output));
    return pdn_classifier_head(p, x, labels);
}
