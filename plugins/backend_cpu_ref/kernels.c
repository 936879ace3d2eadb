/* The reference backend's op table: for every op kind of op set v1, its kernel, how many
 * inputs and outputs it takes, their dtypes and names, and the function that checks their
 * shapes and attributes. ref_check_op runs at compile time, so that kernels can trust every
 * shape they see; its messages name the op, its layer, the tensor, and the expected and
 * found shapes. */
#include <stdarg.h>
#include <stdio.h>

#include "ref.h"

typedef struct check {
    const xpb_op *op;
    const xpb_tensor_desc *const *in;
    const xpb_tensor_desc *const *out;
    char *err;
    size_t err_size;
    const struct op_rule *rule;
} check;

typedef struct op_rule {
    ref_kernel_fn kernel;
    uint8_t in_min, in_max, out_min, out_max;
    uint8_t optional_out;    /* bit j: output j may be absent (a NULL desc) */
    uint8_t in_i32, out_i32; /* bit i: the tensor is I32 */
    uint8_t in_any, out_any; /* bit i: the tensor may be F32 or I32 */
    const char *in_names[XPB_MAX_OP_INPUTS];
    const char *out_names[XPB_MAX_OP_OUTPUTS];
    xpb_status (*shapes)(const check *c);
} op_rule;

/* A tensor of the op being checked: an input (out == 0) or an output (out == 1). */
typedef struct tref {
    int out;
    int index;
} tref;

static const tref NO_TREF = {-1, -1};

/* ---- messages ---- */

