/* Lowering of the LSTM layer (plan_lower_lstm.h): the matrix products on cuBLASLt, each one
 * CUX_ENG_MATMUL step described by a cux_mm_form (glue/matmul.c runs it), and the element-wise
 * work of every time step as one own-kernel step (k_lstm.cu, which documents the operand slots
 * and the workspace). The recurrence makes the steps sequential: T steps of a product and a
 * cell kernel each way.
 *
 *   LSTM     ws[:, :, 0:4H] = x w_ih^T                      one product, every step at once
 *            for t = 0 .. T-1:
 *              ws[t][:, 0:4H] += h_{t-1} w_hh^T             (h_{-1} = h0; none without h0)
 *              LSTM_CELL t: biases, gates, c_t into ws[t]; h_t into y[t] (and h_n, c_n at T-1)
 *   LSTM_BWD for t = T-1 .. 0:
 *              LSTM_CELL_BWD t: dG[t] from dy[t] + dh, dc (dh_n, dc_n at T-1) and ws; dc
 *                 becomes the gradient reaching c_{t-1} (dc0 at t = 0)
 *              dh = dG[t] w_hh                              (at t = 0: dh0, when wanted)
 *            dx = dG w_ih; dw_ih = dG^T x; dw_hh = dG[1:]^T y[:T-1] (+ dG[0]^T h0; with T = 1
 *              and no h0 it is zero: the cell kernel of t = 0 zeroes it)
 *            db_ih = the column sums of dG over its T*B rows; db_hh = a copy of db_ih
 *
 * The workspace is the op's ws output (fp32 under every policy), or a temporary when the
 * forward does not keep it. Forward products read their operands in the policy's type (the
 * weights' 16-bit shadows under a mixed policy, when plan_tensor.c gives them one) and write
 * the fp32 workspace; when y is not stored in that type (an fp32 output under a mixed policy),
 * the cell kernel also writes h_t into a [B, H] temporary in that type, which the next step's
 * product reads. The backward is all fp32: the gate gradients dG [T, B, 4H] and the carries
 * of dh and dc ([B, H] each) are fp32 temporaries, the weights their fp32 masters, and x, y,
 * h0 fp32 (converted copies under a mixed policy). */
#include "kernels/fault.h"
#include "plan/plan_error.h"
#include "plan/plan_lower_engines.h"
#include "plan/plan_lower_lstm.h"
#include "plan/plan_step.h"

/* The sizes of a layer: x [T, B, I], w_hh [4H, H]. */
typedef struct lstm_dims {
    int64_t t, b, in, h;
} lstm_dims;

static lstm_dims dims_of(const cux_plan *plan, uint32_t x, uint32_t w_hh)
{
    const xpb_tensor_desc *xd = cux_tensor(plan, x), *wd = cux_tensor(plan, w_hh);
    lstm_dims d = {xd->dims[0], xd->dims[1], xd->dims[2], wd->dims[1]};
    return d;
}

/* The form of D[m, n] (+)= op(A) op(B), one product, no offsets. */
static cux_mm_form form(int64_t m, int64_t n, int64_t k, int ta, int tb, int64_t lda, int64_t ldb,
                        int64_t ldd)
{
    cux_mm_form f = {0};
    f.ta = (uint8_t)ta;
    f.tb = (uint8_t)tb;
    f.m = m;
    f.n = n;
    f.k = k;
    f.lda = lda;
    f.ldb = ldb;
    f.ldd = ldd;
    f.batch = 1;
    return f;
}

/* The MATMUL step of op `i` that `f` describes: A = a, B = b, D = d. Conversions that the
 * operands or the output asked for were queued by cux_want / cux_produce. */
static xpb_status product(cux_plan *plan, uint32_t i, cux_view a, cux_view b, cux_view d,
                          const cux_mm_form *f)
{
    cux_step s = cux_new_step(plan, i, CUX_ENG_MATMUL, 0);
    s.n_in = 2;
    s.n_out = 1;
    s.in[0] = a;
    s.in[1] = b;
    s.out[0] = d;
    s.mm = *f;
    return cux_commit(plan, &s);
}

/* The stored view of output `tid` that an own kernel writes (absent for XPB_NO_TENSOR), after
 * forgetting its converted copies. */
static xpb_status written(cux_plan *plan, uint32_t tid, cux_view *v)
{
    if (tid != XPB_NO_TENSOR)
        cux_invalidate(plan, tid);
    return cux_stored_opt(plan, tid, v);
}

/* ---- forward ---- */

