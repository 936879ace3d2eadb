/* The layers both transformers share (transformer.h): parameters, dropout, layer norm,
 * residual adds, splitting packed projections and the attention composite of docs/ops.md
 * ("Not in op set 3": BATCHED_MATMUL, SOFTMAX, DROPOUT, BATCHED_MATMUL). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "transformer.h"

void tfm_name(char *out, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, size, fmt, ap);
    va_end(ap);
}

/* op3's attributes with nothing set. */
static const xpb_op_attrs3 no_attrs3 = {.struct_size = sizeof no_attrs3};

xpb_status tfm_param(xpb_value *out, const tfm *t, const char *name, int64_t d0, int64_t d1,
                     xpb_init init)
{
    xpb_param_desc p = {name, d1 ? 2u : 1u, {d0, d1 ? d1 : 1, 1, 1}, init, 0, 1};
    return t->api->parameter(out, t->b, &p);
}

xpb_status tfm_dropout(xpb_value *x, const tfm *t, const char *layer)
{
    if (t->c.dropout <= 0)
        return XPB_OK;
    xpb_op_attrs a = {.dropout_p = (float)t->c.dropout};
    return t->api->op3(x, t->b, layer, XPB_OP_DROPOUT, x, 1, &a, &no_attrs3);
}

xpb_status tfm_layer_norm(xpb_value *out, const tfm *t, const char *layer, xpb_value x)
{
    char name[256];
    xpb_value in[3] = {x};
    tfm_name(name, sizeof name, "%s.weight", layer);
    XPB_TRY(tfm_param(&in[1], t, name, t->c.d, 0, (xpb_init){XPB_INIT_ONES, 0, 0}));
    tfm_name(name, sizeof name, "%s.bias", layer);
    XPB_TRY(tfm_param(&in[2], t, name, t->c.d, 0, (xpb_init){XPB_INIT_ZEROS, 0, 0}));
    xpb_op_attrs eps = {.eps = 1e-5f};
    return t->api->op3(out, t->b, layer, XPB_OP_LAYER_NORM, in, 3, &eps, &no_attrs3);
}

xpb_status tfm_add(xpb_value *out, const tfm *t, const char *layer, xpb_value a, xpb_value b)
{
    xpb_value in[2] = {a, b};
    return t->api->op(out, t->b, layer, XPB_OP_ADD, in, 2, NULL);
}

/* Elements of value-shaped dims. */
static int64_t numel(uint32_t ndim, const int64_t *dims)
{
    int64_t n = 1;
    for (uint32_t i = 0; i < ndim; i++)
        n *= dims[i];
    return n;
}

xpb_status tfm_rows(xpb_value *out, const tfm *t, const char *layer, xpb_value x, int64_t n_rows,
                    const int32_t *rows, int64_t count, uint32_t ndim, const int64_t *dims)
{
    char name[256];
    const int64_t table[2] = {n_rows, numel(ndim, dims) / count}, index_dims[1] = {count};
    xpb_value index, in[2];
    tfm_name(name, sizeof name, "%s.table", layer);
    XPB_TRY(t->api->reshape(&in[1], t->b, name, x, 2, table));
    tfm_name(name, sizeof name, "%s.index", layer);
    XPB_TRY(t->api->constant_data(&index, t->b, name, XPB_DTYPE_I32, 1, index_dims, rows));
    in[0] = index;
    tfm_name(name, sizeof name, "%s.rows", layer);
    XPB_TRY(t->api->op3(&in[0], t->b, name, XPB_OP_EMBEDDING, in, 2, NULL, &no_attrs3));
    return t->api->reshape(out, t->b, layer, in[0], ndim, dims);
}

xpb_status tfm_split_heads(xpb_value *out, const tfm *t, const char *layer, xpb_value y, int parts,
                           int64_t s)
{
    const int64_t n = t->c.n, h = t->c.heads, hd = t->c.d / t->c.heads;
    const int64_t packed[4] = {n, s, parts * h, hd}, heads[4] = {n, h, s, hd};
    const xpb_op_attrs3 swap = {.struct_size = sizeof swap, .perm = {0, 2, 1, 3}};
    char name[256];
    xpb_value x;
    tfm_name(name, sizeof name, "%s.view", layer);
    XPB_TRY(t->api->reshape(&x, t->b, name, y, 4, packed));
    tfm_name(name, sizeof name, "%s.heads", layer);
    XPB_TRY(t->api->op3(&x, t->b, name, XPB_OP_PERMUTE, &x, 1, NULL, &swap));
    if (parts == 1) {
        out[0] = x;
        return XPB_OK;
    }
    /* [B, parts*H, S, hd] is [B*parts, H*S*hd] row by row: part j of sample i is row
     * i*parts + j. */
    int32_t *rows = malloc((size_t)n * sizeof *rows);
    if (!rows)
        return xpb_model_fail(t->b, t->api, XPB_OUT_OF_MEMORY, "out of memory");
    static const char *const part_name[3] = {"q", "k", "v"};
    xpb_status st = XPB_OK;
    for (int j = 0; j < parts && st == XPB_OK; j++) {
        for (int64_t i = 0; i < n; i++)
            rows[i] = (int32_t)(i * parts + j);
        /* with two parts (k|v of a cross-attention) they are k and v */
        tfm_name(name, sizeof name, "%s.%s", layer, part_name[j + 3 - parts]);
        st = tfm_rows(&out[j], t, name, x, n * parts, rows, n, 4, heads);
    }
    free(rows);
    return st;
}

xpb_status tfm_attend(xpb_value *out, const tfm *t, const char *layer, xpb_value q, xpb_value k,
                      xpb_value v, int causal, int64_t sq)
{
    const int64_t hd = t->c.d / t->c.heads, merged[2] = {t->c.n * sq, t->c.d};
    const xpb_op_attrs3 trans_b = {.struct_size = sizeof trans_b, .transpose = XPB_TRANSPOSE_B};
    const xpb_op_attrs3 mask = {.struct_size = sizeof mask, .causal = causal ? 1u : 0u};
    const xpb_op_attrs3 swap = {.struct_size = sizeof swap, .perm = {0, 2, 1, 3}};
    const xpb_op_attrs scale = {.scale = (float)(1.0 / sqrt((double)hd))};
    char name[256];
    xpb_value x, in[2] = {q, k};
    tfm_name(name, sizeof name, "%s.scores", layer);
    XPB_TRY(t->api->op3(&x, t->b, name, XPB_OP_BATCHED_MATMUL, in, 2, NULL, &trans_b));
    tfm_name(name, sizeof name, "%s.softmax", layer);
    XPB_TRY(t->api->op3(&x, t->b, name, XPB_OP_SOFTMAX, &x, 1, &scale, &mask));
    tfm_name(name, sizeof name, "%s.dropout", layer);
    XPB_TRY(tfm_dropout(&x, t, name));
    in[0] = x, in[1] = v;
    tfm_name(name, sizeof name, "%s.context", layer);
    XPB_TRY(t->api->op3(&x, t->b, name, XPB_OP_BATCHED_MATMUL, in, 2, NULL, &no_attrs3));
    tfm_name(name, sizeof name, "%s.merge", layer);
    XPB_TRY(t->api->op3(&x, t->b, name, XPB_OP_PERMUTE, &x, 1, NULL, &swap));
    tfm_name(name, sizeof name, "%s.merged", layer);
    return t->api->reshape(out, t->b, name, x, 2, merged);
}
