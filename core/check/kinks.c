/* Near-ties between two runs of one step, and the aligned reference (see kinks.h). */
#include "check/kinks.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Both sides' values of the tensors an op's kink depends on: inputs[0] (and, for L1,
 * inputs[1]) of one backward op. */
typedef struct kink_values {
    int64_t n;
    float *a[2]; /* session a: the op's first input, and its second for L1 */
    float *b[2]; /* session b: likewise */
} kink_values;

static void values_free(kink_values *v)
{
    for (int k = 0; k < 2; k++) {
        free(v->a[k]);
        free(v->b[k]);
    }
}

/* Reads what `op` (RELU_BWD, LEAKY_RELU_BWD: its input y; L1_LOSS_BWD: x and t) depends on from
 * both sessions into *v (released with values_free, also on failure). */
static xpb_status values_read(kink_values *v, xpb_session *a, xpb_session *b,
                              const xpb_model_program *mp, const xpb_op *op, int l1, xpb_err *err)
{
    uint32_t first = op->inputs[l1 ? 0 : 1];
    v->n = xpb_tensor_numel(&mp->tensors[first]);
    for (int k = 0; k < (l1 ? 2 : 1); k++) {
        uint32_t t = k == 0 ? first : op->inputs[1];
        v->a[k] = malloc((size_t)v->n * sizeof(float));
        v->b[k] = malloc((size_t)v->n * sizeof(float));
        if (!v->a[k] || !v->b[k])
            return xpb_err_set(err, XPB_OUT_OF_MEMORY, "kink flips: out of memory");
        xpb_status st = xpb_session_read(a, t, v->a[k], err);
        if (st == XPB_OK)
            st = xpb_session_read(b, t, v->b[k], err);
        if (st != XPB_OK)
            return st;
    }
    return XPB_OK;
}

static int64_t count_flips(const kink_values *v, int l1)
{
    int64_t flips = 0;
    for (int64_t j = 0; j < v->n; j++) {
        if (l1) {
            float da = v->a[0][j] - v->a[1][j], db = v->b[0][j] - v->b[1][j];
            flips += (da > 0) != (db > 0) || (da < 0) != (db < 0);
        } else {
            flips += (v->a[0][j] > 0) != (v->b[0][j] > 0);
        }
    }
    return flips;
}

xpb_status xpb_kink_flips(int64_t *flips, xpb_session *a, xpb_session *b,
                          const xpb_model_program *mp, xpb_err *err)
{
    *flips = 0;
    for (uint32_t i = 0; i < mp->n_ops; i++) {
        const xpb_op *op = &mp->ops[i];
        int l1 = op->kind == XPB_OP_L1_LOSS_BWD;
        if (!l1 && op->kind != XPB_OP_RELU_BWD && op->kind != XPB_OP_LEAKY_RELU_BWD)
            continue;
        kink_values v = {0};
        xpb_status st = values_read(&v, a, b, mp, op, l1, err);
        if (st == XPB_OK)
            *flips += count_flips(&v, l1);
        values_free(&v);
        if (st != XPB_OK)
            return st;
    }
    return XPB_OK;
}

/* ---- the aligned reference ---- */

enum decision_kind {
    DECIDE_SIGN = 0, /* RELU_BWD, LEAKY_RELU_BWD: y > 0 */
    DECIDE_L1 = 1,   /* L1_LOSS_BWD: sign(x - target) */
    DECIDE_POOL = 2, /* MAXPOOL_BWD: the argmax of the forward's input */
};

/* One decision input of backward ops: what it is read from and where the backend's copy goes. */
struct decision {
    uint32_t kind;      /* enum decision_kind */
    uint32_t source[2]; /* y; x and target; the max pool's input x (second unused: NO_TENSOR) */
    uint32_t ws;        /* DECIDE_POOL: the index workspace the copy stands for */
    uint32_t copy[2];   /* the host-written copies in the aligned program */
    const xpb_op *pool; /* DECIDE_POOL: the forward MAXPOOL (its attrs and shapes) */
    char name[2][96];   /* the copies' names */
};

