/* xpubench public SDK: the shape rules of op set 3 (sequence models: matmuls, permutes,
 * broadcasting, softmax, layer norm, GELU, embeddings, LSTM, AdamW, gradient clipping; ABI 1.3).
 * shapes.h includes it and holds the table; do not include it alone. docs/ops.md defines each
 * op; these functions check what it says about shapes and attributes. */
#ifndef XPUBENCH_SHAPES_RULES3_H
#define XPUBENCH_SHAPES_RULES3_H

#include "shapes_check.h"
#include "shapes_rules.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The op-set-3 attribute members of the op being checked, or NULL (and a message) when the op
 * comes from a host whose ops lack them. */
static inline const xpb_op *xpb_shp_ext(const struct xpb_shp_check *c)
{
    return c->ext ? c->op : NULL;
}

static inline xpb_status xpb_shp_no_ext(const struct xpb_shp_check *c)
{
    return xpb_shp_fail(c, XPB_INVALID_ARGUMENT,
                        "an op of op set 3 in a program whose ops lack the op-set-3 attribute "
                        "members (op_stride too short)");
}

/* ---- matmuls ---- */

/* The (rows, cols) of a matrix operand: its last two dims, swapped when transposed. */
static inline void xpb_shp_mat(const xpb_tensor_desc *d, int transposed, int64_t *rows,
                               int64_t *cols)
{
    int64_t r = d->dims[d->ndim - 2], k = d->dims[d->ndim - 1];
    *rows = transposed ? k : r;
    *cols = transposed ? r : k;
}

/* The batch dims of a and b broadcast (aligned right, each pair equal or one of them 1) into
 * out[0 .. *n); XPB_INVALID_ARGUMENT naming both when they do not. `lead` dims at the end of
 * each are not batch dims (2 for matmuls, 0 for elementwise ops). */
static inline xpb_status xpb_shp_broadcast(const struct xpb_shp_check *c, int ta, int tb,
                                           uint32_t lead, int64_t *out, uint32_t *n)
{
    const xpb_tensor_desc *a = xpb_shp_desc(c, ta), *b = xpb_shp_desc(c, tb);
    uint32_t na = a->ndim - lead, nb = b->ndim - lead, nmax = na > nb ? na : nb;
    for (uint32_t k = 0; k < nmax; k++) {
        int64_t da = k < nmax - na ? 1 : a->dims[k - (nmax - na)];
        int64_t db = k < nmax - nb ? 1 : b->dims[k - (nmax - nb)];
        if (da != db && da != 1 && db != 1) {
            char la[160], lb[160], sa[96], sb[96];
            return xpb_shp_fail(
                c, XPB_INVALID_ARGUMENT,
                "%s %s and %s %s do not broadcast (dim %u: %lld against %lld)",
                xpb_shp_label(la, sizeof la, c, ta), xpb_shape_str(sa, sizeof sa, a->ndim, a->dims),
                xpb_shp_label(lb, sizeof lb, c, tb), xpb_shape_str(sb, sizeof sb, b->ndim, b->dims),
                k, (long long)da, (long long)db);
        }
        out[k] = da == 1 ? db : da;
    }
    *n = nmax;
    return XPB_OK;
}