static xpb_status lower_forward(cux_plan *plan, uint32_t i, const xpb_op *op)
{
    const xpb_program *p = plan->prog;
    uint32_t x = xpb_op_input(p, op, 0), w_ih = xpb_op_input(p, op, 1);
    uint32_t w_hh = xpb_op_input(p, op, 2), b_ih = xpb_op_input(p, op, 3);
    uint32_t b_hh = xpb_op_input(p, op, 4), h0 = xpb_op_input(p, op, 5);
    uint32_t c0 = xpb_op_input(p, op, 6);
    uint32_t y = xpb_op_output(p, op, 0), h_n = xpb_op_output(p, op, 1);
    uint32_t c_n = xpb_op_output(p, op, 2), ws = xpb_op_output(p, op, 3);
    lstm_dims d = dims_of(plan, x, w_hh);
    const int64_t h4 = 4 * d.h, h5 = 5 * d.h;
    const int A = plan->act_type;
    cux_view xv, wihv, whhv = cux_no_view(), h0v = cux_no_view(), bihv, bhhv, c0v;
    cux_view yv, hnv, cnv, wsv, hcopy = cux_no_view();
    xpb_status st;
    if ((st = written(plan, y, &yv)) != XPB_OK || (st = written(plan, h_n, &hnv)) != XPB_OK ||
        (st = written(plan, c_n, &cnv)) != XPB_OK)
        return st;
    if (ws != XPB_NO_TENSOR) {
        if ((st = written(plan, ws, &wsv)) != XPB_OK)
            return st;
        if (wsv.type != CUX_F32)
            return cux_fail(plan, XPB_INTERNAL, "lower_lstm: op %u: the workspace is not fp32", i);
    } else { /* the forward alone: the same workspace, for this op's steps only */
        const int64_t wd[3] = {d.t, d.b, h5};
        if ((st = cux_temp(plan, CUX_F32, 3, wd, &wsv)) != XPB_OK)
            return st;
    }
    /* the products' operands in the policy's type (conversions, if any, now: before the first
     * product); h_{t-1} from y itself when y is stored in that type, else from hcopy */
    int recurrent = d.t > 1 || h0 != XPB_NO_TENSOR;
    if ((st = cux_want(plan, x, A, CUX_PLAIN, &xv)) != XPB_OK ||
        (st = cux_want(plan, w_ih, A, CUX_PLAIN, &wihv)) != XPB_OK ||
        (recurrent && (st = cux_want(plan, w_hh, A, CUX_PLAIN, &whhv)) != XPB_OK) ||
        (h0 != XPB_NO_TENSOR && (st = cux_want(plan, h0, A, CUX_PLAIN, &h0v)) != XPB_OK) ||
        (st = cux_stored(plan, b_ih, &bihv)) != XPB_OK ||
        (st = cux_stored(plan, b_hh, &bhhv)) != XPB_OK ||
        (st = cux_stored_opt(plan, c0, &c0v)) != XPB_OK)
        return st;
    int direct = yv.type == A;
    if (!direct && d.t > 1) {
        const int64_t hd[2] = {d.b, d.h};
        if ((st = cux_temp(plan, A, 2, hd, &hcopy)) != XPB_OK)
            return st;
    }
    /* ws[t][b][0:4H] = x[t][b] w_ih^T for every (t, b): rows of ws are 5H apart */
    cux_mm_form f = form(d.t * d.b, h4, d.in, 0, 1, d.in, d.in, h5);
    if ((st = product(plan, i, xv, wihv, wsv, &f)) != XPB_OK)
        return st;
    for (int64_t t = 0; t < d.t; t++) {
        int skip = 0;
#if defined(XPB_CUDA_STANDIN)
        skip = t > 0 && cux_fault("lstm_no_recurrence"); /* h_{t-1} never reaches step t */
#endif
        if (!skip && (t > 0 || h0 != XPB_NO_TENSOR)) { /* ws[t][:, 0:4H] += h_{t-1} w_hh^T */
            cux_view hv = t == 0 ? h0v : direct ? yv : hcopy;
            f = form(d.b, h4, d.h, 0, 1, d.h, d.h, h5);
            f.accumulate = 1;
            f.off_a = t > 0 && direct ? (t - 1) * d.b * d.h : 0;
            f.off_d = t * d.b * h5;
            if ((st = product(plan, i, hv, whhv, wsv, &f)) != XPB_OK)
                return st;
        }
        cux_step s = cux_new_step(plan, i, CUX_ENG_KERNEL, CUX_K_LSTM_CELL);
        s.index = t;
        s.n_in = 3;
        s.n_out = 4;
        s.in[0] = bihv;
        s.in[1] = bhhv;
        if (t == 0)
            s.in[2] = c0v;
        s.out[0] = yv;
        if (t == d.t - 1) {
            s.out[1] = hnv;
            s.out[2] = cnv;
        } else {
            s.extra = hcopy; /* absent when the product reads y */
        }
        s.out[3] = wsv;
        if ((st = cux_commit(plan, &s)) != XPB_OK)
            return st;
    }
    return XPB_OK;
}