/* Writes "<OP> (layer <layer>): <message>" into c->err and returns `status`. */
static xpb_status fail(const check *c, xpb_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static xpb_status fail(const check *c, xpb_status status, const char *fmt, ...)
{
    if (!c->err || c->err_size == 0)
        return status;
    int n = snprintf(c->err, c->err_size, "%s (layer %s): ", xpb_op_name(c->op->kind),
                     c->op->layer ? c->op->layer : "?");
    if (n >= 0 && (size_t)n < c->err_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->err + n, c->err_size - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return status;
}

/* "[1, 3, 5, 7]" into buf (the caller owns buf); returns buf. */
static const char *shape_str(char *buf, size_t size, uint32_t ndim, const int64_t *dims)
{
    size_t used = 0;
    buf[0] = '\0';
    used += (size_t)snprintf(buf, size, "[");
    for (uint32_t k = 0; k < ndim && used < size; k++)
        used +=
            (size_t)snprintf(buf + used, size - used, "%s%lld", k ? ", " : "", (long long)dims[k]);
    if (used < size)
        snprintf(buf + used, size - used, "]");
    return buf;
}

/* ---- access to the op's tensors ---- */

static const xpb_tensor_desc *desc(const check *c, tref t)
{
    if (t.index < 0)
        return NULL;
    return t.out ? c->out[t.index] : c->in[t.index];
}

static int present(const check *c, tref t)
{
    if (t.index < 0)
        return 0;
    return t.out ? (uint32_t)t.index < c->op->n_outputs && c->out[t.index] != NULL
                 : (uint32_t)t.index < c->op->n_inputs && c->in[t.index] != NULL;
}

/* "input w \"conv1.weight\"" into buf (the caller owns buf); returns buf. */
static const char *label(char *buf, size_t size, const check *c, tref t)
{
    const char *name = t.out ? c->rule->out_names[t.index] : c->rule->in_names[t.index];
    const xpb_tensor_desc *d = desc(c, t);
    snprintf(buf, size, "%s %s \"%s\"", t.out ? "output" : "input", name ? name : "?",
             d && d->name ? d->name : "?");
    return buf;
}

static tref in_t(int i)
{
    tref t = {0, i};
    return t;
}

static tref out_t(int j)
{
    tref t = {1, j};
    return t;
}

/* ---- shape assertions (an absent optional tensor passes) ---- */

static xpb_status expect_shape(const check *c, tref t, uint32_t ndim, const int64_t *dims)
{
    if (!present(c, t))
        return XPB_OK;
    const xpb_tensor_desc *d = desc(c, t);
    int same = d->ndim == ndim;
    for (uint32_t k = 0; same && k < ndim; k++)
        same = d->dims[k] == dims[k];
    if (same)
        return XPB_OK;
    char l[160], want[96], found[96];
    return fail(c, XPB_INVALID_ARGUMENT, "%s must be %s, found %s", label(l, sizeof l, c, t),
                shape_str(want, sizeof want, ndim, dims),
                shape_str(found, sizeof found, d->ndim, d->dims));
}

/* Tensor t has the shape of tensor `like`. */
static xpb_status expect_like(const check *c, tref t, tref like)
{
    const xpb_tensor_desc *l = desc(c, like);
    return expect_shape(c, t, l->ndim, l->dims);
}

/* A 1-D tensor of n elements ([C] per-channel vectors, [1] losses). */
static xpb_status expect_vector(const check *c, tref t, int64_t n)
{
    return expect_shape(c, t, 1, &n);
}

static xpb_status expect_ndim(const check *c, tref t, uint32_t lo, uint32_t hi)
{
    const xpb_tensor_desc *d = desc(c, t);
    if (d->ndim >= lo && d->ndim <= hi)
        return XPB_OK;
    char l[160], found[96];
    if (lo == hi)
        return fail(c, XPB_INVALID_ARGUMENT, "%s must be %u-D, found %s", label(l, sizeof l, c, t),
                    lo, shape_str(found, sizeof found, d->ndim, d->dims));
    return fail(c, XPB_INVALID_ARGUMENT, "%s must be %u-D to %u-D, found %s",
                label(l, sizeof l, c, t), lo, hi, shape_str(found, sizeof found, d->ndim, d->dims));
}

/* Every listed tensor that is present has the shape of the first one. */
static xpb_status expect_all_like(const check *c, const tref *ts, int n)
{
    for (int i = 1; i < n; i++) {
        xpb_status st = expect_like(c, ts[i], ts[0]);
        if (st != XPB_OK)
            return st;
    }
    return XPB_OK;
}

/* An attribute pair (height, width) lies in [lo, hi]. */
static xpb_status expect_pair(const check *c, const char *attr, const int32_t *v, int32_t lo,
                              int32_t hi)
{
    if (v[0] >= lo && v[0] <= hi && v[1] >= lo && v[1] <= hi)
        return XPB_OK;
    if (hi == INT32_MAX)
        return fail(c, XPB_INVALID_ARGUMENT, "attribute %s must be >= %d, found (%d, %d)", attr, lo,
                    v[0], v[1]);
    return fail(c, XPB_INVALID_ARGUMENT, "attribute %s must be in [%d, %d], found (%d, %d)", attr,
                lo, hi, v[0], v[1]);
}

/* ---- convolutions and linear ---- */

/* The tensors of a convolution-like op, whatever its direction: `data` is the tensor on the
 * side whose shape fixes the others (x of the forward op, or dx), `weight` the weight (or
 * dw), `result` the tensor on the other side (y, or dy) and `bias` the bias (or db). */
typedef struct conv_refs {
    tref data, weight, result, bias;
    int transposed;
} conv_refs;

static conv_refs conv_refs_of(uint32_t kind)
{
    conv_refs r = {in_t(0), in_t(1), out_t(0), NO_TREF, 0};
    switch (kind) {
    case XPB_OP_CONV_T2D:
        r.transposed = 1;
        /* fall through */
    case XPB_OP_CONV2D:
    case XPB_OP_LINEAR:
        r.bias = in_t(2); /* x, w, b -> y */
        break;
    case XPB_OP_CONV_T2D_BWD_DATA:
        r.transposed = 1;
        /* fall through */
    case XPB_OP_CONV2D_BWD_DATA:
    case XPB_OP_LINEAR_BWD_DATA:
        r.data = out_t(0); /* dy, w -> dx */
        r.result = in_t(0);
        break;
    case XPB_OP_CONV_T2D_BWD_WEIGHTS:
        r.transposed = 1;
        /* fall through */
    default: /* CONV2D_BWD_WEIGHTS, LINEAR_BWD_WEIGHTS: dy, x -> dw, db */
        r.data = in_t(1);
        r.weight = out_t(0);
        r.result = in_t(0);
        r.bias = out_t(1);
        break;
    }
    return r;
}

/* Output size of a convolution along one dimension, or -1 when the window does not fit. */
static int64_t conv_out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d)
{
    int64_t span = in + 2 * p - d * (k - 1) - 1;
    return span < 0 ? -1 : span / s + 1;
}

/* Output size of a transposed convolution along one dimension (may be < 1: invalid). */
static int64_t conv_t_out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, int64_t op)
{
    return (in - 1) * s - 2 * p + d * (k - 1) + op + 1;
}

