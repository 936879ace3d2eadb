/* The conformance cases of op set 3 (see conformance_case.h): every op of sequence models at
 * several shapes (batch dims that broadcast, odd sizes, every transpose, masked and causal
 * softmax, repeated embedding indices and the padding row, LSTMs with and without initial
 * states, long sequences, ignored labels and label smoothing, unwanted outputs), and two
 * chains: an attention block (heads split by PERMUTE, q k^T, scale, causal or masked softmax,
 * p v, with its backward) and an LSTM language-model layer with its token loss and gradient
 * clipping. docs/conformance.md lists them. */
#include "check/conformance_case.h"

#include <math.h>
#include <stdio.h>

/* "2x3x4" into buf (size bytes, the caller's); returns buf. */
static const char *dims_str(char *buf, size_t size, uint32_t nd, const int64_t *d)
{
    int n = 0;
    buf[0] = '\0';
    for (uint32_t k = 0; k < nd && n >= 0 && (size_t)n < size; k++)
        n += snprintf(buf + n, size - (size_t)n, k ? "x%lld" : "%lld", (long long)d[k]);
    return buf;
}

/* A tensor of `nd` dims `d` (the building language takes four). */
static uint32_t tensor(xpb_ct_case *c, const char *name, uint32_t role, uint32_t init, int read,
                       uint32_t nd, const int64_t *d)
{
    return xpb_ct_tensor(c, name, role, init, read, nd, d[0], nd > 1 ? d[1] : 1, nd > 2 ? d[2] : 1,
                         nd > 3 ? d[3] : 1);
}

static uint32_t in_t(xpb_ct_case *c, const char *name, uint32_t nd, const int64_t *d)
{
    return tensor(c, name, XPB_ROLE_INPUT, XPB_CT_INIT_UNIFORM, 0, nd, d);
}

static uint32_t out_t(xpb_ct_case *c, const char *name, uint32_t nd, const int64_t *d)
{
    return tensor(c, name, XPB_ROLE_OUTPUT, XPB_CT_INIT_NONE, 1, nd, d);
}

/* Integer ids in [0, n): token ids, labels. */
static uint32_t ids_t(xpb_ct_case *c, const char *name, uint32_t nd, const int64_t *d, int64_t n)
{
    uint32_t t = tensor(c, name, XPB_ROLE_INPUT, XPB_CT_INIT_LABELS, 0, nd, d);
    c->labels[t] = n;
    return t;
}

/* ---- matmuls ---- */

static void add_matmul(xpb_ct_list *l, int64_t m, int64_t k, int64_t n, uint32_t tr, int bias,
                       int no_da)
{
    const int64_t ad[2] = {tr & XPB_TRANSPOSE_A ? k : m, tr & XPB_TRANSPOSE_A ? m : k};
    const int64_t bd[2] = {tr & XPB_TRANSPOSE_B ? n : k, tr & XPB_TRANSPOSE_B ? k : n};
    const int64_t yd[2] = {m, n}, nd[1] = {n};
    for (int bwd = 0; bwd < 2; bwd++) {
        xpb_ct_case *c =
            xpb_ct_new(l, bwd ? "MATMUL_BWD" : "MATMUL", 1, "a%lldx%lld b%lldx%lld t%u%s%s",
                       (long long)ad[0], (long long)ad[1], (long long)bd[0], (long long)bd[1], tr,
                       bias ? " bias" : "", bwd && no_da ? " (no da)" : "");
        if (!c)
            return;
        uint32_t dy = bwd ? in_t(c, "dy", 2, yd) : 0;
        uint32_t a = in_t(c, "a", 2, ad), b = in_t(c, "b", 2, bd);
        xpb_op *op;
        if (!bwd && bias)
            op = xpb_ct_op(c, XPB_OP_MATMUL, 3, XPB_CT_T(a, b, in_t(c, "bias", 1, nd)), 1,
                           XPB_CT_T(out_t(c, "y", 2, yd)));
        else if (!bwd)
            op = xpb_ct_op(c, XPB_OP_MATMUL, 2, XPB_CT_T(a, b), 1, XPB_CT_T(out_t(c, "y", 2, yd)));
        else
            op = xpb_ct_op(c, XPB_OP_MATMUL_BWD, 3, XPB_CT_T(dy, a, b), bias ? 3 : 2,
                           XPB_CT_T(no_da ? XPB_NO_TENSOR : out_t(c, "da", 2, ad),
                                    out_t(c, "db", 2, bd),
                                    bias ? out_t(c, "dbias", 1, nd) : XPB_NO_TENSOR));
        op->transpose = tr;
        xpb_ct_finish(c);
    }
}

/* BATCHED_MATMUL and its backward on a[ad] (na dims) and b[bd]: y's batch dims are theirs
 * broadcast. */
