/* xpubench public SDK: the shape rules of the op set, for backends and for the host (ABI 1.2).
 *
 * One implementation of what docs/ops.md says an op may take, in PyTorch's terms: for every op
 * of op sets 1 and 2, forward and backward, its number of inputs and outputs, which of them are
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

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "program.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define XPB_SHP_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define XPB_SHP_PRINTF(fmt, args)
#endif

/* A tensor of the op being checked: input i is XPB_SHP_IN(i), output j XPB_SHP_OUT(j). */
#define XPB_SHP_IN(i) (i)
#define XPB_SHP_OUT(j) (8 + (j))
#define XPB_SHP_NONE (-1)
#define XPB_SHP_BIT(i) (1u << (i))
/* Tensors above this many elements are refused (their byte size must fit any size_t). */
#define XPB_SHP_MAX_NUMEL ((int64_t)1 << 40)

/* "[2, 3, 32, 32]" into buf (`size` bytes, owned by the caller; truncated to fit); returns buf.
 * At most XPB_MAX_DIMS dims are printed. */
static inline const char *xpb_shape_str(char *buf, size_t size, uint32_t ndim, const int64_t *dims)
{
    size_t used = 0;
    if (size == 0)
        return buf;
    buf[0] = '\0';
    int n = snprintf(buf, size, "[");
    used = n > 0 ? (size_t)n : 0;
    for (uint32_t d = 0; d < ndim && d < XPB_MAX_DIMS && used < size; d++) {
        n = snprintf(buf + used, size - used, d ? ", %lld" : "%lld", (long long)dims[d]);
        if (n < 0)
            return buf;
        used += (size_t)n;
    }
    if (used < size)
        snprintf(buf + used, size - used, "]");
    return buf;
}

struct xpb_shp_check;

/* What one op kind takes. Every tensor is F32 unless an *_i32 or *_any bit says otherwise. */
struct xpb_shp_rule {
    uint32_t kind;
    uint8_t in_min, in_max, out_min, out_max;
    uint8_t optional_out;    /* bit j: output j may be XPB_NO_TENSOR ("not wanted") */
    uint8_t in_i32, out_i32; /* bit i: the tensor is I32 */
    uint8_t in_any, out_any; /* bit i: the tensor may be F32 or I32 */
    uint8_t infer;           /* 1: output 0 follows from the inputs (xpb_op_infer_shape) */
    const char *in_names[XPB_MAX_OP_INPUTS];
    const char *out_names[XPB_MAX_OP_OUTPUTS];
    xpb_status (*shapes)(const struct xpb_shp_check *c);
};

/* One op being checked (or, with `infer`, having its first output inferred). */
struct xpb_shp_check {
    const xpb_op *op;
    uint32_t n_in, n_out;
    const xpb_tensor_desc *in[XPB_MAX_OP_INPUTS]; /* NULL: absent */
    const xpb_tensor_desc *out[XPB_MAX_OP_OUTPUTS];
    xpb_tensor_desc *infer; /* xpb_op_infer_shape: output 0, written by the rules */
    const struct xpb_shp_rule *rule;
    char *msg;
    size_t size;
    char prefix[192]; /* "op 3 CONV2D (layer 'conv2'): " */
};

/* ---- messages ---- */

static inline xpb_status xpb_shp_fail(const struct xpb_shp_check *c, xpb_status status,
                                      const char *fmt, ...) XPB_SHP_PRINTF(3, 4);

