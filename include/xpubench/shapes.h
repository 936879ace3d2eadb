/* xpubench public SDK: the shape rules of the op set, for backends and for the host.
 *
 * One implementation of what docs/ops.md says an op may take, in PyTorch's terms: for every op
 * of op sets 1 to 3, forward and backward, its number of inputs and outputs, which of them are
 * optional, their dtypes, the range of its attributes and the shape of every tensor. The host's
 * builder infers forward shapes with it; the reference backend validates whole programs with
 * it; a vendor's backend should do the same in compile, so that its kernels can trust every
 * shape they see and a bad program is refused with a message instead of a crash.
 *
 * Header-only (every function is static inline): a plugin links nothing of xpubench.
 *
 *   xpb_program_validate(p, msg, size)      a whole program: header, tensors, phases, ops
 *   xpb_op_validate(p, i, msg, size)        op i of a program: tensor ids, a kind and
 *                                           attribute bits these headers know, the rules
 *   xpb_op_check(op, in, out, msg, size)    an op against its tensors' descriptors
 *   xpb_op_infer_shape(&y, op, in, msg, size)  the first output of a forward op
 *   xpb_shape_str(buf, size, ndim, dims)    "[2, 3, 32, 32]"
 *
 * Statuses: XPB_OK; XPB_UNSUPPORTED for what these headers do not know (an op kind or an
 * attribute bit of a later op set, an unknown tensor dtype), which a backend reports as "cannot
 * run this"; XPB_INVALID_ARGUMENT for a malformed op or program. `msg` (size bytes, owned by the
 * caller; may be NULL when size is 0) receives one line that names the op, its layer, the
 * tensor (its role in the op and its name), what was expected and what was found:
 *
 *   op 3 CONV2D (layer 'conv2'): input w "conv2.weight" [64, 32, 3, 3] expects 32 input
 *   channels (dim 1), input x "relu1" [8, 16, 32, 32] has 16
 *
 * Names beginning with xpb_shp_ / XPB_SHP_ are this header's internals. */
#ifndef XPUBENCH_SHAPES_H
#define XPUBENCH_SHAPES_H

#include "shapes_check.h"
#include "shapes_rules.h"
#include "shapes_rules3.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the table ---- */

/* The rule of op `kind`, or NULL when it is not an op of the op set these headers define.
 * Static storage. */