static void add_bmm(xpb_ct_list *l, uint32_t na, const int64_t *ad, uint32_t nb, const int64_t *bd,
                    uint32_t tr)
{
    uint32_t ny = na > nb ? na : nb;
    int64_t yd[4];
    for (uint32_t k = 0; k + 2 < ny; k++) {
        int64_t da = k + na < ny ? 1 : ad[k + na - ny], db = k + nb < ny ? 1 : bd[k + nb - ny];
        yd[k] = da == 1 ? db : da;
    }
    yd[ny - 2] = tr & XPB_TRANSPOSE_A ? ad[na - 1] : ad[na - 2];
    yd[ny - 1] = tr & XPB_TRANSPOSE_B ? bd[nb - 2] : bd[nb - 1];
    char sa[48], sb[48];
    dims_str(sa, sizeof sa, na, ad);
    dims_str(sb, sizeof sb, nb, bd);
    for (int bwd = 0; bwd < 2; bwd++) {
        xpb_ct_case *c = xpb_ct_new(l, bwd ? "BATCHED_MATMUL_BWD" : "BATCHED_MATMUL", 1,
                                    "a%s b%s t%u", sa, sb, tr);
        if (!c)
            return;
        uint32_t a = in_t(c, "a", na, ad), b = in_t(c, "b", nb, bd);
        xpb_op *op;
        if (bwd)
            op = xpb_ct_op(c, XPB_OP_BATCHED_MATMUL_BWD, 3, XPB_CT_T(in_t(c, "dy", ny, yd), a, b),
                           2, XPB_CT_T(out_t(c, "da", na, ad), out_t(c, "db", nb, bd)));
        else
            op = xpb_ct_op(c, XPB_OP_BATCHED_MATMUL, 2, XPB_CT_T(a, b), 1,
                           XPB_CT_T(out_t(c, "y", ny, yd)));
        op->transpose = tr;
        xpb_ct_finish(c);
    }
}

/* ---- data movement and broadcasting ---- */

static void add_permute(xpb_ct_list *l, uint32_t nd, const int64_t *xd, const uint8_t *perm)
{
    int64_t yd[4];
    for (uint32_t k = 0; k < nd; k++)
        yd[k] = xd[perm[k]];
    char sx[48];
    xpb_ct_case *c =
        xpb_ct_new(l, "PERMUTE", 1, "x%s perm %u%u%u%u", dims_str(sx, sizeof sx, nd, xd), perm[0],
                   nd > 1 ? perm[1] : 0, nd > 2 ? perm[2] : 0, nd > 3 ? perm[3] : 0);
    if (!c)
        return;
    xpb_op *op = xpb_ct_op(c, XPB_OP_PERMUTE, 1, XPB_CT_T(in_t(c, "x", nd, xd)), 1,
                           XPB_CT_T(out_t(c, "y", nd, yd)));
    for (uint32_t k = 0; k < nd; k++)
        op->perm[k] = perm[k];
    xpb_ct_finish(c);
}

/* ADD_BROADCAST and MUL of a[ad] and b[bd]; SUM_TO of y's shape back to a's and b's. */
static void add_bcast(xpb_ct_list *l, uint32_t na, const int64_t *ad, uint32_t nb,
                      const int64_t *bd)
{
    uint32_t ny = na > nb ? na : nb;
    int64_t yd[4];
    for (uint32_t k = 0; k < ny; k++) {
        int64_t da = k + na < ny ? 1 : ad[k + na - ny], db = k + nb < ny ? 1 : bd[k + nb - ny];
        yd[k] = da == 1 ? db : da;
    }
    char sa[48], sb[48], sy[48];
    dims_str(sa, sizeof sa, na, ad);
    dims_str(sb, sizeof sb, nb, bd);
    dims_str(sy, sizeof sy, ny, yd);
    static const uint32_t kinds[2] = {XPB_OP_ADD_BROADCAST, XPB_OP_MUL};
    for (int k = 0; k < 2; k++) {
        xpb_ct_case *c = xpb_ct_new(l, xpb_op_name(kinds[k]), 1, "a%s b%s", sa, sb);
        if (!c)
            return;
        xpb_ct_op(c, kinds[k], 2, XPB_CT_T(in_t(c, "a", na, ad), in_t(c, "b", nb, bd)), 1,
                  XPB_CT_T(out_t(c, "y", ny, yd)));
        xpb_ct_finish(c);
    }
    for (int o = 0; o < 2; o++) {
        xpb_ct_case *c = xpb_ct_new(l, "SUM_TO", 1, "x%s -> %s", sy, o ? sb : sa);
        if (!c)
            return;
        xpb_ct_op(c, XPB_OP_SUM_TO, 1, XPB_CT_T(in_t(c, "x", ny, yd)), 1,
                  XPB_CT_T(out_t(c, "y", o ? nb : na, o ? bd : ad)));
        xpb_ct_finish(c);
    }
}

/* SCALE, and GELU / GELU_BWD in both modes, on one shape. */
static void add_pointwise(xpb_ct_list *l, uint32_t nd, const int64_t *d)
{
    char s[48];
    dims_str(s, sizeof s, nd, d);
    xpb_ct_case *c = xpb_ct_new(l, "SCALE", 1, "x%s value -0.37", s);
    if (!c)
        return;
    xpb_ct_op(c, XPB_OP_SCALE, 1, XPB_CT_T(in_t(c, "x", nd, d)), 1, XPB_CT_T(out_t(c, "y", nd, d)))
        ->attrs.value = -0.37f;
    xpb_ct_finish(c);
    for (uint32_t mode = 0; mode < 2; mode++)
        for (int bwd = 0; bwd < 2; bwd++) {
            if (!(c = xpb_ct_new(l, bwd ? "GELU_BWD" : "GELU", 1, "x%s %s", s,
                                 mode ? "tanh" : "erf")))
                return;
            xpb_op *op;
            if (bwd)
                op = xpb_ct_op(c, XPB_OP_GELU_BWD, 2,
                               XPB_CT_T(in_t(c, "dy", nd, d), in_t(c, "x", nd, d)), 1,
                               XPB_CT_T(out_t(c, "dx", nd, d)));
            else
                op = xpb_ct_op(c, XPB_OP_GELU, 1, XPB_CT_T(in_t(c, "x", nd, d)), 1,
                               XPB_CT_T(out_t(c, "y", nd, d)));
            op->approximate = mode;
            xpb_ct_finish(c);
        }
}