/* Writes the prefix and the formatted message into c->msg and returns `status`. */
static inline xpb_status xpb_shp_fail(const struct xpb_shp_check *c, xpb_status status,
                                      const char *fmt, ...)
{
    if (!c->msg || c->size == 0)
        return status;
    int n = snprintf(c->msg, c->size, "%s", c->prefix);
    if (n >= 0 && (size_t)n < c->size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->msg + n, c->size - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return status;
}

/* "F32", "I32" or "dtype 7" into buf (the caller owns it); returns buf. */
static inline const char *xpb_shp_dtype_str(char *buf, size_t size, uint32_t dtype)
{
    if (dtype == XPB_DTYPE_F32)
        snprintf(buf, size, "F32");
    else if (dtype == XPB_DTYPE_I32)
        snprintf(buf, size, "I32");
    else
        snprintf(buf, size, "dtype %u", dtype);
    return buf;
}

/* The op's layer for messages: "" when it has none. Static or owned by the op. */
static inline const char *xpb_shp_layer(const xpb_op *op)
{
    return op->layer ? op->layer : "";
}

/* ---- the op's tensors ---- */

/* The descriptor of tensor t (XPB_SHP_IN / XPB_SHP_OUT), or NULL when it is absent. Owned by
 * whoever called the check, valid during it. */
static inline const xpb_tensor_desc *xpb_shp_desc(const struct xpb_shp_check *c, int t)
{
    if (t < 0)
        return NULL;
    if (t >= XPB_SHP_OUT(0))
        return t - XPB_SHP_OUT(0) < XPB_MAX_OP_OUTPUTS ? c->out[t - XPB_SHP_OUT(0)] : NULL;
    return t < XPB_MAX_OP_INPUTS ? c->in[t] : NULL;
}

/* "input w \"conv1.weight\"" into buf (the caller owns it); returns buf. */
static inline const char *xpb_shp_label(char *buf, size_t size, const struct xpb_shp_check *c,
                                        int t)
{
    int is_out = t >= XPB_SHP_OUT(0);
    int index = is_out ? t - XPB_SHP_OUT(0) : t;
    const char *role = is_out ? c->rule->out_names[index] : c->rule->in_names[index];
    const xpb_tensor_desc *d = xpb_shp_desc(c, t);
    if (d && d->name)
        snprintf(buf, size, "%s %s \"%s\"", is_out ? "output" : "input", role ? role : "?",
                 d->name);
    else
        snprintf(buf, size, "%s %s", is_out ? "output" : "input", role ? role : "?");
    return buf;
}

/* ---- assertions (an absent optional tensor passes) ---- */

/* Tensor t is [dims]; with xpb_op_infer_shape, output 0 becomes [dims]. */
static inline xpb_status xpb_shp_expect_shape(const struct xpb_shp_check *c, int t, uint32_t ndim,
                                              const int64_t *dims)
{
    if (c->infer && t == XPB_SHP_OUT(0)) {
        c->infer->ndim = ndim;
        for (uint32_t k = 0; k < XPB_MAX_DIMS; k++)
            c->infer->dims[k] = k < ndim ? dims[k] : 1;
        return XPB_OK;
    }
    const xpb_tensor_desc *d = xpb_shp_desc(c, t);
    if (!d)
        return XPB_OK;
    int same = d->ndim == ndim;
    for (uint32_t k = 0; same && k < ndim; k++)
        same = d->dims[k] == dims[k];
    if (same)
        return XPB_OK;
    char l[160], want[96], found[96];
    return xpb_shp_fail(c, XPB_INVALID_ARGUMENT, "%s must be %s, found %s",
                        xpb_shp_label(l, sizeof l, c, t),
                        xpb_shape_str(want, sizeof want, ndim, dims),
                        xpb_shape_str(found, sizeof found, d->ndim, d->dims));
}

/* Tensor t has the shape of tensor `like` (when both are present). */
static inline xpb_status xpb_shp_expect_like(const struct xpb_shp_check *c, int t, int like)
{
    const xpb_tensor_desc *l = xpb_shp_desc(c, like);
    return l ? xpb_shp_expect_shape(c, t, l->ndim, l->dims) : XPB_OK;
}

/* Every listed tensor has the shape of the first one. */
static inline xpb_status xpb_shp_expect_all_like(const struct xpb_shp_check *c, const int *ts,
                                                 int n)
{
    for (int i = 1; i < n; i++) {
        xpb_status st = xpb_shp_expect_like(c, ts[i], ts[0]);
        if (st != XPB_OK)
            return st;
    }
    return XPB_OK;
}

/* A 1-D tensor of n elements ([C] per-channel vectors, [1] losses). */
static inline xpb_status xpb_shp_expect_vector(const struct xpb_shp_check *c, int t, int64_t n)
{
    return xpb_shp_expect_shape(c, t, 1, &n);
}

/* Tensor t (present) has lo..hi dims. */
static inline xpb_status xpb_shp_expect_ndim(const struct xpb_shp_check *c, int t, uint32_t lo,
                                             uint32_t hi)
{
    const xpb_tensor_desc *d = xpb_shp_desc(c, t);
    if (d->ndim >= lo && d->ndim <= hi)
        return XPB_OK;
    char l[160], found[96];
    if (lo == hi)
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT, "%s must be %u-D, found %s",
                            xpb_shp_label(l, sizeof l, c, t), lo,
                            xpb_shape_str(found, sizeof found, d->ndim, d->dims));
    return xpb_shp_fail(c, XPB_INVALID_ARGUMENT, "%s must be %u-D to %u-D, found %s",
                        xpb_shp_label(l, sizeof l, c, t), lo, hi,
                        xpb_shape_str(found, sizeof found, d->ndim, d->dims));
}

/* An attribute pair (height, width) lies in [lo, hi]. */
static inline xpb_status xpb_shp_expect_pair(const struct xpb_shp_check *c, const char *attr,
                                             const int32_t *v, int32_t lo, int32_t hi)
{
    if (v[0] >= lo && v[0] <= hi && v[1] >= lo && v[1] <= hi)
        return XPB_OK;
    if (hi == INT32_MAX)
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT, "attribute %s must be >= %d, found (%d, %d)",
                            attr, lo, v[0], v[1]);
    return xpb_shp_fail(c, XPB_INVALID_ARGUMENT, "attribute %s must be in [%d, %d], found (%d, %d)",
                        attr, lo, hi, v[0], v[1]);
}

/* A float attribute is >= 0 (and not NaN). */
static inline xpb_status xpb_shp_expect_nonneg(const struct xpb_shp_check *c, const char *attr,
                                               float v)
{
    if (v >= 0.0f)
        return XPB_OK;
    return xpb_shp_fail(c, XPB_INVALID_ARGUMENT, "attribute %s must be >= 0, found %g", attr,
                        (double)v);
}

/* ---- convolutions and linear ---- */

/* The tensors of a convolution-like op, whatever its direction: `data` is the tensor on the
 * side whose shape fixes the others (x of the forward op, or dx), `weight` the weight (or dw),
 * `result` the tensor on the other side (y, or dy) and `bias` the bias (or db). */
struct xpb_shp_conv_roles {
    int data, weight, result, bias, transposed;
};

