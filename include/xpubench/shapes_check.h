/* xpubench public SDK: the machinery of the shape rules (shapes.h includes it; do not include it
 * alone). Names beginning with xpb_shp_ / XPB_SHP_ are internals of the shape rules. */
#ifndef XPUBENCH_SHAPES_CHECK_H
#define XPUBENCH_SHAPES_CHECK_H

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
/* Operands one check holds: CLIP_GRAD_NORM takes one input per gradient of a phase. */
#define XPB_SHP_MAX_IN 512
#define XPB_SHP_MAX_OUT 8
/* Role names a rule gives (operands beyond them take the last name: "g" of CLIP_GRAD_NORM). */
#define XPB_SHP_NAMES 12
#define XPB_SHP_IN(i) (i)
#define XPB_SHP_OUT(j) (XPB_SHP_MAX_IN + (j))
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
    uint16_t in_min, in_max;
    uint8_t out_min, out_max;
    uint16_t optional_out;    /* bit j: output j may be XPB_NO_TENSOR ("not wanted") */
    uint16_t in_i32, out_i32; /* bit i: the tensor is I32 */
    uint16_t in_any, out_any; /* bit i: the tensor may be F32 or I32 */
    uint8_t infer;            /* 1: output 0 follows from the inputs (xpb_op_infer_shape) */
    const char *in_names[XPB_SHP_NAMES];
    const char *out_names[XPB_SHP_NAMES];
    xpb_status (*shapes)(const struct xpb_shp_check *c);
    uint16_t optional_in; /* bit i: input i may be XPB_NO_TENSOR (absent) */
};

/* One op being checked (or, with `infer`, having its first output inferred). */
struct xpb_shp_check {
    const xpb_op *op;
    uint32_t n_in, n_out;
    const xpb_tensor_desc *in[XPB_SHP_MAX_IN]; /* NULL: absent */
    const xpb_tensor_desc *out[XPB_SHP_MAX_OUT];
    xpb_tensor_desc *infer; /* xpb_op_infer_shape: output 0, written by the rules */
    int ext;                /* 1: op has the op-set-3 attribute members (ABI 1.3) */
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
        return t - XPB_SHP_OUT(0) < XPB_SHP_MAX_OUT ? c->out[t - XPB_SHP_OUT(0)] : NULL;
    return t < XPB_SHP_MAX_IN ? c->in[t] : NULL;
}

/* "input w \"conv1.weight\"" into buf (the caller owns it); returns buf. */
static inline const char *xpb_shp_label(char *buf, size_t size, const struct xpb_shp_check *c,
                                        int t)
{
    int is_out = t >= XPB_SHP_OUT(0);
    int index = is_out ? t - XPB_SHP_OUT(0) : t;
    int name = index < XPB_SHP_NAMES ? index : XPB_SHP_NAMES - 1;
    const char *role = is_out ? c->rule->out_names[name] : c->rule->in_names[name];
    while (!role && name > 0) /* beyond the named operands: the last name */
        role = is_out ? c->rule->out_names[--name] : c->rule->in_names[--name];
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

#ifdef __cplusplus
}
#endif
#endif