/* MATMUL, MATMUL_BWD, BATCHED_MATMUL, BATCHED_MATMUL_BWD. */
static inline xpb_status xpb_shp_matmul(const struct xpb_shp_check *c)
{
    const xpb_op *e = xpb_shp_ext(c);
    if (!e)
        return xpb_shp_no_ext(c);
    int batched = c->op->kind == XPB_OP_BATCHED_MATMUL || c->op->kind == XPB_OP_BATCHED_MATMUL_BWD;
    int bwd = c->op->kind == XPB_OP_MATMUL_BWD || c->op->kind == XPB_OP_BATCHED_MATMUL_BWD;
    int ta = bwd ? XPB_SHP_IN(1) : XPB_SHP_IN(0), tb = bwd ? XPB_SHP_IN(2) : XPB_SHP_IN(1);
    xpb_status st;
    if (e->transpose > (XPB_TRANSPOSE_A | XPB_TRANSPOSE_B))
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT, "attribute transpose must be 0 to 3, found %u",
                            e->transpose);
    if ((st = xpb_shp_expect_ndim(c, ta, batched ? 3 : 2, batched ? 4 : 2)) != XPB_OK ||
        (st = xpb_shp_expect_ndim(c, tb, batched ? 3 : 2, batched ? 4 : 2)) != XPB_OK)
        return st;
    int64_t m, k, k2, n;
    xpb_shp_mat(xpb_shp_desc(c, ta), (e->transpose & XPB_TRANSPOSE_A) != 0, &m, &k);
    xpb_shp_mat(xpb_shp_desc(c, tb), (e->transpose & XPB_TRANSPOSE_B) != 0, &k2, &n);
    if (k != k2) {
        char la[160], lb[160];
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT,
                            "%s has %lld columns (after transpose %u), %s has %lld rows",
                            xpb_shp_label(la, sizeof la, c, ta), (long long)k, e->transpose,
                            xpb_shp_label(lb, sizeof lb, c, tb), (long long)k2);
    }
    int64_t y[XPB_MAX_DIMS];
    uint32_t ny = 0;
    if (batched && (st = xpb_shp_broadcast(c, ta, tb, 2, y, &ny)) != XPB_OK)
        return st;
    y[ny++] = m;
    y[ny++] = n;
    if (!bwd) {
        if (!batched && c->n_in > 2 && (st = xpb_shp_expect_vector(c, XPB_SHP_IN(2), n)) != XPB_OK)
            return st;
        return xpb_shp_expect_shape(c, XPB_SHP_OUT(0), ny, y);
    }
    if ((st = xpb_shp_expect_shape(c, XPB_SHP_IN(0), ny, y)) != XPB_OK ||
        (st = xpb_shp_expect_like(c, XPB_SHP_OUT(0), ta)) != XPB_OK ||
        (st = xpb_shp_expect_like(c, XPB_SHP_OUT(1), tb)) != XPB_OK)
        return st;
    return batched ? XPB_OK : xpb_shp_expect_vector(c, XPB_SHP_OUT(2), n);
}

/* ---- data movement and broadcasting ---- */

/* PERMUTE: perm is a permutation of 0 .. ndim-1; output dim d is input dim perm[d]; y has x's
 * dtype (F32 or I32). */
static inline xpb_status xpb_shp_permute(const struct xpb_shp_check *c)
{
    const xpb_op *e = xpb_shp_ext(c);
    if (!e)
        return xpb_shp_no_ext(c);
    const xpb_tensor_desc *x = c->in[0];
    unsigned seen = 0;
    int64_t y[XPB_MAX_DIMS];
    for (uint32_t d = 0; d < x->ndim; d++) {
        unsigned p = e->perm[d];
        if (p >= x->ndim || (seen & (1u << p)))
            return xpb_shp_fail(c, XPB_INVALID_ARGUMENT,
                                "attribute perm (%u, %u, %u, %u) is not a permutation of the %u "
                                "dims of the input",
                                e->perm[0], e->perm[1], e->perm[2], e->perm[3], x->ndim);
        seen |= 1u << p;
        y[d] = x->dims[p];
    }
    xpb_status st = xpb_shp_expect_shape(c, XPB_SHP_OUT(0), x->ndim, y);
    if (st != XPB_OK || c->out[0]->dtype == x->dtype)
        return st;
    char ly[160], lx[160], sy[16], sx[16];
    return xpb_shp_fail(c, XPB_INVALID_ARGUMENT, "%s must have the dtype of %s (%s), found %s",
                        xpb_shp_label(ly, sizeof ly, c, XPB_SHP_OUT(0)),
                        xpb_shp_label(lx, sizeof lx, c, XPB_SHP_IN(0)),
                        xpb_shp_dtype_str(sx, sizeof sx, x->dtype),
                        xpb_shp_dtype_str(sy, sizeof sy, c->out[0]->dtype));
}