static xpb_status check_conv(const check *c)
{
    const xpb_op_attrs *at = &c->op->attrs;
    conv_refs r = conv_refs_of(c->op->kind);
    xpb_status st;
    if ((st = expect_ndim(c, r.data, 4, 4)) != XPB_OK ||
        (st = expect_ndim(c, r.weight, 4, 4)) != XPB_OK)
        return st;
    const xpb_tensor_desc *x = desc(c, r.data), *w = desc(c, r.weight);
    /* weight [K, C, kh, kw] for conv2d, [C, K, kh, kw] for the transposed form */
    int64_t ch = w->dims[r.transposed ? 0 : 1], k = w->dims[r.transposed ? 1 : 0];
    char l[160], lx[160], found[96];
    if (ch != x->dims[1])
        return fail(
            c, XPB_INVALID_ARGUMENT, "%s must have %lld channels in dim %d to match %s, found %s",
            label(l, sizeof l, c, r.weight), (long long)x->dims[1], r.transposed ? 0 : 1,
            label(lx, sizeof lx, c, r.data), shape_str(found, sizeof found, w->ndim, w->dims));
    if ((st = expect_pair(c, "stride", at->stride, 1, INT32_MAX)) != XPB_OK ||
        (st = expect_pair(c, "pad", at->pad, 0, INT32_MAX)) != XPB_OK ||
        (st = expect_pair(c, "dilation", at->dilation, 1, INT32_MAX)) != XPB_OK)
        return st;
    int64_t size[2];
    for (int d = 0; d < 2; d++) {
        int64_t in = x->dims[2 + d], kk = w->dims[2 + d];
        if (r.transposed) {
            /* PyTorch: output padding must be smaller than either stride or dilation */
            int32_t op = at->output_padding[d];
            if (op < 0 || (op >= at->stride[d] && op >= at->dilation[d]))
                return fail(c, XPB_INVALID_ARGUMENT,
                            "attribute output_padding (%d, %d) must be >= 0 and smaller than "
                            "the stride (%d, %d) or the dilation (%d, %d)",
                            at->output_padding[0], at->output_padding[1], at->stride[0],
                            at->stride[1], at->dilation[0], at->dilation[1]);
            size[d] = conv_t_out_size(in, kk, at->stride[d], at->pad[d], at->dilation[d], op);
        } else {
            size[d] = conv_out_size(in, kk, at->stride[d], at->pad[d], at->dilation[d]);
        }
        if (size[d] < 1)
            return fail(c, XPB_INVALID_ARGUMENT,
                        "a %lldx%lld kernel with stride (%d, %d), pad (%d, %d) and dilation "
                        "(%d, %d) gives no output for %s",
                        (long long)w->dims[2], (long long)w->dims[3], at->stride[0], at->stride[1],
                        at->pad[0], at->pad[1], at->dilation[0], at->dilation[1],
                        label(lx, sizeof lx, c, r.data));
    }
    int64_t want[4] = {x->dims[0], k, size[0], size[1]};
    if ((st = expect_shape(c, r.result, 4, want)) != XPB_OK)
        return st;
    return expect_vector(c, r.bias, k);
}

static xpb_status check_linear(const check *c)
{
    conv_refs r = conv_refs_of(c->op->kind);
    xpb_status st;
    if ((st = expect_ndim(c, r.data, 2, 2)) != XPB_OK ||
        (st = expect_ndim(c, r.weight, 2, 2)) != XPB_OK)
        return st;
    const xpb_tensor_desc *x = desc(c, r.data), *w = desc(c, r.weight);
    char l[160], lx[160], found[96];
    if (w->dims[1] != x->dims[1])
        return fail(c, XPB_INVALID_ARGUMENT,
                    "%s must have %lld input features in dim 1 to "
                    "match %s, found %s",
                    label(l, sizeof l, c, r.weight), (long long)x->dims[1],
                    label(lx, sizeof lx, c, r.data),
                    shape_str(found, sizeof found, w->ndim, w->dims));
    int64_t want[2] = {x->dims[0], w->dims[0]};
    if ((st = expect_shape(c, r.result, 2, want)) != XPB_OK)
        return st;
    return expect_vector(c, r.bias, w->dims[0]);
}

/* ---- normalisation ---- */

/* BATCHNORM_TRAIN / _INFER (x, gamma, beta, rm, rv -> y [, ws_mean, ws_var]) and
 * BATCHNORM_BWD (dy, x, gamma, ws_mean, ws_var -> dx, dgamma, dbeta): x is [N,C] or
 * [N,C,H,W]; every per-channel vector is [C]. */
static xpb_status check_batchnorm(const check *c)
{
    int bwd = c->op->kind == XPB_OP_BATCHNORM_BWD;
    tref x = bwd ? in_t(1) : in_t(0);
    xpb_status st = expect_ndim(c, x, 2, 4);
    if (st != XPB_OK)
        return st;
    if (c->op->attrs.eps < 0.0f)
        return fail(c, XPB_INVALID_ARGUMENT, "attribute eps must be >= 0, found %g",
                    (double)c->op->attrs.eps);
    int64_t ch = desc(c, x)->dims[1];
    tref like_x[] = {x, in_t(0), out_t(0)};
    if ((st = expect_all_like(c, like_x, bwd ? 3 : 2)) != XPB_OK)
        return st;
    for (int i = bwd ? 2 : 1; i < 5; i++)
        if ((st = expect_vector(c, in_t(i), ch)) != XPB_OK)
            return st;
    for (int j = 1; j < 3; j++)
        if ((st = expect_vector(c, out_t(j), ch)) != XPB_OK)
            return st;
    return XPB_OK;
}

