/* Per-element maths of the LSTM cell kernels (k_lstm.cu): one element (batch row b, hidden unit
 * j) of one time step, forward and backward, as inline functions that compile as C (host tests
 * can compare them with cpu_ref's lstm.c) and as CUDA C++ (__host__ __device__). The formulas
 * are docs/ops.md's (PyTorch's nn.LSTM, gates i, f, g, o) in cpu_ref's order of operations, in
 * fp32 (expf, tanhf): cpu_ref computes each gate in double and rounds once, but on most GPUs a
 * double exponential runs at a small fraction of the fp32 rate and would dominate a time step
 * of a large layer, so the results differ from the reference by a few fp32 ulps. No state, no
 * memory access beyond the arguments. */
#ifndef XPB_CUX_LSTM_MATH_H
#define XPB_CUX_LSTM_MATH_H

#include "kernels/elem_math.h" /* CUX_HD, and math.h for C */

/* Gate positions in the four gate blocks of [4H] rows (PyTorch's order). */
enum { CUX_LSTM_I = 0, CUX_LSTM_F = 1, CUX_LSTM_G = 2, CUX_LSTM_O = 3 };

CUX_HD float cux_lstm_sigmoid(float v)
{
    return 1.0f / (1.0f + expf(-v));
}

/* Forward of one element: `pre` holds the four gate sums x w_ih^T + h w_hh^T (fp32, as the
 * products leave them), b_ih and b_hh the gates' two biases, c_prev the cell state before the
 * step. Writes the activated gates act[4] (i, f, g, o), the new cell state *c and the output
 * *h = o * tanh(c). */
CUX_HD void cux_lstm_fwd(const float pre[4], const float b_ih[4], const float b_hh[4], float c_prev,
                         float act[4], float *c, float *h)
{
    float gi = cux_lstm_sigmoid(pre[0] + b_ih[0] + b_hh[0]);
    float gf = cux_lstm_sigmoid(pre[1] + b_ih[1] + b_hh[1]);
    float gg = tanhf(pre[2] + b_ih[2] + b_hh[2]);
    float go = cux_lstm_sigmoid(pre[3] + b_ih[3] + b_hh[3]);
    float cn = gf * c_prev + gi * gg;
    act[0] = gi;
    act[1] = gf;
    act[2] = gg;
    act[3] = go;
    *c = cn;
    *h = go * tanhf(cn);
}

/* Backward of one element: act[4] the activated gates and c the cell state the forward kept,
 * c_prev the cell state before the step, dh the gradient reaching h_t (dy[t] plus what flows
 * back from step t+1, summed in fp32 by the caller) and dc_in the one reaching c_t. Writes the
 * gradients of the four pre-activation gate sums dg[4] and returns the gradient that reaches
 * c_{t-1}. */
CUX_HD float cux_lstm_bwd(const float act[4], float c, float c_prev, float dh, float dc_in,
                          float dg[4])
{
    float gi = act[0], gf = act[1], gg = act[2], go = act[3];
    float tc = tanhf(c);
    float dcv = dc_in + dh * go * (1.0f - tc * tc);
    dg[0] = dcv * gg * gi * (1.0f - gi);
    dg[1] = dcv * c_prev * gf * (1.0f - gf);
    dg[2] = dcv * gi * (1.0f - gg * gg);
    dg[3] = dh * tc * go * (1.0f - go);
    return dcv * gf;
}

#endif
