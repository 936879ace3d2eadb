/* LSTM and LSTM_BWD (op set 3): one layer of torch.nn.LSTM over a whole sequence, lowered to
 * oneDNN matmuls and own cell kernels (kern_lstm_cell.c), as PyTorch composes it.
 *
 * Forward, with rows = T B and gates in PyTorch's order i, f, g, o:
 *   G[rows, 4H]  = x[rows, I] w_ih^T + (b_ih + b_hh)       one product for the whole sequence
 *   per step t:  G[t] += h_{t-1} w_hh^T                    a product of B rows (skipped at t = 0
 *                                                          without h0: it is zero)
 *                cell: G[t] activated in place, c_t, h_t = y[t]
 * Backward, from t = T-1 down to 0:
 *                cell: dG[t] (pre-activation), db summed, dc carried to step t-1
 *                dh_{t-1} = dG[t] w_hh                     (at t = 0: dh0, when wanted)
 * then three products over the whole sequence:
 *   dx = dG w_ih,   dw_ih = dG^T x,   dw_hh = dG^T [h0; y[0 .. T-2]]   (h0 absent: zeros)
 *
 * Why not oneDNN's LSTM primitive (which cpu_onednn used before): with 20 rows a step, its
 * backward ran at 38% of the bf16 peak on an AVX512-BF16 CPU and kept its own copy of both
 * weights and their gradients; the per-step products here run on matmul with w_hh packed
 * once per run (424 GFLOP/s for 20 x 1500 x 6000 in bf16 there, 174 fp32), and the rest are
 * products over all T B rows (bench/README.md has the measurements).
 *
 * The WORKSPACE tensor ([T, B, 5H] fp32 in the program; contents are the backend's business)
 * holds the activated gates of every step, [rows, 4H], followed by every cell state,
 * [rows, H], as one flat vector. Under bf16-mixed the products read bf16 (x, the weights' bf16
 * copies, h, dG) and write fp32; gates, cell states and the bias gradient stay fp32. */
#include <string.h>

#include "odn.h"

static const xpb_tensor_desc *T(const xpb_executable *exe, uint32_t id)
{
    return xpb_program_tensor(exe->prog, id);
}

/* The layer's sizes: x[T, B, I], hidden H. */
struct lstm_dims {
    int64_t t, b, i, h;
};

/* What the products read: bf16 under bf16-mixed, fp32 otherwise. */
static dnnl_data_type_t compute_dt(const xpb_executable *exe)
{
    return exe->bf16 ? dnnl_bf16 : dnnl_f32;
}

/* ---- small kernels ---- */

/* o[0] = b_ih, o[1] = b_hh, o[2] = their sum (p[0] floats) */
static xpb_status bias_kernel(odn_step *s)
{
    const float *a = s->o[0].ptr, *b = s->o[1].ptr;
    float *sum = s->o[2].ptr;
    for (int64_t j = 0; j < s->p[0]; j++)
        sum[j] = a[j] + b[j];
    return XPB_OK;
}

/* o[0] = destination (fp32 or bf16), o[1] (optional) = source (fp32 or bf16; absent: zeros),
 * p[0] elements: a copy that converts between the two types. */
static xpb_status convert_kernel(odn_step *s)
{
    void *dst = s->o[0].ptr;
    dnnl_data_type_t dt = s->o[0].md.data_type;
    int64_t n = s->p[0];
    if (s->n < 2) {
        memset(dst, 0, (size_t)n * dnnl_data_type_size(dt));
        return XPB_OK;
    }
    const void *src = s->o[1].ptr;
    dnnl_data_type_t st = s->o[1].md.data_type;
    if (st == dt) {
        memcpy(dst, src, (size_t)n * dnnl_data_type_size(dt));
        return XPB_OK;
    }
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < n; k++)
        odn_store(dst, dt, k, odn_load(src, st, k));
    return XPB_OK;
}

/* ---- descriptors and operands ---- */