/* ADD_BROADCAST, MUL: y has the broadcast shape of a and b (numpy's rules). */
static inline xpb_status xpb_shp_bcast_binary(const struct xpb_shp_check *c)
{
    int64_t y[XPB_MAX_DIMS];
    uint32_t n;
    xpb_status st = xpb_shp_broadcast(c, XPB_SHP_IN(0), XPB_SHP_IN(1), 0, y, &n);
    return st != XPB_OK ? st : xpb_shp_expect_shape(c, XPB_SHP_OUT(0), n, y);
}

/* SUM_TO: y broadcasts to x (y's dims, aligned right, are x's or 1; y has at most x's rank). */
static inline xpb_status xpb_shp_sum_to(const struct xpb_shp_check *c)
{
    const xpb_tensor_desc *x = c->in[0], *y = c->out[0];
    int ok = y->ndim <= x->ndim;
    for (uint32_t k = 0; ok && k < y->ndim; k++) {
        int64_t yd = y->dims[y->ndim - 1 - k], xd = x->dims[x->ndim - 1 - k];
        ok = yd == xd || yd == 1;
    }
    if (ok)
        return XPB_OK;
    char lx[160], ly[160], sx[96], sy[96];
    return xpb_shp_fail(c, XPB_INVALID_ARGUMENT, "%s %s does not broadcast to %s %s",
                        xpb_shp_label(ly, sizeof ly, c, XPB_SHP_OUT(0)),
                        xpb_shape_str(sy, sizeof sy, y->ndim, y->dims),
                        xpb_shp_label(lx, sizeof lx, c, XPB_SHP_IN(0)),
                        xpb_shape_str(sx, sizeof sx, x->ndim, x->dims));
}

/* ---- softmax, layer norm, GELU ---- */

/* SOFTMAX (x, mask[Sq,Sk] [opt] -> y) and SOFTMAX_BWD (dy, y -> dx): the last axis; scale > 0;
 * a mask or causal needs the last two dims [Sq, Sk]. */
static inline xpb_status xpb_shp_softmax(const struct xpb_shp_check *c)
{
    const xpb_op *e = xpb_shp_ext(c);
    if (!e)
        return xpb_shp_no_ext(c);
    float scale = c->op->attrs.scale;
    if (!(scale > 0.0f) || scale > 3.4e38f)
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT, "attribute scale must be > 0, found %g",
                            (double)scale);
    if (e->causal > 1)
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT, "attribute causal must be 0 or 1, found %u",
                            e->causal);
    const xpb_tensor_desc *x = c->in[0];
    int masked = c->op->kind == XPB_OP_SOFTMAX && c->n_in > 1 && c->in[1];
    if ((masked || e->causal) && x->ndim < 2)
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT,
                            "a mask or causal needs at least 2 dims ([.., Sq, Sk]), found %u",
                            x->ndim);
    xpb_status st;
    if (masked) {
        const int64_t m[2] = {x->dims[x->ndim - 2], x->dims[x->ndim - 1]};
        if ((st = xpb_shp_expect_shape(c, XPB_SHP_IN(1), 2, m)) != XPB_OK)
            return st;
    }
    if (c->op->kind == XPB_OP_SOFTMAX_BWD &&
        (st = xpb_shp_expect_like(c, XPB_SHP_IN(1), XPB_SHP_IN(0))) != XPB_OK)
        return st;
    return xpb_shp_expect_like(c, XPB_SHP_OUT(0), XPB_SHP_IN(0));
}

/* LAYER_NORM (x, gamma[D], beta[D] -> y, ws_mean, ws_rstd) and LAYER_NORM_BWD (dy, x, gamma,
 * ws_mean, ws_rstd -> dx, dgamma, dbeta): over the last axis D; the statistics have x's shape
 * without D ([1] for a 1-D x). */
