/* xpubench public SDK: the model interface (the ABI version is plugin.h's).
 *
 * A model plugin owns architecture and nothing else. Its descriptor (plugin.h) points at a
 * `static const xpb_model_api`; the host calls build() with a builder, and the model declares
 * its inputs, parameters (shape, initialiser, group), layers, losses and training phases.
 * It never touches memory, devices or gradients: the host derives the training program by
 * automatic differentiation, initialises the weights from a seeded RNG and feeds the data.
 *
 * Values are small integer handles into the graph being built; 0 (XPB_NO_VALUE) is "none".
 * Every builder function returns a status and on failure leaves a message (naming the layer)
 * for last_error; a model just returns that status up. */
#ifndef XPUBENCH_MODEL_H
#define XPUBENCH_MODEL_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "plugin.h"
#include "program.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct xpb_builder xpb_builder; /* opaque, owned by the host, valid during build() */
typedef uint32_t xpb_value;
#define XPB_NO_VALUE 0u

typedef enum xpb_init_kind {
    XPB_INIT_ZEROS = 1,
    XPB_INIT_ONES = 2,
    XPB_INIT_CONST = 3,   /* a */
    XPB_INIT_UNIFORM = 4, /* U(a, b) */
    XPB_INIT_NORMAL = 5,  /* N(mean a, std b) */
} xpb_init_kind;

typedef struct xpb_init {
    uint32_t kind; /* xpb_init_kind */
    double a, b;
} xpb_init;

/* A data input of the model, fed by the host every step. Synthetic data is drawn uniformly
 * from [lo, hi) for f32 and from the integers lo..hi inclusive for i32 (labels). */
typedef struct xpb_input_desc {
    const char *name; /* "images", "labels", "real_A" ... */
    uint32_t dtype;   /* xpb_dtype */
    uint32_t ndim;
    int64_t dims[XPB_MAX_DIMS]; /* dims[0] is the batch */
    double lo, hi;
} xpb_input_desc;

typedef struct xpb_param_desc {
    const char *name; /* unique, "conv1.weight" */
    uint32_t ndim;
    int64_t dims[XPB_MAX_DIMS];
    xpb_init init;
    uint32_t group;     /* parameter group (from group()); 0 = the default group */
    uint32_t trainable; /* 0 for state such as batch-norm running statistics */
} xpb_param_desc;

typedef enum xpb_optimizer_kind {
    XPB_OPTIMIZER_SGD = 1,
    XPB_OPTIMIZER_ADAM = 2,
    /* ABI 1.3 (op set 3): Adam with decoupled weight decay (torch.optim.AdamW): the parameter
     * is multiplied by 1 - lr * weight_decay before the Adam step. */
    XPB_OPTIMIZER_ADAMW = 3,
} xpb_optimizer_kind;

typedef struct xpb_optimizer_desc {
    uint32_t kind; /* xpb_optimizer_kind */
    double lr;
    double momentum; /* SGD */
    double weight_decay;
    double beta1, beta2, eps; /* Adam, AdamW */
} xpb_optimizer_desc;

/* The attributes of op set 3 a model sets on an op (ABI 1.3, builder op3): they become the
 * op's members of the same names (program.h, docs/ops.md). Zero means "not set". The host
 * reads only what struct_size covers. */
typedef struct xpb_op_attrs3 {
    size_t struct_size;
    uint32_t transpose;    /* XPB_TRANSPOSE_A | XPB_TRANSPOSE_B (MATMUL, BATCHED_MATMUL) */
    uint8_t perm[4];       /* PERMUTE */
    uint32_t causal;       /* SOFTMAX */
    uint32_t approximate;  /* GELU: XPB_GELU_TANH */
    uint32_t index_flags;  /* XPB_INDEX_PADDING (EMBEDDING), XPB_INDEX_IGNORE (SOFTMAX_XENT) */
    int32_t padding_idx;   /* EMBEDDING */
    int32_t ignore_index;  /* SOFTMAX_XENT */
    float label_smoothing; /* SOFTMAX_XENT */
} xpb_op_attrs3;

/* Declared parameters of a model (besides batch size), shown by `xpubench info` and set from
 * scenarios (`variant: imagenet`, `params: {dropout: true}`). */
typedef enum xpb_model_param_type {
    XPB_MPARAM_STRING = 1, /* `allowed` is "a|b|c" */
    XPB_MPARAM_INT = 2,    /* `allowed` is "min..max" or NULL */
    XPB_MPARAM_FLOAT = 3,  /* `allowed` is "min..max" or NULL */
    XPB_MPARAM_BOOL = 4,
} xpb_model_param_type;