struct xpb_kink_reference {
    xpb_model_program mp; /* the caller's, with its own tensors, ops and tensor_value */
    struct decision *d;
    uint32_t n;
};

/* The MAXPOOL of mp that writes workspace `ws`; NULL when none does. */
static const xpb_op *pool_writing(const xpb_model_program *mp, uint32_t ws)
{
    for (uint32_t i = 0; i < mp->n_ops; i++)
        if (mp->ops[i].kind == XPB_OP_MAXPOOL && mp->ops[i].n_outputs > 1 &&
            mp->ops[i].outputs[1] == ws)
            return &mp->ops[i];
    return NULL;
}

/* The decision that op `op` reads (its kind and sources into *d); 0 when the op decides
 * nothing the host can align. */
static int decision_of(struct decision *d, const xpb_model_program *mp, const xpb_op *op)
{
    memset(d, 0, sizeof *d);
    d->source[1] = d->copy[1] = d->ws = XPB_NO_TENSOR;
    switch (op->kind) {
    case XPB_OP_RELU_BWD:
    case XPB_OP_LEAKY_RELU_BWD:
        d->kind = DECIDE_SIGN;
        d->source[0] = op->inputs[1];
        return 1;
    case XPB_OP_L1_LOSS_BWD:
        d->kind = DECIDE_L1;
        d->source[0] = op->inputs[0];
        d->source[1] = op->inputs[1];
        return 1;
    case XPB_OP_MAXPOOL_BWD:
        d->kind = DECIDE_POOL;
        d->ws = op->inputs[1];
        d->pool = pool_writing(mp, d->ws);
        if (!d->pool)
            return 0;
        d->source[0] = d->pool->inputs[0];
        return 1;
    default:
        return 0;
    }
}

/* The index of the decision equal to *d among k->d, adding it (with its copies appended to
 * the aligned program's tensors) when new. */
static uint32_t find_or_add(xpb_kink_reference *k, const struct decision *d)
{
    for (uint32_t i = 0; i < k->n; i++)
        if (k->d[i].kind == d->kind && k->d[i].source[0] == d->source[0] &&
            k->d[i].source[1] == d->source[1] && k->d[i].ws == d->ws)
            return i;
    struct decision *nd = &k->d[k->n];
    *nd = *d;
    for (int s = 0; s < 2; s++) {
        uint32_t from = d->kind != DECIDE_POOL ? d->source[s] : s == 0 ? d->ws : XPB_NO_TENSOR;
        if (from == XPB_NO_TENSOR)
            continue;
        xpb_tensor_desc *t = &k->mp.tensors[k->mp.n_tensors];
        *t = k->mp.tensors[from];
        snprintf(nd->name[s], sizeof nd->name[s], "%s.decision", t->name);
        t->name = nd->name[s];
        t->role = XPB_ROLE_STATE; /* zero at initialisation, then the backend's values */
        t->flags = XPB_TENSOR_PERSISTENT | XPB_TENSOR_HOST_WRITE | XPB_TENSOR_HOST_READ;
        t->grad_of = 0;
        t->first_op = 0;
        t->last_op = k->mp.n_ops ? k->mp.n_ops - 1 : 0;
        nd->copy[s] = k->mp.n_tensors++;
    }
    return k->n++;
}

void xpb_kink_reference_free(xpb_kink_reference *k)
{
    if (!k)
        return;
    free(k->mp.tensors);
    free(k->mp.ops);
    free(k->mp.tensor_value);
    free(k->d);
    free(k);
}