static inline xpb_status xpb_shp_layer_norm(const struct xpb_shp_check *c)
{
    int bwd = c->op->kind == XPB_OP_LAYER_NORM_BWD;
    int tx = bwd ? XPB_SHP_IN(1) : XPB_SHP_IN(0), tg = bwd ? XPB_SHP_IN(2) : XPB_SHP_IN(1);
    const xpb_tensor_desc *x = xpb_shp_desc(c, tx);
    xpb_status st = xpb_shp_expect_nonneg(c, "eps", c->op->attrs.eps);
    if (st != XPB_OK)
        return st;
    int64_t d = x->dims[x->ndim - 1], stat[XPB_MAX_DIMS] = {1};
    uint32_t ns = x->ndim > 1 ? x->ndim - 1 : 1;
    for (uint32_t k = 0; k + 1 < x->ndim; k++)
        stat[k] = x->dims[k];
    if ((st = xpb_shp_expect_vector(c, tg, d)) != XPB_OK)
        return st;
    if (!bwd) {
        if ((st = xpb_shp_expect_vector(c, XPB_SHP_IN(2), d)) != XPB_OK ||
            (st = xpb_shp_expect_shape(c, XPB_SHP_OUT(1), ns, stat)) != XPB_OK ||
            (st = xpb_shp_expect_shape(c, XPB_SHP_OUT(2), ns, stat)) != XPB_OK)
            return st;
        return xpb_shp_expect_like(c, XPB_SHP_OUT(0), XPB_SHP_IN(0));
    }
    if ((st = xpb_shp_expect_like(c, XPB_SHP_IN(0), tx)) != XPB_OK ||
        (st = xpb_shp_expect_shape(c, XPB_SHP_IN(3), ns, stat)) != XPB_OK ||
        (st = xpb_shp_expect_shape(c, XPB_SHP_IN(4), ns, stat)) != XPB_OK ||
        (st = xpb_shp_expect_like(c, XPB_SHP_OUT(0), tx)) != XPB_OK ||
        (st = xpb_shp_expect_vector(c, XPB_SHP_OUT(1), d)) != XPB_OK)
        return st;
    return xpb_shp_expect_vector(c, XPB_SHP_OUT(2), d);
}

/* GELU, GELU_BWD: approximate is 0 (erf) or XPB_GELU_TANH; every tensor of one shape. */
static inline xpb_status xpb_shp_gelu(const struct xpb_shp_check *c)
{
    const xpb_op *e = xpb_shp_ext(c);
    if (!e)
        return xpb_shp_no_ext(c);
    if (e->approximate > XPB_GELU_TANH)
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT,
                            "attribute approximate must be 0 (none) or 1 (tanh), found %u",
                            e->approximate);
    return xpb_shp_same_shapes(c);
}

/* SCALE: one shape. */
static inline xpb_status xpb_shp_scale(const struct xpb_shp_check *c)
{
    return xpb_shp_same_shapes(c);
}

/* ---- embeddings and the LSTM ---- */

/* EMBEDDING (indices[..] I32, weight[V,D] -> y[.., D]) and EMBEDDING_BWD (dy[.., D], indices ->
 * dweight[V,D]): indices of 1 to 3 dims; a padding index, when flagged, is a row of weight. */