static inline struct xpb_shp_conv_roles xpb_shp_conv_roles_of(uint32_t kind)
{
    struct xpb_shp_conv_roles r = {XPB_SHP_IN(0), XPB_SHP_IN(1), XPB_SHP_OUT(0), XPB_SHP_NONE, 0};
    switch (kind) {
    case XPB_OP_CONV_T2D:
        r.transposed = 1;
        /* fall through */
    case XPB_OP_CONV2D:
    case XPB_OP_LINEAR:
        r.bias = XPB_SHP_IN(2); /* x, w, b -> y */
        break;
    case XPB_OP_CONV_T2D_BWD_DATA:
        r.transposed = 1;
        /* fall through */
    case XPB_OP_CONV2D_BWD_DATA:
    case XPB_OP_LINEAR_BWD_DATA:
        r.data = XPB_SHP_OUT(0); /* dy, w -> dx */
        r.result = XPB_SHP_IN(0);
        break;
    case XPB_OP_CONV_T2D_BWD_WEIGHTS:
        r.transposed = 1;
        /* fall through */
    default: /* CONV2D_BWD_WEIGHTS, LINEAR_BWD_WEIGHTS: dy, x -> dw, db */
        r.data = XPB_SHP_IN(1);
        r.weight = XPB_SHP_OUT(0);
        r.result = XPB_SHP_IN(0);
        r.bias = XPB_SHP_OUT(1);
        break;
    }
    return r;
}

/* CONV2D, CONV_T2D and their backward ops (docs/ops.md, "Convolution and linear"). */
static inline xpb_status xpb_shp_conv(const struct xpb_shp_check *c)
{
    const xpb_op_attrs *at = &c->op->attrs;
    struct xpb_shp_conv_roles r = xpb_shp_conv_roles_of(c->op->kind);
    xpb_status st;
    if ((st = xpb_shp_expect_ndim(c, r.data, 4, 4)) != XPB_OK ||
        (st = xpb_shp_expect_ndim(c, r.weight, 4, 4)) != XPB_OK)
        return st;
    const xpb_tensor_desc *x = xpb_shp_desc(c, r.data), *w = xpb_shp_desc(c, r.weight);
    /* weight [K, C, kh, kw] for conv2d, [C, K, kh, kw] for the transposed form */
    int in_dim = r.transposed ? 0 : 1;
    int64_t ch = w->dims[in_dim], k = w->dims[r.transposed ? 1 : 0];
    char lw[160], lx[160], sw[96], sx[96];
    if (ch != x->dims[1])
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT,
                            "%s %s expects %lld input channels (dim %d), %s %s has %lld",
                            xpb_shp_label(lw, sizeof lw, c, r.weight),
                            xpb_shape_str(sw, sizeof sw, w->ndim, w->dims), (long long)ch, in_dim,
                            xpb_shp_label(lx, sizeof lx, c, r.data),
                            xpb_shape_str(sx, sizeof sx, x->ndim, x->dims), (long long)x->dims[1]);
    if ((st = xpb_shp_expect_pair(c, "stride", at->stride, 1, INT32_MAX)) != XPB_OK ||
        (st = xpb_shp_expect_pair(c, "pad", at->pad, 0, INT32_MAX)) != XPB_OK ||
        (st = xpb_shp_expect_pair(c, "dilation", at->dilation, 1, INT32_MAX)) != XPB_OK)
        return st;
    int64_t size[2];
    for (int d = 0; d < 2; d++) {
        int64_t in = x->dims[2 + d], kk = w->dims[2 + d];
        int64_t s = at->stride[d], p = at->pad[d], dil = at->dilation[d];
        if (r.transposed) {
            /* PyTorch: output padding must be smaller than either the stride or the dilation */
            int32_t op = at->output_padding[d];
            if (op < 0 || (op >= at->stride[d] && op >= at->dilation[d]))
                return xpb_shp_fail(c, XPB_INVALID_ARGUMENT,
                                    "attribute output_padding (%d, %d) must be >= 0 and smaller "
                                    "than the stride (%d, %d) or the dilation (%d, %d)",
                                    at->output_padding[0], at->output_padding[1], at->stride[0],
                                    at->stride[1], at->dilation[0], at->dilation[1]);
            size[d] = (in - 1) * s - 2 * p + dil * (kk - 1) + op + 1;
        } else {
            int64_t span = in + 2 * p - dil * (kk - 1) - 1;
            size[d] = span < 0 ? -1 : span / s + 1;
        }
        if (size[d] < 1)
            return xpb_shp_fail(c, XPB_INVALID_ARGUMENT,
                                "a %lldx%lld kernel with stride (%d, %d), pad (%d, %d) and "
                                "dilation (%d, %d) gives no output for %s %s",
                                (long long)w->dims[2], (long long)w->dims[3], at->stride[0],
                                at->stride[1], at->pad[0], at->pad[1], at->dilation[0],
                                at->dilation[1], xpb_shp_label(lx, sizeof lx, c, r.data),
                                xpb_shape_str(sx, sizeof sx, x->ndim, x->dims));
    }
    int64_t want[4] = {x->dims[0], k, size[0], size[1]};
    if ((st = xpb_shp_expect_shape(c, r.result, 4, want)) != XPB_OK)
        return st;
    return xpb_shp_expect_vector(c, r.bias, k);
}

/* LINEAR and its backward ops: x[N,I], w[O,I], b[O], y[N,O]. */
static inline xpb_status xpb_shp_linear(const struct xpb_shp_check *c)
{
    struct xpb_shp_conv_roles r = xpb_shp_conv_roles_of(c->op->kind);
    xpb_status st;
    if ((st = xpb_shp_expect_ndim(c, r.data, 2, 2)) != XPB_OK ||
        (st = xpb_shp_expect_ndim(c, r.weight, 2, 2)) != XPB_OK)
        return st;
    const xpb_tensor_desc *x = xpb_shp_desc(c, r.data), *w = xpb_shp_desc(c, r.weight);
    char lw[160], lx[160], sw[96], sx[96];
    if (w->dims[1] != x->dims[1])
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT,
                            "%s %s expects %lld input features (dim 1), %s %s has %lld",
                            xpb_shp_label(lw, sizeof lw, c, r.weight),
                            xpb_shape_str(sw, sizeof sw, w->ndim, w->dims), (long long)w->dims[1],
                            xpb_shp_label(lx, sizeof lx, c, r.data),
                            xpb_shape_str(sx, sizeof sx, x->ndim, x->dims), (long long)x->dims[1]);
    int64_t want[2] = {x->dims[0], w->dims[0]};
    if ((st = xpb_shp_expect_shape(c, r.result, 2, want)) != XPB_OK)
        return st;
    return xpb_shp_expect_vector(c, r.bias, w->dims[0]);
}

