// Optimizer updates (SGD, Adam, AdamW) on the fp32 masters, refreshing the parameter's 16-bit
// shadow in the same pass under a mixed policy; fp16 dynamic loss scaling (unscale-and-check of the
// gradients, skipped updates, the scaler's step); and the per-phase bookkeeping kernels that
// reset the phase record and advance the dropout counters. Everything a step needs to know
// (overflow, call counts, Adam's step) lives on the device, so a captured graph replays the
// step without the host.
#include "kernels/k_common.cuh"

namespace
{

__device__ __forceinline__ bool skipped(uint32_t flags, const cux_phase_rec *rec)
{
    return (flags & CUX_STEP_SKIPPABLE) && rec->found_inf != 0;
}

// SGD_UPDATE: param* (t[IN], fp32), grad (t[IN+1]), momentum_buf* (t[IN+2], optional), the
// shadow (t[EXTRA], optional).
__global__ void k_sgd(cux_tview param, cux_tview grad, cux_tview buf, cux_tview shadow,
                      xpb_op_attrs a, uint32_t flags, const cux_phase_rec *rec)
{
    if (skipped(flags, rec))
        return;
    float *pp = static_cast<float *>(param.p);
    CUX_FOR(i, cux_numel(param))
    {
        float g = cux_ld(grad, cux_same(param, grad, i));
        float *b = buf.p ? static_cast<float *>(buf.p) + cux_same(param, buf, i) : nullptr;
        float p = cux_sgd(pp[i], g, b, a.lr, a.momentum, a.weight_decay);
        pp[i] = p;
        if (shadow.p)
            cux_st(shadow, cux_same(param, shadow, i), p);
    }
}

// ADAM_UPDATE and ADAMW_UPDATE: param*, grad, m*, v*, step*[1] (F32 or I32) as t[IN..IN+4];
// this kernel reads the step count t-1 and updates with t; k_adam_step then stores t. With
// `decoupled` (AdamW, torch.optim.AdamW) the decay 1 - lr * weight_decay multiplies the parameter
// before Adam's step on the unchanged gradient; without it (Adam) the weight decay is L2 added to
// the gradient.
__global__ void k_adam(cux_tview param, cux_tview grad, cux_tview m, cux_tview v, cux_tview step,
                       cux_tview shadow, xpb_op_attrs a, int decoupled, uint32_t flags,
                       const cux_phase_rec *rec)
{
    if (skipped(flags, rec))
        return;
    __shared__ float coef[2];
    if (threadIdx.x == 0) {
        double t = static_cast<double>(cux_ld(step, 0)) + 1.0;
        cux_adam_coeffs(a.lr, a.beta1, a.beta2, t, &coef[0], &coef[1]);
    }
    __syncthreads();
    float decay = cux_adamw_decay(a.lr, a.weight_decay);
    float *pp = static_cast<float *>(param.p);
    float *mp = static_cast<float *>(m.p), *vp = static_cast<float *>(v.p);
    CUX_FOR(i, cux_numel(param))
    {
        float g = cux_ld(grad, cux_same(param, grad, i));
        int64_t j = cux_same(param, m, i), k = cux_same(param, v, i);
        float p = decoupled ? cux_adamw(pp[i], g, &mp[j], &vp[k], a.beta1, a.beta2, a.eps, decay,
                                        coef[0], coef[1])
                            : cux_adam(pp[i], g, &mp[j], &vp[k], a.beta1, a.beta2, a.eps,
                                       a.weight_decay, coef[0], coef[1]);
        pp[i] = p;
        if (shadow.p)
            cux_st(shadow, cux_same(param, shadow, i), p);
    }
}

// ADAM_UPDATE and ADAMW_UPDATE: step += 1, once the update (which used step + 1) is done.
__global__ void k_adam_step(cux_tview step, uint32_t flags, const cux_phase_rec *rec)
{
    if (skipped(flags, rec))
        return;
    if (step.type == CUX_I32)
        static_cast<int32_t *>(step.p)[0] += 1;
    else
        static_cast<float *>(step.p)[0] += 1.0f;
}

// fp16 loss scaling: g /= scale in place; a non-finite result marks the phase's step.
__global__ void k_unscale(cux_tview g, cux_phase_rec *rec)
{
    float inv = 1.0f / rec->scale; /* a power of two: exact */
    CUX_FOR(i, cux_numel(g))
    {
        float v = cux_ld(g, i) * inv;
        cux_st(g, i, v);
        if (!isfinite(v))
            rec->found_inf = 1u;
    }
}

__global__ void k_phase_begin(cux_phase_rec *rec)
{
    rec->err_code = 0u;
    rec->found_inf = 0u;
}

// Advances the phase's dropout counters and, with CUX_STEP_SCALED, the loss scaler.
__global__ void k_phase_end(cux_phase_rec *rec, uint64_t *counters, uint32_t n, uint32_t flags)
{
    for (uint32_t k = threadIdx.x; k < n; k += blockDim.x)
        counters[k] += 1u;
    if (threadIdx.x == 0) {
        if (flags & CUX_STEP_SCALED) {
            int overflow = rec->found_inf != 0u;
            if (overflow)
                rec->overflows++;
            cux_scaler_next(&rec->scale, &rec->good_steps, overflow, rec->interval);
        }
        rec->steps++;
    }
}

} // namespace

cudaError_t cux_launch_optim(const cux_kparams &kp, cudaStream_t s)
{
    const cux_tview *t = kp.t;
    switch (kp.kernel) {
    case CUX_K_SGD:
        XPB_LAUNCH(k_sgd, cux_blocks(cux_numel(t[CUX_T_IN]), kp.sm_count), CUX_THREADS, 0, s)
        (t[CUX_T_IN], t[CUX_T_IN + 1], t[CUX_T_IN + 2], t[CUX_T_EXTRA], kp.attrs, kp.flags, kp.rec);
        break;
    case CUX_K_ADAM:
    case CUX_K_ADAMW:
        XPB_LAUNCH(k_adam, cux_blocks(cux_numel(t[CUX_T_IN]), kp.sm_count), CUX_THREADS, 0, s)
        (t[CUX_T_IN], t[CUX_T_IN + 1], t[CUX_T_IN + 2], t[CUX_T_IN + 3], t[CUX_T_IN + 4],
         t[CUX_T_EXTRA], kp.attrs, kp.kernel == CUX_K_ADAMW, kp.flags, kp.rec);
        if (cudaPeekAtLastError() == cudaSuccess)
            XPB_LAUNCH(k_adam_step, 1, 1, 0, s)(t[CUX_T_IN + 4], kp.flags, kp.rec);
        break;
    case CUX_K_UNSCALE:
        XPB_LAUNCH(k_unscale, cux_blocks(cux_numel(t[CUX_T_IN]), kp.sm_count), CUX_THREADS, 0, s)
        (t[CUX_T_IN], kp.rec);
        break;
    case CUX_K_PHASE_BEGIN:
        XPB_LAUNCH(k_phase_begin, 1, 1, 0, s)(kp.rec);
        break;
    case CUX_K_PHASE_END:
        XPB_LAUNCH(k_phase_end, 1, 32, 0, s)(kp.rec, kp.counters, kp.n_counters, kp.flags);
        break;
    default:
        return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}