static inline xpb_status xpb_shp_embedding(const struct xpb_shp_check *c)
{
    const xpb_op *e = xpb_shp_ext(c);
    if (!e)
        return xpb_shp_no_ext(c);
    int bwd = c->op->kind == XPB_OP_EMBEDDING_BWD;
    int tidx = bwd ? XPB_SHP_IN(1) : XPB_SHP_IN(0), tw = bwd ? XPB_SHP_OUT(0) : XPB_SHP_IN(1);
    xpb_status st;
    if (e->index_flags & ~XPB_INDEX_PADDING)
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT,
                            "attribute index_flags %u: only the padding flag (1) applies",
                            e->index_flags);
    if ((st = xpb_shp_expect_ndim(c, tidx, 1, 3)) != XPB_OK)
        return st;
    const xpb_tensor_desc *w = xpb_shp_desc(c, tw), *idx = xpb_shp_desc(c, tidx);
    if (!w)
        return XPB_OK;
    if ((st = xpb_shp_expect_ndim(c, tw, 2, 2)) != XPB_OK)
        return st;
    if ((e->index_flags & XPB_INDEX_PADDING) &&
        (e->padding_idx < 0 || (int64_t)e->padding_idx >= w->dims[0]))
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT,
                            "attribute padding_idx %d is not a row of the %lld-row weight",
                            e->padding_idx, (long long)w->dims[0]);
    int64_t y[XPB_MAX_DIMS];
    for (uint32_t k = 0; k < idx->ndim; k++)
        y[k] = idx->dims[k];
    y[idx->ndim] = w->dims[1];
    return xpb_shp_expect_shape(c, bwd ? XPB_SHP_IN(0) : XPB_SHP_OUT(0), idx->ndim + 1, y);
}

/* LSTM (x[T,B,I], w_ih[4H,I], w_hh[4H,H], b_ih[4H], b_hh[4H], h0[B,H] [opt], c0[B,H] [opt] ->
 * y[T,B,H], h_n[B,H] [opt], c_n[B,H] [opt], ws[T,B,5H] [opt]) and LSTM_BWD (dy[T,B,H], dh_n,
 * dc_n, x, w_ih, w_hh, y, ws, h0, c0 -> dx, dw_ih, dw_hh, db_ih, db_hh, dh0, dc0). */
static inline xpb_status xpb_shp_lstm(const struct xpb_shp_check *c)
{
    int bwd = c->op->kind == XPB_OP_LSTM_BWD;
    int tx = bwd ? XPB_SHP_IN(3) : XPB_SHP_IN(0);
    int tih = bwd ? XPB_SHP_IN(4) : XPB_SHP_IN(1), thh = bwd ? XPB_SHP_IN(5) : XPB_SHP_IN(2);
    xpb_status st;
    if ((st = xpb_shp_expect_ndim(c, tx, 3, 3)) != XPB_OK ||
        (st = xpb_shp_expect_ndim(c, thh, 2, 2)) != XPB_OK)
        return st;
    const xpb_tensor_desc *x = xpb_shp_desc(c, tx), *whh = xpb_shp_desc(c, thh);
    int64_t t = x->dims[0], b = x->dims[1], in = x->dims[2], h = whh->dims[1];
    const int64_t wih[2] = {4 * h, in}, wh[2] = {4 * h, h}, state[2] = {b, h};
    const int64_t seq[3] = {t, b, h}, ws[3] = {t, b, 5 * h};
    if ((st = xpb_shp_expect_shape(c, tih, 2, wih)) != XPB_OK ||
        (st = xpb_shp_expect_shape(c, thh, 2, wh)) != XPB_OK)
        return st;
    if (!bwd) {
        if ((st = xpb_shp_expect_vector(c, XPB_SHP_IN(3), 4 * h)) != XPB_OK ||
            (st = xpb_shp_expect_vector(c, XPB_SHP_IN(4), 4 * h)) != XPB_OK ||
            (st = xpb_shp_expect_shape(c, XPB_SHP_IN(5), 2, state)) != XPB_OK ||
            (st = xpb_shp_expect_shape(c, XPB_SHP_IN(6), 2, state)) != XPB_OK ||
            (st = xpb_shp_expect_shape(c, XPB_SHP_OUT(1), 2, state)) != XPB_OK ||
            (st = xpb_shp_expect_shape(c, XPB_SHP_OUT(2), 2, state)) != XPB_OK ||
            (st = xpb_shp_expect_shape(c, XPB_SHP_OUT(3), 3, ws)) != XPB_OK)
            return st;
        if ((c->n_in > 5 && c->in[5] != NULL) != (c->n_in > 6 && c->in[6] != NULL))
            return xpb_shp_fail(c, XPB_INVALID_ARGUMENT, "h0 and c0 come together or not at all");
        return xpb_shp_expect_shape(c, XPB_SHP_OUT(0), 3, seq);
    }
    if ((st = xpb_shp_expect_shape(c, XPB_SHP_IN(0), 3, seq)) != XPB_OK ||
        (st = xpb_shp_expect_shape(c, XPB_SHP_IN(1), 2, state)) != XPB_OK ||
        (st = xpb_shp_expect_shape(c, XPB_SHP_IN(2), 2, state)) != XPB_OK ||
        (st = xpb_shp_expect_shape(c, XPB_SHP_IN(6), 3, seq)) != XPB_OK ||
        (st = xpb_shp_expect_shape(c, XPB_SHP_IN(7), 3, ws)) != XPB_OK ||
        (st = xpb_shp_expect_shape(c, XPB_SHP_IN(8), 2, state)) != XPB_OK ||
        (st = xpb_shp_expect_shape(c, XPB_SHP_IN(9), 2, state)) != XPB_OK ||
        (st = xpb_shp_expect_like(c, XPB_SHP_OUT(0), tx)) != XPB_OK ||
        (st = xpb_shp_expect_shape(c, XPB_SHP_OUT(1), 2, wih)) != XPB_OK ||
        (st = xpb_shp_expect_shape(c, XPB_SHP_OUT(2), 2, wh)) != XPB_OK ||
        (st = xpb_shp_expect_vector(c, XPB_SHP_OUT(3), 4 * h)) != XPB_OK ||
        (st = xpb_shp_expect_vector(c, XPB_SHP_OUT(4), 4 * h)) != XPB_OK ||
        (st = xpb_shp_expect_shape(c, XPB_SHP_OUT(5), 2, state)) != XPB_OK)
        return st;
    return xpb_shp_expect_shape(c, XPB_SHP_OUT(6), 2, state);
}