/* ---- softmax and layer norm ---- */

/* SOFTMAX(x[d], mask opt) -> y, then SOFTMAX_BWD(dy, y) -> dx. */
static void add_softmax(xpb_ct_list *l, uint32_t nd, const int64_t *d, float scale, int causal,
                        int masked)
{
    char s[48];
    xpb_ct_case *c =
        xpb_ct_new(l, "SOFTMAX+BWD", 1, "x%s scale %g%s%s", dims_str(s, sizeof s, nd, d),
                   (double)scale, causal ? " causal" : "", masked ? " mask" : "");
    if (!c)
        return;
    const int64_t md[2] = {nd > 1 ? d[nd - 2] : 1, d[nd - 1]};
    uint32_t x = in_t(c, "x", nd, d), y = out_t(c, "y", nd, d);
    xpb_op *op;
    if (masked)
        op = xpb_ct_op(c, XPB_OP_SOFTMAX, 2,
                       XPB_CT_T(x, tensor(c, "mask", XPB_ROLE_INPUT, XPB_CT_INIT_MASK, 0, 2, md)),
                       1, XPB_CT_T(y));
    else
        op = xpb_ct_op(c, XPB_OP_SOFTMAX, 1, XPB_CT_T(x), 1, XPB_CT_T(y));
    op->attrs.scale = scale;
    op->causal = (uint32_t)causal;
    op = xpb_ct_op(c, XPB_OP_SOFTMAX_BWD, 2, XPB_CT_T(in_t(c, "dy", nd, d), y), 1,
                   XPB_CT_T(out_t(c, "dx", nd, d)));
    op->attrs.scale = scale;
    op->causal = (uint32_t)causal;
    xpb_ct_finish(c);
}

/* LAYER_NORM + LAYER_NORM_BWD joined by the workspace, and the forward without workspace. */
static void add_layer_norm(xpb_ct_list *l, uint32_t nd, const int64_t *d)
{
    int64_t dim = d[nd - 1], sd[3] = {1, 1, 1};
    uint32_t ns = nd > 1 ? nd - 1 : 1;
    for (uint32_t k = 0; k + 1 < nd; k++)
        sd[k] = d[k];
    char s[48];
    dims_str(s, sizeof s, nd, d);
    for (int ws = 1; ws >= 0; ws--) {
        xpb_ct_case *c = xpb_ct_new(l, ws ? "LAYER_NORM+BWD" : "LAYER_NORM (no ws)", 1, "x%s", s);
        if (!c)
            return;
        uint32_t x = in_t(c, "x", nd, d), g = xpb_ct_param(c, "gamma", 1, dim, 1, 1, 1);
        uint32_t b = xpb_ct_param(c, "beta", 1, dim, 1, 1, 1), y = out_t(c, "y", nd, d);
        uint32_t wm = ws ? tensor(c, "ws_mean", XPB_ROLE_WORKSPACE, 0, 0, ns, sd) : XPB_NO_TENSOR;
        uint32_t wr = ws ? tensor(c, "ws_rstd", XPB_ROLE_WORKSPACE, 0, 0, ns, sd) : XPB_NO_TENSOR;
        xpb_ct_op(c, XPB_OP_LAYER_NORM, 3, XPB_CT_T(x, g, b), 3, XPB_CT_T(y, wm, wr))->attrs.eps =
            1e-5f;
        if (ws)
            xpb_ct_op(c, XPB_OP_LAYER_NORM_BWD, 5, XPB_CT_T(in_t(c, "dy", nd, d), x, g, wm, wr), 3,
                      XPB_CT_T(out_t(c, "dx", nd, d), out_t(c, "dgamma", 1, &dim),
                               out_t(c, "dbeta", 1, &dim)))
                ->attrs.eps = 1e-5f;
        xpb_ct_finish(c);
    }
}

/* ---- embeddings, the LSTM, losses, updates ---- */

/* EMBEDDING and EMBEDDING_BWD of ids [id] in [0, v) (repeated when there are more than v),
 * weight [v, d]; `pad` >= 0 flags that row as padding. */