/* A dense row-major matrix [r, c], or with `transposed` its transpose [c, r] over the bytes of
 * a row-major [r, c]. */
static void matrix(dnnl_memory_desc_t *md, int64_t r, int64_t c, int transposed,
                   dnnl_data_type_t dt)
{
    odn_md_matrix(md, 2, (const int64_t[]){r, c}, transposed, 2, dt);
}

/* Rows [first, first + n) of a row-major [*, c] buffer `buf` of type dt, as operand `slot`. */
static void rows_of(odn_step *s, int slot, uint32_t buf, int64_t first, int64_t n, int64_t c,
                    dnnl_data_type_t dt)
{
    dnnl_memory_desc_t md;
    matrix(&md, n, c, 0, dt);
    odn_buf_operand_at(s, slot, buf, (size_t)(first * c) * dnnl_data_type_size(dt), &md);
}

/* The buffer of tensor `tid` read as dense row-major in `dt` (converted first if it is stored
 * otherwise), through a kernel-less probe step. */
static xpb_status plain_buf(uint32_t *out, xpb_executable *exe, uint32_t tid, dnnl_data_type_t dt)
{
    dnnl_memory_desc_t md;
    odn_md_plain(&md, T(exe, tid), dt);
    odn_step probe;
    odn_step_init(&probe, exe, ODN_STEP_KERNEL);
    xpb_status st = odn_in_as(exe, &probe, 0, tid, &md, NULL);
    *out = probe.o[0].buf;
    return st;
}

/* Emits a kernel step: tensor `to` (XPB_NO_TENSOR: nothing) = rows [first, first + rows) of
 * buffer `from` (row-major [*, c] of type `from_dt`), converted to `to`'s preferred type;
 * `from` ODN_NONE: zeros. */
static xpb_status emit_convert(xpb_executable *exe, uint32_t to, uint32_t from, int64_t first,
                               int64_t rows, int64_t c, dnnl_data_type_t from_dt)
{
    if (to == XPB_NO_TENSOR)
        return XPB_OK;
    dnnl_memory_desc_t view;
    odn_md_plain(&view, T(exe, to), odn_pref_dt(exe, to));
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_KERNEL);
    s.fn = convert_kernel;
    s.p[0] = rows * c;
    xpb_status st = odn_out_as(exe, &s, 0, to, &view, NULL);
    if (st != XPB_OK)
        return st;
    if (from != ODN_NONE)
        rows_of(&s, 1, from, first, rows, c, from_dt);
    return odn_commit(exe, &s);
}

/* A product step dst[m, n] (+)= src[m, k] wei[k, n] of the given descriptors (wei_pd: the one
 * the primitive is created with, format "any" for packed weights; bias: [1, n] fp32 or NULL;
 * accumulate: a sum post-op). The caller adds the operands; *out is not committed. */
static xpb_status product(odn_step *out, xpb_executable *exe, const dnnl_memory_desc_t *src,
                          const dnnl_memory_desc_t *wei_pd, const dnnl_memory_desc_t *bias,
                          const dnnl_memory_desc_t *dst, int accumulate)
{
    dnnl_matmul_desc_t d;
    ODN_TRY(exe, dnnl_matmul_desc_init(&d, src, wei_pd, bias, dst), "LSTM matmul descriptor");
    dnnl_post_ops_t po = NULL;
    if (accumulate) {
        ODN_TRY(exe, dnnl_post_ops_create(&po), "post-ops");
        dnnl_status_t r = dnnl_post_ops_append_sum(po, 1.0f);
        if (r != dnnl_success) {
            dnnl_post_ops_destroy(po);
            return odn_dnnl_fail(exe, r, "sum post-op");
        }
    }
    odn_step_init(out, exe, ODN_STEP_PRIM);
    xpb_status st = odn_pd_create(&out->pd, exe, &d, po, NULL, "LSTM matmul");
    if (po)
        dnnl_post_ops_destroy(po);
    return st;
}