/* ---- normalisation ---- */

/* BATCHNORM_TRAIN / _INFER (x, gamma, beta, rm, rv -> y [, ws_mean, ws_var]) and
 * BATCHNORM_BWD (dy, x, gamma, ws_mean, ws_var -> dx, dgamma, dbeta): x is [N,C], [N,C,L] or
 * [N,C,H,W]; every per-channel vector is [C]. */
static inline xpb_status xpb_shp_batchnorm(const struct xpb_shp_check *c)
{
    int bwd = c->op->kind == XPB_OP_BATCHNORM_BWD;
    int x = bwd ? XPB_SHP_IN(1) : XPB_SHP_IN(0);
    xpb_status st = xpb_shp_expect_ndim(c, x, 2, 4);
    if (st != XPB_OK || (st = xpb_shp_expect_nonneg(c, "eps", c->op->attrs.eps)) != XPB_OK)
        return st;
    int64_t ch = xpb_shp_desc(c, x)->dims[1];
    const int like_x[3] = {x, XPB_SHP_IN(0), XPB_SHP_OUT(0)};
    if ((st = xpb_shp_expect_all_like(c, like_x, 3)) != XPB_OK)
        return st;
    for (int i = bwd ? 2 : 1; i < 5; i++)
        if ((st = xpb_shp_expect_vector(c, XPB_SHP_IN(i), ch)) != XPB_OK)
            return st;
    for (int j = 1; j < 3; j++)
        if ((st = xpb_shp_expect_vector(c, XPB_SHP_OUT(j), ch)) != XPB_OK)
            return st;
    return XPB_OK;
}

/* INSTANCENORM (x -> y [, ws_mean, ws_var]) and INSTANCENORM_BWD (dy, x, ws_mean, ws_var ->
 * dx): x is [N,C,H,W] or [N,C,L]; the statistics are [N,C]. */
static inline xpb_status xpb_shp_instancenorm(const struct xpb_shp_check *c)
{
    int bwd = c->op->kind == XPB_OP_INSTANCENORM_BWD;
    int x = bwd ? XPB_SHP_IN(1) : XPB_SHP_IN(0);
    xpb_status st = xpb_shp_expect_ndim(c, x, 3, 4);
    if (st != XPB_OK || (st = xpb_shp_expect_nonneg(c, "eps", c->op->attrs.eps)) != XPB_OK)
        return st;
    const int like_x[3] = {x, XPB_SHP_IN(0), XPB_SHP_OUT(0)};
    if ((st = xpb_shp_expect_all_like(c, like_x, 3)) != XPB_OK)
        return st;
    const xpb_tensor_desc *d = xpb_shp_desc(c, x);
    const int64_t nc[2] = {d->dims[0], d->dims[1]};
    const int stats[2] = {bwd ? XPB_SHP_IN(2) : XPB_SHP_OUT(1),
                          bwd ? XPB_SHP_IN(3) : XPB_SHP_OUT(2)};
    for (int i = 0; i < 2; i++)
        if ((st = xpb_shp_expect_shape(c, stats[i], 2, nc)) != XPB_OK)
            return st;
    return XPB_OK;
}

/* ---- elementwise, data movement, losses, optimizers ---- */

/* Every tensor of the op has the shape of input 0, and output 0 its dtype (activations and
 * their backward ops, ADD, COPY, DROPOUT, the loss backward ops, SGD_UPDATE). */
static inline xpb_status xpb_shp_same_shapes(const struct xpb_shp_check *c)
{
    int ts[XPB_MAX_OP_INPUTS + XPB_MAX_OP_OUTPUTS];
    int n = 0;
    for (uint32_t i = 0; i < c->n_in; i++)
        ts[n++] = XPB_SHP_IN((int)i);
    for (uint32_t j = 0; j < c->n_out; j++)
        ts[n++] = XPB_SHP_OUT((int)j);
    xpb_status st = xpb_shp_expect_all_like(c, ts, n);
    if (st != XPB_OK || c->n_out == 0)
        return st;
    char l0[160], lx[160], s0[16], sx[16];
    if (c->out[0]->dtype != c->in[0]->dtype)
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT, "%s must have the dtype of %s (%s), found %s",
                            xpb_shp_label(l0, sizeof l0, c, XPB_SHP_OUT(0)),
                            xpb_shp_label(lx, sizeof lx, c, XPB_SHP_IN(0)),
                            xpb_shp_dtype_str(sx, sizeof sx, c->in[0]->dtype),
                            xpb_shp_dtype_str(s0, sizeof s0, c->out[0]->dtype));
    return XPB_OK;
}

/* LEAKY_RELU_BWD decides on the forward output, which equals deciding on its input only for a
 * slope >= 0 (PyTorch refuses a negative slope there too). */
static inline xpb_status xpb_shp_leaky_relu_bwd(const struct xpb_shp_check *c)
{
    xpb_status st = xpb_shp_expect_nonneg(c, "negative_slope", c->op->attrs.negative_slope);
    return st != XPB_OK ? st : xpb_shp_same_shapes(c);
}

