// Losses: softmax cross-entropy (one warp per sample, stable log-sum-exp, labels checked; op
// set 3's ignored label and label smoothing), mean squared error and mean absolute error, and
// their backward ops. The means are sums in double of per-block (or per-sample) partials in the
// workspace, finished by one block, as cpu_ref sums in double. Under fp16-mixed the backward ops
// also multiply by the phase's loss scale (CUX_STEP_SCALED).
#include "kernels/k_common.cuh"
#include "kernels/seq_math.h"

namespace
{

// Op set 3's attributes of the cross-entropy: rows whose label is `index` count for nothing
// when `on`; the target is (1 - eps) onehot + eps / K. All zero: op set 1's op, bit for bit.
struct xent3 {
    int on;        // XPB_INDEX_IGNORE set
    int32_t index; // the ignored label
    double eps;    // label smoothing
};

xent3 xent3_of(const cux_kparams &kp)
{
    xent3 x;
    x.on = (kp.a3.index_flags & XPB_INDEX_IGNORE) != 0;
    x.index = kp.a3.ignore_index;
    x.eps = static_cast<double>(kp.a3.label_smoothing);
    return x;
}

__device__ __forceinline__ bool xent_ignored(const xent3 &a, int32_t label)
{
    return a.on && label == a.index;
}

// One warp per sample n of logits z[N, K] (row-major): its loss term into part[n], the
// probabilities into prob (optional). A label outside [0, K) is recorded and its term is 0. An
// ignored row's term is 0 and its probabilities 0 (cpu_ref's; the backward does not read them).
// With smoothing eps the term is (1 - eps) nll + (eps / K) (K lse - sum (z - m)), relative to m.
__global__ void k_xent_rows(cux_tview z, cux_tview labels, cux_tview prob, double *part,
                            cux_phase_rec *rec, int32_t op, xent3 a)
{
    int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
    int lane = threadIdx.x & 31;
    int64_t N = z.n, K = z.c;
    for (int64_t n = static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + (threadIdx.x >> 5);
         n < N; n += warps) {
        int32_t label = static_cast<const int32_t *>(labels.p)[n];
        if (xent_ignored(a, label)) {
            if (prob.p)
                for (int64_t k = lane; k < K; k += 32)
                    cux_st(prob, n * K + k, 0.0f);
            if (lane == 0)
                part[n] = 0.0;
            continue;
        }
        float m = -INFINITY;
        for (int64_t k = lane; k < K; k += 32)
            m = fmaxf(m, cux_ld(z, n * K + k));
        for (int o = 16; o > 0; o >>= 1)
            m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
        double sum = 0.0;
        for (int64_t k = lane; k < K; k += 32)
            sum += exp(static_cast<double>(cux_ld(z, n * K + k)) - m);
        for (int o = 16; o > 0; o >>= 1)
            sum += __shfl_xor_sync(0xffffffffu, sum, o);
        double log_sum = log(sum);
        double below = 0.0; // sum of m - z (smoothing only)
        if (a.eps > 0.0) {
            for (int64_t k = lane; k < K; k += 32)
                below += static_cast<double>(m) - cux_ld(z, n * K + k);
            for (int o = 16; o > 0; o >>= 1)
                below += __shfl_xor_sync(0xffffffffu, below, o);
        }
        if (prob.p)
            for (int64_t k = lane; k < K; k += 32)
                cux_st(prob, n * K + k,
                       static_cast<float>(
                           exp(static_cast<double>(cux_ld(z, n * K + k)) - m - log_sum)));
        if (lane == 0) {
            if (label < 0 || label >= K) {
                cux_error(rec, CUX_ERR_LABEL, op, n, label);
                part[n] = 0.0;
            } else {
                double nll = log_sum - (static_cast<double>(cux_ld(z, n * K + label)) - m);
                part[n] = a.eps > 0.0
                              ? (1.0 - a.eps) * nll + a.eps / static_cast<double>(K) *
                                                          (static_cast<double>(K) * log_sum + below)
                              : nll;
            }
        }
    }
}

// loss[0] = (float)(sum of the `count` partials / divisor), one block.
__global__ void k_finish_mean(const double *part, int64_t count, double divisor, cux_tview loss)
{
    double s = 0.0;
    for (int64_t i = threadIdx.x; i < count; i += blockDim.x)
        s += part[i];
    s = cux_block_sum(s);
    if (threadIdx.x == 0)
        cux_st(loss, 0, static_cast<float>(s / divisor));
}

// XENT's loss, one block: the sum of the N row terms over the rows not ignored (N without
// XPB_INDEX_IGNORE: then the same bits as k_finish_mean; every row ignored: 0 / 0 = NaN, as
// cpu_ref and PyTorch).
__global__ void k_xent_finish(const double *part, cux_tview labels, int64_t N, xent3 a,
                              cux_tview loss)
{
    double s = 0.0;
    for (int64_t i = threadIdx.x; i < N; i += blockDim.x)
        s += part[i];
    s = cux_block_sum(s);
    double valid = static_cast<double>(N);
    if (a.on) { // uniform across the block: every thread reaches the barriers
        double c = 0.0;
        for (int64_t i = threadIdx.x; i < N; i += blockDim.x)
            c += xent_ignored(a, static_cast<const int32_t *>(labels.p)[i]) ? 0.0 : 1.0;
        valid = cux_block_sum(c);
    }
    if (threadIdx.x == 0)
        cux_st(loss, 0, static_cast<float>(s / valid));
}

// XENT_BWD with XPB_INDEX_IGNORE, one block: the number of rows not ignored into *valid (a
// double: exact for any row count, and the divisor's type).
__global__ void k_xent_count(cux_tview labels, int64_t N, xent3 a, double *valid)
{
    double c = 0.0;
    for (int64_t i = threadIdx.x; i < N; i += blockDim.x)
        c += xent_ignored(a, static_cast<const int32_t *>(labels.p)[i]) ? 0.0 : 1.0;
    c = cux_block_sum(c);
    if (threadIdx.x == 0)
        *valid = c;
}

// The loss scale of a backward op: the phase's dynamic scale under fp16-mixed, else 1.
__device__ __forceinline__ double loss_scale(uint32_t flags, const cux_phase_rec *rec)
{
    return (flags & CUX_STEP_SCALED) ? static_cast<double>(rec->scale) : 1.0;
}

// dz[n, k] = f * (prob - onehot), f = scale / N (times the loss scale). With op set 3's
// attributes: f = scale / N_valid (*valid, from k_xent_count, when rows are ignored), the
// smoothed target (cux_xent_bwd_smooth) and 0 for an ignored row.
__global__ void k_xent_bwd(cux_tview prob, cux_tview labels, cux_tview dz, float scale,
                           uint32_t flags, cux_phase_rec *rec, int32_t op, xent3 a,
                           const double *valid)
{
    int64_t N = dz.n, K = dz.c;
    double count = a.on ? *valid : static_cast<double>(N);
    double f = static_cast<double>(scale) / count * loss_scale(flags, rec);
    double off = a.eps / static_cast<double>(K);
    CUX_FOR(i, N * K)
    {
        int64_t n = i / K, k = i % K;
        int32_t label = static_cast<const int32_t *>(labels.p)[n];
        if (xent_ignored(a, label)) {
            cux_st(dz, i, 0.0f);
            continue;
        }
        if ((label < 0 || label >= K) && k == 0)
            cux_error(rec, CUX_ERR_LABEL, op, n, label);
        float p = cux_ld(prob, i);
        cux_st(dz, i,
               a.eps > 0.0 ? cux_xent_bwd_smooth(f, p, k == label, a.eps, off)
                           : cux_xent_bwd(f, p, k == label));
    }
}

// Per-block partial sums of (x - t)^2 (MSE) or |x - t| (L1) into part[blockIdx.x].
__global__ void k_diff_partials(cux_tview x, cux_tview t, double *part, int squared)
{
    double s = 0.0;
    CUX_FOR(i, cux_numel(x))
    {
        double d = static_cast<double>(cux_ld(x, i)) - cux_ld(t, cux_same(x, t, i));
        s += squared ? d * d : fabs(d);
    }
    s = cux_block_sum(s);
    if (threadIdx.x == 0)
        part[blockIdx.x] = s;
}

__global__ void k_mse_bwd(cux_tview x, cux_tview t, cux_tview dx, float scale, uint32_t flags,
                          const cux_phase_rec *rec)
{
    double f = 2.0 * static_cast<double>(scale) / static_cast<double>(cux_numel(x)) *
               loss_scale(flags, rec);
    CUX_FOR(i, cux_numel(dx))
    cux_st(dx, i, cux_mse_bwd(f, cux_ld(x, cux_same(dx, x, i)), cux_ld(t, cux_same(dx, t, i))));
}

__global__ void k_l1_bwd(cux_tview x, cux_tview t, cux_tview dx, float scale, uint32_t flags,
                         const cux_phase_rec *rec)
{
    float f = static_cast<float>(static_cast<double>(scale) / static_cast<double>(cux_numel(x)) *
                                 loss_scale(flags, rec));
    CUX_FOR(i, cux_numel(dx))
    cux_st(dx, i, cux_l1_bwd(f, cux_ld(x, cux_same(dx, x, i)), cux_ld(t, cux_same(dx, t, i))));
}

} // namespace