static void add_embedding(xpb_ct_list *l, uint32_t ni, const int64_t *id, int64_t v, int64_t d,
                          int32_t pad)
{
    int64_t yd[4], wd[2] = {v, d};
    for (uint32_t k = 0; k < ni; k++)
        yd[k] = id[k];
    yd[ni] = d;
    char s[48];
    dims_str(s, sizeof s, ni, id);
    for (int bwd = 0; bwd < 2; bwd++) {
        xpb_ct_case *c =
            xpb_ct_new(l, bwd ? "EMBEDDING_BWD" : "EMBEDDING", 1, "ids%s V%lld D%lld%s", s,
                       (long long)v, (long long)d, pad >= 0 ? " padding" : "");
        if (!c)
            return;
        uint32_t ids = ids_t(c, "ids", ni, id, v);
        xpb_op *op;
        if (bwd)
            op = xpb_ct_op(c, XPB_OP_EMBEDDING_BWD, 2, XPB_CT_T(in_t(c, "dy", ni + 1, yd), ids), 1,
                           XPB_CT_T(out_t(c, "dweight", 2, wd)));
        else
            op = xpb_ct_op(c, XPB_OP_EMBEDDING, 2,
                           XPB_CT_T(ids, xpb_ct_param(c, "weight", 2, v, d, 1, 1)), 1,
                           XPB_CT_T(out_t(c, "y", ni + 1, yd)));
        if (pad >= 0) {
            op->index_flags = XPB_INDEX_PADDING;
            op->padding_idx = pad;
        }
        xpb_ct_finish(c);
    }
}

/* LSTM + LSTM_BWD joined by the workspace: T steps, batch b, input i, hidden h; `states`: h0
 * and c0 given (then the backward has ten inputs and seven outputs), and gradients entering
 * through h_n and c_n. */
static void add_lstm(xpb_ct_list *l, int64_t t, int64_t b, int64_t i, int64_t h, int states)
{
    xpb_ct_case *c =
        xpb_ct_new(l, "LSTM+BWD", 1, "T%lld B%lld I%lld H%lld%s", (long long)t, (long long)b,
                   (long long)i, (long long)h, states ? " h0 c0 dh_n dc_n" : "");
    if (!c)
        return;
    const int64_t xd[3] = {t, b, i}, yd[3] = {t, b, h}, sd[2] = {b, h}, wsd[3] = {t, b, 5 * h};
    uint32_t x = in_t(c, "x", 3, xd);
    uint32_t wih = xpb_ct_param(c, "w_ih", 2, 4 * h, i, 1, 1);
    uint32_t whh = xpb_ct_param(c, "w_hh", 2, 4 * h, h, 1, 1);
    uint32_t bih = xpb_ct_param(c, "b_ih", 1, 4 * h, 1, 1, 1);
    uint32_t bhh = xpb_ct_param(c, "b_hh", 1, 4 * h, 1, 1, 1);
    uint32_t h0 = states ? in_t(c, "h0", 2, sd) : XPB_NO_TENSOR;
    uint32_t c0 = states ? in_t(c, "c0", 2, sd) : XPB_NO_TENSOR;
    uint32_t y = out_t(c, "y", 3, yd), hn = out_t(c, "h_n", 2, sd), cn = out_t(c, "c_n", 2, sd);
    uint32_t ws = tensor(c, "ws", XPB_ROLE_WORKSPACE, 0, 0, 3, wsd);
    xpb_ct_op(c, XPB_OP_LSTM, states ? 7 : 5, XPB_CT_T(x, wih, whh, bih, bhh, h0, c0), 4,
              XPB_CT_T(y, hn, cn, ws));
    uint32_t dy = in_t(c, "dy", 3, yd);
    uint32_t dhn = states ? in_t(c, "dh_n", 2, sd) : XPB_NO_TENSOR;
    uint32_t dcn = states ? in_t(c, "dc_n", 2, sd) : XPB_NO_TENSOR;
    uint32_t dx = out_t(c, "dx", 3, xd), dwih = out_t(c, "dw_ih", 2, (int64_t[]){4 * h, i});
    uint32_t dwhh = out_t(c, "dw_hh", 2, (int64_t[]){4 * h, h});
    uint32_t dbih = out_t(c, "db_ih", 1, (int64_t[]){4 * h});
    uint32_t dbhh = out_t(c, "db_hh", 1, (int64_t[]){4 * h});
    uint32_t dh0 = states ? out_t(c, "dh0", 2, sd) : XPB_NO_TENSOR;
    uint32_t dc0 = states ? out_t(c, "dc0", 2, sd) : XPB_NO_TENSOR;
    xpb_ct_op(c, XPB_OP_LSTM_BWD, states ? 10 : 8,
              XPB_CT_T(dy, dhn, dcn, x, wih, whh, y, ws, h0, c0), states ? 7 : 5,
              XPB_CT_T(dx, dwih, dwhh, dbih, dbhh, dh0, dc0));
    xpb_ct_finish(c);
    if (states || !(c = xpb_ct_new(l, "LSTM (y only)", 1, "T%lld B%lld I%lld H%lld", (long long)t,
                                   (long long)b, (long long)i, (long long)h)))
        return;
    xpb_ct_op(c, XPB_OP_LSTM, 5,
              XPB_CT_T(in_t(c, "x", 3, xd), xpb_ct_param(c, "w_ih", 2, 4 * h, i, 1, 1),
                       xpb_ct_param(c, "w_hh", 2, 4 * h, h, 1, 1),
                       xpb_ct_param(c, "b_ih", 1, 4 * h, 1, 1, 1),
                       xpb_ct_param(c, "b_hh", 1, 4 * h, 1, 1, 1)),
              1, XPB_CT_T(out_t(c, "y", 3, yd)));
    xpb_ct_finish(c);
}