static inline const struct xpb_shp_rule *xpb_shp_rule_of(uint32_t kind)
{
    /* kind, inputs min/max, outputs min/max, optional outputs, I32 inputs / outputs, F32-or-I32
     * inputs / outputs, inferable, input names, output names, shape rule. Every tensor is F32
     * unless a bit says otherwise. */
#define XPB_SHP_B XPB_SHP_BIT
    /* clang-format off */
    static const struct xpb_shp_rule rules[] = {
        {XPB_OP_CONV2D,               2, 3, 1, 1, 0, 0, 0, 0, 0, 1,
         {"x", "w", "b"}, {"y"}, xpb_shp_conv, 0},
        {XPB_OP_CONV2D_BWD_DATA,      2, 2, 1, 1, 0, 0, 0, 0, 0, 0,
         {"dy", "w"}, {"dx"}, xpb_shp_conv, 0},
        {XPB_OP_CONV2D_BWD_WEIGHTS,   2, 2, 1, 2, 0, 0, 0, 0, 0, 0,
         {"dy", "x"}, {"dw", "db"}, xpb_shp_conv, 0},
        {XPB_OP_CONV_T2D,             2, 3, 1, 1, 0, 0, 0, 0, 0, 1,
         {"x", "w", "b"}, {"y"}, xpb_shp_conv, 0},
        {XPB_OP_CONV_T2D_BWD_DATA,    2, 2, 1, 1, 0, 0, 0, 0, 0, 0,
         {"dy", "w"}, {"dx"}, xpb_shp_conv, 0},
        {XPB_OP_CONV_T2D_BWD_WEIGHTS, 2, 2, 1, 2, 0, 0, 0, 0, 0, 0,
         {"dy", "x"}, {"dw", "db"}, xpb_shp_conv, 0},
        {XPB_OP_LINEAR,               2, 3, 1, 1, 0, 0, 0, 0, 0, 1,
         {"x", "w", "b"}, {"y"}, xpb_shp_linear, 0},
        {XPB_OP_LINEAR_BWD_DATA,      2, 2, 1, 1, 0, 0, 0, 0, 0, 0,
         {"dy", "w"}, {"dx"}, xpb_shp_linear, 0},
        {XPB_OP_LINEAR_BWD_WEIGHTS,   2, 2, 1, 2, 0, 0, 0, 0, 0, 0,
         {"dy", "x"}, {"dw", "db"}, xpb_shp_linear, 0},
        {XPB_OP_BATCHNORM_TRAIN,      5, 5, 1, 3, XPB_SHP_B(1) | XPB_SHP_B(2), 0, 0, 0, 0, 1,
         {"x", "gamma", "beta", "running_mean", "running_var"}, {"y", "ws_mean", "ws_var"},
         xpb_shp_batchnorm, 0},
        {XPB_OP_BATCHNORM_INFER,      5, 5, 1, 1, 0, 0, 0, 0, 0, 1,
         {"x", "gamma", "beta", "running_mean", "running_var"}, {"y"}, xpb_shp_batchnorm, 0},
        {XPB_OP_BATCHNORM_BWD,        5, 5, 3, 3, XPB_SHP_B(0) | XPB_SHP_B(1) | XPB_SHP_B(2),
                                      0, 0, 0, 0, 0,
         {"dy", "x", "gamma", "ws_mean", "ws_var"}, {"dx", "dgamma", "dbeta"}, xpb_shp_batchnorm, 0},
        {XPB_OP_INSTANCENORM,         1, 1, 1, 3, XPB_SHP_B(1) | XPB_SHP_B(2), 0, 0, 0, 0, 1,
         {"x"}, {"y", "ws_mean", "ws_var"}, xpb_shp_instancenorm, 0},
        {XPB_OP_INSTANCENORM_BWD,     4, 4, 1, 1, 0, 0, 0, 0, 0, 0,
         {"dy", "x", "ws_mean", "ws_var"}, {"dx"}, xpb_shp_instancenorm, 0},
        {XPB_OP_RELU,                 1, 1, 1, 1, 0, 0, 0, 0, 0, 1,
         {"x"}, {"y"}, xpb_shp_same_shapes, 0},
        {XPB_OP_RELU_BWD,             2, 2, 1, 1, 0, 0, 0, 0, 0, 0,
         {"dy", "y"}, {"dx"}, xpb_shp_same_shapes, 0},
        {XPB_OP_LEAKY_RELU,           1, 1, 1, 1, 0, 0, 0, 0, 0, 1,
         {"x"}, {"y"}, xpb_shp_same_shapes, 0},
        {XPB_OP_LEAKY_RELU_BWD,       2, 2, 1, 1, 0, 0, 0, 0, 0, 0,
         {"dy", "y"}, {"dx"}, xpb_shp_leaky_relu_bwd, 0},
        {XPB_OP_TANH,                 1, 1, 1, 1, 0, 0, 0, 0, 0, 1,
         {"x"}, {"y"}, xpb_shp_same_shapes, 0},
        {XPB_OP_TANH_BWD,             2, 2, 1, 1, 0, 0, 0, 0, 0, 0,
         {"dy", "y"}, {"dx"}, xpb_shp_same_shapes, 0},
        {XPB_OP_MAXPOOL,              1, 1, 1, 2, XPB_SHP_B(1), 0, XPB_SHP_B(1), 0, 0, 1,
         {"x"}, {"y", "ws_index"}, xpb_shp_pool, 0},
        {XPB_OP_MAXPOOL_BWD,          2, 2, 1, 1, 0, XPB_SHP_B(1), 0, 0, 0, 0,
         {"dy", "ws_index"}, {"dx"}, xpb_shp_pool, 0},
        {XPB_OP_AVGPOOL,              1, 1, 1, 1, 0, 0, 0, 0, 0, 1, {"x"}, {"y"}, xpb_shp_pool, 0},
        {XPB_OP_AVGPOOL_BWD,          1, 1, 1, 1, 0, 0, 0, 0, 0, 0, {"dy"}, {"dx"}, xpb_shp_pool, 0},
        {XPB_OP_GLOBAL_AVGPOOL,       1, 1, 1, 1, 0, 0, 0, 0, 0, 1,
         {"x"}, {"y"}, xpb_shp_global_pool, 0},
        {XPB_OP_GLOBAL_AVGPOOL_BWD,   1, 1, 1, 1, 0, 0, 0, 0, 0, 0,
         {"dy"}, {"dx"}, xpb_shp_global_pool, 0},
        {XPB_OP_ADD,                  2, 2, 1, 1, 0, 0, 0, 0, 0, 1,
         {"a", "b"}, {"y"}, xpb_shp_same_shapes, 0},
        {XPB_OP_REFLECTION_PAD,       1, 1, 1, 1, 0, 0, 0, 0, 0, 1,
         {"x"}, {"y"}, xpb_shp_reflection_pad, 0},
        {XPB_OP_REFLECTION_PAD_BWD,   1, 1, 1, 1, 0, 0, 0, 0, 0, 0,
         {"dy"}, {"dx"}, xpb_shp_reflection_pad, 0},
        {XPB_OP_RESHAPE,              1, 1, 1, 1, 0, 0, 0, XPB_SHP_B(0), XPB_SHP_B(0), 0,
         {"x"}, {"y"}, xpb_shp_reshape, 0},
        {XPB_OP_SOFTMAX_XENT,         2, 2, 1, 2, XPB_SHP_B(1), XPB_SHP_B(1), 0, 0, 0, 1,
         {"logits", "labels"}, {"loss", "ws_prob"}, xpb_shp_softmax_xent3, 0},
        {XPB_OP_SOFTMAX_XENT_BWD,     2, 2, 1, 1, 0, XPB_SHP_B(1), 0, 0, 0, 0,
         {"ws_prob", "labels"}, {"dlogits"}, xpb_shp_softmax_xent3, 0},
        {XPB_OP_MSE_LOSS,             2, 2, 1, 1, 0, 0, 0, 0, 0, 1,
         {"x", "target"}, {"loss"}, xpb_shp_loss, 0},
        {XPB_OP_MSE_LOSS_BWD,         2, 2, 1, 1, 0, 0, 0, 0, 0, 0,
         {"x", "target"}, {"dx"}, xpb_shp_same_shapes, 0},
        {XPB_OP_L1_LOSS,              2, 2, 1, 1, 0, 0, 0, 0, 0, 1,
         {"x", "target"}, {"loss"}, xpb_shp_loss, 0},
        {XPB_OP_L1_LOSS_BWD,          2, 2, 1, 1, 0, 0, 0, 0, 0, 0,
         {"x", "target"}, {"dx"}, xpb_shp_same_shapes, 0},
        {XPB_OP_DROPOUT,              1, 1, 1, 2, XPB_SHP_B(1), 0, 0, 0, 0, 1,
         {"x"}, {"y", "ws_mask"}, xpb_shp_dropout, 0},
        {XPB_OP_DROPOUT_BWD,          2, 2, 1, 1, 0, 0, 0, 0, 0, 0,
         {"dy", "ws_mask"}, {"dx"}, xpb_shp_dropout, 0},
        {XPB_OP_SGD_UPDATE,           2, 3, 0, 0, 0, 0, 0, 0, 0, 0,
         {"param", "grad", "momentum_buf"}, {0}, xpb_shp_same_shapes, 0},
        {XPB_OP_ADAM_UPDATE,          5, 5, 0, 0, 0, 0, 0, XPB_SHP_B(4), 0, 0,
         {"param", "grad", "m", "v", "step"}, {0}, xpb_shp_adam, 0},
        {XPB_OP_FILL,                 0, 0, 1, 1, 0, 0, 0, 0, XPB_SHP_B(0), 0,
         {0}, {"y"}, xpb_shp_fill, 0},
        {XPB_OP_COPY,                 1, 1, 1, 1, 0, 0, 0, XPB_SHP_B(0), XPB_SHP_B(0), 1,
         {"x"}, {"y"}, xpb_shp_same_shapes, 0},
        /* op set 2 */
        {XPB_OP_ALL_REDUCE,           1, 1, 0, 0, 0, 0, 0, 0, 0, 0,
         {"x"}, {0}, xpb_shp_all_reduce, 0},
        /* op set 3 */
        {XPB_OP_MATMUL,               2, 3, 1, 1, 0, 0, 0, 0, 0, 1,
         {"a", "b", "bias"}, {"y"}, xpb_shp_matmul, 0},
        {XPB_OP_MATMUL_BWD,           3, 3, 1, 3, XPB_SHP_B(0) | XPB_SHP_B(1) | XPB_SHP_B(2),
                                      0, 0, 0, 0, 0,
         {"dy", "a", "b"}, {"da", "db", "dbias"}, xpb_shp_matmul, 0},
        {XPB_OP_BATCHED_MATMUL,       2, 2, 1, 1, 0, 0, 0, 0, 0, 1,
         {"a", "b"}, {"y"}, xpb_shp_matmul, 0},
        {XPB_OP_BATCHED_MATMUL_BWD,   3, 3, 1, 2, XPB_SHP_B(0) | XPB_SHP_B(1), 0, 0, 0, 0, 0,
         {"dy", "a", "b"}, {"da", "db"}, xpb_shp_matmul, 0},
        {XPB_OP_PERMUTE,              1, 1, 1, 1, 0, 0, 0, XPB_SHP_B(0), XPB_SHP_B(0), 1,
         {"x"}, {"y"}, xpb_shp_permute, 0},
        {XPB_OP_ADD_BROADCAST,        2, 2, 1, 1, 0, 0, 0, 0, 0, 1,
         {"a", "b"}, {"y"}, xpb_shp_bcast_binary, 0},
        {XPB_OP_MUL,                  2, 2, 1, 1, 0, 0, 0, 0, 0, 1,
         {"a", "b"}, {"y"}, xpb_shp_bcast_binary, 0},
        {XPB_OP_SUM_TO,               1, 1, 1, 1, 0, 0, 0, 0, 0, 0,
         {"x"}, {"y"}, xpb_shp_sum_to, 0},
        {XPB_OP_SCALE,                1, 1, 1, 1, 0, 0, 0, 0, 0, 1,
         {"x"}, {"y"}, xpb_shp_scale, 0},
        {XPB_OP_SOFTMAX,              1, 2, 1, 1, 0, 0, 0, 0, 0, 1,
         {"x", "mask"}, {"y"}, xpb_shp_softmax, 0},
        {XPB_OP_SOFTMAX_BWD,          2, 2, 1, 1, 0, 0, 0, 0, 0, 0,
         {"dy", "y"}, {"dx"}, xpb_shp_softmax, 0},
        {XPB_OP_LAYER_NORM,           3, 3, 1, 3, XPB_SHP_B(1) | XPB_SHP_B(2), 0, 0, 0, 0, 1,
         {"x", "gamma", "beta"}, {"y", "ws_mean", "ws_rstd"}, xpb_shp_layer_norm, 0},
        {XPB_OP_LAYER_NORM_BWD,       5, 5, 3, 3, XPB_SHP_B(0) | XPB_SHP_B(1) | XPB_SHP_B(2),
                                      0, 0, 0, 0, 0,
         {"dy", "x", "gamma", "ws_mean", "ws_rstd"}, {"dx", "dgamma", "dbeta"},
         xpb_shp_layer_norm, 0},
        {XPB_OP_GELU,                 1, 1, 1, 1, 0, 0, 0, 0, 0, 1,
         {"x"}, {"y"}, xpb_shp_gelu, 0},
        {XPB_OP_GELU_BWD,             2, 2, 1, 1, 0, 0, 0, 0, 0, 0,
         {"dy", "x"}, {"dx"}, xpb_shp_gelu, 0},
        {XPB_OP_EMBEDDING,            2, 2, 1, 1, 0, XPB_SHP_B(0), 0, 0, 0, 1,
         {"indices", "weight"}, {"y"}, xpb_shp_embedding, 0},
        {XPB_OP_EMBEDDING_BWD,        2, 2, 1, 1, 0, XPB_SHP_B(1), 0, 0, 0, 0,
         {"dy", "indices"}, {"dweight"}, xpb_shp_embedding, 0},
        {XPB_OP_LSTM,                 5, 7, 1, 4,
                                      XPB_SHP_B(1) | XPB_SHP_B(2) | XPB_SHP_B(3), 0, 0, 0, 0, 1,
         {"x", "w_ih", "w_hh", "b_ih", "b_hh", "h0", "c0"}, {"y", "h_n", "c_n", "ws"},
         xpb_shp_lstm, XPB_SHP_B(5) | XPB_SHP_B(6)},
        {XPB_OP_LSTM_BWD,             8, 10, 5, 7,
                                      XPB_SHP_B(0) | XPB_SHP_B(5) | XPB_SHP_B(6), 0, 0, 0, 0, 0,
         {"dy", "dh_n", "dc_n", "x", "w_ih", "w_hh", "y", "ws", "h0", "c0"},
         {"dx", "dw_ih", "dw_hh", "db_ih", "db_hh", "dh0", "dc0"}, xpb_shp_lstm,
         XPB_SHP_B(1) | XPB_SHP_B(2) | XPB_SHP_B(8) | XPB_SHP_B(9)},
        {XPB_OP_ADAMW_UPDATE,         5, 5, 0, 0, 0, 0, 0, XPB_SHP_B(4), 0, 0,
         {"param", "grad", "m", "v", "step"}, {0}, xpb_shp_adam, 0},
        {XPB_OP_CLIP_GRAD_NORM,       1, XPB_SHP_MAX_IN, 1, 1, 0, 0, 0, 0, 0, 0,
         {"g"}, {"total_norm"}, xpb_shp_clip, 0},
    };
    /* clang-format on */
#undef XPB_SHP_B
    if (kind < 1 || kind > sizeof rules / sizeof rules[0] || rules[kind - 1].kind != kind)
        return NULL;
    return &rules[kind - 1];
}