xpb_status xpb_kink_reference_create(xpb_kink_reference **out, const xpb_model_program *mp,
                                     xpb_err *err)
{
    *out = NULL;
    uint32_t most = 0; /* decision tensors at most: two per op */
    struct decision d;
    for (uint32_t i = 0; i < mp->n_ops; i++)
        most += decision_of(&d, mp, &mp->ops[i]) ? 2 : 0;
    xpb_kink_reference *k = calloc(1, sizeof *k);
    if (!k)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "aligned reference: out of memory");
    k->mp = *mp;
    k->mp.tensors = malloc(((size_t)mp->n_tensors + most + 1) * sizeof *k->mp.tensors);
    k->mp.tensor_value = calloc((size_t)mp->n_tensors + most + 1, sizeof *k->mp.tensor_value);
    k->mp.ops = malloc(((size_t)mp->n_ops + 1) * sizeof *k->mp.ops);
    k->d = malloc(((size_t)most / 2 + 1) * sizeof *k->d);
    if (!k->mp.tensors || !k->mp.tensor_value || !k->mp.ops || !k->d) {
        xpb_kink_reference_free(k);
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "aligned reference: out of memory");
    }
    memcpy(k->mp.tensors, mp->tensors, (size_t)mp->n_tensors * sizeof *mp->tensors);
    memcpy(k->mp.tensor_value, mp->tensor_value, (size_t)mp->n_tensors * sizeof *mp->tensor_value);
    memcpy(k->mp.ops, mp->ops, (size_t)mp->n_ops * sizeof *mp->ops);
    for (uint32_t i = 0; i < mp->n_ops; i++) {
        xpb_op *op = &k->mp.ops[i];
        if (!decision_of(&d, mp, &mp->ops[i]))
            continue;
        const struct decision *at = &k->d[find_or_add(k, &d)];
        if (d.kind == DECIDE_SIGN)
            op->inputs[1] = at->copy[0];
        else if (d.kind == DECIDE_L1) {
            op->inputs[0] = at->copy[0];
            op->inputs[1] = at->copy[1];
        } else {
            op->inputs[1] = at->copy[0];
        }
    }
    k->mp.program.n_tensors = k->mp.n_tensors;
    k->mp.program.tensors = k->mp.tensors;
    k->mp.program.ops = k->mp.ops;
    *out = k;
    return XPB_OK;
}

const xpb_model_program *xpb_kink_reference_program(const xpb_kink_reference *k)
{
    return &k->mp;
}

/* The argmax of every window of max pool `pool` over x (its input, of shape xd) into index
 * (of shape wd): h*W + w within the plane, the first maximum in row-major window order, a NaN
 * winning, as the reference stores it (docs/ops.md). */
static void pool_argmax(int32_t *index, const float *x, const xpb_op *pool,
                        const xpb_tensor_desc *xd, const xpb_tensor_desc *wd)
{
    const xpb_op_attrs *a = &pool->attrs;
    int64_t planes = xd->dims[0] * xd->dims[1], h = xd->dims[2], w = xd->dims[3];
    int64_t oh = wd->dims[2], ow = wd->dims[3];
    for (int64_t p = 0; p < planes; p++)
        for (int64_t oy = 0; oy < oh; oy++)
            for (int64_t ox = 0; ox < ow; ox++) {
                int64_t h0 = oy * a->stride[0] - a->pad[0], w0 = ox * a->stride[1] - a->pad[1];
                int64_t h1 = h0 + a->kernel[0] < h ? h0 + a->kernel[0] : h;
                int64_t w1 = w0 + a->kernel[1] < w ? w0 + a->kernel[1] : w;
                h0 = h0 > 0 ? h0 : 0;
                w0 = w0 > 0 ? w0 : 0;
                float best = -INFINITY;
                int64_t at = h0 * w + w0;
                for (int64_t i = h0; i < h1; i++)
                    for (int64_t j = w0; j < w1; j++) {
                        float v = x[p * h * w + i * w + j];
                        if (v > best || isnan(v)) {
                            best = v;
                            at = i * w + j;
                        }
                    }
                index[(p * oh + oy) * ow + ox] = (int32_t)at;
            }
}