/* INSTANCENORM (x -> y [, ws_mean, ws_var]) and INSTANCENORM_BWD (dy, x, ws_mean, ws_var ->
 * dx): x is [N,C,H,W] (or [N,C,L]); the statistics are [N,C]. */
static xpb_status check_instancenorm(const check *c)
{
    int bwd = c->op->kind == XPB_OP_INSTANCENORM_BWD;
    tref x = bwd ? in_t(1) : in_t(0);
    xpb_status st = expect_ndim(c, x, 3, 4);
    if (st != XPB_OK)
        return st;
    if (c->op->attrs.eps < 0.0f)
        return fail(c, XPB_INVALID_ARGUMENT, "attribute eps must be >= 0, found %g",
                    (double)c->op->attrs.eps);
    tref like_x[] = {x, in_t(0), out_t(0)};
    if ((st = expect_all_like(c, like_x, 3)) != XPB_OK)
        return st;
    const xpb_tensor_desc *d = desc(c, x);
    int64_t nc[2] = {d->dims[0], d->dims[1]};
    tref stats[2] = {bwd ? in_t(2) : out_t(1), bwd ? in_t(3) : out_t(2)};
    for (int i = 0; i < 2; i++)
        if ((st = expect_shape(c, stats[i], 2, nc)) != XPB_OK)
            return st;
    return XPB_OK;
}

/* ---- elementwise, losses, optimizers ---- */

/* Every tensor of the op has the shape of input 0 (activations, their backward ops, ADD,
 * COPY, dropout, the loss backward ops, SGD). */
static xpb_status check_same_shapes(const check *c)
{
    tref ts[XPB_MAX_OP_INPUTS + XPB_MAX_OP_OUTPUTS];
    int n = 0;
    for (uint32_t i = 0; i < c->op->n_inputs; i++)
        ts[n++] = in_t((int)i);
    for (uint32_t j = 0; j < c->op->n_outputs; j++)
        ts[n++] = out_t((int)j);
    xpb_status st = expect_all_like(c, ts, n);
    if (st != XPB_OK || c->op->n_outputs == 0)
        return st;
    if (c->in[0]->dtype != c->out[0]->dtype)
        return fail(c, XPB_INVALID_ARGUMENT, "output %s must have the dtype of input %s",
                    c->rule->out_names[0], c->rule->in_names[0]);
    return XPB_OK;
}

static xpb_status check_dropout(const check *c)
{
    float p = c->op->attrs.dropout_p;
    if (!(p >= 0.0f && p <= 1.0f))
        return fail(c, XPB_INVALID_ARGUMENT, "attribute dropout_p must be in [0, 1], found %g",
                    (double)p);
    return check_same_shapes(c);
}

static xpb_status check_reshape(const check *c)
{
    const xpb_tensor_desc *x = c->in[0], *y = c->out[0];
    char sx[96], sy[96];
    if (xpb_tensor_numel(x) != xpb_tensor_numel(y))
        return fail(c, XPB_INVALID_ARGUMENT,
                    "output y \"%s\" %s must have as many elements as input x \"%s\" %s",
                    y->name ? y->name : "?", shape_str(sy, sizeof sy, y->ndim, y->dims),
                    x->name ? x->name : "?", shape_str(sx, sizeof sx, x->ndim, x->dims));
    if (x->dtype != y->dtype)
        return fail(c, XPB_INVALID_ARGUMENT, "output y must have the dtype of input x");
    return XPB_OK;
}

static xpb_status check_nothing(const check *c)
{
    (void)c;
    return XPB_OK;
}

/* SOFTMAX_XENT (logits[N,K], labels[N] -> loss[1] [, ws_prob[N,K]]) and
 * SOFTMAX_XENT_BWD (ws_prob[N,K], labels[N] -> dlogits[N,K]). */
static xpb_status check_softmax_xent(const check *c)
{
    int bwd = c->op->kind == XPB_OP_SOFTMAX_XENT_BWD;
    xpb_status st = expect_ndim(c, in_t(0), 2, 2);
    if (st != XPB_OK)
        return st;
    const xpb_tensor_desc *z = c->in[0];
    if ((st = expect_vector(c, in_t(1), z->dims[0])) != XPB_OK)
        return st;
    if (bwd)
        return expect_like(c, out_t(0), in_t(0));
    if ((st = expect_vector(c, out_t(0), 1)) != XPB_OK)
        return st;
    return expect_like(c, out_t(1), in_t(0));
}

/* MSE_LOSS, L1_LOSS: x, target of one shape -> loss[1]. */
static xpb_status check_loss(const check *c)
{
    xpb_status st = expect_like(c, in_t(1), in_t(0));
    if (st != XPB_OK)
        return st;
    return expect_vector(c, out_t(0), 1);
}

