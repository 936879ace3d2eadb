/* INSTANCENORM and its backward as own OpenMP kernels, in the input's own layout (plain NCHW,
 * NHWC or channel-blocked nChw8c/16c; fp32 or bf16), with per-plane sums in double.
 *
 * Why not oneDNN's batch norm over an [1, N*C, H, W] view: its single-precision sums lose too
 * much in instance-norm backward, dx = (dy - mean(dy) - x^ mean(dy x^)) / sigma, whose two
 * subtractions cancel almost everything when dy is nearly affine in x^ (it is, deep in a
 * CycleGAN generator); the reference sums in double, and so does this kernel. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "odn.h"

/* Work is split into items (image n, channel group g, block of rows [i0, i1)); each item
 * handles the group's whole run of channels at every pixel it visits, so NHWC data is read in
 * whole cache lines. Per-item partial sums go to a scratch buffer and are combined per plane
 * in a fixed order (results do not depend on the thread count). */
typedef struct in_work {
    odn_channel_runs l;
    int64_t n, c, h, w, blocks, items; /* blocks of rows per plane */
} in_work;

static void work_init(in_work *k, const odn_step *s, const dnnl_memory_desc_t *md)
{
    memset(k, 0, sizeof *k);
    odn_channel_runs_of(md, &k->l);
    k->n = s->p[0];
    k->c = s->p[1];
    k->h = s->p[2];
    k->w = s->p[3];
    k->blocks = s->p[4] < k->h ? s->p[4] : k->h;
    k->items = k->n * k->l.groups * k->blocks;
}

static void item_rows(const in_work *k, int64_t t, int64_t *plane, int64_t *base, int64_t *i0,
                      int64_t *i1)
{
    int64_t b = t % k->blocks, p = t / k->blocks; /* p = n * groups + g */
    *plane = p;
    *base = (p / k->l.groups) * k->l.sn + (p % k->l.groups) * k->l.sg;
    *i0 = k->h * b / k->blocks;
    *i1 = k->h * (b + 1) / k->blocks;
}

/* Sums over the rows of item t into acc[0..vec) (and acc[vec..2vec) for `second`). */
static void sum_rows(const in_work *k, int64_t t, const void *a, const void *bsrc,
                     dnnl_data_type_t dt, const double *mean, const double *inv, int mode,
                     double *acc)
{
    int64_t plane, base, i0, i1, vec = k->l.vec;
    item_rows(k, t, &plane, &base, &i0, &i1);
    for (int64_t v = 0; v < 2 * vec; v++)
        acc[v] = 0.0;
    for (int64_t i = i0; i < i1; i++)
        for (int64_t j = 0; j < k->w; j++) {
            int64_t o = base + i * k->l.sh + j * k->l.sw;
            if (mode == 0) { /* sum x */
                for (int64_t v = 0; v < vec; v++)
                    acc[v] += odn_load(a, dt, o + v);
            } else if (mode == 1) { /* sum (x - mean)^2 */
                for (int64_t v = 0; v < vec; v++) {
                    double d = odn_load(a, dt, o + v) - mean[v];
                    acc[v] += d * d;
                }
            } else { /* sum dy, sum dy * xhat (a = dy, bsrc = x) */
                for (int64_t v = 0; v < vec; v++) {
                    double d = odn_load(a, dt, o + v);
                    acc[v] += d;
                    acc[vec + v] += d * (odn_load(bsrc, dt, o + v) - mean[v]) * inv[v];
                }
            }
        }
}

/* Adds the partial sums of plane p's items (2*vec values each) into out[0..2vec). */
static void combine(const in_work *k, const double *part, int64_t p, double *out)
{
    int64_t vec = k->l.vec;
    for (int64_t v = 0; v < 2 * vec; v++)
        out[v] = 0.0;
    for (int64_t b = 0; b < k->blocks; b++)
        for (int64_t v = 0; v < 2 * vec; v++)
            out[v] += part[(p * k->blocks + b) * 2 * vec + v];
}