cudaError_t cux_launch_loss(const cux_kparams &kp, cudaStream_t s)
{
    const cux_tview *t = kp.t;
    const cux_tview &out = t[CUX_T_OUT];
    double *part = static_cast<double *>(kp.scratch);
    switch (kp.kernel) {
    case CUX_K_XENT: { // workspace: cux_xent_scratch(rows)
        int64_t rows = t[CUX_T_IN].n;
        unsigned blocks = static_cast<unsigned>((rows + CUX_THREADS / 32 - 1) / (CUX_THREADS / 32));
        XPB_LAUNCH(k_xent_rows, blocks, CUX_THREADS, 0, s)
        (t[CUX_T_IN], t[CUX_T_IN + 1], t[CUX_T_OUT + 1], part, kp.rec, kp.op, xent3_of(kp));
        XPB_LAUNCH(k_xent_finish, 1, CUX_THREADS, 0, s)
        (part, t[CUX_T_IN + 1], rows, xent3_of(kp), out);
        break;
    }
    case CUX_K_XENT_BWD: { // workspace: cux_xent_bwd_scratch(ignore)
        xent3 a = xent3_of(kp);
        if (a.on)
            XPB_LAUNCH(k_xent_count, 1, CUX_THREADS, 0, s)(t[CUX_T_IN + 1], out.n, a, part);
        XPB_LAUNCH(k_xent_bwd, cux_blocks(cux_numel(out), kp.sm_count), CUX_THREADS, 0, s)
        (t[CUX_T_IN], t[CUX_T_IN + 1], out, kp.attrs.scale, kp.flags, kp.rec, kp.op, a, part);
        break;
    }
    case CUX_K_MSE:
    case CUX_K_L1: {
        int64_t n = cux_numel(t[CUX_T_IN]);
        unsigned blocks = static_cast<unsigned>(cux_sum_blocks(n));
        XPB_LAUNCH(k_diff_partials, blocks, CUX_THREADS, 0, s)
        (t[CUX_T_IN], t[CUX_T_IN + 1], part, kp.kernel == CUX_K_MSE);
        XPB_LAUNCH(k_finish_mean, 1, CUX_THREADS, 0, s)(part, blocks, static_cast<double>(n), out);
        break;
    }
    case CUX_K_MSE_BWD:
        XPB_LAUNCH(k_mse_bwd, cux_blocks(cux_numel(out), kp.sm_count), CUX_THREADS, 0, s)
        (t[CUX_T_IN], t[CUX_T_IN + 1], out, kp.attrs.scale, kp.flags, kp.rec);
        break;
    case CUX_K_L1_BWD:
        XPB_LAUNCH(k_l1_bwd, cux_blocks(cux_numel(out), kp.sm_count), CUX_THREADS, 0, s)
        (t[CUX_T_IN], t[CUX_T_IN + 1], out, kp.attrs.scale, kp.flags, kp.rec);
        break;
    default:
        return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}
