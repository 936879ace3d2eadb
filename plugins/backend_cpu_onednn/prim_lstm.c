/* LSTM and LSTM_BWD (op set 3): one layer of torch.nn.LSTM over a whole sequence on oneDNN's
 * vanilla LSTM primitive (unidirectional, one layer) and its backward.
 *
 * Mapping (docs/ops.md): oneDNN orders the gates i, f, c~, o, which is PyTorch's i, f, g, o, so
 * a program weight w[4H, X] (row g*H + o, column x) is oneDNN's 5-D weight {1, 1, X, 4, H} in
 * the ldgoi format over the same bytes; a reorder brings it to the layout (and under bf16-mixed
 * the type) the primitive wants. oneDNN keeps one bias: an own kernel adds b_ih and b_hh into
 * it. h0, c0, h_n, c_n [B, H] are ldnc {1, 1, B, H}; x, y are tnc.
 *
 * The WORKSPACE tensor holds oneDNN's workspace followed by c_T, the last cell state (fp32
 * [B, H]), and the summed bias: the backward primitive reads the forward's final cell state
 * (DST_ITER_C; measured on oneDNN 2.6.3: another value changes the gradients) and takes the
 * bias, and LSTM_BWD's operands have neither. The backward's DST_ITER is y's last step (not
 * read by oneDNN, given correctly all the same).
 *
 * Both directions always pass initial states: absent h0 / c0 are buffers a kernel zeroes
 * (without them, oneDNN 2.6.3's backward computes dw_hh from stale workspace: measured).
 * Backward: oneDNN accumulates into the weight and bias gradients, so the same kernel zeroes
 * them first, and absent dh_n / dc_n. Its one bias gradient is both db_ih and db_hh.
 * Under bf16-mixed, data and weights are bf16 and every gradient fp32 (what oneDNN 2.6
 * implements); the cell states are fp32 throughout. */
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

/* ---- kernels ---- */

/* o: b_ih, b_hh, bias (p[0] floats) */
static xpb_status bias_kernel(odn_step *s)
{
    const float *a = s->o[0].ptr, *b = s->o[1].ptr;
    float *sum = s->o[2].ptr;
    for (int64_t j = 0; j < s->p[0]; j++)
        sum[j] = a[j] + b[j];
    return XPB_OK;
}

/* zeroes every operand: p[k] bytes of operand k */
static xpb_status zero_kernel(odn_step *s)
{
    for (uint32_t k = 0; k < s->n; k++)
        memset(s->o[k].ptr, 0, (size_t)s->p[k]);
    return XPB_OK;
}

/* o: from, to (p[0] bytes) */
static xpb_status copy_kernel(odn_step *s)
{
    memcpy(s->o[1].ptr, s->o[0].ptr, (size_t)s->p[0]);
    return XPB_OK;
}

/* ---- descriptors ---- */

static void tnc(dnnl_memory_desc_t *md, int64_t t, int64_t b, int64_t c, dnnl_data_type_t dt)
{
    odn_md_tag(md, 3, (const int64_t[]){t, b, c}, dt, dnnl_tnc);
}

/* A [B, H] state as ldnc */
static void state(dnnl_memory_desc_t *md, const struct lstm_dims *d, dnnl_data_type_t dt)
{
    odn_md_tag(md, 4, (const int64_t[]){1, 1, d->b, d->h}, dt, dnnl_ldnc);
}

/* A weight [4H, X] as 5-D ldgoi (same bytes), or `tag` (format any) */
static void weight(dnnl_memory_desc_t *md, const struct lstm_dims *d, int64_t x,
                   dnnl_data_type_t dt, dnnl_format_tag_t tag)
{
    odn_md_tag(md, 5, (const int64_t[]){1, 1, x, 4, d->h}, dt, tag);
}

static void bias_md(dnnl_memory_desc_t *md, const struct lstm_dims *d)
{
    odn_md_tag(md, 4, (const int64_t[]){1, 1, 4, d->h}, dnnl_f32, dnnl_ldgo);
}

/* The descriptors of one direction of the primitive (or of its gradients): data and weights in
 * `dt` (weights in the format the primitive chooses), cell states and bias fp32. */
struct lstm_mds {
    dnnl_memory_desc_t src, sit, sitc, wl, wi, bias, dst, dit, ditc;
};