/* o: x, y, ws_mean, ws_var, scratch; p: N, C, H, W, row blocks; f[0] = eps. */
static xpb_status inorm_fwd_kernel(odn_step *s)
{
    in_work k;
    work_init(&k, s, &s->o[0].md);
    dnnl_data_type_t dt = s->o[0].md.data_type;
    const void *x = s->o[0].ptr;
    void *y = s->o[1].ptr;
    float *ws_mean = s->o[2].ptr, *ws_var = s->o[3].ptr;
    int64_t vec = k.l.vec, planes = k.n * k.l.groups;
    double *part = s->o[4].ptr, *stat = part + k.items * 2 * vec; /* stat: mean, inv per plane */
    double eps = s->f[0], count = (double)(k.h * k.w);
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < k.items; t++)
        sum_rows(&k, t, x, NULL, dt, NULL, NULL, 0, part + t * 2 * vec);
    for (int64_t p = 0; p < planes; p++) {
        double tot[2 * 512];
        combine(&k, part, p, tot);
        for (int64_t v = 0; v < vec; v++)
            stat[p * 2 * vec + v] = tot[v] / count;
    }
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < k.items; t++)
        sum_rows(&k, t, x, NULL, dt, stat + (t / k.blocks) * 2 * vec, NULL, 1, part + t * 2 * vec);
    for (int64_t p = 0; p < planes; p++) {
        double tot[2 * 512];
        combine(&k, part, p, tot);
        for (int64_t v = 0; v < vec; v++) {
            double var = tot[v] / count;
            stat[p * 2 * vec + vec + v] = 1.0 / sqrt(var + eps);
            int64_t n = p / k.l.groups, c = (p % k.l.groups) * vec + v;
            if (c < k.c) {
                ws_mean[n * k.c + c] = (float)stat[p * 2 * vec + v];
                ws_var[n * k.c + c] = (float)var;
            }
        }
    }
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < k.items; t++) {
        int64_t plane, base, i0, i1;
        item_rows(&k, t, &plane, &base, &i0, &i1);
        const double *mean = stat + plane * 2 * vec, *inv = mean + vec;
        int64_t c0 = (plane % k.l.groups) * vec;
        for (int64_t i = i0; i < i1; i++)
            for (int64_t j = 0; j < k.w; j++) {
                int64_t o = base + i * k.l.sh + j * k.l.sw;
                for (int64_t v = 0; v < vec; v++) {
                    float r = c0 + v < k.c ? (float)((odn_load(x, dt, o + v) - mean[v]) * inv[v])
                                           : 0.0f; /* padded channels stay zero */
                    odn_store(y, dt, o + v, r);
                }
            }
    }
    return XPB_OK;
}

/* o: dy, x, ws_mean, ws_var, dx, scratch; p: N, C, H, W, row blocks; f[0] = eps. */
static xpb_status inorm_bwd_kernel(odn_step *s)
{
    in_work k;
    work_init(&k, s, &s->o[1].md);
    dnnl_data_type_t dt = s->o[1].md.data_type;
    const void *dy = s->o[0].ptr, *x = s->o[1].ptr;
    const float *ws_mean = s->o[2].ptr, *ws_var = s->o[3].ptr;
    void *dx = s->o[4].ptr;
    int64_t vec = k.l.vec, planes = k.n * k.l.groups;
    double *part = s->o[5].ptr, *stat = part + k.items * 2 * vec;
    double *mom = stat + planes * 2 * vec; /* per plane: mean(dy), mean(dy * xhat) */
    double eps = s->f[0], count = (double)(k.h * k.w);
    for (int64_t p = 0; p < planes; p++)
        for (int64_t v = 0; v < vec; v++) {
            int64_t n = p / k.l.groups, c = (p % k.l.groups) * vec + v;
            stat[p * 2 * vec + v] = c < k.c ? ws_mean[n * k.c + c] : 0.0;
            stat[p * 2 * vec + vec + v] = 1.0 / sqrt((c < k.c ? ws_var[n * k.c + c] : 0.0) + eps);
        }
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < k.items; t++) {
        const double *mean = stat + (t / k.blocks) * 2 * vec;
        sum_rows(&k, t, dy, x, dt, mean, mean + vec, 2, part + t * 2 * vec);
    }
    for (int64_t p = 0; p < planes; p++) {
        combine(&k, part, p, mom + p * 2 * vec);
        for (int64_t v = 0; v < 2 * vec; v++)
            mom[p * 2 * vec + v] /= count;
    }
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < k.items; t++) {
        int64_t plane, base, i0, i1;
        item_rows(&k, t, &plane, &base, &i0, &i1);
        const double *mean = stat + plane * 2 * vec, *inv = mean + vec;
        const double *mdy = mom + plane * 2 * vec, *mdyx = mdy + vec;
        int64_t c0 = (plane % k.l.groups) * vec;
        for (int64_t i = i0; i < i1; i++)
            for (int64_t j = 0; j < k.w; j++) {
                int64_t o = base + i * k.l.sh + j * k.l.sw;
                for (int64_t v = 0; v < vec; v++) {
                    double xh = (odn_load(x, dt, o + v) - mean[v]) * inv[v];
                    double r = (odn_load(dy, dt, o + v) - mdy[v] - xh * mdyx[v]) * inv[v];
                    odn_store(dx, dt, o + v, c0 + v < k.c ? (float)r : 0.0f);
                }
            }
    }
    return XPB_OK;
}

