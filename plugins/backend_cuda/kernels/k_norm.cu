// Batch norm (training, inference, backward, folding into a convolution), instance norm and
// its backward, and the bias gradients of convolutions and linear layers. All of them reduce a
// [N, C, S] tensor per channel (batch norm, bias gradients) or per (n, c) (instance norm) in
// three passes: partial sums of chunks of at most CUX_CHUNK rows of one image into the
// workspace (index_math.h), one thread per group combining them in double and leaving the
// group's coefficients (elem_math.h) after the partials, and an element pass that applies them.
// Statistics are taken around a shift (the group's first element) so that the variance does not
// cancel; the element passes split the mean in two floats (elem_math.h).
#include "kernels/k_common.cuh"

namespace
{

enum { RED_SUM = 0, RED_STATS = 1, RED_BWD = 2 };

// A reduction over the view [N, C, S] of a tensor (S = H*W; a 2-D [N, C] tensor reduced per
// channel is seen as one image of N rows). dy and mask have x's shape and are addressed with
// x's layout: the plan stores every 4-D tensor of a program in one layout (plan_tensor.c).
struct red {
    cux_tview x;    // the values (SUM: dy; STATS, BWD: x)
    cux_tview dy;   // BWD: the gradient
    cux_tview mask; // BWD with a fused activation: its output (dy is then act_bwd(dy, mask))
    cux_tview mean; // BWD: the group means (ws_mean, [C] or [N, C])
    int act;
    float alpha;
    int mode;
    int per_image; // groups are (n, c) instead of c
    int nhwc;      // element (n, c, s) at (n*S + s)*C + c, else (n*C + c)*S + s
    int64_t N, C, S, chunks;
    double *part; // [N][chunks][C][2]
    float *coeff; // [groups][CUX_COEFF_FLOATS], after the partials
};

__device__ __forceinline__ int64_t red_off(const red &r, int64_t n, int64_t c, int64_t s)
{
    return r.nhwc ? (n * r.S + s) * r.C + c : (n * r.C + c) * r.S + s;
}

// The value of element (n, c, s) that the pass sums (two sums: v1 and v2), given the group's
// shift K (STATS) or mean (BWD).
__device__ __forceinline__ void red_terms(const red &r, int64_t o, float k, float *v1, float *v2)
{
    float x = cux_ld(r.x, o);
    if (r.mode == RED_SUM) {
        *v1 = x;
        *v2 = 0.0f;
    } else if (r.mode == RED_STATS) {
        float d = x - k;
        *v1 = d;
        *v2 = d * d;
    } else {
        float g = cux_ld(r.dy, o);
        if (r.mask.p)
            g = cux_act_bwd(r.act, r.alpha, g, cux_ld(r.mask, o));
        *v1 = g;
        *v2 = g * (x - k);
    }
}

// The shift (STATS: the group's first element) or mean (BWD) of group (n, c).
__device__ __forceinline__ float red_center(const red &r, int64_t n, int64_t c)
{
    if (r.mode == RED_STATS)
        return cux_ld(r.x, red_off(r, r.per_image ? n : 0, c, 0));
    if (r.mode == RED_BWD)
        return cux_ld(r.mean, r.per_image ? n * r.C + c : c);
    return 0.0f;
}

// Channels-last partials: a block of 32 channels x 8 row lanes; blockIdx = (channel tile,
// chunk, image).
__global__ void k_partials_nhwc(red r)
{
    int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
    int64_t c = static_cast<int64_t>(blockIdx.x) * 32 + tx, n = blockIdx.z;
    int64_t s0 = static_cast<int64_t>(blockIdx.y) * CUX_CHUNK;
    int64_t s1 = s0 + CUX_CHUNK < r.S ? s0 + CUX_CHUNK : r.S;
    float a1 = 0.0f, a2 = 0.0f;
    if (c < r.C) {
        float k = red_center(r, n, c);
        for (int64_t s = s0 + ty; s < s1; s += CUX_THREADS / 32) {
            float v1, v2;
            red_terms(r, red_off(r, n, c, s), k, &v1, &v2);
            a1 += v1;
            a2 += v2;
        }
    }
    __shared__ double sh[2][CUX_THREADS / 32][32];
    sh[0][ty][tx] = a1;
    sh[1][ty][tx] = a2;
    __syncthreads();
    if (ty == 0 && c < r.C) {
        double t1 = 0.0, t2 = 0.0;
        for (int k = 0; k < CUX_THREADS / 32; k++) {
            t1 += sh[0][k][tx];
            t2 += sh[1][k][tx];
        }
        double *p = r.part + ((n * r.chunks + blockIdx.y) * r.C + c) * 2;
        p[0] = t1;
        p[1] = t2;
    }
}

// Channels-first partials: one block per (channel, chunk, image), one element per thread.
__global__ void k_partials_nchw(red r)
{
    int64_t c = blockIdx.x, n = blockIdx.z;
    int64_t s = static_cast<int64_t>(blockIdx.y) * CUX_CHUNK + threadIdx.x;
    float v1 = 0.0f, v2 = 0.0f;
    if (s < r.S)
        red_terms(r, red_off(r, n, c, s), red_center(r, n, c), &v1, &v2);
    double t1 = cux_block_sum(v1);
    double t2 = cux_block_sum(v2);
    if (threadIdx.x == 0) {
        double *p = r.part + ((n * r.chunks + blockIdx.y) * r.C + c) * 2;
        p[0] = t1;
        p[1] = t2;
    }
}

// The two sums of group (n, c) (n ignored unless per image) and its element count.
__device__ void red_total(const red &r, int64_t n, int64_t c, double *s1, double *s2, double *count)
{
    double a = 0.0, b = 0.0;
    int64_t n0 = r.per_image ? n : 0, n1 = r.per_image ? n + 1 : r.N;
    for (int64_t i = n0; i < n1; i++)
        for (int64_t k = 0; k < r.chunks; k++) {
            const double *p = r.part + ((i * r.chunks + k) * r.C + c) * 2;
            a += p[0];
            b += p[1];
        }
    *s1 = a;
    *s2 = b;
    *count = static_cast<double>((n1 - n0) * r.S);
}

// One thread per group: statistics, workspace outputs, running statistics, coefficients.
// x: t[IN]; gamma, beta, rm, rv: t[IN+1..4] (batch norm); ws_mean, ws_var: t[OUT+1], t[OUT+2].
__global__ void k_stats_finalize(red r, cux_kparams kp)
{
    int64_t groups = r.per_image ? r.N * r.C : r.C;
    CUX_FOR(g, groups)
    {
        int64_t n = r.per_image ? g / r.C : 0, c = r.per_image ? g % r.C : g;
        double s1, s2, count, mean, var;
        red_total(r, n, c, &s1, &s2, &count);
        cux_shifted_stats(static_cast<double>(red_center(r, n, c)), s1, s2, count, &mean, &var);
        const cux_tview *t = kp.t;
        if (t[CUX_T_OUT + 1].p)
            cux_st(t[CUX_T_OUT + 1], g, static_cast<float>(mean));
        if (t[CUX_T_OUT + 2].p)
            cux_st(t[CUX_T_OUT + 2], g, static_cast<float>(var));
        double gamma = 1.0, beta = 0.0;
        if (!r.per_image) {
            gamma = cux_ld(t[CUX_T_IN + 1], c);
            beta = cux_ld(t[CUX_T_IN + 2], c);
            float *rm = static_cast<float *>(t[CUX_T_IN + 3].p) + c;
            float *rv = static_cast<float *>(t[CUX_T_IN + 4].p) + c;
            cux_bn_running(rm, rv, mean, var, kp.attrs.momentum, count);
        }
        cux_norm_coeffs(mean, var, kp.attrs.eps, gamma, beta, r.coeff + g * CUX_COEFF_FLOATS);
    }
}

// BATCHNORM_INFER: coefficients from the running statistics.
__global__ void k_infer_coeffs(cux_kparams kp, float *coeff, int64_t C)
{
    const cux_tview *t = kp.t;
    CUX_FOR(c, C)
    cux_norm_coeffs(cux_ld(t[CUX_T_IN + 3], c), cux_ld(t[CUX_T_IN + 4], c), kp.attrs.eps,
                    cux_ld(t[CUX_T_IN + 1], c), cux_ld(t[CUX_T_IN + 2], c),
                    coeff + c * CUX_COEFF_FLOATS);
}

// Backward: one thread per group. dy, x, gamma (batch norm), ws_mean, ws_var are t[IN..]
// (instance norm: dy, x, ws_mean, ws_var); dgamma, dbeta t[OUT+1], t[OUT+2].
__global__ void k_bwd_finalize(red r, cux_kparams kp)
{
    int64_t groups = r.per_image ? r.N * r.C : r.C;
    const cux_tview *t = kp.t;
    const cux_tview &var_v = t[CUX_T_IN + (r.per_image ? 3 : 4)];
    CUX_FOR(g, groups)
    {
        int64_t n = r.per_image ? g / r.C : 0, c = r.per_image ? g % r.C : g;
        double s1, s2, count;
        red_total(r, n, c, &s1, &s2, &count);
        double gamma = r.per_image ? 1.0 : cux_ld(t[CUX_T_IN + 2], c);
        float dgamma, dbeta;
        cux_norm_bwd_coeffs(cux_ld(r.mean, g), cux_ld(var_v, g), kp.attrs.eps, gamma, s1, s2, count,
                            r.coeff + g * CUX_COEFF_FLOATS, &dgamma, &dbeta);
        if (!r.per_image) {
            if (t[CUX_T_OUT + 1].p)
                cux_st(t[CUX_T_OUT + 1], c, dgamma);
            if (t[CUX_T_OUT + 2].p)
                cux_st(t[CUX_T_OUT + 2], c, dbeta);
        }
    }
}

// BIAS_GRAD: db[c] = the channel's sum.
__global__ void k_bias_finalize(red r, cux_tview db)
{
    CUX_FOR(c, r.C)
    {
        double s1, s2, count;
        red_total(r, 0, c, &s1, &s2, &count);
        cux_st(db, c, static_cast<float>(s1));
    }
}

// The group of the element stored at offset i of v.
__device__ __forceinline__ int64_t group_of(const cux_tview &v, int64_t i, int per_image)
{
    int64_t n, c, h, w;
    cux_coords(v.layout, v.c, v.h, v.w, i, &n, &c, &h, &w);
    return per_image ? n * v.c + c : c;
}

// y = act(norm(x)) element by element (y: t[OUT], x: t[IN]).
__global__ void k_norm_apply(cux_tview x, cux_tview y, const float *coeff, int per_image, int act,
                             float alpha)
{
    CUX_FOR(i, cux_numel(y))
    {
        const float *cf = coeff + group_of(y, i, per_image) * CUX_COEFF_FLOATS;
        cux_st(y, i, cux_act_fwd(act, alpha, cux_norm_apply(cux_ld(x, cux_same(y, x, i)), cf)));
    }
}

__global__ void k_norm_bwd_apply(cux_tview dy, cux_tview mask, cux_tview x, cux_tview dx,
                                 const float *coeff, int per_image, int act, float alpha)
{
    CUX_FOR(i, cux_numel(dx))
    {
        const float *cf = coeff + group_of(dx, i, per_image) * CUX_COEFF_FLOATS;
        float g = cux_ld(dy, cux_same(dx, dy, i));
        if (mask.p)
            g = cux_act_bwd(act, alpha, g, cux_ld(mask, cux_same(dx, mask, i)));
        cux_st(dx, i, cux_norm_bwd_apply(g, cux_ld(x, cux_same(dx, x, i)), cf));
    }
}

// Inference folding (prep step): w' = w * gamma * invstd per output channel (dimension 0),
// b' = (b - mean) * gamma * invstd + beta. t[IN] = w, t[IN+1] = b (may be absent),
// t[IN+2..5] = gamma, beta, running mean, running var; t[OUT] = w', t[OUT+1] = b'.
__global__ void k_bn_fold(cux_kparams kp)
{
    const cux_tview *t = kp.t;
    const cux_tview &w = t[CUX_T_IN], &wo = t[CUX_T_OUT], &bo = t[CUX_T_OUT + 1];
    int64_t nw = cux_numel(wo), K = wo.n;
    CUX_FOR(i, nw + K)
    {
        int64_t k = i < nw ? 0 : i - nw;
        if (i < nw) {
            int64_t n, c, h, ww;
            cux_coords(wo.layout, wo.c, wo.h, wo.w, i, &n, &c, &h, &ww);
            k = n;
        }
        double invstd = 1.0 / sqrt(static_cast<double>(cux_ld(t[CUX_T_IN + 5], k)) +
                                   static_cast<double>(kp.attrs.eps));
        double s = static_cast<double>(cux_ld(t[CUX_T_IN + 2], k)) * invstd;
        if (i < nw) {
            cux_st(wo, i, static_cast<float>(cux_ld(w, cux_same(wo, w, i)) * s));
        } else {
            double b = t[CUX_T_IN + 1].p ? cux_ld(t[CUX_T_IN + 1], k) : 0.0;
            double mean = cux_ld(t[CUX_T_IN + 4], k);
            cux_st(bo, k, static_cast<float>((b - mean) * s + cux_ld(t[CUX_T_IN + 3], k)));
        }
    }
}

// The reduction geometry of view v (its own layout), per image or per channel.
red make_red(const cux_kparams &kp, const cux_tview &v, int mode, int per_image)
{
    red r;
    r.x = v;
    r.dy = r.mask = r.mean = cux_tview();
    r.act = kp.act;
    r.alpha = kp.alpha;
    r.mode = mode;
    r.per_image = per_image;
    r.N = v.n;
    r.C = v.c;
    r.S = v.h * v.w;
    r.nhwc = v.layout == CUX_NHWC;
    if (r.S == 1 && !per_image) { // [N, C]: one image of N rows, channels contiguous
        r.S = r.N;
        r.N = 1;
        r.nhwc = 1;
    }
    r.chunks = cux_chunks(r.S);
    r.part = static_cast<double *>(kp.scratch);
    r.coeff = reinterpret_cast<float *>(static_cast<char *>(kp.scratch) +
                                        cux_reduce_scratch(r.N, r.C, r.S));
    return r;
}

void launch_partials(const red &r, cudaStream_t s)
{
    if (r.nhwc) {
        dim3 grid(static_cast<unsigned>((r.C + 31) / 32), static_cast<unsigned>(r.chunks),
                  static_cast<unsigned>(r.N));
        XPB_LAUNCH(k_partials_nhwc, grid, CUX_THREADS, 0, s)(r);
    } else {
        dim3 grid(static_cast<unsigned>(r.C), static_cast<unsigned>(r.chunks),
                  static_cast<unsigned>(r.N));
        XPB_LAUNCH(k_partials_nchw, grid, CUX_THREADS, 0, s)(r);
    }
}

unsigned groups_blocks(const red &r)
{
    int64_t groups = r.per_image ? r.N * r.C : r.C;
    return static_cast<unsigned>((groups + CUX_THREADS - 1) / CUX_THREADS);
}

} // namespace