/* DROPOUT and DROPOUT_BWD: p in [0, 1]. */
static inline xpb_status xpb_shp_dropout(const struct xpb_shp_check *c)
{
    float p = c->op->attrs.dropout_p;
    if (!(p >= 0.0f && p <= 1.0f))
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT,
                            "attribute dropout_p must be in [0, 1], found %g", (double)p);
    return xpb_shp_same_shapes(c);
}

/* RESHAPE: the same element count and dtype. */
static inline xpb_status xpb_shp_reshape(const struct xpb_shp_check *c)
{
    const xpb_tensor_desc *x = c->in[0], *y = c->out[0];
    char lx[160], ly[160], sx[96], sy[96];
    if (xpb_tensor_numel(x) != xpb_tensor_numel(y))
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT,
                            "%s %s must have as many elements as %s %s (%lld), found %lld",
                            xpb_shp_label(ly, sizeof ly, c, XPB_SHP_OUT(0)),
                            xpb_shape_str(sy, sizeof sy, y->ndim, y->dims),
                            xpb_shp_label(lx, sizeof lx, c, XPB_SHP_IN(0)),
                            xpb_shape_str(sx, sizeof sx, x->ndim, x->dims),
                            (long long)xpb_tensor_numel(x), (long long)xpb_tensor_numel(y));
    if (x->dtype != y->dtype)
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT, "%s must have the dtype of %s (%s), found %s",
                            xpb_shp_label(ly, sizeof ly, c, XPB_SHP_OUT(0)),
                            xpb_shp_label(lx, sizeof lx, c, XPB_SHP_IN(0)),
                            xpb_shp_dtype_str(sx, sizeof sx, x->dtype),
                            xpb_shp_dtype_str(sy, sizeof sy, y->dtype));
    return XPB_OK;
}

/* FILL: any shape and dtype; the value is converted. */
static inline xpb_status xpb_shp_fill(const struct xpb_shp_check *c)
{
    (void)c;
    return XPB_OK;
}

/* ALL_REDUCE (x* ->, op set 2): any shape; the counts and the F32 dtype are the table's. */
static inline xpb_status xpb_shp_all_reduce(const struct xpb_shp_check *c)
{
    (void)c;
    return XPB_OK;
}

/* SOFTMAX_XENT (logits[N,K], labels[N] -> loss[1] [, ws_prob[N,K]]) and SOFTMAX_XENT_BWD
 * (ws_prob[N,K], labels[N] -> dlogits[N,K]). */
static inline xpb_status xpb_shp_softmax_xent(const struct xpb_shp_check *c)
{
    xpb_status st = xpb_shp_expect_ndim(c, XPB_SHP_IN(0), 2, 2);
    if (st != XPB_OK || (st = xpb_shp_expect_vector(c, XPB_SHP_IN(1), c->in[0]->dims[0])) != XPB_OK)
        return st;
    if (c->op->kind == XPB_OP_SOFTMAX_XENT_BWD)
        return xpb_shp_expect_like(c, XPB_SHP_OUT(0), XPB_SHP_IN(0));
    if ((st = xpb_shp_expect_vector(c, XPB_SHP_OUT(0), 1)) != XPB_OK)
        return st;
    return xpb_shp_expect_like(c, XPB_SHP_OUT(1), XPB_SHP_IN(0));
}

/* MSE_LOSS, L1_LOSS: x, target of one shape -> loss[1]. */
static inline xpb_status xpb_shp_loss(const struct xpb_shp_check *c)
{
    xpb_status st = xpb_shp_expect_like(c, XPB_SHP_IN(1), XPB_SHP_IN(0));
    return st != XPB_OK ? st : xpb_shp_expect_vector(c, XPB_SHP_OUT(0), 1);
}

/* ADAM_UPDATE: param, grad, m, v of one shape; step [1]. */
static inline xpb_status xpb_shp_adam(const struct xpb_shp_check *c)
{
    const int ts[4] = {XPB_SHP_IN(0), XPB_SHP_IN(1), XPB_SHP_IN(2), XPB_SHP_IN(3)};
    xpb_status st = xpb_shp_expect_all_like(c, ts, 4);
    return st != XPB_OK ? st : xpb_shp_expect_vector(c, XPB_SHP_IN(4), 1);
}

/* ---- pooling and padding ---- */

/* MAXPOOL (x -> y [, ws_index]), MAXPOOL_BWD (dy, ws_index -> dx), AVGPOOL (x -> y),
 * AVGPOOL_BWD (dy -> dx). PyTorch's limits: pad <= kernel / 2, floor mode. */