static void lstm_mds_of(struct lstm_mds *m, const struct lstm_dims *d, dnnl_data_type_t dt)
{
    tnc(&m->src, d->t, d->b, d->i, dt);
    state(&m->sit, d, dt);
    state(&m->sitc, d, dnnl_f32);
    weight(&m->wl, d, d->i, dt, dnnl_format_tag_any);
    weight(&m->wi, d, d->h, dt, dnnl_format_tag_any);
    bias_md(&m->bias, d);
    tnc(&m->dst, d->t, d->b, d->h, dt);
    state(&m->dit, d, dt);
    state(&m->ditc, d, dnnl_f32);
}

/* The WORKSPACE tensor's buffer: oneDNN's workspace, c_T (fp32 [B, H]) at `cell`, the summed
 * bias (fp32 [4H]) at `bias`, each 64-byte aligned; `bytes` in all. */
struct ws_layout {
    size_t cell, bias, bytes;
};

static size_t align64(size_t v)
{
    return (v + 63) / 64 * 64;
}

static struct ws_layout ws_layout_of(const_dnnl_primitive_desc_t pd, const struct lstm_dims *d)
{
    struct ws_layout l;
    l.cell = align64(dnnl_memory_desc_get_size(odn_pd_md(pd, dnnl_query_workspace_md)));
    l.bias = l.cell + align64((size_t)(d->b * d->h) * sizeof(float));
    l.bytes = l.bias + (size_t)(4 * d->h) * sizeof(float);
    return l;
}

/* ---- steps ---- */

/* Emits the bias kernel b_ih + b_hh into buffer `buf` at `off`. */
static xpb_status emit_bias(xpb_executable *exe, uint32_t b_ih, uint32_t b_hh,
                            const struct lstm_dims *d, uint32_t buf, size_t off)
{
    dnnl_memory_desc_t md;
    odn_md_tag(&md, 1, (const int64_t[]){4 * d->h}, dnnl_f32, dnnl_a);
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_KERNEL);
    s.fn = bias_kernel;
    s.p[0] = 4 * d->h;
    xpb_status st;
    if ((st = odn_in_as(exe, &s, 0, b_ih, &md, NULL)) != XPB_OK ||
        (st = odn_in_as(exe, &s, 1, b_hh, &md, NULL)) != XPB_OK)
        return st;
    odn_buf_operand_at(&s, 2, buf, off, &md);
    return odn_commit(exe, &s);
}

/* Emits a byte copy from (buffer `from` at `off`) to tensor `to` as [B, H] fp32. */
static xpb_status emit_cell_copy(xpb_executable *exe, uint32_t from, size_t off, uint32_t to,
                                 const struct lstm_dims *d)
{
    dnnl_memory_desc_t md, plain;
    state(&md, d, dnnl_f32);
    odn_md_plain(&plain, T(exe, to), dnnl_f32);
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_KERNEL);
    s.fn = copy_kernel;
    s.p[0] = (int64_t)dnnl_memory_desc_get_size(&md);
    odn_buf_operand_at(&s, 0, from, off, &md);
    xpb_status st = odn_out_as(exe, &s, 1, to, &plain, NULL);
    return st != XPB_OK ? st : odn_commit(exe, &s);
}

/* The weights as the primitive `pd` wants them (index 0: layer, 1: iter). */
static xpb_status weights_in(xpb_executable *exe, odn_step *s, const_dnnl_primitive_desc_t pd,
                             uint32_t w_ih, uint32_t w_hh, const struct lstm_dims *d)
{
    dnnl_memory_desc_t vl, vi;
    weight(&vl, d, d->i, dnnl_f32, dnnl_ldgoi);
    weight(&vi, d, d->h, dnnl_f32, dnnl_ldgoi);
    xpb_status st = odn_in_as(exe, s, DNNL_ARG_WEIGHTS_LAYER, w_ih, &vl,
                              dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0));
    if (st != XPB_OK)
        return st;
    return odn_in_as(exe, s, DNNL_ARG_WEIGHTS_ITER, w_hh, &vi,
                     dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 1));
}

/* Pushes (before step `s`, which is not committed yet) a kernel step that zeroes the operands
 * slots[0 .. n) of `s`: the buffers its primitive accumulates into, and absent incoming
 * gradients. */
