// Pooling (max with its index workspace, average, global average) and reflection padding, with
// their backward ops. The backward kernels gather: each input element sums the outputs whose
// window (or reflection) reached it (index_math.h), so they need neither atomics nor a zeroing
// pass, and overlapping windows accumulate as ops.md says. All work in any storage layout.
#include "kernels/k_common.cuh"

namespace
{

struct pool {
    int64_t kh, kw, sh, sw, ph, pw;
};

__device__ __forceinline__ pool pool_of(const xpb_op_attrs &a)
{
    pool p;
    p.kh = a.kernel[0];
    p.kw = a.kernel[1];
    p.sh = a.stride[0];
    p.sw = a.stride[1];
    p.ph = a.pad[0];
    p.pw = a.pad[1];
    return p;
}

// MAXPOOL: y and ws_index = h*W + w of the first maximum in row-major window order; a NaN wins.
__global__ void k_maxpool(cux_tview x, cux_tview y, cux_tview idx, xpb_op_attrs a)
{
    pool p = pool_of(a);
    CUX_FOR(i, cux_numel(y))
    {
        int64_t n, c, oy, ox, h0, h1, w0, w1;
        cux_coords(y.layout, y.c, y.h, y.w, i, &n, &c, &oy, &ox);
        cux_pool_window(oy, p.sh, p.ph, p.kh, x.h, &h0, &h1);
        cux_pool_window(ox, p.sw, p.pw, p.kw, x.w, &w0, &w1);
        float best = -INFINITY;
        int64_t at = h0 * x.w + w0;
        for (int64_t h = h0; h < h1; h++)
            for (int64_t w = w0; w < w1; w++) {
                float v = cux_ld(x, cux_offset(x.layout, x.c, x.h, x.w, n, c, h, w));
                if (v > best || isnan(v)) {
                    best = v;
                    at = h * x.w + w;
                }
            }
        cux_st(y, i, best);
        if (idx.p)
            static_cast<int32_t *>(idx.p)[cux_same(y, idx, i)] = static_cast<int32_t>(at);
    }
}

// MAXPOOL_BWD: dx(h, w) = sum of dy over the outputs whose index names (h, w). An index
// outside the plane is reported (ops.md); its gradient goes nowhere.
__global__ void k_maxpool_bwd(cux_tview dy, cux_tview idx, cux_tview dx, xpb_op_attrs a,
                              cux_phase_rec *rec, int32_t op)
{
    pool p = pool_of(a);
    int64_t plane = dx.h * dx.w;
    CUX_FOR(i, cux_numel(dx))
    {
        int64_t n, c, h, w, y0, y1, x0, x1;
        cux_coords(dx.layout, dx.c, dx.h, dx.w, i, &n, &c, &h, &w);
        cux_pool_outputs_of(h, p.sh, p.ph, p.kh, dy.h, &y0, &y1);
        cux_pool_outputs_of(w, p.sw, p.pw, p.kw, dy.w, &x0, &x1);
        float sum = 0.0f;
        for (int64_t oy = y0; oy < y1; oy++)
            for (int64_t ox = x0; ox < x1; ox++) {
                int64_t o = cux_offset(idx.layout, idx.c, idx.h, idx.w, n, c, oy, ox);
                int32_t at = static_cast<const int32_t *>(idx.p)[o];
                if (at < 0 || at >= plane)
                    cux_error(rec, CUX_ERR_WS_INDEX, op, o, at);
                else if (at == h * dx.w + w)
                    sum += cux_ld(dy, cux_offset(dy.layout, dy.c, dy.h, dy.w, n, c, oy, ox));
            }
        cux_st(dx, i, sum);
    }
}

__global__ void k_avgpool(cux_tview x, cux_tview y, xpb_op_attrs a)
{
    pool p = pool_of(a);
    CUX_FOR(i, cux_numel(y))
    {
        int64_t n, c, oy, ox, h0, h1, w0, w1;
        cux_coords(y.layout, y.c, y.h, y.w, i, &n, &c, &oy, &ox);
        cux_pool_window(oy, p.sh, p.ph, p.kh, x.h, &h0, &h1);
        cux_pool_window(ox, p.sw, p.pw, p.kw, x.w, &w0, &w1);
        double sum = 0.0;
        for (int64_t h = h0; h < h1; h++)
            for (int64_t w = w0; w < w1; w++)
                sum += cux_ld(x, cux_offset(x.layout, x.c, x.h, x.w, n, c, h, w));
        int64_t d = cux_avg_divisor(a.count_include_pad, oy, ox, p.sh, p.sw, p.ph, p.pw, p.kh, p.kw,
                                    x.h, x.w);
        cux_st(y, i, static_cast<float>(sum / static_cast<double>(d)));
    }
}

__global__ void k_avgpool_bwd(cux_tview dy, cux_tview dx, xpb_op_attrs a)
{
    pool p = pool_of(a);
    CUX_FOR(i, cux_numel(dx))
    {
        int64_t n, c, h, w, y0, y1, x0, x1;
        cux_coords(dx.layout, dx.c, dx.h, dx.w, i, &n, &c, &h, &w);
        cux_pool_outputs_of(h, p.sh, p.ph, p.kh, dy.h, &y0, &y1);
        cux_pool_outputs_of(w, p.sw, p.pw, p.kw, dy.w, &x0, &x1);
        float sum = 0.0f;
        for (int64_t oy = y0; oy < y1; oy++)
            for (int64_t ox = x0; ox < x1; ox++) {
                int64_t d = cux_avg_divisor(a.count_include_pad, oy, ox, p.sh, p.sw, p.ph, p.pw,
                                            p.kh, p.kw, dx.h, dx.w);
                float g = cux_ld(dy, cux_offset(dy.layout, dy.c, dy.h, dy.w, n, c, oy, ox));
                sum += static_cast<float>(static_cast<double>(g) / static_cast<double>(d));
            }
        cux_st(dx, i, sum);
    }
}

// GLOBAL_AVGPOOL: one thread per (n, c); neighbouring threads are neighbouring channels, which
// is contiguous in NHWC.
__global__ void k_gap(cux_tview x, cux_tview y)
{
    int64_t plane = x.h * x.w;
    CUX_FOR(g, x.n * x.c)
    {
        int64_t n = g / x.c, c = g % x.c;
        double sum = 0.0;
        for (int64_t s = 0; s < plane; s++)
            sum += cux_ld(x, cux_offset(x.layout, x.c, x.h, x.w, n, c, s / x.w, s % x.w));
        cux_st(y, cux_offset(y.layout, y.c, 1, 1, n, c, 0, 0),
               static_cast<float>(sum / static_cast<double>(plane)));
    }
}

__global__ void k_gap_bwd(cux_tview dy, cux_tview dx)
{
    double plane = static_cast<double>(dx.h * dx.w);
    CUX_FOR(i, cux_numel(dx))
    {
        int64_t n, c, h, w;
        cux_coords(dx.layout, dx.c, dx.h, dx.w, i, &n, &c, &h, &w);
        float g = cux_ld(dy, cux_offset(dy.layout, dy.c, 1, 1, n, c, 0, 0));
        cux_st(dx, i, static_cast<float>(static_cast<double>(g) / plane));
    }
}

__global__ void k_pad(cux_tview x, cux_tview y, int64_t ph, int64_t pw)
{
    CUX_FOR(i, cux_numel(y))
    {
        int64_t n, c, h, w;
        cux_coords(y.layout, y.c, y.h, y.w, i, &n, &c, &h, &w);
        int64_t sh = cux_reflect(h - ph, x.h), sw = cux_reflect(w - pw, x.w);
        cux_st(y, i, cux_ld(x, cux_offset(x.layout, x.c, x.h, x.w, n, c, sh, sw)));
    }
}

__global__ void k_pad_bwd(cux_tview dy, cux_tview dx, int64_t ph, int64_t pw)
{
    CUX_FOR(i, cux_numel(dx))
    {
        int64_t n, c, h, w, rows[3], cols[3];
        cux_coords(dx.layout, dx.c, dx.h, dx.w, i, &n, &c, &h, &w);
        int nr = cux_reflect_sources(h, dx.h, ph, rows);
        int nc = cux_reflect_sources(w, dx.w, pw, cols);
        float sum = 0.0f;
        for (int a = 0; a < nr; a++)
            for (int b = 0; b < nc; b++)
                sum += cux_ld(dy, cux_offset(dy.layout, dy.c, dy.h, dy.w, n, c, rows[a], cols[b]));
        cux_st(dx, i, sum);
    }
}

} // namespace