/* ---- backward ---- */

/* dw_hh = sum over t of dG[t]^T h_{t-1}: dG[1:]^T y[:T-1] as one product (k = (T-1)*B), then
 * dG[0]^T h0 added when h0 exists. Both write one fp32 matrix: dw_hh's storage when it is fp32,
 * else a temporary converted into it at the end. With one step and no h0 nothing contributes:
 * then the cell kernel of t = 0 zeroed dw_hh (its out2) and there is no product. */
static xpb_status grad_w_hh(cux_plan *plan, uint32_t i, lstm_dims d, cux_view dg, uint32_t y,
                            uint32_t h0, uint32_t dw_hh)
{
    const int64_t h4 = 4 * d.h;
    if (d.t == 1 && h0 == XPB_NO_TENSOR)
        return XPB_OK;
    cux_view dst, stored, yv, h0v;
    xpb_status st = cux_stored(plan, dw_hh, &stored);
    if (st != XPB_OK)
        return st;
    dst = stored;
    if (stored.type != CUX_F32) {
        const int64_t wd[2] = {h4, d.h};
        if ((st = cux_temp(plan, CUX_F32, 2, wd, &dst)) != XPB_OK)
            return st;
    }
    cux_mm_form f;
    int first = 1;
    if (d.t > 1) {
        if ((st = cux_want(plan, y, CUX_F32, CUX_PLAIN, &yv)) != XPB_OK)
            return st;
        f = form(h4, d.h, (d.t - 1) * d.b, 1, 0, h4, d.h, d.h);
        f.off_a = d.b * h4;
        if ((st = product(plan, i, dg, yv, dst, &f)) != XPB_OK)
            return st;
        first = 0;
    }
    if (h0 != XPB_NO_TENSOR) {
        if ((st = cux_want(plan, h0, CUX_F32, CUX_PLAIN, &h0v)) != XPB_OK)
            return st;
        f = form(h4, d.h, d.b, 1, 0, h4, d.h, d.h);
        f.accumulate = (uint8_t)!first;
        if ((st = product(plan, i, dg, h0v, dst, &f)) != XPB_OK)
            return st;
    }
    if (dst.buf == stored.buf)
        return XPB_OK;
    cux_step c = cux_convert_step(plan, i, dst, stored);
    return cux_commit(plan, &c);
}