/* ---- running the rules ---- */

/* A tensor's own validity: 1..XPB_MAX_DIMS dims, every dim >= 1, a dtype the rule allows. */
static inline xpb_status xpb_shp_tensor(const struct xpb_shp_check *c, int t)
{
    const xpb_tensor_desc *d = xpb_shp_desc(c, t);
    int is_out = t >= XPB_SHP_OUT(0), index = is_out ? t - XPB_SHP_OUT(0) : t;
    /* the rule's masks name operands 0..15; later ones (CLIP_GRAD_NORM's gradients) are F32,
     * and their bit is never formed (a shift by 32 or more is undefined) */
    unsigned bit = index >= 16 ? 0u : XPB_SHP_BIT(index);
    unsigned i32 = is_out ? c->rule->out_i32 : c->rule->in_i32;
    unsigned any = is_out ? c->rule->out_any : c->rule->in_any;
    char l[160], found[96];
    if (d->ndim < 1 || d->ndim > XPB_MAX_DIMS)
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT, "%s has %u dims, expected 1 to %d",
                            xpb_shp_label(l, sizeof l, c, t), d->ndim, XPB_MAX_DIMS);
    for (uint32_t k = 0; k < d->ndim; k++)
        if (d->dims[k] < 1)
            return xpb_shp_fail(c, XPB_INVALID_ARGUMENT, "%s has an empty dimension: %s",
                                xpb_shp_label(l, sizeof l, c, t),
                                xpb_shape_str(found, sizeof found, d->ndim, d->dims));
    int ok;
    const char *want;
    if (any & bit) {
        ok = d->dtype == XPB_DTYPE_F32 || d->dtype == XPB_DTYPE_I32;
        want = "F32 or I32";
    } else if (i32 & bit) {
        ok = d->dtype == XPB_DTYPE_I32;
        want = "I32";
    } else {
        ok = d->dtype == XPB_DTYPE_F32;
        want = "F32";
    }
    if (!ok)
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT, "%s must be %s, found %s",
                            xpb_shp_label(l, sizeof l, c, t), want,
                            xpb_shp_dtype_str(found, sizeof found, d->dtype));
    return XPB_OK;
}