/* ---- losses and training helpers ---- */

/* The op-set-3 attributes of SOFTMAX_XENT(_BWD): label_smoothing in [0, 1], only the ignore
 * flag. Ops of hosts that lack the members have neither. */
static inline xpb_status xpb_shp_xent_attrs(const struct xpb_shp_check *c)
{
    const xpb_op *e = xpb_shp_ext(c);
    if (!e)
        return XPB_OK;
    if (!(e->label_smoothing >= 0.0f && e->label_smoothing <= 1.0f))
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT,
                            "attribute label_smoothing must be in [0, 1], found %g",
                            (double)e->label_smoothing);
    if (e->index_flags & ~XPB_INDEX_IGNORE)
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT,
                            "attribute index_flags %u: only the ignore flag (2) applies",
                            e->index_flags);
    return XPB_OK;
}

/* SOFTMAX_XENT, SOFTMAX_XENT_BWD with the attributes op set 3 added. */
static inline xpb_status xpb_shp_softmax_xent3(const struct xpb_shp_check *c)
{
    xpb_status st = xpb_shp_xent_attrs(c);
    return st != XPB_OK ? st : xpb_shp_softmax_xent(c);
}

/* CLIP_GRAD_NORM (g1*, ..., gN* -> total_norm[1]): any F32 gradients, max_norm > 0. */
static inline xpb_status xpb_shp_clip(const struct xpb_shp_check *c)
{
    const xpb_op *e = xpb_shp_ext(c);
    if (!e)
        return xpb_shp_no_ext(c);
    if (!(e->max_norm > 0.0f) || e->max_norm > 3.4e38f)
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT, "attribute max_norm must be > 0, found %g",
                            (double)e->max_norm);
    return xpb_shp_expect_vector(c, XPB_SHP_OUT(0), 1);
}

#ifdef __cplusplus
}
#endif
#endif