/* SOFTMAX_XENT + BWD with an ignored class (`ignore` >= 0) and label smoothing `eps`. */
static void set_xent3(xpb_op *op, int32_t ignore, float eps)
{
    if (ignore >= 0) {
        op->index_flags = XPB_INDEX_IGNORE;
        op->ignore_index = ignore;
    }
    op->label_smoothing = eps;
}

static void add_xent3(xpb_ct_list *l, int64_t n, int64_t k, int32_t ignore, float eps)
{
    xpb_ct_case *c = xpb_ct_new(l, "SOFTMAX_XENT+BWD", 1, "logits%lldx%lld ignore %d smooth %g",
                                (long long)n, (long long)k, (int)ignore, (double)eps);
    if (!c)
        return;
    const int64_t zd[2] = {n, k};
    uint32_t z = in_t(c, "logits", 2, zd), lab = ids_t(c, "labels", 1, &n, k);
    uint32_t loss = xpb_ct_tensor(c, "loss", XPB_ROLE_LOSS, 0, 1, 1, 1, 1, 1, 1);
    uint32_t prob = tensor(c, "ws_prob", XPB_ROLE_WORKSPACE, 0, 0, 2, zd);
    set_xent3(xpb_ct_op(c, XPB_OP_SOFTMAX_XENT, 2, XPB_CT_T(z, lab), 2, XPB_CT_T(loss, prob)),
              ignore, eps);
    xpb_op *op = xpb_ct_op(c, XPB_OP_SOFTMAX_XENT_BWD, 2, XPB_CT_T(prob, lab), 1,
                           XPB_CT_T(out_t(c, "dlogits", 2, zd)));
    op->attrs.scale = 0.5f;
    set_xent3(op, ignore, eps);
    xpb_ct_finish(c);
}

/* ADAMW_UPDATE over three steps; CLIP_GRAD_NORM of `n` gradients (more than six: every operand
 * beyond xpb_op's inline inputs) below and above max_norm. */
static void add_updates(xpb_ct_list *l, int64_t k, int64_t ch, int64_t n_grads)
{
    xpb_ct_case *c =
        xpb_ct_new(l, "ADAMW_UPDATE", 1, "w%lldx%lld (3 steps)", (long long)k, (long long)ch);
    if (!c)
        return;
    uint32_t p = xpb_ct_tensor(c, "param", XPB_ROLE_PARAM, XPB_CT_INIT_UNIFORM, 1, 2, k, ch, 1, 1);
    uint32_t g = xpb_ct_in(c, "grad", 2, k, ch, 1, 1);
    uint32_t m = xpb_ct_tensor(c, "m", XPB_ROLE_STATE, XPB_CT_INIT_UNIFORM, 1, 2, k, ch, 1, 1);
    uint32_t v = xpb_ct_tensor(c, "v", XPB_ROLE_STATE, XPB_CT_INIT_POSITIVE, 1, 2, k, ch, 1, 1);
    uint32_t st = xpb_ct_tensor(c, "step", XPB_ROLE_STATE, XPB_CT_INIT_STEP, 1, 1, 1, 1, 1, 1);
    xpb_op *op = xpb_ct_op(c, XPB_OP_ADAMW_UPDATE, 5, XPB_CT_T(p, g, m, v, st), 0, NULL);
    op->attrs.lr = 1e-2f;
    op->attrs.beta1 = 0.9f;
    op->attrs.beta2 = 0.95f;
    op->attrs.eps = 1e-8f;
    op->attrs.weight_decay = 0.1f;
    c->runs = 3;
    xpb_ct_finish(c);
    for (int above = 0; above < 2; above++) {
        if (!(c = xpb_ct_new(l, "CLIP_GRAD_NORM", 1, "%lld gradients, norm %s max_norm",
                             (long long)n_grads, above ? "above" : "below")))
            return;
        uint32_t in[XPB_CT_MAX_OPERANDS];
        for (int64_t i = 0; i < n_grads && i < XPB_CT_MAX_OPERANDS; i++) {
            char name[16];
            snprintf(name, sizeof name, "g%lld", (long long)i);
            /* host-written, clipped in place, then read back */
            in[i] = xpb_ct_tensor(c, name, XPB_ROLE_INPUT, XPB_CT_INIT_UNIFORM, 1, 2, 1 + i % 3,
                                  ch + i, 1, 1);
        }
        xpb_ct_op(c, XPB_OP_CLIP_GRAD_NORM, (uint32_t)n_grads, in, 1,
                  XPB_CT_T(out_t(c, "total_norm", 1, (int64_t[]){1})))
            ->max_norm = above ? 1.0f : 1000.0f;
        xpb_ct_finish(c);
    }
}

/* ---- chains ---- */

/* PERMUTE(in) -> out by perm[4]. */
static void permute_op(xpb_ct_case *c, uint32_t in, uint32_t out, const uint8_t *perm)
{
    xpb_op *op = xpb_ct_op(c, XPB_OP_PERMUTE, 1, XPB_CT_T(in), 1, XPB_CT_T(out));
    for (int k = 0; k < 4; k++)
        op->perm[k] = perm[k];
}

