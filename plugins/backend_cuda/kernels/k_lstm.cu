// The two LSTM cell kernels (op set 3): the element-wise part of one time step of an LSTM layer,
// forward and backward. The matrix products around them are cuBLASLt steps that
// plan/plan_lower_lstm.c emits (the gate sums x w_ih^T for every step at once into the
// workspace, then per step h_{t-1} w_hh^T added to step t's rows; in backward the products of
// the gate gradients with w_hh, w_ih, x, y and h0), so a kernel here reads the products'
// results and writes what the next product or the next step reads. One thread per element
// (batch row b, hidden unit j) of the step, maths in lstm_math.h (fp32).
//
// The workspace ws [T, B, 5H] (fp32; the op's output 3, or a temporary when the op does not
// keep it) holds per (t, b) five blocks of H: before the cell step of t the first four hold the
// gate sums (pre-activation, without the biases) x w_ih^T + h_{t-1} w_hh^T that the products
// left there; the cell step replaces them in place by the activated gates i, f, g, o and writes
// the new cell state c_t into the fifth (cpu_ref's layout). The backward reads it and never
// writes it. Every view is row-major (CUX_PLAIN); element types are any (cux_ld / cux_st).
//
// Operand slots (cux_kparams.t; `index` is the time step t):
//   LSTM_CELL      in0 b_ih[4H], in1 b_hh[4H], in2 c0[B,H] (absent: zeros; read at t = 0)
//                  -> out0 y[T,B,H] (writes y[t] = h_t), out1 h_n[B,H], out2 c_n[B,H] (each
//                  absent, or given on the step of t = T-1 only), out3 ws[T,B,5H] (in place:
//                  reads step t's gate sums and c_{t-1}, writes step t's gates and c_t);
//                  EXTRA: h_t again [B,H] (absent unless y's storage is not the type the next
//                  step's product reads: then this copy, in that type, is what it reads)
//   LSTM_CELL_BWD  in0 dy[T,B,H] (reads dy[t]), in1 the gradient reaching h_t from step t+1
//                  [B,H] (at t = T-1: dh_n; absent: zeros), in2 the gradient reaching c_t
//                  [B,H] (at t = T-1: dc_n; absent: zeros), in3 ws[T,B,5H], in4 c0[B,H]
//                  (absent: zeros; read at t = 0) -> out0 dG[T,B,4H] (writes dG[t], the
//                  gradients of the pre-activation gate sums, gate blocks i, f, g, o), out1 the
//                  gradient reaching c_{t-1} [B,H] (absent: not written; at t = 0 it is dc0;
//                  may be in2's buffer: each element is read before it is written), out2 a
//                  tensor to zero (absent, or dw_hh on the step of t = 0 when T = 1 and there is
//                  no h0: then no product contributes to it)
#include "kernels/k_common.cuh"
#include "kernels/lstm_math.h"