static inline xpb_status xpb_shp_pool(const struct xpb_shp_check *c)
{
    const xpb_op_attrs *at = &c->op->attrs;
    uint32_t kind = c->op->kind;
    int bwd = kind == XPB_OP_MAXPOOL_BWD || kind == XPB_OP_AVGPOOL_BWD;
    int data = bwd ? XPB_SHP_OUT(0) : XPB_SHP_IN(0), result = bwd ? XPB_SHP_IN(0) : XPB_SHP_OUT(0);
    xpb_status st = xpb_shp_expect_ndim(c, data, 4, 4);
    if (st != XPB_OK)
        return st;
    if ((st = xpb_shp_expect_pair(c, "kernel", at->kernel, 1, INT32_MAX)) != XPB_OK ||
        (st = xpb_shp_expect_pair(c, "stride", at->stride, 1, INT32_MAX)) != XPB_OK ||
        (st = xpb_shp_expect_pair(c, "pad", at->pad, 0, INT32_MAX)) != XPB_OK)
        return st;
    if (at->pad[0] > at->kernel[0] / 2 || at->pad[1] > at->kernel[1] / 2)
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT,
                            "attribute pad (%d, %d) must be at most half the kernel (%d, %d)",
                            at->pad[0], at->pad[1], at->kernel[0], at->kernel[1]);
    if ((kind == XPB_OP_AVGPOOL || kind == XPB_OP_AVGPOOL_BWD) && at->count_include_pad != 0 &&
        at->count_include_pad != 1)
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT,
                            "attribute count_include_pad must be 0 or 1, found %d",
                            at->count_include_pad);
    const xpb_tensor_desc *x = xpb_shp_desc(c, data);
    int64_t want[4] = {x->dims[0], x->dims[1], 0, 0};
    for (int d = 0; d < 2; d++) {
        int64_t span = x->dims[2 + d] + 2 * (int64_t)at->pad[d] - at->kernel[d];
        char l[160], s[96];
        if (span < 0)
            return xpb_shp_fail(
                c, XPB_INVALID_ARGUMENT, "a %dx%d window with pad (%d, %d) does not fit %s %s",
                at->kernel[0], at->kernel[1], at->pad[0], at->pad[1],
                xpb_shp_label(l, sizeof l, c, data), xpb_shape_str(s, sizeof s, x->ndim, x->dims));
        want[2 + d] = span / at->stride[d] + 1;
    }
    if ((st = xpb_shp_expect_shape(c, result, 4, want)) != XPB_OK)
        return st;
    if (kind == XPB_OP_MAXPOOL)
        return xpb_shp_expect_like(c, XPB_SHP_OUT(1), XPB_SHP_OUT(0));
    if (kind == XPB_OP_MAXPOOL_BWD)
        return xpb_shp_expect_like(c, XPB_SHP_IN(1), XPB_SHP_IN(0));
    return XPB_OK;
}

/* GLOBAL_AVGPOOL (x[N,C,H,W] -> y[N,C,1,1]) and its backward (dy[N,C,1,1] -> dx[N,C,H,W]). */
static inline xpb_status xpb_shp_global_pool(const struct xpb_shp_check *c)
{
    int bwd = c->op->kind == XPB_OP_GLOBAL_AVGPOOL_BWD;
    int data = bwd ? XPB_SHP_OUT(0) : XPB_SHP_IN(0), result = bwd ? XPB_SHP_IN(0) : XPB_SHP_OUT(0);
    xpb_status st = xpb_shp_expect_ndim(c, data, 4, 4);
    if (st != XPB_OK)
        return st;
    const xpb_tensor_desc *x = xpb_shp_desc(c, data);
    int64_t want[4] = {x->dims[0], x->dims[1], 1, 1};
    return xpb_shp_expect_shape(c, result, 4, want);
}