static xpb_status emit_zero(xpb_executable *exe, const odn_step *s, const uint32_t *slots,
                            uint32_t n)
{
    odn_step z;
    odn_step_init(&z, exe, ODN_STEP_KERNEL);
    z.fn = zero_kernel;
    for (uint32_t k = 0; k < n; k++) {
        const odn_operand *o = &s->o[slots[k]];
        odn_buf_operand_at(&z, o->arg, o->buf, o->off, &o->md);
        z.p[k] = (int64_t)dnnl_memory_desc_get_size(&o->md);
    }
    return odn_push_step(exe, ODN_LIST_STEPS, &z);
}

/* An optional input (an initial state, an incoming state gradient): tensor `tid`, or a buffer
 * that emit_zero clears (its slot goes to slots[*n_zero]). */
static xpb_status in_or_zero(xpb_executable *exe, odn_step *s, int arg, uint32_t tid,
                             const dnnl_memory_desc_t *md, uint32_t *slots, uint32_t *n_zero)
{
    if (tid != XPB_NO_TENSOR)
        return odn_in_as(exe, s, arg, tid, md, NULL);
    slots[(*n_zero)++] = s->n;
    return odn_scratch_operand(exe, s, arg, md);
}

/* ---- forward ---- */

static xpb_status compile_fwd(xpb_executable *exe, const xpb_op *op)
{
    const xpb_program *p = exe->prog;
    uint32_t x = op->inputs[0], w_hh = op->inputs[2];
    uint32_t h0 = xpb_op_input(p, op, 5), c0 = xpb_op_input(p, op, 6);
    uint32_t y = op->outputs[0], h_n = xpb_op_output(p, op, 1), c_n = xpb_op_output(p, op, 2);
    uint32_t ws = xpb_op_output(p, op, 3);
    struct lstm_dims d = {T(exe, x)->dims[0], T(exe, x)->dims[1], T(exe, x)->dims[2],
                          T(exe, w_hh)->dims[1]};
    int train = ws != XPB_NO_TENSOR && p->training;
    dnnl_data_type_t dt = exe->bf16 ? dnnl_bf16 : dnnl_f32;
    struct lstm_mds m;
    lstm_mds_of(&m, &d, dt);
    dnnl_rnn_desc_t rd;
    ODN_TRY(exe,
            dnnl_lstm_forward_desc_init(&rd, train ? dnnl_forward_training : dnnl_forward_inference,
                                        dnnl_unidirectional_left2right, &m.src, &m.sit, &m.sitc,
                                        &m.wl, &m.wi, &m.bias, &m.dst, &m.dit, &m.ditc, 0),
            "LSTM descriptor");
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_PRIM);
    xpb_status st = odn_pd_create(&s.pd, exe, &rd, NULL, NULL, "LSTM");
    if (st != XPB_OK)
        return st;
    /* the bias goes where the backward finds it: into the workspace, or a buffer of its own */
    struct ws_layout l = ws_layout_of(s.pd, &d);
    uint32_t buf = ODN_NONE;
    size_t bias_off = train ? l.bias : 0;
    if (train) {
        dnnl_memory_desc_t all;
        int64_t bytes = (int64_t)l.bytes;
        odn_md_tag(&all, 1, &bytes, dnnl_u8, dnnl_a);
        if (exe->t[ws].decided)
            st = odn_fail(exe, XPB_INTERNAL, "LSTM workspace written twice");
        else
            st = odn_decide(exe, ws, &all);
        buf = exe->t[ws].buf;
    } else {
        st = odn_buf_new(&buf, exe, dnnl_memory_desc_get_size(&m.bias), 0);
    }
    if (st != XPB_OK ||
        (st = emit_bias(exe, op->inputs[3], op->inputs[4], &d, buf, bias_off)) != XPB_OK)
        goto fail;
    dnnl_memory_desc_t vy, vh, vc;
    tnc(&vy, d.t, d.b, d.h, odn_pref_dt(exe, y));
    state(&vh, &d, h_n != XPB_NO_TENSOR ? odn_pref_dt(exe, h_n) : dt);
    state(&vc, &d, dnnl_f32);
    uint32_t zero[2], n_zero = 0;
    if ((st = odn_in_as(exe, &s, DNNL_ARG_SRC_LAYER, x, &m.src, NULL)) != XPB_OK ||
        (st = in_or_zero(exe, &s, DNNL_ARG_SRC_ITER, h0, &m.sit, zero, &n_zero)) != XPB_OK ||
        (st = in_or_zero(exe, &s, DNNL_ARG_SRC_ITER_C, c0, &m.sitc, zero, &n_zero)) != XPB_OK ||
        (st = weights_in(exe, &s, s.pd, op->inputs[1], w_hh, &d)) != XPB_OK ||
        (st = odn_out_as(exe, &s, DNNL_ARG_DST_LAYER, y, &vy, &m.dst)) != XPB_OK ||
        (st = odn_out_as(exe, &s, DNNL_ARG_DST_ITER, h_n, &vh, &m.dit)) != XPB_OK ||
        (!train && (st = odn_out_as(exe, &s, DNNL_ARG_DST_ITER_C, c_n, &vc, NULL)) != XPB_OK) ||
        (n_zero && (st = emit_zero(exe, &s, zero, n_zero)) != XPB_OK))
        goto fail;
    odn_buf_operand_at(&s, DNNL_ARG_BIAS, buf, bias_off, &m.bias);
    if (train) { /* oneDNN's workspace, then c_T */
        odn_buf_operand(&s, DNNL_ARG_WORKSPACE, buf, odn_pd_md(s.pd, dnnl_query_workspace_md));
        odn_buf_operand_at(&s, DNNL_ARG_DST_ITER_C, buf, l.cell, &m.ditc);
        exe->t[ws].producer_step = exe->n_steps;
    }
    if ((st = odn_commit(exe, &s)) != XPB_OK)
        return st;
    if (train && c_n != XPB_NO_TENSOR)
        return emit_cell_copy(exe, exe->t[ws].buf, l.cell, c_n, &d);
    return XPB_OK;