/* "not implemented" for a kind these headers do not know. */
static inline xpb_status xpb_shp_unknown_kind(const struct xpb_shp_check *c, uint32_t kind)
{
    return xpb_shp_fail(c, XPB_UNSUPPORTED,
                        "not implemented: kind %u is not an op of op set %d, the newest this "
                        "code was built for",
                        kind, XPB_OPSET_VERSION);
}

/* Counts, presence and validity of every tensor, then the op's shape rule. c->in/out/n_in/
 * n_out and the prefix are set; with c->infer, outputs are not looked at but output 0 is
 * inferred into *c->infer. */
static inline xpb_status xpb_shp_run(struct xpb_shp_check *c)
{
    const xpb_op *op = c->op;
    const struct xpb_shp_rule *r = c->rule = xpb_shp_rule_of(op->kind);
    xpb_status st;
    if (!r)
        return xpb_shp_unknown_kind(c, op->kind);
    if (c->n_in < r->in_min || c->n_in > r->in_max) {
        if (r->in_min == r->in_max)
            return xpb_shp_fail(c, XPB_INVALID_ARGUMENT, "expected %u input%s, found %u", r->in_min,
                                r->in_min == 1 ? "" : "s", c->n_in);
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT, "expected %u to %u inputs, found %u",
                            r->in_min, r->in_max, c->n_in);
    }
    if (!c->infer && (c->n_out < r->out_min || c->n_out > r->out_max)) {
        if (r->out_min == r->out_max)
            return xpb_shp_fail(c, XPB_INVALID_ARGUMENT, "expected %u output%s, found %u",
                                r->out_min, r->out_min == 1 ? "" : "s", c->n_out);
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT, "expected %u to %u outputs, found %u",
                            r->out_min, r->out_max, c->n_out);
    }
    for (uint32_t i = 0; i < c->n_in; i++) {
        if (!c->in[i]) {
            if (i < 16 && (r->optional_in & XPB_SHP_BIT(i)))
                continue;
            return xpb_shp_fail(c, XPB_INVALID_ARGUMENT, "input %u (%s) is missing", i,
                                i < XPB_SHP_NAMES && r->in_names[i] ? r->in_names[i] : "?");
        }
        if ((st = xpb_shp_tensor(c, XPB_SHP_IN((int)i))) != XPB_OK)
            return st;
    }
    if (c->infer) {
        /* the dtype of output 0 by the rule; its shape is written by the rule's assertions */
        c->infer->dtype = (r->out_any & 1u)   ? c->in[0]->dtype
                          : (r->out_i32 & 1u) ? (uint32_t)XPB_DTYPE_I32
                                              : (uint32_t)XPB_DTYPE_F32;
        c->infer->ndim = 0;
        st = r->shapes(c);
        if (st == XPB_OK && c->infer->ndim == 0)
            return xpb_shp_fail(c, XPB_INTERNAL, "the rule of this op fixed no output shape");
        return st;
    }
    for (uint32_t j = 0; j < c->n_out; j++) {
        if (!c->out[j]) {
            if (r->optional_out & XPB_SHP_BIT(j))
                continue;
            return xpb_shp_fail(c, XPB_INVALID_ARGUMENT, "output %u (%s) is missing", j,
                                j < XPB_SHP_NAMES && r->out_names[j] ? r->out_names[j] : "?");
        }
        if ((st = xpb_shp_tensor(c, XPB_SHP_OUT((int)j))) != XPB_OK)
            return st;
    }
    return r->shapes(c);
}