/* REFLECTION_PAD (x[N,C,H,W] -> y[N,C,H+2ph,W+2pw]) and its backward (dy -> dx). */
static inline xpb_status xpb_shp_reflection_pad(const struct xpb_shp_check *c)
{
    const xpb_op_attrs *at = &c->op->attrs;
    int bwd = c->op->kind == XPB_OP_REFLECTION_PAD_BWD;
    int data = bwd ? XPB_SHP_OUT(0) : XPB_SHP_IN(0), result = bwd ? XPB_SHP_IN(0) : XPB_SHP_OUT(0);
    xpb_status st = xpb_shp_expect_ndim(c, data, 4, 4);
    if (st != XPB_OK || (st = xpb_shp_expect_pair(c, "pad", at->pad, 0, INT32_MAX)) != XPB_OK)
        return st;
    const xpb_tensor_desc *x = xpb_shp_desc(c, data);
    char l[160], s[96];
    if (at->pad[0] >= x->dims[2] || at->pad[1] >= x->dims[3])
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT,
                            "attribute pad (%d, %d) must be smaller than the %lldx%lld plane of "
                            "%s %s",
                            at->pad[0], at->pad[1], (long long)x->dims[2], (long long)x->dims[3],
                            xpb_shp_label(l, sizeof l, c, data),
                            xpb_shape_str(s, sizeof s, x->ndim, x->dims));
    int64_t want[4] = {x->dims[0], x->dims[1], x->dims[2] + 2 * (int64_t)at->pad[0],
                       x->dims[3] + 2 * (int64_t)at->pad[1]};
    return xpb_shp_expect_shape(c, result, 4, want);
}

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
         {"x", "w", "b"}, {"y"}, xpb_shp_conv},
        {XPB_OP_CONV2D_BWD_DATA,      2, 2, 1, 1, 0, 0, 0, 0, 0, 0,
         {"dy", "w"}, {"dx"}, xpb_shp_conv},
        {XPB_OP_CONV2D_BWD_WEIGHTS,   2, 2, 1, 2, 0, 0, 0, 0, 0, 0,
         {"dy", "x"}, {"dw", "db"}, xpb_shp_conv},
        {XPB_OP_CONV_T2D,             2, 3, 1, 1, 0, 0, 0, 0, 0, 1,
         {"x", "w", "b"}, {"y"}, xpb_shp_conv},
        {XPB_OP_CONV_T2D_BWD_DATA,    2, 2, 1, 1, 0, 0, 0, 0, 0, 0,
         {"dy", "w"}, {"dx"}, xpb_shp_conv},
        {XPB_OP_CONV_T2D_BWD_WEIGHTS, 2, 2, 1, 2, 0, 0, 0, 0, 0, 0,
         {"dy", "x"}, {"dw", "db"}, xpb_shp_conv},
        {XPB_OP_LINEAR,               2, 3, 1, 1, 0, 0, 0, 0, 0, 1,
         {"x", "w", "b"}, {"y"}, xpb_shp_linear},
        {XPB_OP_LINEAR_BWD_DATA,      2, 2, 1, 1, 0, 0, 0, 0, 0, 0,
         {"dy", "w"}, {"dx"}, xpb_shp_linear},
        {XPB_OP_LINEAR_BWD_WEIGHTS,   2, 2, 1, 2, 0, 0, 0, 0, 0, 0,
         {"dy", "x"}, {"dw", "db"}, xpb_shp_linear},
        {XPB_OP_BATCHNORM_TRAIN,      5, 5, 1, 3, XPB_SHP_B(1) | XPB_SHP_B(2), 0, 0, 0, 0, 1,
         {"x", "gamma", "beta", "running_mean", "running_var"}, {"y", "ws_mean", "ws_var"},
         xpb_shp_batchnorm},
        {XPB_OP_BATCHNORM_INFER,      5, 5, 1, 1, 0, 0, 0, 0, 0, 1,
         {"x", "gamma", "beta", "running_mean", "running_var"}, {"y"}, xpb_shp_batchnorm},
        {XPB_OP_BATCHNORM_BWD,        5, 5, 3, 3, XPB_SHP_B(0) | XPB_SHP_B(1) | XPB_SHP_B(2),
                                      0, 0, 0, 0, 0,
         {"dy", "x", "gamma", "ws_mean", "ws_var"}, {"dx", "dgamma", "dbeta"}, xpb_shp_batchnorm},
        {XPB_OP_INSTANCENORM,         1, 1, 1, 3, XPB_SHP_B(1) | XPB_SHP_B(2), 0, 0, 0, 0, 1,
         {"x"}, {"y", "ws_mean", "ws_var"}, xpb_shp_instancenorm},
        {XPB_OP_INSTANCENORM_BWD,     4, 4, 1, 1, 0, 0, 0, 0, 0, 0,
         {"dy", "x", "ws_mean", "ws_var"}, {"dx"}, xpb_shp_instancenorm},
        {XPB_OP_RELU,                 1, 1, 1, 1, 0, 0, 0, 0, 0, 1,
         {"x"}, {"y"}, xpb_shp_same_shapes},
        {XPB_OP_RELU_BWD,             2, 2, 1, 1, 0, 0, 0, 0, 0, 0,
         {"dy", "y"}, {"dx"}, xpb_shp_same_shapes},
        {XPB_OP_LEAKY_RELU,           1, 1, 1, 1, 0, 0, 0, 0, 0, 1,
         {"x"}, {"y"}, xpb_shp_same_shapes},
        {XPB_OP_LEAKY_RELU_BWD,       2, 2, 1, 1, 0, 0, 0, 0, 0, 0,
         {"dy", "y"}, {"dx"}, xpb_shp_leaky_relu_bwd},
        {XPB_OP_TANH,                 1, 1, 1, 1, 0, 0, 0, 0, 0, 1,
         {"x"}, {"y"}, xpb_shp_same_shapes},
        {XPB_OP_TANH_BWD,             2, 2, 1, 1, 0, 0, 0, 0, 0, 0,
         {"dy", "y"}, {"dx"}, xpb_shp_same_shapes},
        {XPB_OP_MAXPOOL,              1, 1, 1, 2, XPB_SHP_B(1), 0, XPB_SHP_B(1), 0, 0, 1,
         {"x"}, {"y", "ws_index"}, xpb_shp_pool},
        {XPB_OP_MAXPOOL_BWD,          2, 2, 1, 1, 0, XPB_SHP_B(1), 0, 0, 0, 0,
         {"dy", "ws_index"}, {"dx"}, xpb_shp_pool},
        {XPB_OP_AVGPOOL,              1, 1, 1, 1, 0, 0, 0, 0, 0, 1, {"x"}, {"y"}, xpb_shp_pool},
        {XPB_OP_AVGPOOL_BWD,          1, 1, 1, 1, 0, 0, 0, 0, 0, 0, {"dy"}, {"dx"}, xpb_shp_pool},
        {XPB_OP_GLOBAL_AVGPOOL,       1, 1, 1, 1, 0, 0, 0, 0, 0, 1,
         {"x"}, {"y"}, xpb_shp_global_pool},
        {XPB_OP_GLOBAL_AVGPOOL_BWD,   1, 1, 1, 1, 0, 0, 0, 0, 0, 0,
         {"dy"}, {"dx"}, xpb_shp_global_pool},
        {XPB_OP_ADD,                  2, 2, 1, 1, 0, 0, 0, 0, 0, 1,
         {"a", "b"}, {"y"}, xpb_shp_same_shapes},
        {XPB_OP_REFLECTION_PAD,       1, 1, 1, 1, 0, 0, 0, 0, 0, 1,
         {"x"}, {"y"}, xpb_shp_reflection_pad},
        {XPB_OP_REFLECTION_PAD_BWD,   1, 1, 1, 1, 0, 0, 0, 0, 0, 0,
         {"dy"}, {"dx"}, xpb_shp_reflection_pad},
        {XPB_OP_RESHAPE,              1, 1, 1, 1, 0, 0, 0, XPB_SHP_B(0), XPB_SHP_B(0), 0,
         {"x"}, {"y"}, xpb_shp_reshape},
        {XPB_OP_SOFTMAX_XENT,         2, 2, 1, 2, XPB_SHP_B(1), XPB_SHP_B(1), 0, 0, 0, 1,
         {"logits", "labels"}, {"loss", "ws_prob"}, xpb_shp_softmax_xent},
        {XPB_OP_SOFTMAX_XENT_BWD,     2, 2, 1, 1, 0, XPB_SHP_B(1), 0, 0, 0, 0,
         {"ws_prob", "labels"}, {"dlogits"}, xpb_shp_softmax_xent},
        {XPB_OP_MSE_LOSS,             2, 2, 1, 1, 0, 0, 0, 0, 0, 1,
         {"x", "target"}, {"loss"}, xpb_shp_loss},
        {XPB_OP_MSE_LOSS_BWD,         2, 2, 1, 1, 0, 0, 0, 0, 0, 0,
         {"x", "target"}, {"dx"}, xpb_shp_same_shapes},
        {XPB_OP_L1_LOSS,              2, 2, 1, 1, 0, 0, 0, 0, 0, 1,
         {"x", "target"}, {"loss"}, xpb_shp_loss},
        {XPB_OP_L1_LOSS_BWD,          2, 2, 1, 1, 0, 0, 0, 0, 0, 0,
         {"x", "target"}, {"dx"}, xpb_shp_same_shapes},
        {XPB_OP_DROPOUT,              1, 1, 1, 2, XPB_SHP_B(1), 0, 0, 0, 0, 1,
         {"x"}, {"y", "ws_mask"}, xpb_shp_dropout},
        {XPB_OP_DROPOUT_BWD,          2, 2, 1, 1, 0, 0, 0, 0, 0, 0,
         {"dy", "ws_mask"}, {"dx"}, xpb_shp_dropout},
        {XPB_OP_SGD_UPDATE,           2, 3, 0, 0, 0, 0, 0, 0, 0, 0,
         {"param", "grad", "momentum_buf"}, {0}, xpb_shp_same_shapes},
        {XPB_OP_ADAM_UPDATE,          5, 5, 0, 0, 0, 0, 0, XPB_SHP_B(4), 0, 0,
         {"param", "grad", "m", "v", "step"}, {0}, xpb_shp_adam},
        {XPB_OP_FILL,                 0, 0, 1, 1, 0, 0, 0, 0, XPB_SHP_B(0), 0,
         {0}, {"y"}, xpb_shp_fill},
        {XPB_OP_COPY,                 1, 1, 1, 1, 0, 0, 0, XPB_SHP_B(0), XPB_SHP_B(0), 1,
         {"x"}, {"y"}, xpb_shp_same_shapes},
        /* op set 2 */
        {XPB_OP_ALL_REDUCE,           1, 1, 0, 0, 0, 0, 0, 0, 0, 0,
         {"x"}, {0}, xpb_shp_all_reduce},
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
    if (any & XPB_SHP_BIT(index)) {
        ok = d->dtype == XPB_DTYPE_F32 || d->dtype == XPB_DTYPE_I32;
        want = "F32 or I32";
    } else if (i32 & XPB_SHP_BIT(index)) {
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
        if (!c->in[i])
            return xpb_shp_fail(c, XPB_INVALID_ARGUMENT, "input %u (%s) is missing", i,
                                r->in_names[i] ? r->in_names[i] : "?");
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
                                r->out_names[j] ? r->out_names[j] : "?");
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
 * may be "not wanted" may be NULL). Reads op->kind, n_inputs, n_outputs, attrs and layer only,
 * so it works on ops of an ABI 1.0 host too. XPB_OK, or XPB_INVALID_ARGUMENT (XPB_UNSUPPORTED
 * for an op kind these headers do not know) with "<OP> (layer '<layer>'): ..." in msg. */