/* One primitive descriptor for each of a loop's steps: a clone of `pd`. */
static xpb_status clone_pd(dnnl_primitive_desc_t *out, xpb_executable *exe,
                           const_dnnl_primitive_desc_t pd)
{
    ODN_TRY(exe, dnnl_primitive_desc_clone(out, pd), "LSTM matmul descriptor copy");
    return XPB_OK;
}

/* The per-step product with weight `w` ([k, n] seen through `wview`) packed into the layout
 * of `pd`'s weights once: the first call (*packed ODN_NONE) emits the reorder and records the
 * buffer, later calls reuse it. */
static xpb_status packed_weights(odn_step *s, xpb_executable *exe, uint32_t w,
                                 const dnnl_memory_desc_t *wview, uint32_t *packed)
{
    const dnnl_memory_desc_t *want = odn_pd_md(s->pd, dnnl_query_weights_md);
    if (*packed != ODN_NONE) {
        odn_buf_operand(s, DNNL_ARG_WEIGHTS, *packed, want);
        return XPB_OK;
    }
    xpb_status st = odn_in_as(exe, s, DNNL_ARG_WEIGHTS, w, wview, want);
    if (st == XPB_OK)
        *packed = s->o[s->n - 1].buf;
    return st;
}

/* ---- forward ---- */

/* The buffer the forward writes h into, dense [T, B, H] in the compute type: y's own
 * storage when it is that (y is stored dense in the type the precision policy wants), else a
 * temporary (*via_tmp set) reordered into y afterwards (an fp32 output under bf16-mixed). */
static xpb_status h_sequence(uint32_t *out, int *via_tmp, xpb_executable *exe, uint32_t y)
{
    dnnl_memory_desc_t plain;
    odn_tensor *t = &exe->t[y];
    xpb_status st;
    odn_md_plain(&plain, T(exe, y), odn_pref_dt(exe, y));
    if (!t->decided && (st = odn_decide(exe, y, &plain)) != XPB_OK)
        return st;
    odn_md_plain(&plain, T(exe, y), compute_dt(exe));
    *via_tmp = !dnnl_memory_desc_equal(&t->md, &plain);
    if (!*via_tmp) {
        *out = t->buf;
        return XPB_OK;
    }
    return odn_buf_new(out, exe, dnnl_memory_desc_get_size(&plain), 0);
}

/* The gates-and-cells buffer: the WORKSPACE tensor `ws` in training, otherwise a temporary.
 * The workspace is stored as one flat fp32 vector of the program's size: its contents are not
 * the [T, B, 5H] the reference keeps, so the host must not read them as that (transfer.c
 * refuses a workspace of another shape). */
static xpb_status gate_buffer(uint32_t *out, xpb_executable *exe, uint32_t ws, int train,
                              const struct lstm_dims *d)
{
    size_t need = (size_t)(d->t * d->b * 5 * d->h) * sizeof(float);
    if (!train)
        return odn_buf_new(out, exe, need, 0);
    if (exe->t[ws].decided)
        return odn_fail(exe, XPB_INTERNAL, "LSTM workspace written twice");
    int64_t n = xpb_tensor_numel(T(exe, ws));
    dnnl_memory_desc_t md;
    odn_md_tag(&md, 1, &n, dnnl_f32, dnnl_a);
    if (dnnl_memory_desc_get_size(&md) < need) {
        char label[256];
        odn_op_label(exe, exe->cur_op, label, sizeof label);
        return odn_fail(exe, XPB_INVALID_ARGUMENT,
                        "%s: the workspace holds %zu bytes, the layer needs %zu ([T, B, 5H] fp32)",
                        label, dnnl_memory_desc_get_size(&md), need);
    }
    xpb_status st = odn_decide(exe, ws, &md);
    *out = exe->t[ws].buf;
    return st;
}

