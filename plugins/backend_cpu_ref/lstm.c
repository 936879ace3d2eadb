/* One LSTM layer over a whole sequence, PyTorch's nn.LSTM (gates i, f, g, o; two bias vectors;
 * zero or given initial states), and its backpropagation through time (docs/ops.md). The
 * products are ref_gemm calls (fp32 accumulation, as PyTorch's CPU LSTM); every gate and state
 * element is computed in double and rounded once. The reference's workspace holds, per step and
 * batch row, the activated gates i, f, g, o and the new cell state c ([T, B, 5H]). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"

static double sigmoid(double v)
{
    return 1.0 / (1.0 + exp(-v));
}

/* The sizes of a layer from its operands: x[T, B, I], w_hh[4H, H]. */
struct lstm_dims {
    int64_t t, b, in, h;
};

static struct lstm_dims dims_of(const xpb_tensor_desc *x, const xpb_tensor_desc *w_hh)
{
    struct lstm_dims d = {x->dims[0], x->dims[1], x->dims[2], w_hh->dims[1]};
    return d;
}

/* LSTM(x, w_ih, w_hh, b_ih, b_hh, h0 opt, c0 opt) -> y[T, B, H], h_n opt, c_n opt, ws opt */
xpb_status ref_lstm(const ref_op_args *a)
{
    struct lstm_dims d = dims_of(a->in_desc[0], a->in_desc[2]);
    int64_t h4 = 4 * d.h, bh = d.b * d.h;
    const float *x = a->in[0], *w_ih = a->in[1], *w_hh = a->in[2];
    const float *b_ih = a->in[3], *b_hh = a->in[4];
    const float *h0 = a->op->n_inputs > 5 ? a->in[5] : NULL;
    const float *c0 = a->op->n_inputs > 6 ? a->in[6] : NULL;
    float *y = a->out[0];
    float *h_n = a->op->n_outputs > 1 ? a->out[1] : NULL;
    float *c_n = a->op->n_outputs > 2 ? a->out[2] : NULL;
    float *ws = a->op->n_outputs > 3 ? a->out[3] : NULL;
    float *gates = malloc((size_t)(d.b * h4) * sizeof *gates);
    float *c = calloc((size_t)bh, sizeof *c);
    float *zero = calloc((size_t)bh, sizeof *zero);
    xpb_status st = XPB_OK;
    if (!gates || !c || !zero) {
        st = ref_fail(a, XPB_OUT_OF_MEMORY, "out of memory for the gates");
        goto free_buffers;
    }
    if (c0)
        memcpy(c, c0, (size_t)bh * sizeof *c);
    const float *h_prev = h0 ? h0 : zero;
    for (int64_t t = 0; t < d.t; t++) {
        /* gates = x[t] w_ih^T + h w_hh^T, then both biases */
        ref_gemm(0, 1, d.b, h4, d.in, 1.0f, x + t * d.b * d.in, d.in, w_ih, d.in, 0.0f, gates, h4);
        ref_gemm(0, 1, d.b, h4, d.h, 1.0f, h_prev, d.h, w_hh, d.h, 1.0f, gates, h4);
        float *h = y + t * bh;
        for (int64_t n = 0; n < d.b; n++) {
            const float *gr = gates + n * h4;
            float *wr = ws ? ws + (t * d.b + n) * 5 * d.h : NULL;
            for (int64_t j = 0; j < d.h; j++) {
                double gi = sigmoid((double)gr[j] + b_ih[j] + b_hh[j]);
                double gf = sigmoid((double)gr[d.h + j] + b_ih[d.h + j] + b_hh[d.h + j]);
                double gg = tanh((double)gr[2 * d.h + j] + b_ih[2 * d.h + j] + b_hh[2 * d.h + j]);
                double go =
                    sigmoid((double)gr[3 * d.h + j] + b_ih[3 * d.h + j] + b_hh[3 * d.h + j]);
                float cn = (float)(gf * c[n * d.h + j] + gi * gg);
                c[n * d.h + j] = cn;
                h[n * d.h + j] = (float)(go * tanh((double)cn));
                if (wr) {
                    wr[j] = (float)gi;
                    wr[d.h + j] = (float)gf;
                    wr[2 * d.h + j] = (float)gg;
                    wr[3 * d.h + j] = (float)go;
                    wr[4 * d.h + j] = cn;
                }
            }
        }
        h_prev = h;
    }
    if (h_n)
        memcpy(h_n, y + (d.t - 1) * bh, (size_t)bh * sizeof *h_n);
    if (c_n)
        memcpy(c_n, c, (size_t)bh * sizeof *c_n);
free_buffers:
    free(gates);
    free(c);
    free(zero);
    return st;
}

/* The pre-activation gate gradients dg[B, 4H] of step t for every batch row, from the gradients
 * dh, dc that reach h_t and c_t; leaves in dc the gradient that reaches c_{t-1}. */