typedef struct xpb_model_param {
    const char *name;          /* [a-z0-9_]+ ; "variant" is the variant */
    uint32_t type;             /* xpb_model_param_type */
    const char *default_value; /* as it would be written in YAML */
    const char *allowed;       /* see xpb_model_param_type; NULL = anything of the type */
    const char *help;          /* one line */
} xpb_model_param;

/* Host functions a model calls while it builds. All pointers are owned by the host. */
typedef struct xpb_builder_api {
    size_t struct_size;
    /* Message of the last failure; owned by the builder, valid until the next call. */
    const char *(*last_error)(const xpb_builder *b);

    /* The run's batch size. */
    uint32_t (*batch_size)(const xpb_builder *b);
    /* Resolved values of the model's declared parameters (defaults or what the scenario set).
     * A string is owned by the builder and valid until build() returns. */
    xpb_status (*param_string)(const char **out, const xpb_builder *b, const char *name);
    xpb_status (*param_int)(int64_t *out, const xpb_builder *b, const char *name);
    xpb_status (*param_float)(double *out, const xpb_builder *b, const char *name);
    xpb_status (*param_bool)(int *out, const xpb_builder *b, const char *name);

    xpb_status (*input)(xpb_value *out, xpb_builder *b, const xpb_input_desc *desc);
    xpb_status (*parameter)(xpb_value *out, xpb_builder *b, const xpb_param_desc *desc);
    /* A constant tensor of `value` (LSGAN targets); not trainable. */
    xpb_status (*constant)(xpb_value *out, xpb_builder *b, const char *name, uint32_t ndim,
                           const int64_t *dims, double value);

    /* Applies a forward op (a forward kind of xpb_op_kind: CONV2D, CONV_T2D, LINEAR,
     * BATCHNORM_TRAIN (lowered to BATCHNORM_INFER for inference), INSTANCENORM, RELU,
     * LEAKY_RELU, TANH, MAXPOOL, AVGPOOL, GLOBAL_AVGPOOL, ADD, REFLECTION_PAD, SOFTMAX_XENT,
     * MSE_LOSS, L1_LOSS, DROPOUT) to `inputs`, infers the output shape and stores the primary
     * output in *out. `layer` names the layer in messages, dumps and profiles. */
    xpb_status (*op)(xpb_value *out, xpb_builder *b, const char *layer, uint32_t kind,
                     const xpb_value *inputs, uint32_t n_inputs, const xpb_op_attrs *attrs);
    /* Same values, new shape (same element count): flatten and friends. */
    xpb_status (*reshape)(xpb_value *out, xpb_builder *b, const char *layer, xpb_value x,
                          uint32_t ndim, const int64_t *dims);
    /* Same value, but no gradient flows back through it (CycleGAN's detached fakes). */
    xpb_status (*stop_gradient)(xpb_value *out, xpb_builder *b, xpb_value x);
    /* Marks a value as a model output (inference result). */
    xpb_status (*output)(xpb_builder *b, const char *name, xpb_value v);

    /* Parameter groups and training phases. A model with no phase gets one phase "train"
     * over group 0 with the default optimizer (SGD lr 0.01, momentum 0.9). */
    xpb_status (*group)(uint32_t *out, xpb_builder *b, const char *name);
    xpb_status (*phase)(uint32_t *out, xpb_builder *b, const char *name, uint32_t group,
                        const xpb_optimizer_desc *optimizer);
    /* Adds weight * loss to the objective of `phase` (a loss value is a scalar [1]). */
    xpb_status (*loss)(xpb_builder *b, uint32_t phase, xpb_value loss, double weight);

    /* ---- ABI 1.1 ---- */
    /* Refuses the build in the model's own words: `message` (copied; not NULL) becomes the
     * builder's last error, shown to the user after the model's name, and `status` (not
     * XPB_OK; XPB_UNSUPPORTED for "this model cannot do that", XPB_INVALID_ARGUMENT for a bad
     * parameter) is returned, so that a model writes `return api->fail(b, st, "...");`.
     * Use xpb_model_fail(), which formats and works on an ABI 1.0 host too. */
    xpb_status (*fail)(xpb_builder *b, xpb_status status, const char *message);

    /* ---- ABI 1.3 (op set 3; check XPB_HAS_MEMBER before calling) ---- */
    /* Like op(), for every forward kind including op set 3's (MATMUL, BATCHED_MATMUL, PERMUTE,
     * ADD_BROADCAST, MUL, SCALE, SOFTMAX, LAYER_NORM, GELU, EMBEDDING, LSTM), with the op-set-3
     * attributes in `attrs3` (may be NULL). Also: LINEAR on x[B, S, I] (applied to every
     * position), SOFTMAX_XENT on logits [B, S, V] with labels [B, S] (a token loss: the mean
     * over the positions not ignored), DROPOUT on any rank. For LSTM the value returned is y
     * (every hidden state); h_n and c_n are not values of the graph. */
    xpb_status (*op3)(xpb_value *out, xpb_builder *b, const char *layer, uint32_t kind,
                      const xpb_value *inputs, uint32_t n_inputs, const xpb_op_attrs *attrs,
                      const xpb_op_attrs3 *attrs3);
    /* A constant tensor holding `data` (count = product of dims elements of `dtype`, copied):
     * sinusoidal positions, or the I32 positions 0 .. S-1 that index a learned position table. */
    xpb_status (*constant_data)(xpb_value *out, xpb_builder *b, const char *name, uint32_t dtype,
                                uint32_t ndim, const int64_t *dims, const void *data);
    /* Clips the gradients of `phase` by their global norm before its updates, as
     * torch.nn.utils.clip_grad_norm_(params, max_norm) does (after the gradients are averaged
     * over the ranks of a data-parallel run). */
    xpb_status (*clip_grad_norm)(xpb_builder *b, uint32_t phase, double max_norm);
} xpb_builder_api;