fail:
    dnnl_primitive_desc_destroy(s.pd);
    return st;
}

/* ---- backward ---- */

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
    char label[256];
    odn_op_label(exe, exe->cur_op, label, sizeof label);
    uint32_t ps = exe->t[in[7]].producer_step;
    if (ps == ODN_NONE)
        return odn_fail(exe, XPB_UNSUPPORTED,
                        "%s: its workspace must come from an LSTM of the same program in training "
                        "(cpu_onednn keeps oneDNN's workspace there)",
                        label);
    const_dnnl_primitive_desc_t hint = exe->steps[ps].pd;
    dnnl_data_type_t dt = exe->bf16 ? dnnl_bf16 : dnnl_f32, f = dnnl_f32;
    struct lstm_mds m, g; /* the data, and their gradients (fp32) */
    lstm_mds_of(&m, &d, dt);
    lstm_mds_of(&g, &d, f);
    dnnl_rnn_desc_t rd;
    ODN_TRY(exe,
            dnnl_lstm_backward_desc_init(&rd, dnnl_backward, dnnl_unidirectional_left2right, &m.src,
                                         &m.sit, &m.sitc, &m.wl, &m.wi, &m.bias, &m.dst, &m.dit,
                                         &m.ditc, &g.src, &g.sit, &g.sitc, &g.wl, &g.wi, &g.bias,
                                         &g.dst, &g.dit, &g.ditc, 0),
            "LSTM backward descriptor");
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_PRIM);
    xpb_status st = odn_pd_create(&s.pd, exe, &rd, NULL, hint, "LSTM backward");
    if (st != XPB_OK)
        return st;
    const odn_tensor *tw = &exe->t[in[7]];
    struct ws_layout l = ws_layout_of(hint, &d);
    dnnl_memory_desc_t vy, vdx, vds;
    tnc(&vy, d.t, d.b, d.h, dt);
    state(&vds, &d, f);
    uint32_t zero[8], n_zero = 0;
    odn_step probe; /* y's dense storage, for its last step (DST_ITER) */
    odn_step_init(&probe, exe, ODN_STEP_KERNEL);
    if ((st = odn_in_as(exe, &s, DNNL_ARG_SRC_LAYER, in[3], &m.src, NULL)) != XPB_OK ||
        (st = in_or_zero(exe, &s, DNNL_ARG_SRC_ITER, in[8], &m.sit, zero, &n_zero)) != XPB_OK ||
        (st = in_or_zero(exe, &s, DNNL_ARG_SRC_ITER_C, in[9], &m.sitc, zero, &n_zero)) != XPB_OK ||
        (st = weights_in(exe, &s, s.pd, in[4], in[5], &d)) != XPB_OK ||
        (st = odn_in_as(exe, &s, DNNL_ARG_DST_LAYER, in[6], &vy, NULL)) != XPB_OK ||
        (st = odn_in_as(exe, &probe, 0, in[6], &vy, NULL)) != XPB_OK ||
        (st = odn_in_as(exe, &s, DNNL_ARG_DIFF_DST_LAYER, in[0], &g.dst, NULL)) != XPB_OK ||
        (st = in_or_zero(exe, &s, DNNL_ARG_DIFF_DST_ITER, in[1], &g.dit, zero, &n_zero)) !=
            XPB_OK ||
        (st = in_or_zero(exe, &s, DNNL_ARG_DIFF_DST_ITER_C, in[2], &g.ditc, zero, &n_zero)) !=
            XPB_OK)
        goto fail;
    odn_buf_operand_at(&s, DNNL_ARG_DST_ITER, probe.o[0].buf,
                       (size_t)((d.t - 1) * d.b * d.h) * dnnl_data_type_size(dt), &m.dit);
    odn_buf_operand_at(&s, DNNL_ARG_DST_ITER_C, tw->buf, l.cell, &m.ditc);
    odn_buf_operand_at(&s, DNNL_ARG_BIAS, tw->buf, l.bias, &m.bias);
    odn_buf_operand(&s, DNNL_ARG_WORKSPACE, tw->buf, odn_pd_md(s.pd, dnnl_query_workspace_md));
    tnc(&vdx, d.t, d.b, d.i, out[0] != XPB_NO_TENSOR ? odn_pref_dt(exe, out[0]) : f);
    dnnl_memory_desc_t vwl, vwi;
    weight(&vwl, &d, d.i, f, dnnl_ldgoi);
    weight(&vwi, &d, d.h, f, dnnl_ldgoi);
    if ((st = odn_out_as(exe, &s, DNNL_ARG_DIFF_SRC_LAYER, out[0], &vdx, &g.src)) != XPB_OK ||
        (st = odn_out_as(exe, &s, DNNL_ARG_DIFF_SRC_ITER, out[5], &vds, NULL)) != XPB_OK ||
        (st = odn_out_as(exe, &s, DNNL_ARG_DIFF_SRC_ITER_C, out[6], &vds, NULL)) != XPB_OK)
        goto fail;
    /* the gradients oneDNN accumulates into: zeroed first */
    zero[n_zero++] = s.n;
    if ((st = odn_out_as(exe, &s, DNNL_ARG_DIFF_WEIGHTS_LAYER, out[1], &vwl,
                         dnnl_primitive_desc_query_md(s.pd, dnnl_query_diff_weights_md, 0))) !=
        XPB_OK)
        goto fail;
    zero[n_zero++] = s.n;
    if ((st = odn_out_as(exe, &s, DNNL_ARG_DIFF_WEIGHTS_ITER, out[2], &vwi,
                         dnnl_primitive_desc_query_md(s.pd, dnnl_query_diff_weights_md, 1))) !=
        XPB_OK)
        goto fail;
    zero[n_zero++] = s.n;
    if ((st = odn_out_as(exe, &s, DNNL_ARG_DIFF_BIAS, out[3], &m.bias, NULL)) != XPB_OK ||
        (st = emit_zero(exe, &s, zero, n_zero)) != XPB_OK)
        goto fail;
    if ((st = odn_commit(exe, &s)) != XPB_OK)
        return st;
    /* db_hh = db_ih: oneDNN has one bias */
    dnnl_memory_desc_t vb;
    odn_md_plain(&vb, T(exe, out[3]), f);
    odn_step c;
    odn_step_init(&c, exe, ODN_STEP_KERNEL);
    c.fn = copy_kernel;
    c.p[0] = (int64_t)dnnl_memory_desc_get_size(&vb);
    if ((st = odn_in_as(exe, &c, 0, out[3], &vb, NULL)) != XPB_OK ||
        (st = odn_out_as(exe, &c, 1, out[4], &vb, NULL)) != XPB_OK)
        return st;
    return odn_commit(exe, &c);
fail:
    dnnl_primitive_desc_destroy(s.pd);
    return st;
}

xpb_status odn_compile_lstm(xpb_executable *exe)
{
    const xpb_op *op = xpb_program_op(exe->prog, exe->cur_op);
    return op->kind == XPB_OP_LSTM ? compile_fwd(exe, op) : compile_bwd(exe, op);
}