/* Starts a check of `op` with the prefix "<OP> (layer '<layer>'): ". */
static inline void xpb_shp_begin(struct xpb_shp_check *c, const xpb_op *op, char *msg, size_t size)
{
    memset(c, 0, sizeof *c);
    c->op = op;
    c->ext = 1; /* the caller's own op: a complete xpb_op of these headers */
    c->msg = msg;
    c->size = size;
    if (msg && size)
        msg[0] = '\0';
    snprintf(c->prefix, sizeof c->prefix, "%s (layer '%s'): ", xpb_op_name(op->kind),
             xpb_shp_layer(op));
}

/* ---- the API ---- */

/* Checks op `op` against the rules of docs/ops.md, given the descriptors of its tensors:
 * in[i] for i < op->n_inputs and out[j] for j < op->n_outputs (NULL: absent; an output that
 * may be "not wanted" may be NULL). `op` must be a complete xpb_op of these headers (the
 * caller's own, or one of a program whose op_stride covers it: xpb_op_validate checks the ops of
 * any host's program). XPB_OK, or XPB_INVALID_ARGUMENT (XPB_UNSUPPORTED
 * for an op kind these headers do not know) with "<OP> (layer '<layer>'): ..." in msg. */
static inline xpb_status xpb_op_check(const xpb_op *op, const xpb_tensor_desc *const *in,
                                      const xpb_tensor_desc *const *out, char *msg, size_t size)
{
    struct xpb_shp_check c;
    xpb_shp_begin(&c, op, msg, size);
    if (op->n_inputs > XPB_SHP_MAX_IN || op->n_outputs > XPB_SHP_MAX_OUT)
        return xpb_shp_fail(&c, XPB_INVALID_ARGUMENT,
                            "n_inputs %u and n_outputs %u, at most %d and %d", op->n_inputs,
                            op->n_outputs, XPB_SHP_MAX_IN, XPB_SHP_MAX_OUT);
    c.n_in = op->n_inputs;
    c.n_out = op->n_outputs;
    for (uint32_t i = 0; i < c.n_in; i++)
        c.in[i] = in ? in[i] : NULL;
    for (uint32_t j = 0; j < c.n_out; j++)
        c.out[j] = out ? out[j] : NULL;
    return xpb_shp_run(&c);
}