static inline xpb_status xpb_op_check(const xpb_op *op, const xpb_tensor_desc *const *in,
                                      const xpb_tensor_desc *const *out, char *msg, size_t size)
{
    struct xpb_shp_check c;
    xpb_shp_begin(&c, op, msg, size);
    if (op->n_inputs > XPB_MAX_OP_INPUTS || op->n_outputs > XPB_MAX_OP_OUTPUTS)
        return xpb_shp_fail(&c, XPB_INVALID_ARGUMENT,
                            "n_inputs %u and n_outputs %u, at most %d and %d", op->n_inputs,
                            op->n_outputs, XPB_MAX_OP_INPUTS, XPB_MAX_OP_OUTPUTS);
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
    if (op->n_inputs > XPB_MAX_OP_INPUTS)
        return xpb_shp_fail(&c, XPB_INVALID_ARGUMENT, "n_inputs %u, at most %d", op->n_inputs,
                            XPB_MAX_OP_INPUTS);
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
    if (op->n_inputs > XPB_MAX_OP_INPUTS || op->n_outputs > XPB_MAX_OP_OUTPUTS)
        return xpb_shp_fail(&c, XPB_INVALID_ARGUMENT,
                            "n_inputs %u and n_outputs %u, at most %d and %d", op->n_inputs,
                            op->n_outputs, XPB_MAX_OP_INPUTS, XPB_MAX_OP_OUTPUTS);
    c.n_in = op->n_inputs;
    c.n_out = op->n_outputs;
    for (uint32_t k = 0; k < c.n_in + c.n_out; k++) {
        int is_out = k >= c.n_in;
        uint32_t slot = is_out ? k - c.n_in : k, id = is_out ? op->outputs[slot] : op->inputs[slot];
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
        for (uint32_t j = 0; j < c.n_out; j++)
            if (op->inputs[i] != XPB_NO_TENSOR && op->inputs[i] == op->outputs[j]) {
                const xpb_tensor_desc *t = xpb_program_tensor(p, op->inputs[i]);
                return xpb_shp_fail(&c, XPB_INVALID_ARGUMENT,
                                    "tensor %u \"%s\" is both input %u and output %u (an op "
                                    "never writes what it reads, docs/ops.md)",
                                    op->inputs[i], t->name ? t->name : "", i, j);
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
