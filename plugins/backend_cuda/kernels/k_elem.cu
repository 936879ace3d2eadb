// Element-by-element kernels: conversions between storage types and layouts (also COPY and
// RESHAPE across layouts), FILL, ADD, activations and their backward, the bias / residual /
// activation epilogue of convolutions and matmuls that cuDNN could not fuse, and dropout.
// Each thread walks output elements in storage order; inputs are addressed by the same logical
// element in their own layout, so no step needs a conversion before an own kernel.
#include "kernels/k_common.cuh"

namespace
{

// Element-for-element in canonical (row-major) order between two views of equal element
// count: the element at storage offset i of `out` is canonical element f of out's shape, which
// is canonical element f of in's shape (RESHAPE's "same bytes", COPY, type and layout changes).
__global__ void k_convert(cux_tview in, cux_tview out)
{
    int64_t total = cux_numel(out);
    bool same = in.layout == out.layout && in.c == out.c && in.h == out.h && in.w == out.w;
    CUX_FOR(i, total)
    {
        int64_t j = i;
        if (!same) {
            int64_t n, c, h, w;
            cux_coords(out.layout, out.c, out.h, out.w, i, &n, &c, &h, &w);
            int64_t f = ((n * out.c + c) * out.h + h) * out.w + w;
            int64_t iw = f % in.w, ih = (f / in.w) % in.h, ic = (f / (in.w * in.h)) % in.c;
            int64_t in_ = f / (in.w * in.h * in.c);
            j = cux_offset(in.layout, in.c, in.h, in.w, in_, ic, ih, iw);
        }
        if (in.type == CUX_I32 && out.type == CUX_I32)
            static_cast<int32_t *>(out.p)[i] = static_cast<const int32_t *>(in.p)[j];
        else
            cux_st(out, i, cux_ld(in, j));
    }
}

__global__ void k_fill(cux_tview out, float value)
{
    CUX_FOR(i, cux_numel(out))
    cux_st(out, i, value);
}

__global__ void k_add(cux_tview a, cux_tview b, cux_tview y)
{
#if defined(XPB_CUDA_STANDIN)
    const int64_t skip = cux_fault("add_off_by_one"); // the last element never written
#else
    const int64_t skip = 0;
#endif
    CUX_FOR(i, cux_numel(y) - skip)
    cux_st(y, i, cux_ld(a, cux_same(y, a, i)) + cux_ld(b, cux_same(y, b, i)));
}

__global__ void k_act(cux_tview x, cux_tview y, int act, float alpha)
{
    CUX_FOR(i, cux_numel(y))
    cux_st(y, i, cux_act_fwd(act, alpha, cux_ld(x, cux_same(y, x, i))));
}

__global__ void k_act_bwd(cux_tview dy, cux_tview y, cux_tview dx, int act, float alpha)
{
    CUX_FOR(i, cux_numel(dx))
    {
        float g = cux_ld(dy, cux_same(dx, dy, i));
        cux_st(dx, i, cux_act_bwd(act, alpha, g, cux_ld(y, cux_same(dx, y, i))));
    }
}

// y = act(y + bias[channel] + resid), in place on y.
__global__ void k_epilogue(cux_tview y, cux_tview bias, cux_tview resid, int act, float alpha)
{
    CUX_FOR(i, cux_numel(y))
    {
        float v = cux_ld(y, i);
        if (bias.p)
            v += cux_ld(bias, cux_channel(y, i));
        if (resid.p)
            v += cux_ld(resid, cux_same(y, resid, i));
        cux_st(y, i, cux_act_fwd(act, alpha, v));
    }
}

// DROPOUT: the mask stream of the op's `*counter`-th execution, indexed by the canonical
// (row-major) element index, whatever the storage layout; mask gets the factor.
__global__ void k_dropout(cux_tview x, cux_tview y, cux_tview mask, uint64_t seed, float p,
                          const uint64_t *counter)
{
    uint64_t stream = xpb_dropout_stream(seed, *counter);
    CUX_FOR(i, cux_numel(y))
    {
        int64_t n, c, h, w;
        cux_coords(y.layout, y.c, y.h, y.w, i, &n, &c, &h, &w);
        int64_t f = ((n * y.c + c) * y.h + h) * y.w + w;
        float m = xpb_dropout_factor(stream, f, p);
        cux_st(y, i, cux_ld(x, cux_same(y, x, i)) * m);
        if (mask.p)
            cux_st(mask, cux_same(y, mask, i), m);
    }
}

__global__ void k_dropout_bwd(cux_tview dy, cux_tview mask, cux_tview dx)
{
    CUX_FOR(i, cux_numel(dx))
    cux_st(dx, i, cux_ld(dy, cux_same(dx, dy, i)) * cux_ld(mask, cux_same(dx, mask, i)));
}

} // namespace

cudaError_t cux_launch_elem(const cux_kparams &kp, cudaStream_t s)
{
    const cux_tview *t = kp.t;
    const cux_tview &out = t[CUX_T_OUT];
    unsigned g = cux_blocks(cux_numel(out), kp.sm_count);
    switch (kp.kernel) {
    case CUX_K_CONVERT:
        XPB_LAUNCH(k_convert, g, CUX_THREADS, 0, s)(t[CUX_T_IN], out);
        break;
    case CUX_K_FILL:
        XPB_LAUNCH(k_fill, g, CUX_THREADS, 0, s)(out, kp.attrs.value);
        break;
    case CUX_K_ADD:
        XPB_LAUNCH(k_add, g, CUX_THREADS, 0, s)(t[CUX_T_IN], t[CUX_T_IN + 1], out);
        break;
    case CUX_K_ACT:
        XPB_LAUNCH(k_act, g, CUX_THREADS, 0, s)(t[CUX_T_IN], out, kp.act, kp.alpha);
        break;
    case CUX_K_ACT_BWD:
        XPB_LAUNCH(k_act_bwd, g, CUX_THREADS, 0, s)
        (t[CUX_T_IN], t[CUX_T_IN + 1], out, kp.act, kp.alpha);
        break;
    case CUX_K_EPILOGUE:
        XPB_LAUNCH(k_epilogue, g, CUX_THREADS, 0, s)
        (out, t[CUX_T_BIAS], t[CUX_T_RESID], kp.act, kp.alpha);
        break;
    case CUX_K_DROPOUT:
        XPB_LAUNCH(k_dropout, g, CUX_THREADS, 0, s)
        (t[CUX_T_IN], out, t[CUX_T_OUT + 1], kp.attrs.seed, kp.attrs.dropout_p, kp.counters);
        break;
    case CUX_K_DROPOUT_BWD:
        XPB_LAUNCH(k_dropout_bwd, g, CUX_THREADS, 0, s)(t[CUX_T_IN], t[CUX_T_IN + 1], out);
        break;
    default:
        return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}