static xpb_status compile_fwd(xpb_executable *exe, const xpb_op *op)
{
    const xpb_program *p = exe->prog;
    uint32_t x = op->inputs[0], w_ih = op->inputs[1], w_hh = op->inputs[2];
    uint32_t h0 = xpb_op_input(p, op, 5), c0 = xpb_op_input(p, op, 6);
    uint32_t y = op->outputs[0], h_n = xpb_op_output(p, op, 1), c_n = xpb_op_output(p, op, 2);
    uint32_t ws = xpb_op_output(p, op, 3);
    struct lstm_dims d = {T(exe, x)->dims[0], T(exe, x)->dims[1], T(exe, x)->dims[2],
                          T(exe, w_hh)->dims[1]};
    int64_t rows = d.t * d.b, g4 = 4 * d.h;
    size_t cells = (size_t)(rows * g4) * sizeof(float); /* where the cell states start */
    dnnl_data_type_t dt = compute_dt(exe), f = dnnl_f32;
    uint32_t gates = ODN_NONE, hseq = ODN_NONE, bsum = ODN_NONE, h0buf = ODN_NONE, c0buf = ODN_NONE;
    int via_tmp = 0;
    xpb_status st;
    if ((st = gate_buffer(&gates, exe, ws, ws != XPB_NO_TENSOR && p->training, &d)) != XPB_OK ||
        (st = h_sequence(&hseq, &via_tmp, exe, y)) != XPB_OK ||
        (st = odn_buf_new(&bsum, exe, (size_t)g4 * sizeof(float), 0)) != XPB_OK ||
        (h0 != XPB_NO_TENSOR && (st = plain_buf(&h0buf, exe, h0, dt)) != XPB_OK) ||
        (c0 != XPB_NO_TENSOR && (st = plain_buf(&c0buf, exe, c0, f)) != XPB_OK))
        return st;

    /* b_ih + b_hh */
    dnnl_memory_desc_t vb;
    odn_md_tag(&vb, 1, &g4, f, dnnl_a);
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_KERNEL);
    s.fn = bias_kernel;
    s.p[0] = g4;
    if ((st = odn_in_as(exe, &s, 0, op->inputs[3], &vb, NULL)) != XPB_OK ||
        (st = odn_in_as(exe, &s, 1, op->inputs[4], &vb, NULL)) != XPB_OK)
        return st;
    odn_buf_operand(&s, 2, bsum, &vb);
    if ((st = odn_commit(exe, &s)) != XPB_OK)
        return st;

    /* G = x w_ih^T + bias over the whole sequence */
    dnnl_memory_desc_t vx, vw, vbias, vg;
    matrix(&vx, rows, d.i, 0, dt);
    matrix(&vw, g4, d.i, 1, dt); /* w_ih [4H, I] seen as [I, 4H] */
    matrix(&vbias, 1, g4, 0, f);
    matrix(&vg, rows, g4, 0, f);
    if ((st = product(&s, exe, &vx, &vw, &vbias, &vg, 0)) != XPB_OK)
        return st;
    if ((st = odn_in_as(exe, &s, DNNL_ARG_SRC, x, &vx, NULL)) != XPB_OK ||
        (st = odn_in_as(exe, &s, DNNL_ARG_WEIGHTS, w_ih, &vw, NULL)) != XPB_OK)
        goto free_step;
    odn_buf_operand(&s, DNNL_ARG_BIAS, bsum, &vbias);
    odn_buf_operand(&s, DNNL_ARG_DST, gates, &vg);
    if ((st = odn_commit(exe, &s)) != XPB_OK)
        return st;

    /* the steps */
    dnnl_memory_desc_t vh, vwh_any, vwh, vgt;
    matrix(&vh, d.b, d.h, 0, dt);
    odn_md_tag(&vwh_any, 2, (const int64_t[]){d.h, g4}, dt, dnnl_format_tag_any);
    matrix(&vwh, g4, d.h, 1, dt); /* w_hh [4H, H] seen as [H, 4H] */
    matrix(&vgt, d.b, g4, 0, f);
    odn_step rec; /* the per-step product's descriptor, cloned for each step */
    if ((st = product(&rec, exe, &vh, &vwh_any, NULL, &vgt, 1)) != XPB_OK)
        return st;
    uint32_t packed = ODN_NONE;
    for (int64_t t = 0; t < d.t; t++) {
        if (t > 0 || h0buf != ODN_NONE) {
            odn_step_init(&s, exe, ODN_STEP_PRIM);
            if ((st = clone_pd(&s.pd, exe, rec.pd)) != XPB_OK)
                goto free_rec;
            if (t > 0)
                rows_of(&s, DNNL_ARG_SRC, hseq, (t - 1) * d.b, d.b, d.h, dt);
            else
                odn_buf_operand(&s, DNNL_ARG_SRC, h0buf, &vh);
            if ((st = packed_weights(&s, exe, w_hh, &vwh, &packed)) != XPB_OK)
                goto free_step_and_rec;
            rows_of(&s, DNNL_ARG_DST, gates, t * d.b, d.b, g4, f);
            if ((st = odn_commit(exe, &s)) != XPB_OK)
                goto free_rec;
        }
        odn_step_init(&s, exe, ODN_STEP_KERNEL);
        s.fn = odn_lstm_cell_fwd;
        s.p[0] = d.b;
        s.p[1] = d.h;
        rows_of(&s, 0, gates, t * d.b, d.b, g4, f);
        dnnl_memory_desc_t vc;
        matrix(&vc, d.b, d.h, 0, f);
        odn_buf_operand_at(&s, 1, gates, cells + (size_t)(t * d.b * d.h) * sizeof(float), &vc);
        rows_of(&s, 2, hseq, t * d.b, d.b, d.h, dt);
        if (t > 0)
            odn_buf_operand_at(&s, 3, gates, cells + (size_t)((t - 1) * d.b * d.h) * sizeof(float),
                               &vc);
        else if (c0buf != ODN_NONE)
            odn_buf_operand(&s, 3, c0buf, &vc);
        if ((st = odn_commit(exe, &s)) != XPB_OK)
            goto free_rec;
    }
    dnnl_primitive_desc_destroy(rec.pd);

    /* y (when h went to a temporary), h_n and c_n */
    if (via_tmp) {
        dnnl_memory_desc_t plain;
        odn_md_plain(&plain, T(exe, y), dt);
        if ((st = odn_emit_reorder(exe, ODN_LIST_STEPS, hseq, &plain, exe->t[y].buf,
                                   &exe->t[y].md)) != XPB_OK)
            return st;
    }
    if ((st = emit_convert(exe, h_n, hseq, (d.t - 1) * d.b, d.b, d.h, dt)) != XPB_OK)
        return st;
    return emit_convert(exe, c_n, gates, rows * 4 + (d.t - 1) * d.b, d.b, d.h, f);