/* Buffers for the values of one decision: [0], [1] the backend's, [2], [3] the reference's. */
struct values {
    void *v[4];
};

static void values_release(struct values *v)
{
    for (int i = 0; i < 4; i++)
        free(v->v[i]);
    memset(v, 0, sizeof *v);
}

/* Allocates v->v[slot] for tensor t of mp and reads it from session s. */
static xpb_status read_into(struct values *v, int slot, xpb_session *s, const xpb_model_program *mp,
                            uint32_t t, xpb_err *err)
{
    if (!(v->v[slot] = malloc(xpb_tensor_bytes(&mp->tensors[t]))))
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "aligned reference: out of memory");
    return xpb_session_read(s, t, v->v[slot], err);
}

/* Writes `bytes` of data to tensor t of session s. */
static xpb_status write_tensor(xpb_session *s, uint32_t t, const void *data, size_t bytes,
                               xpb_err *err)
{
    xpb_status st = s->api->write(s->exe, t, data, bytes);
    if (st != XPB_OK)
        return xpb_err_set(err, st, "writing '%s': %s", s->mp->tensors[t].name,
                           s->api->exe_last_error(s->exe));
    return XPB_OK;
}

/* The backend's decision `d` from dut into ref. */
static xpb_status write_decision(const xpb_kink_reference *k, const struct decision *d,
                                 xpb_session *ref, xpb_session *dut, xpb_err *err)
{
    struct values v = {{0}};
    xpb_status st = XPB_OK;
    for (int s = 0; s < 2 && st == XPB_OK; s++) {
        if (d->copy[s] == XPB_NO_TENSOR)
            continue;
        const xpb_tensor_desc *cd = &k->mp.tensors[d->copy[s]];
        if ((st = read_into(&v, s, dut, &k->mp, d->source[s], err)) != XPB_OK)
            break;
        if (d->kind == DECIDE_POOL) {
            if (!(v.v[2] = malloc(xpb_tensor_bytes(cd)))) {
                st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "aligned reference: out of memory");
                break;
            }
            pool_argmax(v.v[2], v.v[0], d->pool, &k->mp.tensors[d->source[0]], cd);
        }
        st = write_tensor(ref, d->copy[s], v.v[d->kind == DECIDE_POOL ? 2 : s],
                          xpb_tensor_bytes(cd), err);
    }
    values_release(&v);
    return st;
}

xpb_status xpb_kink_reference_write(xpb_kink_reference *k, xpb_session *ref, xpb_session *dut,
                                    xpb_err *err)
{
    for (uint32_t i = 0; i < k->n; i++) {
        xpb_status st = write_decision(k, &k->d[i], ref, dut, err);
        if (st != XPB_OK)
            return st;
    }
    return XPB_OK;
}

/* The RMS of the finite elements of v[0 .. n) (minus w[0 .. n) when w is not NULL). */
static double rms_of(const float *v, const float *w, int64_t n)
{
    double sum = 0.0;
    int64_t m = 0;
    for (int64_t j = 0; j < n; j++) {
        double x = w ? (double)v[j] - (double)w[j] : (double)v[j];
        if (isfinite(x)) {
            sum += x * x;
            m++;
        }
    }
    return m ? sqrt(sum / (double)m) : 0.0;
}

/* Counts one flip of tensor t at element j, `dist` apart (a fraction of the RMS; NaN: far), as
 * near or far, locating the first far one. */
static void count_flip(struct xpb_kink_count *out, int pool, const xpb_tensor_desc *t, int64_t j,
                       double dist, double backend, double reference)
{
    if (dist <= XPB_KINK_NEAR) {
        *(pool ? &out->pool_flips : &out->flips) += 1;
        out->widest = dist > out->widest ? dist : out->widest;
        return;
    }
    if (out->far++ > 0)
        return;
    struct xpb_located *l = &out->first_far;
    snprintf(l->tensor, sizeof l->tensor, "%s", t->name);
    l->error = dist;
    l->tolerance = XPB_KINK_NEAR;
    l->index = j;
    l->ndim = t->ndim;
    xpb_compare_coords(l->coords, j, t->ndim, t->dims);
    l->value = backend;
    l->reference = reference;
}