/* Infers dtype, ndim and dims of the first output (y, loss) of forward op `op` (kind,
 * n_inputs, attrs, layer) from its inputs in[0 .. op->n_inputs), checking the inputs and
 * attributes as xpb_op_check does; *out's other members are left alone. The host's builder
 * uses it for every op a model applies. XPB_INVALID_ARGUMENT also for an op whose outputs do
 * not follow from its inputs (backward ops, RESHAPE, FILL, the updates). */
static inline xpb_status xpb_op_infer_shape(xpb_tensor_desc *out, const xpb_op *op,
                                            const xpb_tensor_desc *const *in, char *msg,
                                            size_t size)
{
    struct xpb_shp_check c;
    xpb_shp_begin(&c, op, msg, size);
    const struct xpb_shp_rule *r = xpb_shp_rule_of(op->kind);
    if (!r)
        return xpb_shp_unknown_kind(&c, op->kind);
    if (!r->infer)
        return xpb_shp_fail(&c, XPB_INVALID_ARGUMENT,
                            "not a forward op: its outputs do not follow from its inputs");
    if (op->n_inputs > XPB_SHP_MAX_IN)
        return xpb_shp_fail(&c, XPB_INVALID_ARGUMENT, "n_inputs %u, at most %d", op->n_inputs,
                            XPB_SHP_MAX_IN);
    c.n_in = op->n_inputs;
    for (uint32_t i = 0; i < c.n_in; i++)
        c.in[i] = in ? in[i] : NULL;
    c.infer = out;
    c.out[0] = out;
    c.n_out = 1;
    return xpb_shp_run(&c);
}

/* Checks op `op_index` of program `p` as a backend's compile should: the op exists, its tensor
 * ids exist, no tensor is both its input and its output, its kind is one these headers know and
 * it sets no attribute bit they do not know (XPB_UNSUPPORTED, naming the op by
 * xpb_op_kind_name and the bits: a later op set's op or attribute), then xpb_op_check. Works on
 * programs of ABI 1.0 hosts (no 1.1 op members). Messages read "op <i> <OP> (layer
 * '<layer>'): ...". The program's header must be sound (xpb_program_validate checks it). */