/* ADAM_UPDATE: param, grad, m, v of one shape; step[1]. */
static xpb_status check_adam(const check *c)
{
    tref ts[] = {in_t(0), in_t(1), in_t(2), in_t(3)};
    xpb_status st = expect_all_like(c, ts, 4);
    if (st != XPB_OK)
        return st;
    return expect_vector(c, in_t(4), 1);
}

/* ---- pooling and padding ---- */

/* MAXPOOL (x -> y [, ws_index]), MAXPOOL_BWD (dy, ws_index -> dx), AVGPOOL (x -> y),
 * AVGPOOL_BWD (dy -> dx). PyTorch's limits: pad <= kernel / 2, floor mode. */
static xpb_status check_pool(const check *c)
{
    const xpb_op_attrs *at = &c->op->attrs;
    uint32_t kind = c->op->kind;
    int bwd = kind == XPB_OP_MAXPOOL_BWD || kind == XPB_OP_AVGPOOL_BWD;
    tref data = bwd ? out_t(0) : in_t(0), result = bwd ? in_t(0) : out_t(0);
    xpb_status st = expect_ndim(c, data, 4, 4);
    if (st != XPB_OK)
        return st;
    if ((st = expect_pair(c, "kernel", at->kernel, 1, INT32_MAX)) != XPB_OK ||
        (st = expect_pair(c, "stride", at->stride, 1, INT32_MAX)) != XPB_OK ||
        (st = expect_pair(c, "pad", at->pad, 0, INT32_MAX)) != XPB_OK)
        return st;
    if (at->pad[0] > at->kernel[0] / 2 || at->pad[1] > at->kernel[1] / 2)
        return fail(c, XPB_INVALID_ARGUMENT,
                    "attribute pad (%d, %d) must be at most half the kernel (%d, %d)", at->pad[0],
                    at->pad[1], at->kernel[0], at->kernel[1]);
    const xpb_tensor_desc *x = desc(c, data);
    int64_t want[4] = {x->dims[0], x->dims[1], 0, 0};
    for (int d = 0; d < 2; d++) {
        int64_t span = x->dims[2 + d] + 2 * at->pad[d] - at->kernel[d];
        char l[160];
        if (span < 0)
            return fail(c, XPB_INVALID_ARGUMENT, "a %dx%d window with pad (%d, %d) does not fit %s",
                        at->kernel[0], at->kernel[1], at->pad[0], at->pad[1],
                        label(l, sizeof l, c, data));
        want[2 + d] = span / at->stride[d] + 1;
    }
    if ((st = expect_shape(c, result, 4, want)) != XPB_OK)
        return st;
    if (kind == XPB_OP_MAXPOOL)
        return expect_like(c, out_t(1), out_t(0));
    if (kind == XPB_OP_MAXPOOL_BWD)
        return expect_like(c, in_t(1), in_t(0));
    return XPB_OK;
}

/* GLOBAL_AVGPOOL (x[N,C,H,W] -> y[N,C,1,1]) and its backward (dy[N,C,1,1] -> dx[N,C,H,W]). */
static xpb_status check_global_pool(const check *c)
{
    int bwd = c->op->kind == XPB_OP_GLOBAL_AVGPOOL_BWD;
    tref data = bwd ? out_t(0) : in_t(0), result = bwd ? in_t(0) : out_t(0);
    xpb_status st = expect_ndim(c, data, 4, 4);
    if (st != XPB_OK)
        return st;
    const xpb_tensor_desc *x = desc(c, data);
    int64_t want[4] = {x->dims[0], x->dims[1], 1, 1};
    return expect_shape(c, result, 4, want);
}

/* REFLECTION_PAD (x[N,C,H,W] -> y[N,C,H+2ph,W+2pw]) and its backward (dy -> dx). */
static xpb_status check_reflection_pad(const check *c)
{
    const xpb_op_attrs *at = &c->op->attrs;
    int bwd = c->op->kind == XPB_OP_REFLECTION_PAD_BWD;
    tref data = bwd ? out_t(0) : in_t(0), result = bwd ? in_t(0) : out_t(0);
    xpb_status st = expect_ndim(c, data, 4, 4);
    if (st != XPB_OK)
        return st;
    if ((st = expect_pair(c, "pad", at->pad, 0, INT32_MAX)) != XPB_OK)
        return st;
    const xpb_tensor_desc *x = desc(c, data);
    char l[160];
    if (at->pad[0] >= x->dims[2] || at->pad[1] >= x->dims[3])
        return fail(c, XPB_INVALID_ARGUMENT,
                    "attribute pad (%d, %d) must be smaller than the %lldx%lld plane of %s",
                    at->pad[0], at->pad[1], (long long)x->dims[2], (long long)x->dims[3],
                    label(l, sizeof l, c, data));
    int64_t want[4] = {x->dims[0], x->dims[1], x->dims[2] + 2 * at->pad[0],
                       x->dims[3] + 2 * at->pad[1]};
    return expect_shape(c, result, 4, want);
}