free_step_and_rec:
    dnnl_primitive_desc_destroy(s.pd);
free_rec:
    dnnl_primitive_desc_destroy(rec.pd);
    return st;
free_step:
    dnnl_primitive_desc_destroy(s.pd);
    return st;
}

/* ---- backward ---- */

/* Emits dst (tensor `g`, a weight gradient [4H, K] fp32) = dG^T [4H, rows] src [rows, K], src
 * being buffer `src` (dense, compute type). */
static xpb_status emit_weight_grad(xpb_executable *exe, uint32_t g, uint32_t dg, uint32_t src,
                                   const struct lstm_dims *d, int64_t k)
{
    dnnl_data_type_t dt = compute_dt(exe);
    int64_t rows = d->t * d->b, g4 = 4 * d->h;
    dnnl_memory_desc_t va, vb, vc;
    matrix(&va, rows, g4, 1, dt); /* dG [rows, 4H] seen as [4H, rows] */
    matrix(&vb, rows, k, 0, dt);
    matrix(&vc, g4, k, 0, odn_pref_dt(exe, g));
    odn_step s;
    xpb_status st = product(&s, exe, &va, &vb, NULL, &vc, 0);
    if (st != XPB_OK)
        return st;
    odn_buf_operand(&s, DNNL_ARG_SRC, dg, &va);
    odn_buf_operand(&s, DNNL_ARG_WEIGHTS, src, &vb);
    if ((st = odn_out_as(exe, &s, DNNL_ARG_DST, g, &vc, NULL)) != XPB_OK) {
        dnnl_primitive_desc_destroy(s.pd);
        return st;
    }
    return odn_commit(exe, &s);
}