/* One attention block of a Transformer and its backward: q, k, v [B, S, H, D] split into heads
 * (PERMUTE to [B, H, S, D]), scores q k^T, SCALE by 1/sqrt(D), causal (or masked) SOFTMAX, p v,
 * heads merged back; then every op's backward to dq, dk, dv. */
static void add_chain_attention(xpb_ct_list *l, int64_t b, int64_t s, int64_t h, int64_t d,
                                int masked)
{
    xpb_ct_case *c = xpb_ct_new(
        l, masked ? "chain attention masked (train)" : "chain attention causal (train)", 1,
        "B%lld S%lld H%lld D%lld", (long long)b, (long long)s, (long long)h, (long long)d);
    if (!c)
        return;
    const int64_t in_d[4] = {b, s, h, d}, hd[4] = {b, h, s, d}, sd[4] = {b, h, s, s};
    static const uint8_t split[4] = {0, 2, 1, 3}; /* its own inverse */
    static const char *const qkv[3] = {"q", "k", "v"};
    uint32_t x[3], hx[3];
    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof name, "%s_in", qkv[i]);
        x[i] = in_t(c, name, 4, in_d);
        hx[i] = tensor(c, qkv[i], XPB_ROLE_ACTIVATION, 0, 0, 4, hd);
        permute_op(c, x[i], hx[i], split);
    }
    uint32_t sc = tensor(c, "scores", XPB_ROLE_ACTIVATION, 0, 0, 4, sd);
    uint32_t ss = tensor(c, "scaled", XPB_ROLE_ACTIVATION, 0, 0, 4, sd);
    uint32_t p = tensor(c, "p", XPB_ROLE_ACTIVATION, 0, 0, 4, sd);
    uint32_t o = tensor(c, "o", XPB_ROLE_ACTIVATION, 0, 0, 4, hd), y = out_t(c, "y", 4, in_d);
    xpb_ct_op(c, XPB_OP_BATCHED_MATMUL, 2, XPB_CT_T(hx[0], hx[1]), 1, XPB_CT_T(sc))->transpose =
        XPB_TRANSPOSE_B;
    float scale = (float)(1.0 / sqrt((double)d));
    xpb_ct_op(c, XPB_OP_SCALE, 1, XPB_CT_T(sc), 1, XPB_CT_T(ss))->attrs.value = scale;
    const int64_t md[2] = {s, s};
    xpb_op *sm =
        masked
            ? xpb_ct_op(c, XPB_OP_SOFTMAX, 2,
                        XPB_CT_T(ss, tensor(c, "mask", XPB_ROLE_INPUT, XPB_CT_INIT_MASK, 0, 2, md)),
                        1, XPB_CT_T(p))
            : xpb_ct_op(c, XPB_OP_SOFTMAX, 1, XPB_CT_T(ss), 1, XPB_CT_T(p));
    sm->attrs.scale = 1.0f;
    sm->causal = !masked;
    xpb_ct_op(c, XPB_OP_BATCHED_MATMUL, 2, XPB_CT_T(p, hx[2]), 1, XPB_CT_T(o));
    permute_op(c, o, y, split);
    /* backward */
    uint32_t dy = in_t(c, "dy", 4, in_d),
             d_o = tensor(c, "d_o", XPB_ROLE_ACTIVATION_GRAD, 0, 0, 4, hd);
    uint32_t dp = tensor(c, "dp", XPB_ROLE_ACTIVATION_GRAD, 0, 0, 4, sd);
    uint32_t dss = tensor(c, "d_scaled", XPB_ROLE_ACTIVATION_GRAD, 0, 0, 4, sd);
    uint32_t dsc = tensor(c, "d_scores", XPB_ROLE_ACTIVATION_GRAD, 0, 0, 4, sd);
    uint32_t dh[3];
    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof name, "d%s_h", qkv[i]);
        dh[i] = tensor(c, name, XPB_ROLE_ACTIVATION_GRAD, 0, 0, 4, hd);
    }
    permute_op(c, dy, d_o, split);
    xpb_ct_op(c, XPB_OP_BATCHED_MATMUL_BWD, 3, XPB_CT_T(d_o, p, hx[2]), 2, XPB_CT_T(dp, dh[2]));
    xpb_op *op = xpb_ct_op(c, XPB_OP_SOFTMAX_BWD, 2, XPB_CT_T(dp, p), 1, XPB_CT_T(dss));
    op->attrs.scale = 1.0f;
    op->causal = !masked;
    xpb_ct_op(c, XPB_OP_SCALE, 1, XPB_CT_T(dss), 1, XPB_CT_T(dsc))->attrs.value = scale;
    xpb_ct_op(c, XPB_OP_BATCHED_MATMUL_BWD, 3, XPB_CT_T(dsc, hx[0], hx[1]), 2,
              XPB_CT_T(dh[0], dh[1]))
        ->transpose = XPB_TRANSPOSE_B;
    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof name, "d%s", qkv[i]);
        permute_op(c, dh[i], out_t(c, name, 4, in_d), split);
    }
    xpb_ct_finish(c);
}