/* ---- the table ---- */

#define BIT(i) (1u << (i))

/* One row per op kind: kernel, inputs min/max, outputs min/max, then the optional
 * members by name. Every tensor is F32 unless an *_i32 or *_any bit says otherwise. */
static const op_rule rules[XPB_OP_KIND_END_] = {
    [XPB_OP_CONV2D] = {ref_conv2d, 2, 3, 1, 1, .in_names = {"x", "w", "b"}, .out_names = {"y"},
                       .shapes = check_conv},
    [XPB_OP_CONV2D_BWD_DATA] = {ref_conv2d_bwd_data, 2, 2, 1, 1, .in_names = {"dy", "w"},
                                .out_names = {"dx"}, .shapes = check_conv},
    [XPB_OP_CONV2D_BWD_WEIGHTS] = {ref_conv2d_bwd_weights, 2, 2, 1, 2, .in_names = {"dy", "x"},
                                   .out_names = {"dw", "db"}, .shapes = check_conv},
    [XPB_OP_CONV_T2D] = {ref_conv_t2d, 2, 3, 1, 1, .in_names = {"x", "w", "b"}, .out_names = {"y"},
                         .shapes = check_conv},
    [XPB_OP_CONV_T2D_BWD_DATA] = {ref_conv_t2d_bwd_data, 2, 2, 1, 1, .in_names = {"dy", "w"},
                                  .out_names = {"dx"}, .shapes = check_conv},
    [XPB_OP_CONV_T2D_BWD_WEIGHTS] = {ref_conv_t2d_bwd_weights, 2, 2, 1, 2, .in_names = {"dy", "x"},
                                     .out_names = {"dw", "db"}, .shapes = check_conv},
    [XPB_OP_LINEAR] = {ref_linear, 2, 3, 1, 1, .in_names = {"x", "w", "b"}, .out_names = {"y"},
                       .shapes = check_linear},
    [XPB_OP_LINEAR_BWD_DATA] = {ref_linear_bwd_data, 2, 2, 1, 1, .in_names = {"dy", "w"},
                                .out_names = {"dx"}, .shapes = check_linear},
    [XPB_OP_LINEAR_BWD_WEIGHTS] = {ref_linear_bwd_weights, 2, 2, 1, 2, .in_names = {"dy", "x"},
                                   .out_names = {"dw", "db"}, .shapes = check_linear},
    [XPB_OP_BATCHNORM_TRAIN] = {ref_batchnorm_train, 5, 5, 1, 3, .optional_out = BIT(1) | BIT(2),
                                .in_names = {"x", "gamma", "beta", "running_mean", "running_var"},
                                .out_names = {"y", "ws_mean", "ws_var"}, .shapes = check_batchnorm},
    [XPB_OP_BATCHNORM_INFER] = {ref_batchnorm_infer, 5, 5, 1, 1,
                                .in_names = {"x", "gamma", "beta", "running_mean", "running_var"},
                                .out_names = {"y"}, .shapes = check_batchnorm},
    [XPB_OP_BATCHNORM_BWD] = {ref_batchnorm_bwd, 5, 5, 3, 3,
                              .optional_out = BIT(0) | BIT(1) | BIT(2),
                              .in_names = {"dy", "x", "gamma", "ws_mean", "ws_var"},
                              .out_names = {"dx", "dgamma", "dbeta"}, .shapes = check_batchnorm},
    [XPB_OP_INSTANCENORM] = {ref_instancenorm, 1, 1, 1, 3, .optional_out = BIT(1) | BIT(2),
                             .in_names = {"x"}, .out_names = {"y", "ws_mean", "ws_var"},
                             .shapes = check_instancenorm},
    [XPB_OP_INSTANCENORM_BWD] = {ref_instancenorm_bwd, 4, 4, 1, 1,
                                 .in_names = {"dy", "x", "ws_mean", "ws_var"}, .out_names = {"dx"},
                                 .shapes = check_instancenorm},
    [XPB_OP_RELU] = {ref_relu, 1, 1, 1, 1, .in_names = {"x"}, .out_names = {"y"},
                     .shapes = check_same_shapes},
    [XPB_OP_RELU_BWD] = {ref_relu_bwd, 2, 2, 1, 1, .in_names = {"dy", "y"}, .out_names = {"dx"},
                         .shapes = check_same_shapes},
    [XPB_OP_LEAKY_RELU] = {ref_leaky_relu, 1, 1, 1, 1, .in_names = {"x"}, .out_names = {"y"},
                           .shapes = check_same_shapes},
    [XPB_OP_LEAKY_RELU_BWD] = {ref_leaky_relu_bwd, 2, 2, 1, 1, .in_names = {"dy", "y"},
                               .out_names = {"dx"}, .shapes = check_same_shapes},
    [XPB_OP_TANH] = {ref_tanh, 1, 1, 1, 1, .in_names = {"x"}, .out_names = {"y"},
                     .shapes = check_same_shapes},
    [XPB_OP_TANH_BWD] = {ref_tanh_bwd, 2, 2, 1, 1, .in_names = {"dy", "y"}, .out_names = {"dx"},
                         .shapes = check_same_shapes},
    [XPB_OP_MAXPOOL] = {ref_maxpool, 1, 1, 1, 2, .optional_out = BIT(1), .out_i32 = BIT(1),
                        .in_names = {"x"}, .out_names = {"y", "ws_index"}, .shapes = check_pool},
    [XPB_OP_MAXPOOL_BWD] = {ref_maxpool_bwd, 2, 2, 1, 1, .in_i32 = BIT(1),
                            .in_names = {"dy", "ws_index"}, .out_names = {"dx"},
                            .shapes = check_pool},
    [XPB_OP_AVGPOOL] = {ref_avgpool, 1, 1, 1, 1, .in_names = {"x"}, .out_names = {"y"},
                        .shapes = check_pool},
    [XPB_OP_AVGPOOL_BWD] = {ref_avgpool_bwd, 1, 1, 1, 1, .in_names = {"dy"}, .out_names = {"dx"},
                            .shapes = check_pool},
    [XPB_OP_GLOBAL_AVGPOOL] = {ref_global_avgpool, 1, 1, 1, 1, .in_names = {"x"},
                               .out_names = {"y"}, .shapes = check_global_pool},
    [XPB_OP_GLOBAL_AVGPOOL_BWD] = {ref_global_avgpool_bwd, 1, 1, 1, 1, .in_names = {"dy"},
                                   .out_names = {"dx"}, .shapes = check_global_pool},
    [XPB_OP_ADD] = {ref_add, 2, 2, 1, 1, .in_names = {"a", "b"}, .out_names = {"y"},
                    .shapes = check_same_shapes},
    [XPB_OP_REFLECTION_PAD] = {ref_reflection_pad, 1, 1, 1, 1, .in_names = {"x"},
                               .out_names = {"y"}, .shapes = check_reflection_pad},
    [XPB_OP_REFLECTION_PAD_BWD] = {ref_reflection_pad_bwd, 1, 1, 1, 1, .in_names = {"dy"},
                                   .out_names = {"dx"}, .shapes = check_reflection_pad},
    [XPB_OP_RESHAPE] = {ref_reshape, 1, 1, 1, 1, .in_any = BIT(0), .out_any = BIT(0),
                        .in_names = {"x"}, .out_names = {"y"}, .shapes = check_reshape},
    [XPB_OP_SOFTMAX_XENT] = {ref_softmax_xent, 2, 2, 1, 2, .optional_out = BIT(1), .in_i32 = BIT(1),
                             .in_names = {"logits", "labels"}, .out_names = {"loss", "ws_prob"},
                             .shapes = check_softmax_xent},
    [XPB_OP_SOFTMAX_XENT_BWD] = {ref_softmax_xent_bwd, 2, 2, 1, 1, .in_i32 = BIT(1),
                                 .in_names = {"ws_prob", "labels"}, .out_names = {"dlogits"},
                                 .shapes = check_softmax_xent},
    [XPB_OP_MSE_LOSS] = {ref_mse_loss, 2, 2, 1, 1, .in_names = {"x", "target"},
                         .out_names = {"loss"}, .shapes = check_loss},
    [XPB_OP_MSE_LOSS_BWD] = {ref_mse_loss_bwd, 2, 2, 1, 1, .in_names = {"x", "target"},
                             .out_names = {"dx"}, .shapes = check_same_shapes},
    [XPB_OP_L1_LOSS] = {ref_l1_loss, 2, 2, 1, 1, .in_names = {"x", "target"}, .out_names = {"loss"},
                        .shapes = check_loss},
    [XPB_OP_L1_LOSS_BWD] = {ref_l1_loss_bwd, 2, 2, 1, 1, .in_names = {"x", "target"},
                            .out_names = {"dx"}, .shapes = check_same_shapes},
    [XPB_OP_DROPOUT] = {ref_dropout, 1, 1, 1, 2, .optional_out = BIT(1), .in_names = {"x"},
                        .out_names = {"y", "ws_mask"}, .shapes = check_dropout},
    [XPB_OP_DROPOUT_BWD] = {ref_dropout_bwd, 2, 2, 1, 1, .in_names = {"dy", "ws_mask"},
                            .out_names = {"dx"}, .shapes = check_dropout},
    [XPB_OP_SGD_UPDATE] = {ref_sgd_update, 2, 3, 0, 0,
                           .in_names = {"param", "grad", "momentum_buf"},
                           .shapes = check_same_shapes},
    [XPB_OP_ADAM_UPDATE] = {ref_adam_update, 5, 5, 0, 0, .in_any = BIT(4),
                            .in_names = {"param", "grad", "m", "v", "step"}, .shapes = check_adam},
    [XPB_OP_FILL] = {ref_fill, 0, 0, 1, 1, .out_any = BIT(0), .out_names = {"y"},
                     .shapes = check_nothing},
    [XPB_OP_COPY] = {ref_copy, 1, 1, 1, 1, .in_any = BIT(0), .out_any = BIT(0), .in_names = {"x"},
                     .out_names = {"y"}, .shapes = check_same_shapes},
};