/* Emits, into a new buffer *out, [h0; y[0 .. T-2]] as [rows, H] in the compute type (h0
 * absent: zeros): the state each step's recurrent product read. */
static xpb_status emit_h_prev(uint32_t *out, xpb_executable *exe, uint32_t ybuf, uint32_t h0,
                              const struct lstm_dims *d)
{
    dnnl_data_type_t dt = compute_dt(exe);
    int64_t bh = d->b * d->h;
    xpb_status st = odn_buf_new(out, exe, (size_t)(d->t * bh) * dnnl_data_type_size(dt), 0);
    if (st != XPB_OK)
        return st;
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_KERNEL);
    s.fn = convert_kernel;
    s.p[0] = bh;
    rows_of(&s, 0, *out, 0, d->b, d->h, dt);
    uint32_t h0buf = ODN_NONE;
    if (h0 != XPB_NO_TENSOR) {
        if ((st = plain_buf(&h0buf, exe, h0, dt)) != XPB_OK)
            return st;
        rows_of(&s, 1, h0buf, 0, d->b, d->h, dt);
    }
    if ((st = odn_commit(exe, &s)) != XPB_OK || d->t < 2)
        return st;
    odn_step_init(&s, exe, ODN_STEP_KERNEL);
    s.fn = convert_kernel;
    s.p[0] = (d->t - 1) * bh;
    rows_of(&s, 0, *out, d->b, (d->t - 1) * d->b, d->h, dt);
    rows_of(&s, 1, ybuf, 0, (d->t - 1) * d->b, d->h, dt);
    return odn_commit(exe, &s);
}