/* The distance of a and b as a fraction of `rms`; infinite when rms is 0 and they differ. */
static double distance(double a, double b, double rms)
{
    double d = fabs(a - b);
    if (d == 0.0)
        return 0.0;
    return rms > 0.0 ? d / rms : INFINITY;
}

/* Near and far flips of a sign or L1 decision: v[0], v[1] the backend's values written, v[2],
 * v[3] the reference's. */
static void count_sign(struct xpb_kink_count *out, const struct values *v, const xpb_tensor_desc *t,
                       int l1)
{
    int64_t n = xpb_tensor_numel(t);
    const float *a0 = v->v[0], *a1 = v->v[1], *b0 = v->v[2], *b1 = v->v[3];
    double rms = rms_of(b0, l1 ? b1 : NULL, n);
    for (int64_t j = 0; j < n; j++) {
        double da = l1 ? (double)a0[j] - (double)a1[j] : a0[j];
        double db = l1 ? (double)b0[j] - (double)b1[j] : b0[j];
        int flip = l1 ? (da > 0) != (db > 0) || (da < 0) != (db < 0) : (da > 0) != (db > 0);
        if (flip)
            count_flip(out, 0, t, j, distance(da, db, rms), da, db);
    }
}

/* Near and far flips of a max pool: v[0] the backend's argmax written, v[2] the reference's
 * input x; `xd` its shape, `wd` the workspace's. */
static xpb_status count_pool(struct xpb_kink_count *out, const struct values *v,
                             const struct decision *d, const xpb_tensor_desc *xd,
                             const xpb_tensor_desc *wd, xpb_err *err)
{
    int64_t n = xpb_tensor_numel(wd), plane_out = wd->dims[2] * wd->dims[3];
    int64_t plane_in = xd->dims[2] * xd->dims[3];
    const int32_t *chosen = v->v[0];
    const float *x = v->v[2];
    int32_t *own = malloc((size_t)n * sizeof *own);
    if (!own)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "aligned reference: out of memory");
    pool_argmax(own, x, d->pool, xd, wd);
    double rms = rms_of(x, NULL, xpb_tensor_numel(xd));
    for (int64_t o = 0; o < n; o++) {
        if (chosen[o] == own[o])
            continue;
        int64_t base = o / plane_out * plane_in;
        double at = x[base + own[o]], other = x[base + chosen[o]];
        count_flip(out, 1, xd, base + chosen[o], distance(other, at, rms), other, at);
    }
    free(own);
    return XPB_OK;
}

xpb_status xpb_kink_reference_count(struct xpb_kink_count *out, xpb_kink_reference *k,
                                    xpb_session *ref, xpb_err *err)
{
    memset(out, 0, sizeof *out);
    for (uint32_t i = 0; i < k->n; i++) {
        const struct decision *d = &k->d[i];
        struct values v = {{0}};
        xpb_status st = XPB_OK;
        for (int s = 0; s < 2 && st == XPB_OK; s++)
            if (d->copy[s] != XPB_NO_TENSOR &&
                ((st = read_into(&v, s, ref, &k->mp, d->copy[s], err)) != XPB_OK ||
                 (st = read_into(&v, 2 + s, ref, &k->mp, d->source[s], err)) != XPB_OK))
                break;
        const xpb_tensor_desc *src = &k->mp.tensors[d->source[0]];
        if (st == XPB_OK && d->kind == DECIDE_POOL)
            st = count_pool(out, &v, d, src, &k->mp.tensors[d->copy[0]], err);
        else if (st == XPB_OK)
            count_sign(out, &v, src, d->kind == DECIDE_L1);
        values_release(&v);
        if (st != XPB_OK)
            return st;
    }
    return XPB_OK;
}