static const op_rule *rule_of(uint32_t kind)
{
    if (kind >= XPB_OP_KIND_END_ || !rules[kind].kernel)
        return NULL;
    return &rules[kind];
}

ref_kernel_fn ref_kernel_for(uint32_t kind)
{
    const op_rule *r = rule_of(kind);
    return r ? r->kernel : NULL;
}

/* A tensor's own validity: 1..4 dims, every dim >= 1, a dtype the rule allows. */
static xpb_status check_tensor(const check *c, tref t)
{
    const xpb_tensor_desc *d = desc(c, t);
    uint8_t i32 = t.out ? c->rule->out_i32 : c->rule->in_i32;
    uint8_t any = t.out ? c->rule->out_any : c->rule->in_any;
    char l[160], found[96];
    if (d->ndim < 1 || d->ndim > XPB_MAX_DIMS)
        return fail(c, XPB_INVALID_ARGUMENT, "%s has %u dims, expected 1 to %d",
                    label(l, sizeof l, c, t), d->ndim, XPB_MAX_DIMS);
    for (uint32_t k = 0; k < d->ndim; k++)
        if (d->dims[k] < 1)
            return fail(c, XPB_INVALID_ARGUMENT, "%s has an empty dimension: %s",
                        label(l, sizeof l, c, t), shape_str(found, sizeof found, d->ndim, d->dims));
    int ok;
    const char *want;
    if (any & BIT(t.index)) {
        ok = d->dtype == XPB_DTYPE_F32 || d->dtype == XPB_DTYPE_I32;
        want = "F32 or I32";
    } else if (i32 & BIT(t.index)) {
        ok = d->dtype == XPB_DTYPE_I32;
        want = "I32";
    } else {
        ok = d->dtype == XPB_DTYPE_F32;
        want = "F32";
    }
    if (!ok)
        return fail(c, XPB_INVALID_ARGUMENT, "%s must be %s, found dtype %u",
                    label(l, sizeof l, c, t), want, d->dtype);
    return XPB_OK;
}