cudaError_t cux_launch_norm(const cux_kparams &kp, cudaStream_t s)
{
    const cux_tview *t = kp.t;
    switch (kp.kernel) {
    case CUX_K_BN_TRAIN:
    case CUX_K_IN_FWD: {
        int per_image = kp.kernel == CUX_K_IN_FWD;
        red r = make_red(kp, t[CUX_T_IN], RED_STATS, per_image);
        launch_partials(r, s);
        XPB_LAUNCH(k_stats_finalize, groups_blocks(r), CUX_THREADS, 0, s)(r, kp);
        XPB_LAUNCH(k_norm_apply, cux_blocks(cux_numel(t[CUX_T_OUT]), kp.sm_count), CUX_THREADS, 0,
                   s)
        (t[CUX_T_IN], t[CUX_T_OUT], r.coeff, per_image, kp.act, kp.alpha);
        break;
    }
    case CUX_K_BN_INFER: {
        red r = make_red(kp, t[CUX_T_IN], RED_SUM, 0);
        XPB_LAUNCH(k_infer_coeffs, groups_blocks(r), CUX_THREADS, 0, s)(kp, r.coeff, r.C);
        XPB_LAUNCH(k_norm_apply, cux_blocks(cux_numel(t[CUX_T_OUT]), kp.sm_count), CUX_THREADS, 0,
                   s)
        (t[CUX_T_IN], t[CUX_T_OUT], r.coeff, 0, kp.act, kp.alpha);
        break;
    }
    case CUX_K_BN_BWD:
    case CUX_K_IN_BWD: {
        int per_image = kp.kernel == CUX_K_IN_BWD;
        red r = make_red(kp, t[CUX_T_IN + 1], RED_BWD, per_image);
        r.dy = t[CUX_T_IN];
        r.mask = t[CUX_T_MASK];
        r.mean = t[CUX_T_IN + (per_image ? 2 : 3)];
        launch_partials(r, s);
        XPB_LAUNCH(k_bwd_finalize, groups_blocks(r), CUX_THREADS, 0, s)(r, kp);
        if (t[CUX_T_OUT].p)
            XPB_LAUNCH(k_norm_bwd_apply, cux_blocks(cux_numel(t[CUX_T_OUT]), kp.sm_count),
                       CUX_THREADS, 0, s)
            (t[CUX_T_IN], t[CUX_T_MASK], t[CUX_T_IN + 1], t[CUX_T_OUT], r.coeff, per_image, kp.act,
             kp.alpha);
        break;
    }
    case CUX_K_BIAS_GRAD: {
        red r = make_red(kp, t[CUX_T_IN], RED_SUM, 0);
        launch_partials(r, s);
        XPB_LAUNCH(k_bias_finalize, groups_blocks(r), CUX_THREADS, 0, s)(r, t[CUX_T_OUT]);
        break;
    }
    case CUX_K_BN_FOLD: {
        int64_t total = cux_numel(t[CUX_T_OUT]) + t[CUX_T_OUT].n;
        XPB_LAUNCH(k_bn_fold, cux_blocks(total, kp.sm_count), CUX_THREADS, 0, s)(kp);
        break;
    }
    default:
        return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}
