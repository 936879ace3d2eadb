// Op set 3's row-wise and norm kernels: softmax over the last axis (scale, additive mask, causal
// mask) and its backward, layer norm and its backward, and gradient clipping by global norm in
// three kernels (sum of squares of each gradient into one double, the norm, the scaling).
//
// Rows (the last axis) go one warp each: a warp reads a row with its 32 lanes, combines the
// lanes' sums with a butterfly of shuffles (every lane ends with the same bits, so no broadcast
// is needed) and writes the row. Sums across rows (layer norm's dgamma and dbeta, the clip's
// sum of squares) write per-block partials into the workspace (seq_math.h) that a second kernel
// adds in a fixed order: no atomics, the same bits on every run. Sums that cpu_ref accumulates in
// double (softmax's row sums, layer norm's statistics and its backward's sums) are double here
// too; softmax's exponentials are fp32 (expf), since on most GPUs a double exponential runs at a
// small fraction of the fp32 rate and would make the attention softmax compute-bound: the result
// differs from cpu_ref's double exponentials by a few fp32 ulps.
#include "kernels/k_common.cuh"
#include "kernels/seq_math.h"

namespace
{

constexpr int WARPS = CUX_THREADS / 32;

// Logical dim k (0..3) of a view.
__host__ __device__ __forceinline__ int64_t dim_of(const cux_tview &v, int k)
{
    return k == 0 ? v.n : k == 1 ? v.c : k == 2 ? v.h : v.w;
}

// The last dim of a view (the axis the row kernels reduce) and the one before it (1 for 1-D).
__host__ __device__ __forceinline__ int64_t last_dim(const cux_tview &v)
{
    return dim_of(v, v.ndim > 0 ? v.ndim - 1 : 3);
}

__device__ __forceinline__ int64_t second_last_dim(const cux_tview &v)
{
    return v.ndim > 1 ? dim_of(v, v.ndim - 2) : 1;
}

// The sum of a double over the warp's lanes, the same bits in every lane (addition is
// commutative, so lane l and lane l ^ o add the same two values).
__device__ __forceinline__ double warp_sum(double v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// Warp-per-row loop: `row` runs over [0, rows), one warp of the grid per row at a time. The
// row is the same for the 32 lanes of a warp, so every lane reaches the shuffles.
#define ROWS_FOR(row, rows)                                                                        \
    for (int64_t row = static_cast<int64_t>(blockIdx.x) * WARPS + (threadIdx.x >> 5);              \
         row < (rows); row += static_cast<int64_t>(gridDim.x) * WARPS)

// Blocks of CUX_THREADS for a warp-per-row kernel over `rows` rows.
unsigned row_blocks(int64_t rows, int sm_count)
{
    int64_t want = (rows + WARPS - 1) / WARPS;
    int64_t cap = static_cast<int64_t>(sm_count > 0 ? sm_count : 80) * 32;
    if (want > cap)
        want = cap;
    return static_cast<unsigned>(want < 1 ? 1 : want);
}

// ---- softmax ----

// z of key j of a row (x at xo, the mask's row at mo): scale * x + mask, in fp32.
__device__ __forceinline__ float softmax_z(const cux_tview &x, const cux_tview &mask, float scale,
                                           int64_t xo, int64_t mo, int64_t j)
{
    return scale * cux_ld(x, xo + j) + (mask.p ? cux_ld(mask, mo + j) : 0.0f);
}

// The largest of the lanes' floats (none of them NaN), in every lane.
__device__ __forceinline__ float warp_max(float v)
{
    for (int o = 16; o > 0; o >>= 1) {
        float u = __shfl_xor_sync(0xffffffffu, v, o);
        v = u > v ? u : v;
    }
    return v;
}

// SOFTMAX: y = softmax(scale * x + mask) over the last axis, keys j > i hidden when causal (i is
// the row's query: its index along the second-to-last dim). Hidden keys get 0; a row whose
// maximum is -inf (every key hidden) is NaN, as cpu_ref and PyTorch. A NaN z never wins the
// comparison, so it reaches the output through the sum, as in cpu_ref.
__global__ void k_softmax(cux_tview x, cux_tview mask, cux_tview y, float scale, int causal)
{
    int lane = threadIdx.x & 31;
    int64_t sk = last_dim(x), sq = second_last_dim(x), rows = cux_numel(x) / sk;
    ROWS_FOR(r, rows)
    {
        int64_t q = r % sq, xo = r * sk, mo = q * sk;
        int64_t visible = causal && q + 1 < sk ? q + 1 : sk;
        float m = -INFINITY;
        for (int64_t j = lane; j < visible; j += 32) {
            float z = softmax_z(x, mask, scale, xo, mo, j);
            m = z > m ? z : m;
        }
        m = warp_max(m);
        double sum = 0.0;
        for (int64_t j = lane; j < visible; j += 32)
            sum += static_cast<double>(expf(softmax_z(x, mask, scale, xo, mo, j) - m));
        sum = warp_sum(sum);
        bool nan_row = m == -INFINITY || m != m;
        float inv = static_cast<float>(1.0 / sum);
        for (int64_t j = lane; j < sk; j += 32) {
            float v = nan_row       ? NAN
                      : j < visible ? expf(softmax_z(x, mask, scale, xo, mo, j) - m) * inv
                                    : 0.0f;
            cux_st(y, xo + j, v);
        }
    }
}

// SOFTMAX_BWD: dx = scale * y * (dy - sum(dy * y)), the sum in double.
__global__ void k_softmax_bwd(cux_tview dy, cux_tview y, cux_tview dx, double scale)
{
    int lane = threadIdx.x & 31;
    int64_t sk = last_dim(dx), rows = cux_numel(dx) / sk;
    ROWS_FOR(r, rows)
    {
        int64_t o = r * sk;
        double dot = 0.0;
        for (int64_t j = lane; j < sk; j += 32)
            dot += static_cast<double>(cux_ld(dy, o + j)) * static_cast<double>(cux_ld(y, o + j));
        dot = warp_sum(dot);
        for (int64_t j = lane; j < sk; j += 32) {
            double yj = cux_ld(y, o + j), dyj = cux_ld(dy, o + j);
            cux_st(dx, o + j, static_cast<float>(scale * yj * (dyj - dot)));
        }
    }
}

// ---- layer norm ----

// LN_FWD: per row of d values, mean and biased variance (two passes, in double), rstd = 1 /
// sqrt(var + eps), y = (x - mean) * rstd * gamma + beta; the row's mean and rstd into the
// workspace outputs when present.
__global__ void k_ln_fwd(cux_tview x, cux_tview gamma, cux_tview beta, cux_tview y,
                         cux_tview ws_mean, cux_tview ws_rstd, double eps)
{
    int lane = threadIdx.x & 31;
    int64_t d = last_dim(x), rows = cux_numel(x) / d;
    ROWS_FOR(r, rows)
    {
        int64_t o = r * d;
        double sum = 0.0;
        for (int64_t j = lane; j < d; j += 32)
            sum += cux_ld(x, o + j);
        double mean = warp_sum(sum) / static_cast<double>(d);
        double sq = 0.0;
        for (int64_t j = lane; j < d; j += 32) {
            double c = cux_ld(x, o + j) - mean;
            sq += c * c;
        }
        double rstd = 1.0 / sqrt(warp_sum(sq) / static_cast<double>(d) + eps);
        for (int64_t j = lane; j < d; j += 32)
            cux_st(y, o + j,
                   static_cast<float>((cux_ld(x, o + j) - mean) * rstd * cux_ld(gamma, j) +
                                      cux_ld(beta, j)));
        if (lane == 0) {
            if (ws_mean.p)
                cux_st(ws_mean, r, static_cast<float>(mean));
            if (ws_rstd.p)
                cux_st(ws_rstd, r, static_cast<float>(rstd));
        }
    }
}

// LN_BWD's dx, per row: with xhat = (x - mean) * rstd and g = dy * gamma,
// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), the sums in double.
__global__ void k_ln_bwd_dx(cux_tview dy, cux_tview x, cux_tview gamma, cux_tview mean,
                            cux_tview rstd, cux_tview dx)
{
    int lane = threadIdx.x & 31;
    int64_t d = last_dim(x), rows = cux_numel(x) / d;
    ROWS_FOR(r, rows)
    {
        int64_t o = r * d;
        double mu = cux_ld(mean, r), rs = cux_ld(rstd, r), sum_g = 0.0, sum_gx = 0.0;
        for (int64_t j = lane; j < d; j += 32) {
            double xhat = (cux_ld(x, o + j) - mu) * rs;
            double g = static_cast<double>(cux_ld(dy, o + j)) * cux_ld(gamma, j);
            sum_g += g;
            sum_gx += g * xhat;
        }
        double mean_g = warp_sum(sum_g) / static_cast<double>(d);
        double mean_gx = warp_sum(sum_gx) / static_cast<double>(d);
        for (int64_t j = lane; j < d; j += 32) {
            double xhat = (cux_ld(x, o + j) - mu) * rs;
            double g = static_cast<double>(cux_ld(dy, o + j)) * cux_ld(gamma, j);
            cux_st(dx, o + j, static_cast<float>(rs * (g - mean_g - xhat * mean_gx)));
        }
    }
}

// LN_BWD's column partials: block (column tile of 32, row chunks of CUX_LN_ROWS from blockIdx.y
// in steps of gridDim.y); lane tx owns column tile*32 + tx, the block's WARPS warps stride over
// a chunk's rows. part[chunk][0][c] = sum of dy * xhat, part[chunk][1][c] = sum of dy over the
// chunk's rows.
__global__ void k_ln_bwd_cols(cux_tview dy, cux_tview x, cux_tview mean, cux_tview rstd,
                              double *part)
{
    __shared__ double sh[2][WARPS][32];
    int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
    int64_t d = last_dim(x), rows = cux_numel(x) / d, chunks = cux_ln_chunks(rows);
    int64_t c = static_cast<int64_t>(blockIdx.x) * 32 + tx;
    for (int64_t k = blockIdx.y; k < chunks; k += gridDim.y) { // uniform across the block
        int64_t r0 = k * CUX_LN_ROWS, r1 = r0 + CUX_LN_ROWS < rows ? r0 + CUX_LN_ROWS : rows;
        double a1 = 0.0, a2 = 0.0;
        if (c < d)
            for (int64_t r = r0 + ty; r < r1; r += WARPS) {
                double g = cux_ld(dy, r * d + c);
                double xhat = (cux_ld(x, r * d + c) - static_cast<double>(cux_ld(mean, r))) *
                              static_cast<double>(cux_ld(rstd, r));
                a1 += g * xhat;
                a2 += g;
            }
        sh[0][ty][tx] = a1;
        sh[1][ty][tx] = a2;
        __syncthreads();
        if (ty == 0 && c < d) {
            double t1 = 0.0, t2 = 0.0;
            for (int w = 0; w < WARPS; w++) {
                t1 += sh[0][w][tx];
                t2 += sh[1][w][tx];
            }
            part[k * 2 * d + c] = t1;
            part[k * 2 * d + d + c] = t2;
        }
        __syncthreads(); // sh is written again by the next chunk
    }
}

// LN_BWD's dgamma and dbeta: each column's chunks added in chunk order.
__global__ void k_ln_bwd_finish(const double *part, int64_t chunks, int64_t d, cux_tview dgamma,
                                cux_tview dbeta)
{
    CUX_FOR(c, d)
    {
        double t1 = 0.0, t2 = 0.0;
        for (int64_t k = 0; k < chunks; k++) {
            t1 += part[k * 2 * d + c];
            t2 += part[k * 2 * d + d + c];
        }
        if (dgamma.p)
            cux_st(dgamma, c, static_cast<float>(t1));
        if (dbeta.p)
            cux_st(dbeta, c, static_cast<float>(t2));
    }
}

// ---- gradient clipping ----

// CLIP_SUMSQ's partials: block b's sum of g^2 (in double) into part[b].
__global__ void k_sumsq_partials(cux_tview g, double *part)
{
    double s = 0.0;
    CUX_FOR(i, cux_numel(g))
    {
        double v = cux_ld(g, i);
        s += v * v;
    }
    s = cux_block_sum(s);
    if (threadIdx.x == 0)
        part[blockIdx.x] = s;
}

// CLIP_SUMSQ's total, one block: *acc = (first ? 0 : *acc) + the partials in order. The first
// gradient of the op starts the accumulator, so nothing needs zeroing beforehand.
__global__ void k_sumsq_finish(const double *part, int64_t count, double *acc, int first)
{
    double s = 0.0;
    for (int64_t i = threadIdx.x; i < count; i += blockDim.x)
        s += part[i];
    s = cux_block_sum(s);
    if (threadIdx.x == 0)
        *acc = (first ? 0.0 : *acc) + s;
}

// CLIP_NORM: total_norm = sqrt(acc), rounded to fp32 as PyTorch's norm.
__global__ void k_clip_norm(const double *acc, cux_tview norm)
{
    cux_st(norm, 0, static_cast<float>(sqrt(*acc)));
}

// CLIP_APPLY: g *= max_norm / (total + 1e-6) in fp32, unless that coefficient is >= 1 (a NaN
// total gives a NaN coefficient, which scales: NaN gradients, as PyTorch and cpu_ref).
__global__ void k_clip_apply(cux_tview g, cux_tview norm, cux_tview out, float max_norm)
{
    float coef = max_norm / (cux_ld(norm, 0) + 1e-6f);
    if (coef >= 1.0f)
        return;
    CUX_FOR(i, cux_numel(out))
    cux_st(out, i, cux_ld(g, cux_same(out, g, i)) * coef);
}

} // namespace

cudaError_t cux_launch_seq(const cux_kparams &kp, cudaStream_t s)
{
    const cux_tview *t = kp.t;
    const cux_tview &in = t[CUX_T_IN], &out = t[CUX_T_OUT];
    switch (kp.kernel) {
    case CUX_K_SOFTMAX: {
        XPB_LAUNCH(k_softmax, row_blocks(cux_numel(in) / last_dim(in), kp.sm_count), CUX_THREADS, 0,
                   s)
        (in, t[CUX_T_IN + 1], out, kp.attrs.scale, kp.a3.causal != 0);
        break;
    }
    case CUX_K_SOFTMAX_BWD: {
        XPB_LAUNCH(k_softmax_bwd, row_blocks(cux_numel(out) / last_dim(out), kp.sm_count),
                   CUX_THREADS, 0, s)
        (in, t[CUX_T_IN + 1], out, static_cast<double>(kp.attrs.scale));
        break;
    }
    case CUX_K_LN_FWD: {
        XPB_LAUNCH(k_ln_fwd, row_blocks(cux_numel(in) / last_dim(in), kp.sm_count), CUX_THREADS, 0,
                   s)
        (in, t[CUX_T_IN + 1], t[CUX_T_IN + 2], out, t[CUX_T_OUT + 1], t[CUX_T_OUT + 2],
         static_cast<double>(kp.attrs.eps));
        break;
    }
    case CUX_K_LN_BWD: {
        const cux_tview &x = t[CUX_T_IN + 1];
        int64_t d = last_dim(x), rows = cux_numel(x) / d;
        if (out.p) {
            XPB_LAUNCH(k_ln_bwd_dx, row_blocks(rows, kp.sm_count), CUX_THREADS, 0, s)
            (in, x, t[CUX_T_IN + 2], t[CUX_T_IN + 3], t[CUX_T_IN + 4], out);
        }
        if (t[CUX_T_OUT + 1].p || t[CUX_T_OUT + 2].p) {
            double *part = static_cast<double *>(kp.scratch);
            int64_t chunks = cux_ln_chunks(rows);
            dim3 grid(static_cast<unsigned>((d + 31) / 32),
                      static_cast<unsigned>(chunks < 65535 ? chunks : 65535));
            XPB_LAUNCH(k_ln_bwd_cols, grid, CUX_THREADS, 0, s)
            (in, x, t[CUX_T_IN + 3], t[CUX_T_IN + 4], part);
            XPB_LAUNCH(k_ln_bwd_finish, cux_blocks(d, kp.sm_count), CUX_THREADS, 0, s)
            (part, chunks, d, t[CUX_T_OUT + 1], t[CUX_T_OUT + 2]);
        }
        break;
    }
    case CUX_K_CLIP_SUMSQ: {
        double *part = static_cast<double *>(kp.scratch);
        unsigned blocks = static_cast<unsigned>(cux_sum_blocks(cux_numel(in)));
        XPB_LAUNCH(k_sumsq_partials, blocks, CUX_THREADS, 0, s)(in, part);
        XPB_LAUNCH(k_sumsq_finish, 1, CUX_THREADS, 0, s)
        (part, static_cast<int64_t>(blocks), static_cast<double *>(out.p), kp.index == 0);
        break;
    }
    case CUX_K_CLIP_NORM:
        XPB_LAUNCH(k_clip_norm, 1, 1, 0, s)(static_cast<const double *>(in.p), out);
        break;
    case CUX_K_CLIP_APPLY:
        XPB_LAUNCH(k_clip_apply, cux_blocks(cux_numel(out), kp.sm_count), CUX_THREADS, 0, s)
        (in, t[CUX_T_IN + 1], out, kp.a3.max_norm);
        break;
    default:
        return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}