typedef struct xpb_model_api {
    size_t struct_size;
    const xpb_model_param *params; /* static array */
    uint32_t n_params;
    /* Declares the model into `b`. Returns XPB_OK or the status of the failing builder call. */
    xpb_status (*build)(xpb_builder *b, const xpb_builder_api *api);
} xpb_model_api;

/* ---- Convenience layers for model authors (header-only; they only call the builder). ---- */

/* Formats a refusal and hands it to the builder's fail() (a host of ABI 1.0 has none: the
 * status alone is returned there). Returns `status`. */
static inline xpb_status xpb_model_fail(xpb_builder *b, const xpb_builder_api *api,
                                        xpb_status status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline xpb_status xpb_model_fail(xpb_builder *b, const xpb_builder_api *api,
                                        xpb_status status, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* (not named `fail`: test frameworks such as CMocka define a fail() macro) */
    xpb_status (*fail_fn)(xpb_builder *, xpb_status, const char *) =
        XPB_MEMBER_OR(api, xpb_builder_api, fail, NULL);
    return fail_fn ? fail_fn(b, status, msg) : status;
}

/* PyTorch's default initialisation of Conv2d/Linear: weight kaiming_uniform(a=sqrt(5)), i.e.
 * U(-1/sqrt(fan_in), 1/sqrt(fan_in)), and bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)). */
static inline xpb_init xpb_init_pytorch_default(int64_t fan_in)
{
    double bound = 1.0 / sqrt((double)fan_in);
    xpb_init init = {XPB_INIT_UNIFORM, -bound, bound};
    return init;
}

typedef struct xpb_layer_opts {
    uint32_t group; /* parameter group of the layer's weights */
    int bias;       /* 1: the layer has a bias */
    /* initialisers; kind 0 means PyTorch's default for the layer */
    xpb_init weight_init;
    xpb_init bias_init;
} xpb_layer_opts;

/* Declares `<layer>.weight` / `<layer>.bias` and applies CONV2D (transposed: CONV_T2D, weight
 * [in, out, k, k]). `attrs` carries stride, pad, dilation, output_padding. */
static inline xpb_status xpb_layer_conv(xpb_value *out, xpb_builder *b, const xpb_builder_api *api,
                                        const char *layer, xpb_value x, int64_t in_c, int64_t out_c,
                                        int64_t k, int transposed, const xpb_op_attrs *attrs,
                                        const xpb_layer_opts *o)
{
    char name[256];
    xpb_value w, bias = XPB_NO_VALUE;
    xpb_status st;
    /* PyTorch computes fan_in from weight dim 1: in_c for conv, out_c for transposed conv. */
    int64_t fan_in = (transposed ? out_c : in_c) * k * k;
    xpb_param_desc pw = {name,
                         4,
                         {transposed ? in_c : out_c, transposed ? out_c : in_c, k, k},
                         o->weight_init.kind ? o->weight_init : xpb_init_pytorch_default(fan_in),
                         o->group,
                         1};
    snprintf(name, sizeof name, "%s.weight", layer);
    if ((st = api->parameter(&w, b, &pw)) != XPB_OK)
        return st;
    if (o->bias) {
        xpb_param_desc pb = {name,
                             1,
                             {out_c, 1, 1, 1},
                             o->bias_init.kind ? o->bias_init : xpb_init_pytorch_default(fan_in),
                             o->group,
                             1};
        snprintf(name, sizeof name, "%s.bias", layer);
        if ((st = api->parameter(&bias, b, &pb)) != XPB_OK)
            return st;
    }
    xpb_value in[3] = {x, w, bias};
    return api->op(out, b, layer, transposed ? XPB_OP_CONV_T2D : XPB_OP_CONV2D, in,
                   o->bias ? 3u : 2u, attrs);
}

/* Declares `<layer>.weight` [out, in] / `<layer>.bias` and applies LINEAR. */
static inline xpb_status xpb_layer_linear(xpb_value *out, xpb_builder *b,
                                          const xpb_builder_api *api, const char *layer,
                                          xpb_value x, int64_t in_f, int64_t out_f,
                                          const xpb_layer_opts *o)
{
    char name[256];
    xpb_value w, bias = XPB_NO_VALUE;
    xpb_status st;
    xpb_param_desc pw = {name,
                         2,
                         {out_f, in_f, 1, 1},
                         o->weight_init.kind ? o->weight_init : xpb_init_pytorch_default(in_f),
                         o->group,
                         1};
    snprintf(name, sizeof name, "%s.weight", layer);
    if ((st = api->parameter(&w, b, &pw)) != XPB_OK)
        return st;
    if (o->bias) {
        xpb_param_desc pb = {name,
                             1,
                             {out_f, 1, 1, 1},
                             o->bias_init.kind ? o->bias_init : xpb_init_pytorch_default(in_f),
                             o->group,
                             1};
        snprintf(name, sizeof name, "%s.bias", layer);
        if ((st = api->parameter(&bias, b, &pb)) != XPB_OK)
            return st;
    }
    xpb_value in[3] = {x, w, bias};
    return api->op(out, b, layer, XPB_OP_LINEAR, in, o->bias ? 3u : 2u, NULL);
}

/* Declares `<layer>.weight` (ones), `<layer>.bias` (zeros), `<layer>.running_mean` (zeros)
 * and `<layer>.running_var` (ones), PyTorch's BatchNorm2d defaults (eps 1e-5, momentum 0.1),
 * and applies BATCHNORM_TRAIN. */
static inline xpb_status xpb_layer_batchnorm(xpb_value *out, xpb_builder *b,
                                             const xpb_builder_api *api, const char *layer,
                                             xpb_value x, int64_t channels, uint32_t group)
{
    static const char *const suffix[4] = {"weight", "bias", "running_mean", "running_var"};
    static const uint32_t init[4] = {XPB_INIT_ONES, XPB_INIT_ZEROS, XPB_INIT_ZEROS, XPB_INIT_ONES};
    char name[256];
    xpb_value in[5] = {x, 0, 0, 0, 0};
    for (int i = 0; i < 4; i++) {
        xpb_param_desc p = {name, 1, {channels, 1, 1, 1}, {init[i], 0, 0}, group, i < 2};
        snprintf(name, sizeof name, "%s.%s", layer, suffix[i]);
        xpb_status st = api->parameter(&in[i + 1], b, &p);
        if (st != XPB_OK)
            return st;
    }
    xpb_op_attrs a = {0};
    a.eps = 1e-5f;
    a.momentum = 0.1f;
    return api->op(out, b, layer, XPB_OP_BATCHNORM_TRAIN, in, 5, &a);
}

/* The ending of a classifier (docs/workloads.md): `logits` becomes the model's output "logits",
 * and softmax cross-entropy against `labels` (layer "loss") its only loss, weight 1. */
static inline xpb_status xpb_layer_xent_head(xpb_builder *b, const xpb_builder_api *api,
                                             xpb_value logits, xpb_value labels)
{
    xpb_value loss, in[2] = {logits, labels};
    xpb_status st = api->output(b, "logits", logits);
    if (st == XPB_OK)
        st = api->op(&loss, b, "loss", XPB_OP_SOFTMAX_XENT, in, 2, NULL);
    if (st == XPB_OK)
        st = api->loss(b, 0, loss, 1.0);
    return st;
}

/* A one-input op with attributes (NULL for none). */
static inline xpb_status xpb_layer_unary(xpb_value *out, xpb_builder *b, const xpb_builder_api *api,
                                         const char *layer, uint32_t kind, xpb_value x,
                                         const xpb_op_attrs *attrs)
{
    return api->op(out, b, layer, kind, &x, 1, attrs);
}

#ifdef __cplusplus
}
#endif
#endif