xpb_status ref_check_op(const xpb_op *op, const xpb_tensor_desc *const *in,
                        const xpb_tensor_desc *const *out, char *err, size_t err_size)
{
    check c = {op, in, out, err, err_size, rule_of(op->kind)};
    if (!c.rule)
        return fail(&c, XPB_UNSUPPORTED, "op kind %u is not in the reference backend's op set %d",
                    op->kind, XPB_OPSET_VERSION);
    const op_rule *r = c.rule;
    if (op->n_inputs < r->in_min || op->n_inputs > r->in_max)
        return fail(&c, XPB_INVALID_ARGUMENT, "expected %u to %u inputs, found %u", r->in_min,
                    r->in_max, op->n_inputs);
    if (op->n_outputs < r->out_min || op->n_outputs > r->out_max)
        return fail(&c, XPB_INVALID_ARGUMENT, "expected %u to %u outputs, found %u", r->out_min,
                    r->out_max, op->n_outputs);
    xpb_status st;
    for (uint32_t i = 0; i < op->n_inputs; i++) {
        if (!in[i])
            return fail(&c, XPB_INVALID_ARGUMENT, "input %u (%s) is missing", i,
                        r->in_names[i] ? r->in_names[i] : "?");
        if ((st = check_tensor(&c, in_t((int)i))) != XPB_OK)
            return st;
    }
    for (uint32_t j = 0; j < op->n_outputs; j++) {
        if (!out[j]) {
            if (r->optional_out & BIT(j))
                continue;
            return fail(&c, XPB_INVALID_ARGUMENT, "output %u (%s) is missing", j,
                        r->out_names[j] ? r->out_names[j] : "?");
        }
        if ((st = check_tensor(&c, out_t((int)j))) != XPB_OK)
            return st;
    }
    return r->shapes(&c);
}