static xpb_status compile_bwd(xpb_executable *exe, const xpb_op *op)
{
    const xpb_program *p = exe->prog;
    uint32_t in[10], out[7];
    for (uint32_t k = 0; k < 10; k++)
        in[k] = xpb_op_input(p, op, k);
    for (uint32_t k = 0; k < 7; k++)
        out[k] = xpb_op_output(p, op, k);
    /* in: dy, dh_n, dc_n, x, w_ih, w_hh, y, ws, h0, c0; out: dx, dw_ih, dw_hh, db_ih, db_hh,
     * dh0, dc0 */
    struct lstm_dims d = {T(exe, in[3])->dims[0], T(exe, in[3])->dims[1], T(exe, in[3])->dims[2],
                          T(exe, in[5])->dims[1]};
    int64_t rows = d.t * d.b, g4 = 4 * d.h, bh = d.b * d.h;
    dnnl_data_type_t dt = compute_dt(exe), f = dnnl_f32;
    dnnl_data_type_t dy_dt = odn_pref_dt(exe, in[0]);
    if (!exe->t[in[7]].decided) {
        char label[256];
        odn_op_label(exe, exe->cur_op, label, sizeof label);
        return odn_fail(exe, XPB_UNSUPPORTED,
                        "%s: its workspace must come from an LSTM of the same program in training "
                        "(cpu_onednn keeps the gates and cell states there)",
                        label);
    }
    uint32_t gates = exe->t[in[7]].buf;
    size_t cells = (size_t)(rows * g4) * sizeof(float);
    uint32_t dybuf = ODN_NONE, xbuf = ODN_NONE, ybuf = ODN_NONE, c0buf = ODN_NONE;
    uint32_t dg = ODN_NONE, dh = ODN_NONE, dc = ODN_NONE, db = ODN_NONE;
    xpb_status st;
    if ((st = plain_buf(&dybuf, exe, in[0], dy_dt)) != XPB_OK ||
        (st = plain_buf(&xbuf, exe, in[3], dt)) != XPB_OK ||
        (st = plain_buf(&ybuf, exe, in[6], dt)) != XPB_OK ||
        (in[9] != XPB_NO_TENSOR && (st = plain_buf(&c0buf, exe, in[9], f)) != XPB_OK) ||
        (st = odn_buf_new(&dg, exe, (size_t)(rows * g4) * dnnl_data_type_size(dt), 0)) != XPB_OK ||
        (st = odn_buf_new(&dh, exe, (size_t)bh * sizeof(float), 0)) != XPB_OK ||
        (st = odn_buf_new(&dc, exe, (size_t)bh * sizeof(float), 0)) != XPB_OK ||
        (st = odn_buf_new(&db, exe, (size_t)g4 * sizeof(float), 0)) != XPB_OK)
        return st;

    /* dh, dc = dh_n, dc_n, or zeros */
    dnnl_memory_desc_t vs;
    matrix(&vs, d.b, d.h, 0, f);
    for (int k = 0; k < 2; k++) {
        uint32_t src = in[1 + k], sbuf = ODN_NONE;
        odn_step s;
        odn_step_init(&s, exe, ODN_STEP_KERNEL);
        s.fn = convert_kernel;
        s.p[0] = bh;
        odn_buf_operand(&s, 0, k ? dc : dh, &vs);
        if (src != XPB_NO_TENSOR) {
            dnnl_data_type_t sdt = odn_pref_dt(exe, src);
            if ((st = plain_buf(&sbuf, exe, src, sdt)) != XPB_OK)
                return st;
            rows_of(&s, 1, sbuf, 0, d.b, d.h, sdt);
        }
        if ((st = odn_commit(exe, &s)) != XPB_OK)
            return st;
    }

    /* the steps, last to first */
    dnnl_memory_desc_t vdgt, vw_any, vw, vdh;
    matrix(&vdgt, d.b, g4, 0, dt);
    odn_md_tag(&vw_any, 2, (const int64_t[]){g4, d.h}, dt, dnnl_format_tag_any);
    matrix(&vw, g4, d.h, 0, dt); /* w_hh as it is: [4H, H] */
    matrix(&vdh, d.b, d.h, 0, f);
    odn_step rec, s;
    if ((st = product(&rec, exe, &vdgt, &vw_any, NULL, &vdh, 0)) != XPB_OK)
        return st;
    uint32_t packed = ODN_NONE;
    for (int64_t t = d.t - 1; t >= 0; t--) {
        odn_step_init(&s, exe, ODN_STEP_KERNEL);
        s.fn = odn_lstm_cell_bwd;
        s.p[0] = d.b;
        s.p[1] = d.h;
        s.p[2] = t == d.t - 1;
        dnnl_memory_desc_t vdb;
        odn_md_tag(&vdb, 1, &g4, f, dnnl_a);
        rows_of(&s, 0, dybuf, t * d.b, d.b, d.h, dy_dt);
        odn_buf_operand(&s, 1, dh, &vs);
        odn_buf_operand(&s, 2, dc, &vs);
        rows_of(&s, 3, gates, t * d.b, d.b, g4, f);
        odn_buf_operand_at(&s, 4, gates, cells + (size_t)(t * bh) * sizeof(float), &vs);
        rows_of(&s, 5, dg, t * d.b, d.b, g4, dt);
        odn_buf_operand(&s, 6, db, &vdb);
        if (t > 0)
            odn_buf_operand_at(&s, 7, gates, cells + (size_t)((t - 1) * bh) * sizeof(float), &vs);
        else if (c0buf != ODN_NONE)
            odn_buf_operand(&s, 7, c0buf, &vs);
        if ((st = odn_commit(exe, &s)) != XPB_OK)
            goto free_rec;
        /* dh_{t-1} = dG[t] w_hh; at t = 0 that is dh0 */
        if (t == 0 && out[5] == XPB_NO_TENSOR)
            break;
        odn_step_init(&s, exe, ODN_STEP_PRIM);
        if ((st = clone_pd(&s.pd, exe, rec.pd)) != XPB_OK)
            goto free_rec;
        rows_of(&s, DNNL_ARG_SRC, dg, t * d.b, d.b, g4, dt);
        if ((st = packed_weights(&s, exe, in[5], &vw, &packed)) != XPB_OK)
            goto free_step_and_rec;
        if (t > 0) {
            odn_buf_operand(&s, DNNL_ARG_DST, dh, &vdh);
        } else {
            dnnl_memory_desc_t v0;
            matrix(&v0, d.b, d.h, 0, odn_pref_dt(exe, out[5]));
            if (v0.data_type != f) { /* the product writes fp32; the tensor is converted */
                st = odn_out_as(exe, &s, DNNL_ARG_DST, out[5], &v0, &vdh);
            } else {
                st = odn_out_as(exe, &s, DNNL_ARG_DST, out[5], &v0, NULL);
            }
            if (st != XPB_OK)
                goto free_step_and_rec;
        }
        if ((st = odn_commit(exe, &s)) != XPB_OK)
            goto free_rec;
    }
    dnnl_primitive_desc_destroy(rec.pd);

    /* dc0; db_ih = db_hh = the summed gate gradients */
    if ((st = emit_convert(exe, out[6], dc, 0, d.b, d.h, f)) != XPB_OK ||
        (st = emit_convert(exe, out[3], db, 0, 1, g4, f)) != XPB_OK ||
        (st = emit_convert(exe, out[4], db, 0, 1, g4, f)) != XPB_OK)
        return st;

    /* dx = dG w_ih */
    if (out[0] != XPB_NO_TENSOR) {
        dnnl_memory_desc_t va, vb, vc;
        matrix(&va, rows, g4, 0, dt);
        matrix(&vb, g4, d.i, 0, dt);
        matrix(&vc, rows, d.i, 0, odn_pref_dt(exe, out[0]));
        if ((st = product(&s, exe, &va, &vb, NULL, &vc, 0)) != XPB_OK)
            return st;
        odn_buf_operand(&s, DNNL_ARG_SRC, dg, &va);
        if ((st = odn_in_as(exe, &s, DNNL_ARG_WEIGHTS, in[4], &vb, NULL)) != XPB_OK ||
            (st = odn_out_as(exe, &s, DNNL_ARG_DST, out[0], &vc, NULL)) != XPB_OK)
            goto free_step;
        if ((st = odn_commit(exe, &s)) != XPB_OK)
            return st;
    }

    /* dw_ih = dG^T x, dw_hh = dG^T [h0; y[0 .. T-2]] */
    uint32_t hprev = ODN_NONE;
    if ((st = emit_weight_grad(exe, out[1], dg, xbuf, &d, d.i)) != XPB_OK ||
        (st = emit_h_prev(&hprev, exe, ybuf, in[8], &d)) != XPB_OK)
        return st;
    return emit_weight_grad(exe, out[2], dg, hprev, &d, d.h);
free_step_and_rec:
    dnnl_primitive_desc_destroy(s.pd);
free_rec:
    dnnl_primitive_desc_destroy(rec.pd);
    return st;
free_step:
    dnnl_primitive_desc_destroy(s.pd);
    return st;
}

xpb_status odn_compile_lstm(xpb_executable *exe)
{
    const xpb_op *op = xpb_program_op(exe->prog, exe->cur_op);
    return op->kind == XPB_OP_LSTM ? compile_fwd(exe, op) : compile_bwd(exe, op);
}