/* An LSTM language-model layer and its token loss, trained one step as the host lowers it:
 * token ids [T, B] -> EMBEDDING (padding id 0) -> LSTM -> RESHAPE [T*B, H] -> MATMUL with the
 * output weight (transposed, bias) -> SOFTMAX_XENT (id 0 ignored, label smoothing 0.1); the
 * backward ops in reverse, then CLIP_GRAD_NORM over the seven parameter gradients. */
static void add_chain_lstm_lm(xpb_ct_list *l, int64_t t, int64_t b, int64_t v, int64_t e, int64_t h)
{
    xpb_ct_case *c =
        xpb_ct_new(l, "chain lstm-lm-xent-clip (train)", 1, "T%lld B%lld V%lld E%lld H%lld",
                   (long long)t, (long long)b, (long long)v, (long long)e, (long long)h);
    if (!c)
        return;
    const int64_t td[2] = {t, b}, n = t * b, xd[3] = {t, b, e}, yd[3] = {t, b, h};
    const int64_t y2d[2] = {n, h}, zd[2] = {n, v};
    uint32_t tok = ids_t(c, "tokens", 2, td, v), emb = xpb_ct_param(c, "emb", 2, v, e, 1, 1);
    uint32_t x = tensor(c, "x", XPB_ROLE_ACTIVATION, 0, 0, 3, xd);
    uint32_t wih = xpb_ct_param(c, "w_ih", 2, 4 * h, e, 1, 1);
    uint32_t whh = xpb_ct_param(c, "w_hh", 2, 4 * h, h, 1, 1);
    uint32_t bih = xpb_ct_param(c, "b_ih", 1, 4 * h, 1, 1, 1);
    uint32_t bhh = xpb_ct_param(c, "b_hh", 1, 4 * h, 1, 1, 1);
    uint32_t y = tensor(c, "y", XPB_ROLE_ACTIVATION, 0, 0, 3, yd);
    uint32_t ws = tensor(c, "ws", XPB_ROLE_WORKSPACE, 0, 0, 3, (int64_t[]){t, b, 5 * h});
    uint32_t y2 = tensor(c, "y2", XPB_ROLE_ACTIVATION, 0, 0, 2, y2d);
    uint32_t wo = xpb_ct_param(c, "w_out", 2, v, h, 1, 1);
    uint32_t bo = xpb_ct_param(c, "b_out", 1, v, 1, 1, 1);
    uint32_t z = tensor(c, "logits", XPB_ROLE_OUTPUT, 0, 1, 2, zd);
    uint32_t lab = ids_t(c, "labels", 1, &n, v);
    uint32_t loss = xpb_ct_tensor(c, "loss", XPB_ROLE_LOSS, 0, 1, 1, 1, 1, 1, 1);
    uint32_t prob = tensor(c, "prob", XPB_ROLE_WORKSPACE, 0, 0, 2, zd);
    xpb_op *op = xpb_ct_op(c, XPB_OP_EMBEDDING, 2, XPB_CT_T(tok, emb), 1, XPB_CT_T(x));
    op->index_flags = XPB_INDEX_PADDING; /* padding_idx 0 */
    xpb_ct_op(c, XPB_OP_LSTM, 5, XPB_CT_T(x, wih, whh, bih, bhh), 4,
              XPB_CT_T(y, XPB_NO_TENSOR, XPB_NO_TENSOR, ws));
    xpb_ct_op(c, XPB_OP_RESHAPE, 1, XPB_CT_T(y), 1, XPB_CT_T(y2));
    xpb_ct_op(c, XPB_OP_MATMUL, 3, XPB_CT_T(y2, wo, bo), 1, XPB_CT_T(z))->transpose =
        XPB_TRANSPOSE_B;
    set_xent3(xpb_ct_op(c, XPB_OP_SOFTMAX_XENT, 2, XPB_CT_T(z, lab), 2, XPB_CT_T(loss, prob)), 0,
              0.1f);
    /* backward: gradients of the parameters (compared after clipping) */
    uint32_t dz = tensor(c, "dlogits", XPB_ROLE_ACTIVATION_GRAD, 0, 0, 2, zd);
    uint32_t dy2 = tensor(c, "dy2", XPB_ROLE_ACTIVATION_GRAD, 0, 0, 2, y2d);
    uint32_t dy = tensor(c, "dy", XPB_ROLE_ACTIVATION_GRAD, 0, 0, 3, yd);
    uint32_t dx = tensor(c, "dx", XPB_ROLE_ACTIVATION_GRAD, 0, 0, 3, xd);
    const uint32_t params[7] = {emb, wih, whh, bih, bhh, wo, bo};
    uint32_t g[7];
    for (int i = 0; i < 7; i++) {
        char name[40];
        snprintf(name, sizeof name, "%s.grad", c->tname[params[i]]);
        const xpb_tensor_desc *pd = &c->t[params[i]];
        g[i] = tensor(c, name, XPB_ROLE_GRAD, 0, 1, pd->ndim, pd->dims);
        c->t[g[i]].grad_of = params[i];
    }
    op = xpb_ct_op(c, XPB_OP_SOFTMAX_XENT_BWD, 2, XPB_CT_T(prob, lab), 1, XPB_CT_T(dz));
    op->attrs.scale = 1.0f;
    set_xent3(op, 0, 0.1f);
    xpb_ct_op(c, XPB_OP_MATMUL_BWD, 3, XPB_CT_T(dz, y2, wo), 3, XPB_CT_T(dy2, g[5], g[6]))
        ->transpose = XPB_TRANSPOSE_B;
    xpb_ct_op(c, XPB_OP_RESHAPE, 1, XPB_CT_T(dy2), 1, XPB_CT_T(dy));
    xpb_ct_op(c, XPB_OP_LSTM_BWD, 8, XPB_CT_T(dy, XPB_NO_TENSOR, XPB_NO_TENSOR, x, wih, whh, y, ws),
              5, XPB_CT_T(dx, g[1], g[2], g[3], g[4]));
    xpb_ct_op(c, XPB_OP_EMBEDDING_BWD, 2, XPB_CT_T(dx, tok), 1, XPB_CT_T(g[0]))->index_flags =
        XPB_INDEX_PADDING;
    xpb_ct_op(c, XPB_OP_CLIP_GRAD_NORM, 7, g, 1,
              XPB_CT_T(out_t(c, "total_norm", 1, (int64_t[]){1})))
        ->max_norm = 0.5f; /* Zaremba's LSTM clips at 5; these small gradients at 0.5 */
    xpb_ct_finish(c);
}