static void step_bwd(float *dg, float *dc, struct lstm_dims d, const float *ws_t,
                     const float *c_prev, const float *dh)
{
    for (int64_t n = 0; n < d.b; n++) {
        const float *wr = ws_t + n * 5 * d.h;
        float *gr = dg + n * 4 * d.h;
        for (int64_t j = 0; j < d.h; j++) {
            double gi = wr[j], gf = wr[d.h + j], gg = wr[2 * d.h + j], go = wr[3 * d.h + j];
            double tc = tanh((double)wr[4 * d.h + j]);
            double cp = c_prev ? c_prev[n * d.h + j] : 0.0, dhv = dh[n * d.h + j];
            double dcv = dc[n * d.h + j] + dhv * go * (1.0 - tc * tc);
            gr[j] = (float)(dcv * gg * gi * (1.0 - gi));
            gr[d.h + j] = (float)(dcv * cp * gf * (1.0 - gf));
            gr[2 * d.h + j] = (float)(dcv * gi * (1.0 - gg * gg));
            gr[3 * d.h + j] = (float)(dhv * tc * go * (1.0 - go));
            dc[n * d.h + j] = (float)(dcv * gf);
        }
    }
}

/* The cell state before step t: c0 (the caller's; NULL for zeros) at step 0, else the
 * workspace's c of step t-1 gathered into `scratch` [B, H] (the caller's). The pointer is one of
 * those two, valid while they are. */
static const float *cell_before(struct lstm_dims d, const float *ws, const float *c0, int64_t t,
                                float *scratch)
{
    if (t == 0)
        return c0;
    const float *prev = ws + (t - 1) * d.b * 5 * d.h;
    for (int64_t n = 0; n < d.b; n++)
        memcpy(scratch + n * d.h, prev + n * 5 * d.h + 4 * d.h, (size_t)d.h * sizeof *scratch);
    return scratch;
}

/* LSTM_BWD(dy, dh_n opt, dc_n opt, x, w_ih, w_hh, y, ws, h0 opt, c0 opt) -> dx opt, dw_ih,
 * dw_hh, db_ih, db_hh, dh0 opt, dc0 opt: backpropagation through time; db_ih = db_hh. */
xpb_status ref_lstm_bwd(const ref_op_args *a)
{
    struct lstm_dims d = dims_of(a->in_desc[3], a->in_desc[5]);
    int64_t h4 = 4 * d.h, bh = d.b * d.h, rows = d.t * d.b;
    const float *dy = a->in[0], *dh_n = a->in[1], *dc_n = a->in[2];
    const float *x = a->in[3], *w_ih = a->in[4], *w_hh = a->in[5], *y = a->in[6], *ws = a->in[7];
    const float *h0 = a->op->n_inputs > 8 ? a->in[8] : NULL;
    const float *c0 = a->op->n_inputs > 9 ? a->in[9] : NULL;
    float *dx = a->out[0], *dw_ih = a->out[1], *dw_hh = a->out[2];
    float *db_ih = a->out[3], *db_hh = a->out[4];
    float *dh0 = a->op->n_outputs > 5 ? a->out[5] : NULL;
    float *dc0 = a->op->n_outputs > 6 ? a->out[6] : NULL;
    float *dg = malloc((size_t)(rows * h4) * sizeof *dg);
    float *dh = calloc((size_t)bh, sizeof *dh), *dc = calloc((size_t)bh, sizeof *dc);
    float *cp = malloc((size_t)bh * sizeof *cp);
    xpb_status st = XPB_OK;
    if (!dg || !dh || !dc || !cp) {
        st = ref_fail(a, XPB_OUT_OF_MEMORY, "out of memory for the gate gradients");
        goto free_buffers;
    }
    if (dh_n)
        memcpy(dh, dh_n, (size_t)bh * sizeof *dh);
    if (dc_n)
        memcpy(dc, dc_n, (size_t)bh * sizeof *dc);
    for (int64_t t = d.t; t-- > 0;) {
        for (int64_t k = 0; k < bh; k++)
            dh[k] += dy[t * bh + k];
        float *dgt = dg + t * d.b * h4;
        step_bwd(dgt, dc, d, ws + t * d.b * 5 * d.h, cell_before(d, ws, c0, t, cp), dh);
        /* the gradient reaching h_{t-1}: dgates w_hh */
        ref_gemm(0, 0, d.b, d.h, h4, 1.0f, dgt, h4, w_hh, d.h, 0.0f, dh, d.h);
    }
    if (dx) /* dx = dgates w_ih, every step at once */
        ref_gemm(0, 0, rows, d.in, h4, 1.0f, dg, h4, w_ih, d.in, 0.0f, dx, d.in);
    /* dw_ih = dgates^T x; dw_hh = sum_t dgates[t]^T h_{t-1}, h_{t-1} = y[t-1] or h0 (with one
     * step the first product is empty and only zeroes dw_hh) */
    ref_gemm(1, 0, h4, d.in, rows, 1.0f, dg, h4, x, d.in, 0.0f, dw_ih, d.in);
    ref_gemm(1, 0, h4, d.h, rows - d.b, 1.0f, dg + d.b * h4, h4, y, d.h, 0.0f, dw_hh, d.h);
    if (h0)
        ref_gemm(1, 0, h4, d.h, d.b, 1.0f, dg, h4, h0, d.h, 1.0f, dw_hh, d.h);
    ref_sum_rows(db_ih, dg, rows, h4);
    memcpy(db_hh, db_ih, (size_t)h4 * sizeof *db_hh);
    if (dh0)
        memcpy(dh0, dh, (size_t)bh * sizeof *dh0);
    if (dc0)
        memcpy(dc0, dc, (size_t)bh * sizeof *dc0);
free_buffers:
    free(dg);
    free(dh);
    free(dc);
    free(cp);
    return st;
}