static inline xpb_status xpb_op_validate(const xpb_program *p, uint32_t op_index, char *msg,
                                         size_t size)
{
    struct xpb_shp_check c;
    memset(&c, 0, sizeof c);
    c.msg = msg;
    c.size = size;
    if (msg && size)
        msg[0] = '\0';
    if (op_index >= p->n_ops) {
        snprintf(c.prefix, sizeof c.prefix, "program: ");
        return xpb_shp_fail(&c, XPB_INVALID_ARGUMENT,
                            "op %u does not exist (the program has %u ops)", op_index, p->n_ops);
    }
    const xpb_op *op = xpb_program_op(p, op_index);
    c.op = op;
    c.ext = XPB_OP_HAS(p, reserved3_);
    snprintf(c.prefix, sizeof c.prefix, "op %u %s (layer '%s'): ", op_index,
             xpb_op_kind_name(p, op), xpb_shp_layer(op));
    if (!xpb_shp_rule_of(op->kind))
        return xpb_shp_unknown_kind(&c, op->kind);
    uint64_t unknown = xpb_op_unknown_attrs(p, op);
    if (unknown) {
        char bits[160] = "";
        size_t used = 0;
        int count = 0;
        for (int b = 0; b < 64 && used < sizeof bits; b++)
            if (unknown & (1ull << b)) {
                int n = snprintf(bits + used, sizeof bits - used, count ? ", %d" : "%d", b);
                used += n > 0 ? (size_t)n : 0;
                count++;
            }
        return xpb_shp_fail(&c, XPB_UNSUPPORTED,
                            "not implemented: it sets attribute bit%s %s, which op set %d does "
                            "not define (an attribute of a later op set changes what the op "
                            "computes)",
                            count > 1 ? "s" : "", bits, XPB_OPSET_VERSION);
    }
    if (XPB_OP_HAS(p, bucket) && op->bucket != 0 && op->kind != XPB_OP_ALL_REDUCE)
        return xpb_shp_fail(&c, XPB_INVALID_ARGUMENT,
                            "attribute bucket (%u) belongs to ALL_REDUCE only, expected 0",
                            op->bucket);
    int has_all = XPB_OP_HAS(p, inputs_all);
    if ((!has_all || !op->inputs_all) && op->n_inputs > XPB_MAX_OP_INPUTS)
        return xpb_shp_fail(&c, XPB_INVALID_ARGUMENT,
                            "n_inputs %u, but no inputs_all and only %d inline inputs",
                            op->n_inputs, XPB_MAX_OP_INPUTS);
    if ((!has_all || !op->outputs_all) && op->n_outputs > XPB_MAX_OP_OUTPUTS)
        return xpb_shp_fail(&c, XPB_INVALID_ARGUMENT,
                            "n_outputs %u, but no outputs_all and only %d inline outputs",
                            op->n_outputs, XPB_MAX_OP_OUTPUTS);
    if (op->n_inputs > XPB_SHP_MAX_IN || op->n_outputs > XPB_SHP_MAX_OUT)
        return xpb_shp_fail(&c, XPB_INVALID_ARGUMENT,
                            "n_inputs %u and n_outputs %u, at most %d and %d", op->n_inputs,
                            op->n_outputs, XPB_SHP_MAX_IN, XPB_SHP_MAX_OUT);
    c.n_in = op->n_inputs;
    c.n_out = op->n_outputs;
    for (uint32_t k = 0; k < c.n_in + c.n_out; k++) {
        int is_out = k >= c.n_in;
        uint32_t slot = is_out ? k - c.n_in : k;
        uint32_t id = is_out ? xpb_op_output(p, op, slot) : xpb_op_input(p, op, slot);
        if (id == XPB_NO_TENSOR)
            continue; /* absent: the rule says whether that is allowed */
        if (id >= p->n_tensors)
            return xpb_shp_fail(&c, XPB_INVALID_ARGUMENT,
                                "%s %u is tensor %u, the program has %u tensors",
                                is_out ? "output" : "input", slot, id, p->n_tensors);
        if (is_out)
            c.out[slot] = xpb_program_tensor(p, id);
        else
            c.in[slot] = xpb_program_tensor(p, id);
    }
    for (uint32_t i = 0; i < c.n_in; i++)
        for (uint32_t j = 0; j < c.n_out; j++) {
            uint32_t in_id = xpb_op_input(p, op, i);
            if (in_id != XPB_NO_TENSOR && in_id == xpb_op_output(p, op, j)) {
                const xpb_tensor_desc *t = xpb_program_tensor(p, in_id);
                return xpb_shp_fail(&c, XPB_INVALID_ARGUMENT,
                                    "tensor %u \"%s\" is both input %u and output %u (an op "
                                    "never writes what it reads, docs/ops.md)",
                                    in_id, t->name ? t->name : "", i, j);
            }
        }
    return xpb_shp_run(&c);
}

/* Whether a phase of `p` starts at op `i`. */
static inline int xpb_shp_phase_starts_at(const xpb_program *p, uint32_t i)
{
    for (uint32_t k = 0; k < p->n_phases; k++)
        if (xpb_program_phase(p, k)->first_op == i)
            return 1;
    return 0;
}

/* The rule of ALL_REDUCE's bucket attribute (op set 2): the ops of one non-zero bucket are
 * consecutive and in one phase, so that a backend may reduce them as one collective when it
 * reaches the last of them. Programs whose ops lack the member pass. */
static inline xpb_status xpb_shp_buckets(const xpb_program *p, char *msg, size_t size)
{
    if (!XPB_OP_HAS(p, bucket))
        return XPB_OK;
    for (uint32_t i = 0; i < p->n_ops; i++) {
        const xpb_op *op = xpb_program_op(p, i);
        if (op->bucket == 0)
            continue;
        const xpb_op *prev = i > 0 ? xpb_program_op(p, i - 1) : NULL;
        if (prev && prev->bucket == op->bucket && !xpb_shp_phase_starts_at(p, i))
            continue; /* the bucket goes on */
        for (uint32_t j = 0; j < i; j++)
            if (xpb_program_op(p, j)->bucket == op->bucket) {
                struct xpb_shp_check c;
                memset(&c, 0, sizeof c);
                c.msg = msg;
                c.size = size;
                snprintf(c.prefix, sizeof c.prefix, "op %u %s (layer '%s'): ", i,
                         xpb_op_kind_name(p, op), xpb_shp_layer(op));
                return xpb_shp_fail(&c, XPB_INVALID_ARGUMENT,
                                    "bucket %u was already used by op %u: the ops of a bucket "
                                    "must be consecutive and in one phase",
                                    op->bucket, j);
            }
    }
    return XPB_OK;
}

