/* EMBEDDING and EMBEDDING_BWD (op set 3) as own OpenMP kernels on dense fp32 rows (oneDNN has
 * no gather). Indices are checked at run time before anything is written: one outside
 * [0, V) is XPB_INVALID_ARGUMENT naming its position, as the reference says it. The backward
 * is the scatter-add of docs/ops.md without atomics: the positions are grouped by index (a
 * counting sort into two int32 scratch buffers), then every row of dweight sums its own
 * positions in increasing order, rows in parallel, each sum vectorised along D; the flagged
 * padding row and unused rows get zeros. */
#include <stdio.h>
#include <string.h>

#include "odn.h"

/* ---- kernels; p[0] positions, p[1] V, p[2] D, p[3] padding row or -1, p[4] ndim of the
 * indices, p[5..8] their dims ---- */

/* XPB_OK when every index lies in [0, V); otherwise the message (in the executable's
 * kernel_err, the step's ctx) names the first position that does not. */
static xpb_status check_indices(odn_step *s, const int32_t *idx)
{
    int64_t n = s->p[0], v = s->p[1];
    for (int64_t p = 0; p < n; p++) {
        if (idx[p] >= 0 && idx[p] < v)
            continue;
        uint32_t nd = (uint32_t)s->p[4];
        int64_t pos[XPB_MAX_DIMS], rest = p;
        for (uint32_t k = nd; k-- > 0;) {
            pos[k] = rest % s->p[5 + k];
            rest /= s->p[5 + k];
        }
        char where[96], shape[96];
        snprintf(s->ctx, ODN_ERR_SIZE,
                 "position %s of the indices %s holds %d, outside the %lld rows [0, %lld) of the "
                 "weight",
                 xpb_shape_str(where, sizeof where, nd, pos),
                 xpb_shape_str(shape, sizeof shape, nd, &s->p[5]), (int)idx[p], (long long)v,
                 (long long)v);
        s->why = s->ctx;
        return XPB_INVALID_ARGUMENT;
    }
    return XPB_OK;
}

/* o: indices, weight, y */
static xpb_status embed_kernel(odn_step *s)
{
    const int32_t *idx = s->o[0].ptr;
    const float *w = s->o[1].ptr;
    float *y = s->o[2].ptr;
    int64_t n = s->p[0], d = s->p[2];
    xpb_status st = check_indices(s, idx);
    if (st != XPB_OK)
        return st;
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < n; p++)
        memcpy(y + p * d, w + (int64_t)idx[p] * d, (size_t)d * sizeof *y);
    return XPB_OK;
}

/* o: dy, indices, dweight, first[V + 1], order[n] (int32 scratch) */
static xpb_status embed_bwd_kernel(odn_step *s)
{
    const float *dy = s->o[0].ptr;
    const int32_t *idx = s->o[1].ptr;
    float *dw = s->o[2].ptr;
    int32_t *first = s->o[3].ptr, *order = s->o[4].ptr;
    int64_t n = s->p[0], v = s->p[1], d = s->p[2], pad = s->p[3];
    xpb_status st = check_indices(s, idx);
    if (st != XPB_OK)
        return st;
    /* first[r] .. first[r + 1]: the positions of index r in `order`, increasing */
    memset(first, 0, (size_t)(v + 1) * sizeof *first);
    for (int64_t p = 0; p < n; p++)
        first[idx[p] + 1]++;
    for (int64_t r = 0; r < v; r++)
        first[r + 1] += first[r];
    for (int64_t p = 0; p < n; p++)
        order[first[idx[p]]++] = (int32_t)p;
    for (int64_t r = v; r > 0; r--) /* each first[r] moved on to first[r + 1]: shift back */
        first[r] = first[r - 1];
    first[0] = 0;
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < v; r++) {
        float *row = dw + r * d;
        memset(row, 0, (size_t)d * sizeof *row);
        if (r == pad)
            continue;
        for (int32_t k = first[r]; k < first[r + 1]; k++) {
            const float *src = dy + (int64_t)order[k] * d;
            for (int64_t j = 0; j < d; j++)
                row[j] += src[j];
        }
    }
    return XPB_OK;
}

/* ---- compile ---- */

/* A dense row-major fp32 (or int32 for indices) operand. */
static xpb_status plain_in(xpb_executable *exe, odn_step *s, int slot, uint32_t tid)
{
    const xpb_tensor_desc *t = xpb_program_tensor(exe->prog, tid);
    dnnl_memory_desc_t md;
    odn_md_plain(&md, t, t->dtype == XPB_DTYPE_I32 ? dnnl_s32 : dnnl_f32);
    return odn_in_as(exe, s, slot, tid, &md, NULL);
}

static xpb_status plain_out(xpb_executable *exe, odn_step *s, int slot, uint32_t tid)
{
    dnnl_memory_desc_t md;
    odn_md_plain(&md, xpb_program_tensor(exe->prog, tid), dnnl_f32);
    return odn_out_as(exe, s, slot, tid, &md, NULL);
}

xpb_status odn_compile_embed(xpb_executable *exe)
{
    const xpb_op *op = xpb_program_op(exe->prog, exe->cur_op);
    int bwd = op->kind == XPB_OP_EMBEDDING_BWD;
    uint32_t ids = op->inputs[bwd ? 1 : 0], w = bwd ? op->outputs[0] : op->inputs[1];
    const xpb_tensor_desc *ti = xpb_program_tensor(exe->prog, ids);
    const xpb_tensor_desc *tw = xpb_program_tensor(exe->prog, w);
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_KERNEL);
    s.fn = bwd ? embed_bwd_kernel : embed_kernel;
    s.ctx = exe->kernel_err;
    s.p[0] = xpb_tensor_numel(ti);
    s.p[1] = tw->dims[0];
    s.p[2] = tw->dims[1];
    s.p[3] = bwd && (op->index_flags & XPB_INDEX_PADDING) ? op->padding_idx : -1;
    s.p[4] = ti->ndim;
    for (uint32_t k = 0; k < ti->ndim; k++)
        s.p[5 + k] = ti->dims[k];
    xpb_status st;
    if (!bwd) {
        if ((st = plain_in(exe, &s, 0, ids)) != XPB_OK ||
            (st = plain_in(exe, &s, 1, w)) != XPB_OK ||
            (st = plain_out(exe, &s, 2, op->outputs[0])) != XPB_OK)
            return st;
        return odn_commit(exe, &s);
    }
    dnnl_memory_desc_t first, order;
    int64_t nf = s.p[1] + 1, no = s.p[0];
    odn_md_tag(&first, 1, &nf, dnnl_s32, dnnl_a);
    odn_md_tag(&order, 1, &no, dnnl_s32, dnnl_a);
    if ((st = plain_in(exe, &s, 0, op->inputs[0])) != XPB_OK ||
        (st = plain_in(exe, &s, 1, ids)) != XPB_OK || (st = plain_out(exe, &s, 2, w)) != XPB_OK ||
        (st = odn_scratch_operand(exe, &s, 3, &first)) != XPB_OK ||
        (st = odn_scratch_operand(exe, &s, 4, &order)) != XPB_OK)
        return st;
    return odn_commit(exe, &s);
}