/* Statistics operand: plain f32 [N,C] (a private buffer for an unwanted output). */
static xpb_status stats_operand(xpb_executable *exe, odn_step *s, int slot, uint32_t tid,
                                const xpb_tensor_desc *x, int output)
{
    dnnl_memory_desc_t md;
    int64_t nc[2] = {x->dims[0], x->dims[1]};
    if (tid == XPB_NO_TENSOR)
        odn_md_tag(&md, 2, nc, dnnl_f32, dnnl_ab);
    else
        odn_md_plain(&md, xpb_program_tensor(exe->prog, tid), dnnl_f32);
    return output ? odn_out_opt(exe, s, slot, tid, &md) : odn_in(exe, s, slot, tid, &md);
}

xpb_status odn_compile_inorm(xpb_executable *exe)
{
    const xpb_op *op = xpb_program_op(exe->prog, exe->cur_op);
    int backward = op->kind == XPB_OP_INSTANCENORM_BWD;
    char label[256];
    odn_op_label(exe, exe->cur_op, label, sizeof label);
    if (op->n_inputs < (backward ? 4u : 1u) || op->n_outputs < (backward ? 1u : 3u))
        return odn_fail(exe, XPB_INVALID_ARGUMENT, "%s: expects %s", label,
                        backward ? "dy, x, ws_mean, ws_var -> dx" : "x -> y, ws_mean, ws_var");
    uint32_t x = op->inputs[backward ? 1 : 0];
    const xpb_tensor_desc *tx = xpb_program_tensor(exe->prog, x);
    if (tx->ndim != 4)
        return odn_fail(exe, XPB_INVALID_ARGUMENT, "%s: x must be [N,C,H,W]", label);
    for (int k = 0; k < 2; k++) {
        uint32_t id = backward ? op->inputs[2 + k] : op->outputs[1 + k];
        if (id == XPB_NO_TENSOR)
            continue;
        const xpb_tensor_desc *ts = xpb_program_tensor(exe->prog, id);
        if (xpb_tensor_numel(ts) != tx->dims[0] * tx->dims[1])
            return odn_fail(exe, XPB_INVALID_ARGUMENT, "%s: statistics must be [N,C]", label);
    }
    /* x as stored when the kernel understands its layout, else plain */
    const dnnl_memory_desc_t *stored = odn_tensor_md(exe, x);
    dnnl_data_type_t dt = stored ? stored->data_type : odn_pref_dt(exe, x);
    if (dt != dnnl_f32 && dt != dnnl_bf16)
        dt = dnnl_f32;
    dnnl_memory_desc_t want;
    odn_channel_runs l = {0};
    if (stored && stored->data_type == dt && odn_channel_runs_of(stored, &l) && l.vec <= 512) {
        want = *stored;
    } else {
        odn_md_plain(&want, tx, dt);
        odn_channel_runs_of(&want, &l);
    }
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_KERNEL);
    s.fn = backward ? inorm_bwd_kernel : inorm_fwd_kernel;
    memcpy(s.p, tx->dims, 4 * sizeof(int64_t));
    /* enough items for every thread: split planes into blocks of rows when there are few */
    int64_t planes = tx->dims[0] * l.groups, want_items = 4 * (int64_t)exe->threads;
    s.p[4] = planes >= want_items ? 1 : (want_items + planes - 1) / planes;
    if (s.p[4] > tx->dims[2])
        s.p[4] = tx->dims[2];
    s.f[0] = op->attrs.eps;
    /* scratch: partial sums per item, then statistics and moments per plane (doubles) */
    int64_t doubles = (planes * s.p[4] + 2 * planes) * 2 * l.vec;
    int64_t floats = 2 * doubles;
    dnnl_memory_desc_t scratch;
    odn_md_tag(&scratch, 1, &floats, dnnl_f32, dnnl_a);
    xpb_status st;
    if (!backward) {
        if ((st = odn_in(exe, &s, 0, x, &want)) != XPB_OK ||
            (st = odn_out(exe, &s, 1, op->outputs[0], &want)) != XPB_OK ||
            (st = stats_operand(exe, &s, 2, op->outputs[1], tx, 1)) != XPB_OK ||
            (st = stats_operand(exe, &s, 3, op->outputs[2], tx, 1)) != XPB_OK ||
            (st = odn_scratch_operand(exe, &s, 4, &scratch)) != XPB_OK)
            return st;
    } else {
        if ((st = odn_in(exe, &s, 0, op->inputs[0], &want)) != XPB_OK ||
            (st = odn_in(exe, &s, 1, x, &want)) != XPB_OK ||
            (st = stats_operand(exe, &s, 2, op->inputs[2], tx, 0)) != XPB_OK ||
            (st = stats_operand(exe, &s, 3, op->inputs[3], tx, 0)) != XPB_OK ||
            (st = odn_out(exe, &s, 4, op->outputs[0], &want)) != XPB_OK ||
            (st = odn_scratch_operand(exe, &s, 5, &scratch)) != XPB_OK)
            return st;
    }
    return odn_commit(exe, &s);
}