void xpb_ct_catalogue3(xpb_ct_list *l, int quick)
{
    for (uint32_t tr = 0; tr < 4; tr++)
        add_matmul(l, 5, 7, 3, tr, tr != 1, tr == 2);
    add_matmul(l, 1, 1, 1, 0, 1, 0);
    if (!quick)
        add_matmul(l, 33, 65, 17, XPB_TRANSPOSE_B, 1, 0);
    add_bmm(l, 4, (const int64_t[]){2, 3, 5, 7}, 4, (const int64_t[]){2, 3, 7, 4}, 0);
    add_bmm(l, 3, (const int64_t[]){3, 5, 7}, 4, (const int64_t[]){2, 1, 7, 4}, 0);
    add_bmm(l, 4, (const int64_t[]){2, 2, 6, 8}, 4, (const int64_t[]){2, 2, 9, 8},
            XPB_TRANSPOSE_B); /* q k^T */
    add_bmm(l, 4, (const int64_t[]){2, 1, 7, 5}, 3, (const int64_t[]){3, 7, 4}, XPB_TRANSPOSE_A);
    add_permute(l, 4, (const int64_t[]){2, 3, 4, 5}, (const uint8_t[]){0, 2, 1, 3});
    add_permute(l, 4, (const int64_t[]){2, 3, 4, 5}, (const uint8_t[]){3, 0, 2, 1});
    add_permute(l, 3, (const int64_t[]){3, 5, 7}, (const uint8_t[]){2, 0, 1});
    add_bcast(l, 4, (const int64_t[]){2, 3, 4, 5}, 2, (const int64_t[]){4, 1});
    add_bcast(l, 3, (const int64_t[]){3, 1, 5}, 4, (const int64_t[]){2, 1, 4, 1});
    add_bcast(l, 3, (const int64_t[]){2, 7, 9}, 1, (const int64_t[]){9}); /* a bias row */
    add_pointwise(l, 4, (const int64_t[]){2, 5, 7, 3});
    add_softmax(l, 3, (const int64_t[]){2, 3, 7}, 1.0f, 0, 0);
    add_softmax(l, 4, (const int64_t[]){2, 2, 5, 5}, 0.35f, 1, 0);
    add_softmax(l, 4, (const int64_t[]){2, 3, 6, 9}, 0.5f, 0, 1);
    add_softmax(l, 4, (const int64_t[]){1, 2, 3, 33}, 0.125f, 1, 1);  /* odd keys, Sq < Sk */
    add_softmax(l, 4, (const int64_t[]){1, 2, 64, 64}, 0.125f, 1, 0); /* a long sequence */
    add_layer_norm(l, 3, (const int64_t[]){2, 5, 7});
    add_layer_norm(l, 2, (const int64_t[]){3, 64});
    add_layer_norm(l, 1, (const int64_t[]){9});
    add_embedding(l, 2, (const int64_t[]){4, 9}, 7, 5, 0); /* repeats; padding row 0 */
    add_embedding(l, 1, (const int64_t[]){13}, 50, 3, -1);
    add_embedding(l, 3, (const int64_t[]){2, 3, 4}, 3, 8, 2);
    add_lstm(l, 5, 3, 4, 6, 0);
    add_lstm(l, 5, 3, 4, 6, 1);
    add_lstm(l, quick ? 16 : 40, 2, 8, 16, 0); /* a long sequence */
    add_lstm(l, 6, 5, 9, 70, 1); /* hidden wider than a 64-column block of a backend's kernel */
    add_xent3(l, 12, 10, 3, 0.1f);
    add_xent3(l, 7, 33, -1, 0.25f);
    add_xent3(l, 9, 4, 0, 0.0f);
    add_updates(l, 16, 9, 8);
    add_chain_attention(l, 2, 6, 2, 4, 0);
    add_chain_attention(l, 2, 6, 2, 4, 1);
    if (!quick)
        add_chain_attention(l, 2, 32, 4, 16, 0);
    add_chain_lstm_lm(l, 6, 3, 11, 5, 7);
    if (!quick)
        add_chain_lstm_lm(l, 20, 4, 50, 16, 32);
}