/* Checks a whole program before a backend compiles it: a header at least as large as ABI
 * 1.0's, strides at least ABI 1.0's element sizes, arrays present, every tensor (a dtype these
 * headers know, else XPB_UNSUPPORTED; 1..XPB_MAX_DIMS dims, each >= 1, below 2^40 elements),
 * every phase (walked with xpb_program_phase) inside the program's ops, then every op with
 * xpb_op_validate, then the ALL_REDUCE buckets (consecutive, in one phase). Accepts what ABI 1.0
 * hosts write (no phase_stride, no 1.1 op members). XPB_OK, or the first problem in msg ("tensor 3
 * 'x': ...", "op 5 RELU (layer 'r'): ..."). */
static inline xpb_status xpb_program_validate(const xpb_program *p, char *msg, size_t size)
{
    struct xpb_shp_check c;
    memset(&c, 0, sizeof c);
    c.msg = msg;
    c.size = size;
    if (msg && size)
        msg[0] = '\0';
    snprintf(c.prefix, sizeof c.prefix, "program: ");
    if (!p)
        return xpb_shp_fail(&c, XPB_INVALID_ARGUMENT, "NULL");
    const size_t min_header = offsetof(xpb_program, phase_stride);
    const size_t min_op = offsetof(xpb_op, opset);
    if (p->struct_size < min_header)
        return xpb_shp_fail(&c, XPB_INVALID_ARGUMENT,
                            "struct_size %zu is smaller than ABI 1.0's %zu", p->struct_size,
                            min_header);
    if (p->tensor_stride < sizeof(xpb_tensor_desc) || p->op_stride < min_op)
        return xpb_shp_fail(&c, XPB_INVALID_ARGUMENT,
                            "tensor_stride %zu / op_stride %zu smaller than ABI 1.0's %zu / %zu",
                            p->tensor_stride, p->op_stride, sizeof(xpb_tensor_desc), min_op);
    if ((p->n_tensors && !p->tensors) || (p->n_ops && !p->ops) || (p->n_phases && !p->phases))
        return xpb_shp_fail(&c, XPB_INVALID_ARGUMENT,
                            "%u tensors, %u ops and %u phases, but a NULL array", p->n_tensors,
                            p->n_ops, p->n_phases);
    for (uint32_t i = 0; i < p->n_tensors; i++) {
        const xpb_tensor_desc *t = xpb_program_tensor(p, i);
        char dims[96];
        snprintf(c.prefix, sizeof c.prefix, "tensor %u '%s': ", i, t->name ? t->name : "");
        if (t->dtype != XPB_DTYPE_F32 && t->dtype != XPB_DTYPE_I32)
            return xpb_shp_fail(&c, XPB_UNSUPPORTED, "unknown dtype %u (F32 and I32 are known)",
                                t->dtype);
        if (t->ndim < 1 || t->ndim > XPB_MAX_DIMS)
            return xpb_shp_fail(&c, XPB_INVALID_ARGUMENT, "ndim %u outside 1..%d", t->ndim,
                                XPB_MAX_DIMS);
        int64_t numel = 1;
        for (uint32_t d = 0; d < t->ndim; d++) {
            if (t->dims[d] < 1 || t->dims[d] > XPB_SHP_MAX_NUMEL / numel)
                return xpb_shp_fail(&c, XPB_INVALID_ARGUMENT,
                                    "dims %s: dim %u must be >= 1, and the tensor below 2^40 "
                                    "elements",
                                    xpb_shape_str(dims, sizeof dims, t->ndim, t->dims), d);
            numel *= t->dims[d];
        }
    }
    for (uint32_t i = 0; i < p->n_phases; i++) {
        const xpb_phase *ph = xpb_program_phase(p, i);
        snprintf(c.prefix, sizeof c.prefix, "phase %u '%s': ", i, ph->name ? ph->name : "");
        if (ph->first_op > p->n_ops || ph->n_ops > p->n_ops - ph->first_op)
            return xpb_shp_fail(&c, XPB_INVALID_ARGUMENT,
                                "first op %u and %u ops go beyond the program's %u ops",
                                ph->first_op, ph->n_ops, p->n_ops);
    }
    for (uint32_t i = 0; i < p->n_ops; i++) {
        xpb_status st = xpb_op_validate(p, i, msg, size);
        if (st != XPB_OK)
            return st;
    }
    return xpb_shp_buckets(p, msg, size);
}

#undef XPB_SHP_PRINTF
#undef XPB_SHP_IN
#undef XPB_SHP_OUT
#undef XPB_SHP_NONE
#undef XPB_SHP_BIT
#undef XPB_SHP_MAX_NUMEL

#ifdef __cplusplus
}
#endif
#endif