static xpb_status lower_backward(cux_plan *plan, uint32_t i, const xpb_op *op)
{
    const xpb_program *p = plan->prog;
    uint32_t dy = xpb_op_input(p, op, 0), dh_n = xpb_op_input(p, op, 1);
    uint32_t dc_n = xpb_op_input(p, op, 2), x = xpb_op_input(p, op, 3);
    uint32_t w_ih = xpb_op_input(p, op, 4), w_hh = xpb_op_input(p, op, 5);
    uint32_t y = xpb_op_input(p, op, 6), ws = xpb_op_input(p, op, 7);
    uint32_t h0 = xpb_op_input(p, op, 8), c0 = xpb_op_input(p, op, 9);
    uint32_t dx = xpb_op_output(p, op, 0), dw_ih = xpb_op_output(p, op, 1);
    uint32_t dw_hh = xpb_op_output(p, op, 2), db_ih = xpb_op_output(p, op, 3);
    uint32_t db_hh = xpb_op_output(p, op, 4), dh0 = xpb_op_output(p, op, 5);
    uint32_t dc0 = xpb_op_output(p, op, 6);
    lstm_dims d = dims_of(plan, x, w_hh);
    const int64_t h4 = 4 * d.h;
    const uint32_t outs[7] = {dx, dw_ih, dw_hh, db_ih, db_hh, dh0, dc0};
    for (uint32_t k = 0; k < 7; k++)
        if (outs[k] != XPB_NO_TENSOR)
            cux_invalidate(plan, outs[k]);
    cux_view dyv, dhnv, dcnv, wsv, c0v, dc0v, whhv = cux_no_view(), zero = cux_no_view();
    cux_view dg, dh = cux_no_view(), dc = cux_no_view();
    const int64_t gd[3] = {d.t, d.b, h4}, sd[2] = {d.b, d.h};
    xpb_status st;
    if ((st = cux_stored(plan, dy, &dyv)) != XPB_OK ||
        (st = cux_stored_opt(plan, dh_n, &dhnv)) != XPB_OK ||
        (st = cux_stored_opt(plan, dc_n, &dcnv)) != XPB_OK ||
        (st = cux_stored(plan, ws, &wsv)) != XPB_OK ||
        (st = cux_stored_opt(plan, c0, &c0v)) != XPB_OK ||
        (st = cux_stored_opt(plan, dc0, &dc0v)) != XPB_OK ||
        (st = cux_temp(plan, CUX_F32, 3, gd, &dg)) != XPB_OK)
        return st;
    if (d.t > 1 && ((st = cux_temp(plan, CUX_F32, 2, sd, &dh)) != XPB_OK ||
                    (st = cux_temp(plan, CUX_F32, 2, sd, &dc)) != XPB_OK))
        return st;
    if ((d.t > 1 || dh0 != XPB_NO_TENSOR) &&
        (st = cux_want(plan, w_hh, CUX_F32, CUX_PLAIN, &whhv)) != XPB_OK)
        return st;
    if (d.t == 1 && h0 == XPB_NO_TENSOR && dw_hh != XPB_NO_TENSOR &&
        (st = cux_stored(plan, dw_hh, &zero)) != XPB_OK)
        return st;
    for (int64_t t = d.t - 1; t >= 0; t--) {
        cux_step s = cux_new_step(plan, i, CUX_ENG_KERNEL, CUX_K_LSTM_CELL_BWD);
        s.index = t;
        s.n_in = 5;
        s.n_out = 3;
        s.in[0] = dyv;
        s.in[1] = t == d.t - 1 ? dhnv : dh;
        s.in[2] = t == d.t - 1 ? dcnv : dc;
        s.in[3] = wsv;
        if (t == 0)
            s.in[4] = c0v;
        s.out[0] = dg;
        s.out[1] = t > 0 ? dc : dc0v;
        if (t == 0)
            s.out[2] = zero;
        if ((st = cux_commit(plan, &s)) != XPB_OK)
            return st;
        if (t == 0 && dh0 == XPB_NO_TENSOR)
            break;
        /* the gradient reaching h_{t-1}: dh[B, H] = dG[t] [B, 4H] w_hh [4H, H] */
        cux_view dst = dh;
        if (t == 0 && (st = cux_produce(plan, dh0, CUX_F32, CUX_PLAIN, &dst)) != XPB_OK)
            return st;
        cux_mm_form f = form(d.b, d.h, h4, 0, 0, h4, d.h, d.h);
        f.off_a = t * d.b * h4;
        if ((st = product(plan, i, dg, whhv, dst, &f)) != XPB_OK)
            return st;
    }
    cux_view a, dst;
    cux_mm_form f;
    if (dx != XPB_NO_TENSOR) { /* dx [T*B, I] = dG [T*B, 4H] w_ih [4H, I] */
        if ((st = cux_want(plan, w_ih, CUX_F32, CUX_PLAIN, &a)) != XPB_OK ||
            (st = cux_produce(plan, dx, CUX_F32, CUX_PLAIN, &dst)) != XPB_OK)
            return st;
        f = form(d.t * d.b, d.in, h4, 0, 0, h4, d.in, d.in);
        if ((st = product(plan, i, dg, a, dst, &f)) != XPB_OK)
            return st;
    }
    if (dw_ih != XPB_NO_TENSOR) { /* dw_ih [4H, I] = dG^T [4H, T*B] x [T*B, I] */
        if ((st = cux_want(plan, x, CUX_F32, CUX_PLAIN, &a)) != XPB_OK ||
            (st = cux_produce(plan, dw_ih, CUX_F32, CUX_PLAIN, &dst)) != XPB_OK)
            return st;
        f = form(h4, d.in, d.t * d.b, 1, 0, h4, d.in, d.in);
        if ((st = product(plan, i, dg, a, dst, &f)) != XPB_OK)
            return st;
    }
    if (dw_hh != XPB_NO_TENSOR && (st = grad_w_hh(plan, i, d, dg, y, h0, dw_hh)) != XPB_OK)
        return st;
    /* db_ih = db_hh: one reduction, then a copy */
    uint32_t db = db_ih != XPB_NO_TENSOR ? db_ih : db_hh;
    if (db == XPB_NO_TENSOR)
        return XPB_OK;
    if ((st = cux_lower_bias_grad_of(plan, i, dg, db)) != XPB_OK) /* dG as [T*B, 4H] */
        return st;
    if (db == db_hh || db_hh == XPB_NO_TENSOR)
        return XPB_OK;
    cux_view from, to;
    if ((st = cux_stored(plan, db_ih, &from)) != XPB_OK ||
        (st = cux_stored(plan, db_hh, &to)) != XPB_OK)
        return st;
    cux_step c = cux_convert_step(plan, i, from, to);
    return cux_commit(plan, &c);
}

xpb_status cux_lower_lstm(cux_plan *plan, uint32_t i)
{
    const xpb_op *op = cux_op(plan, i);
    switch (op->kind) {
    case XPB_OP_LSTM:
        return lower_forward(plan, i, op);
    case XPB_OP_LSTM_BWD:
        return lower_backward(plan, i, op);
    default:
        return cux_fail(plan, XPB_INTERNAL, "lower_lstm: op %u is not an LSTM", i);
    }
}
