// Losses: softmax cross-entropy (one warp per sample, stable log-sum-exp, labels checked),
// mean squared error and mean absolute error, and their backward ops. The means are sums in
// double of per-block (or per-sample) partials in the workspace, finished by one block, as
// cpu_ref sums in double. Under fp16-mixed the backward ops also multiply by the phase's loss
// scale (CUX_STEP_SCALED).
#include "kernels/k_common.cuh"

namespace
{

// One warp per sample n of logits z[N, K] (row-major): its loss term into part[n], the
// probabilities into prob (optional). A label outside [0, K) is recorded and its term is 0.
__global__ void k_xent_rows(cux_tview z, cux_tview labels, cux_tview prob, double *part,
                            cux_phase_rec *rec, int32_t op)
{
    int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
    int lane = threadIdx.x & 31;
    int64_t N = z.n, K = z.c;
    for (int64_t n = static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + (threadIdx.x >> 5);
         n < N; n += warps) {
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
        if (prob.p)
            for (int64_t k = lane; k < K; k += 32)
                cux_st(prob, n * K + k,
                       static_cast<float>(
                           exp(static_cast<double>(cux_ld(z, n * K + k)) - m - log_sum)));
        if (lane == 0) {
            int32_t label = static_cast<const int32_t *>(labels.p)[n];
            if (label < 0 || label >= K) {
                cux_error(rec, CUX_ERR_LABEL, op, n, label);
                part[n] = 0.0;
            } else {
                part[n] = log_sum - (static_cast<double>(cux_ld(z, n * K + label)) - m);
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

// The loss scale of a backward op: the phase's dynamic scale under fp16-mixed, else 1.
__device__ __forceinline__ double loss_scale(uint32_t flags, const cux_phase_rec *rec)
{
    return (flags & CUX_STEP_SCALED) ? static_cast<double>(rec->scale) : 1.0;
}

// dz[n, k] = f * (prob - onehot), f = scale / N (times the loss scale).
__global__ void k_xent_bwd(cux_tview prob, cux_tview labels, cux_tview dz, float scale,
                           uint32_t flags, cux_phase_rec *rec, int32_t op)
{
    int64_t N = dz.n, K = dz.c;
    double f = static_cast<double>(scale) / static_cast<double>(N) * loss_scale(flags, rec);
    CUX_FOR(i, N * K)
    {
        int64_t n = i / K, k = i % K;
        int32_t label = static_cast<const int32_t *>(labels.p)[n];
        if ((label < 0 || label >= K) && k == 0)
            cux_error(rec, CUX_ERR_LABEL, op, n, label);
        cux_st(dz, i, cux_xent_bwd(f, cux_ld(prob, i), k == label));
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
    case CUX_K_XENT: {
        int64_t rows = t[CUX_T_IN].n;
        unsigned blocks = static_cast<unsigned>((rows + CUX_THREADS / 32 - 1) / (CUX_THREADS / 32));
        XPB_LAUNCH(k_xent_rows, blocks, CUX_THREADS, 0, s)
        (t[CUX_T_IN], t[CUX_T_IN + 1], t[CUX_T_OUT + 1], part, kp.rec, kp.op);
        XPB_LAUNCH(k_finish_mean, 1, CUX_THREADS, 0, s)(part, rows, static_cast<double>(rows), out);
        break;
    }
    case CUX_K_XENT_BWD:
        XPB_LAUNCH(k_xent_bwd, cux_blocks(cux_numel(out), kp.sm_count), CUX_THREADS, 0, s)
        (t[CUX_T_IN], t[CUX_T_IN + 1], out, kp.attrs.scale, kp.flags, kp.rec, kp.op);
        break;
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