namespace
{

// Slots (see above).
enum {
    FWD_B_IH = CUX_T_IN,
    FWD_B_HH = CUX_T_IN + 1,
    FWD_C0 = CUX_T_IN + 2,
    FWD_Y = CUX_T_OUT,
    FWD_H_N = CUX_T_OUT + 1,
    FWD_C_N = CUX_T_OUT + 2,
    FWD_WS = CUX_T_OUT + 3,
    FWD_H_COPY = CUX_T_EXTRA,
    BWD_DY = CUX_T_IN,
    BWD_DH = CUX_T_IN + 1,
    BWD_DC = CUX_T_IN + 2,
    BWD_WS = CUX_T_IN + 3,
    BWD_C0 = CUX_T_IN + 4,
    BWD_DG = CUX_T_OUT,
    BWD_DC_PREV = CUX_T_OUT + 1,
    BWD_ZERO = CUX_T_OUT + 2,
};

// The cell state before step t of batch row b, unit j: c_{t-1} from the workspace, or c0
// (zeros when absent) at t = 0.
__device__ __forceinline__ float cell_before(const cux_tview &ws, const cux_tview &c0, int64_t t,
                                             int64_t b, int64_t j, int64_t nb, int64_t h)
{
    if (t > 0)
        return cux_ld(ws, ((t - 1) * nb + b) * 5 * h + 4 * h + j);
    return c0.p ? cux_ld(c0, b * h + j) : 0.0f;
}

// Forward of step t: B*H elements (y is [T, B, H]).
__global__ void k_lstm_cell(cux_tview b_ih, cux_tview b_hh, cux_tview c0, cux_tview y,
                            cux_tview h_n, cux_tview c_n, cux_tview ws, cux_tview h_copy, int64_t t)
{
    const int64_t nb = y.c, h = y.h;
    CUX_FOR(e, nb * h)
    {
        const int64_t b = e / h, j = e % h, row = (t * nb + b) * 5 * h;
        float pre[4], bi[4], bh[4], act[4], c, hv;
        for (int k = CUX_LSTM_I; k <= CUX_LSTM_O; k++) {
            pre[k] = cux_ld(ws, row + k * h + j);
            bi[k] = cux_ld(b_ih, k * h + j);
            bh[k] = cux_ld(b_hh, k * h + j);
        }
        cux_lstm_fwd(pre, bi, bh, cell_before(ws, c0, t, b, j, nb, h), act, &c, &hv);
        for (int k = CUX_LSTM_I; k <= CUX_LSTM_O; k++)
            cux_st(ws, row + k * h + j, act[k]);
        cux_st(ws, row + 4 * h + j, c);
        cux_st(y, t * nb * h + e, hv);
        if (h_copy.p)
            cux_st(h_copy, e, hv);
        if (h_n.p)
            cux_st(h_n, e, hv);
        if (c_n.p)
            cux_st(c_n, e, c);
    }
}

// Backward of step t: B*H elements (dy is [T, B, H], dg [T, B, 4H]), and `zero` zeroed.
__global__ void k_lstm_cell_bwd(cux_tview dy, cux_tview dh, cux_tview dc, cux_tview ws,
                                cux_tview c0, cux_tview dg, cux_tview dc_prev, cux_tview zero,
                                int64_t t)
{
    const int64_t nb = dy.c, h = dy.h;
    if (zero.p) {
        CUX_FOR(e, cux_numel(zero))
        cux_st(zero, e, 0.0f);
    }
    CUX_FOR(e, nb * h)
    {
        const int64_t b = e / h, j = e % h, row = (t * nb + b) * 5 * h;
        float act[4], g[4];
        for (int k = CUX_LSTM_I; k <= CUX_LSTM_O; k++)
            act[k] = cux_ld(ws, row + k * h + j);
        // dh_t = dy[t] + the carry, summed in fp32 as cpu_ref does
        float dhv = (dh.p ? cux_ld(dh, e) : 0.0f) + cux_ld(dy, t * nb * h + e);
        float dcv = dc.p ? cux_ld(dc, e) : 0.0f;
        float dcp = cux_lstm_bwd(act, cux_ld(ws, row + 4 * h + j),
                                 cell_before(ws, c0, t, b, j, nb, h), dhv, dcv, g);
        for (int k = CUX_LSTM_I; k <= CUX_LSTM_O; k++)
            cux_st(dg, (t * nb + b) * 4 * h + k * h + j, g[k]);
        if (dc_prev.p)
            cux_st(dc_prev, e, dcp);
    }
}

} // namespace

cudaError_t cux_launch_lstm(const cux_kparams &kp, cudaStream_t s)
{
    const cux_tview *t = kp.t;
    switch (kp.kernel) {
    case CUX_K_LSTM_CELL: {
        const cux_tview &y = t[FWD_Y];
        if (kp.index < 0 || kp.index >= y.n)
            return cudaErrorInvalidValue;
        XPB_LAUNCH(k_lstm_cell, cux_blocks(y.c * y.h, kp.sm_count), CUX_THREADS, 0, s)
        (t[FWD_B_IH], t[FWD_B_HH], t[FWD_C0], y, t[FWD_H_N], t[FWD_C_N], t[FWD_WS], t[FWD_H_COPY],
         kp.index);
        break;
    }
    case CUX_K_LSTM_CELL_BWD: {
        const cux_tview &dy = t[BWD_DY];
        if (kp.index < 0 || kp.index >= dy.n)
            return cudaErrorInvalidValue;
        const cux_tview &zero = t[BWD_ZERO];
        int64_t total = zero.p && cux_numel(zero) > dy.c * dy.h ? cux_numel(zero) : dy.c * dy.h;
        XPB_LAUNCH(k_lstm_cell_bwd, cux_blocks(total, kp.sm_count), CUX_THREADS, 0, s)
        (dy, t[BWD_DH], t[BWD_DC], t[BWD_WS], t[BWD_C0], t[BWD_DG], t[BWD_DC_PREV], zero, kp.index);
        break;
    }
    default:
        return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}