cudaError_t cux_launch_pool(const cux_kparams &kp, cudaStream_t s)
{
    const cux_tview *t = kp.t;
    const cux_tview &out = t[CUX_T_OUT];
    unsigned g = cux_blocks(cux_numel(out), kp.sm_count);
    switch (kp.kernel) {
    case CUX_K_MAXPOOL:
        XPB_LAUNCH(k_maxpool, g, CUX_THREADS, 0, s)(t[CUX_T_IN], out, t[CUX_T_OUT + 1], kp.attrs);
        break;
    case CUX_K_MAXPOOL_BWD:
        XPB_LAUNCH(k_maxpool_bwd, g, CUX_THREADS, 0, s)
        (t[CUX_T_IN], t[CUX_T_IN + 1], out, kp.attrs, kp.rec, kp.op);
        break;
    case CUX_K_AVGPOOL:
        XPB_LAUNCH(k_avgpool, g, CUX_THREADS, 0, s)(t[CUX_T_IN], out, kp.attrs);
        break;
    case CUX_K_AVGPOOL_BWD:
        XPB_LAUNCH(k_avgpool_bwd, g, CUX_THREADS, 0, s)(t[CUX_T_IN], out, kp.attrs);
        break;
    case CUX_K_GAP:
        XPB_LAUNCH(k_gap, cux_blocks(t[CUX_T_IN].n * t[CUX_T_IN].c, kp.sm_count), CUX_THREADS, 0, s)
        (t[CUX_T_IN], out);
        break;
    case CUX_K_GAP_BWD:
        XPB_LAUNCH(k_gap_bwd, g, CUX_THREADS, 0, s)(t[CUX_T_IN], out);
        break;
    case CUX_K_PAD:
        XPB_LAUNCH(k_pad, g, CUX_THREADS, 0, s)(t[CUX_T_IN], out, kp.attrs.pad[0], kp.attrs.pad[1]);
        break;
    case CUX_K_PAD_BWD:
        XPB_LAUNCH(k_pad_bwd, g, CUX_THREADS, 0, s)
        (t[CUX_T_IN], out, kp.attrs.pad[0], kp.attrs.pad[1]);
        break;
    default:
        return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}
