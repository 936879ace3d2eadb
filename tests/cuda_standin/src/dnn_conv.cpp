// The convolutions (cuDNN 9 API Reference, cudnn_cnn library: cudnnConvolutionForward,
// cudnnConvolutionBackwardData, cudnnConvolutionBackwardFilter, whose tensors the backend's
// operations bind the same way; cudnnConvolutionMode_t: CUDNN_CONVOLUTION flips the filter,
// CUDNN_CROSS_CORRELATION does not; "Scaling Parameters": y = alpha * result + beta * y, and
// "when beta is zero, the output is not read"). Tensors are read through their dimensions and
// strides, whatever the layout, into dense fp32 arrays; products are accumulated in fp32 (the
// compute type), except that the reduced-precision-reduction engine rounds its partial sums to
// the I/O type every 16 products, and the tensor-core engine rounds fp32 inputs to TF32.
#include <cstring>
#include <vector>

#include "dnn_conv.hpp"
#include "dnn_internal.hpp"

namespace xpbsi
{
namespace dnn
{

namespace
{

constexpr int k_chunk = 16; // products per partial sum in a reduced-precision reduction

geom geometry(const op_info &op, const tensor_info &x, const tensor_info &w, const tensor_info &y)
{
    geom g;
    g.n = x.dims[0];
    g.c = x.dims[1];
    g.k = w.dims[0];
    g.cg = w.dims[1];
    g.kg = g.k / (g.c / g.cg);
    int s = op.conv.spatial, lead = 3 - s;
    for (int i = 0; i < 3; i++) {
        bool real = i >= lead;
        g.in[i] = real ? x.dims[2 + i - lead] : 1;
        g.flt[i] = real ? w.dims[2 + i - lead] : 1;
        g.out[i] = real ? y.dims[2 + i - lead] : 1;
        g.str[i] = real ? op.conv.str[i - lead] : 1;
        g.dil[i] = real ? op.conv.dil[i - lead] : 1;
        g.pad[i] = real ? op.conv.pre[i - lead] : 0;
    }
    g.flip = op.conv.mode == CUDNN_CONVOLUTION;
    return g;
}

// The tensor's elements in the row-major order of its dimensions.
std::vector<float> gather(const tensor_info &t, const void *p, bool tf32)
{
    int64_t total = 1;
    for (int64_t d : t.dims)
        total *= d;
    std::vector<float> v((size_t)total);
    std::vector<int64_t> idx(t.dims.size(), 0);
    for (int64_t i = 0; i < total; i++) {
        int64_t off = 0;
        for (size_t d = 0; d < idx.size(); d++)
            off += idx[d] * t.strides[d];
        float x = load(t.type, p, off);
        v[(size_t)i] = tf32 ? round_tf32(x) : x;
        for (size_t d = idx.size(); d-- > 0;) {
            if (++idx[d] < t.dims[d])
                break;
            idx[d] = 0;
        }
    }
    return v;
}

// y = alpha * v + beta * y, element by element through the strides, rounded to y's type.
void scatter(const tensor_info &t, void *p, const std::vector<float> &v, double alpha, double beta)
{
    std::vector<int64_t> idx(t.dims.size(), 0);
    for (size_t i = 0; i < v.size(); i++) {
        int64_t off = 0;
        for (size_t d = 0; d < idx.size(); d++)
            off += idx[d] * t.strides[d];
        float r = (float)alpha * v[i];
        if (beta != 0.0)
            r += (float)beta * load(t.type, p, off);
        store(t.type, p, off, r);
        for (size_t d = idx.size(); d-- > 0;) {
            if (++idx[d] < t.dims[d])
                break;
            idx[d] = 0;
        }
    }
}

// An fp32 accumulator, or with `io` set, one whose partial sums are rounded to that type.
struct accumulator {
    elem io;
    bool reduced;
    float sum = 0.0f, part = 0.0f;
    int n = 0;
    void add(float p)
    {
        part += p;
        if (reduced && ++n == k_chunk) {
            sum = round_to(io, sum + round_to(io, part));
            part = 0.0f;
            n = 0;
        }
    }
    float result() const
    {
        return reduced ? round_to(io, sum + round_to(io, part)) : part;
    }
};

int64_t at5(const int64_t *dims5, int64_t a, int64_t b, int64_t d, int64_t h, int64_t w)
{
    // dims5: {A, B, D, H, W}
    return (((a * dims5[1] + b) * dims5[2] + d) * dims5[3] + h) * dims5[4] + w;
}

void forward(const geom &g, const std::vector<float> &x, const std::vector<float> &w,
             std::vector<float> &y, const accumulator &proto)
{
    const int64_t xd[5] = {g.n, g.c, g.in[0], g.in[1], g.in[2]};
    const int64_t wd[5] = {g.k, g.cg, g.flt[0], g.flt[1], g.flt[2]};
    const int64_t yd[5] = {g.n, g.k, g.out[0], g.out[1], g.out[2]};
    for (int64_t n = 0; n < g.n; n++)
        for (int64_t k = 0; k < g.k; k++) {
            int64_t grp = k / g.kg;
            for (int64_t o0 = 0; o0 < g.out[0]; o0++)
                for (int64_t o1 = 0; o1 < g.out[1]; o1++)
                    for (int64_t o2 = 0; o2 < g.out[2]; o2++) {
                        accumulator acc = proto;
                        for (int64_t c = 0; c < g.cg; c++)
                            for (int64_t f0 = 0; f0 < g.flt[0]; f0++) {
                                int64_t i0 = o0 * g.str[0] - g.pad[0] + f0 * g.dil[0];
                                if (i0 < 0 || i0 >= g.in[0])
                                    continue;
                                for (int64_t f1 = 0; f1 < g.flt[1]; f1++) {
                                    int64_t i1 = o1 * g.str[1] - g.pad[1] + f1 * g.dil[1];
                                    if (i1 < 0 || i1 >= g.in[1])
                                        continue;
                                    for (int64_t f2 = 0; f2 < g.flt[2]; f2++) {
                                        int64_t i2 = o2 * g.str[2] - g.pad[2] + f2 * g.dil[2];
                                        if (i2 < 0 || i2 >= g.in[2])
                                            continue;
                                        int64_t w0 = g.flip ? g.flt[0] - 1 - f0 : f0;
                                        int64_t w1 = g.flip ? g.flt[1] - 1 - f1 : f1;
                                        int64_t w2 = g.flip ? g.flt[2] - 1 - f2 : f2;
                                        acc.add(x[(size_t)at5(xd, n, grp * g.cg + c, i0, i1, i2)] *
                                                w[(size_t)at5(wd, k, c, w0, w1, w2)]);
                                    }
                                }
                            }
                        y[(size_t)at5(yd, n, k, o0, o1, o2)] = acc.result();
                    }
        }
}

// dX: each input position gathers the output positions whose window covers it.
void backward_data(const geom &g, const std::vector<float> &dy, const std::vector<float> &w,
                   std::vector<float> &dx, const accumulator &proto)
{
    const int64_t xd[5] = {g.n, g.c, g.in[0], g.in[1], g.in[2]};
    const int64_t wd[5] = {g.k, g.cg, g.flt[0], g.flt[1], g.flt[2]};
    const int64_t yd[5] = {g.n, g.k, g.out[0], g.out[1], g.out[2]};
    for (int64_t n = 0; n < g.n; n++)
        for (int64_t ci = 0; ci < g.c; ci++) {
            int64_t grp = ci / g.cg, c = ci % g.cg;
            for (int64_t i0 = 0; i0 < g.in[0]; i0++)
                for (int64_t i1 = 0; i1 < g.in[1]; i1++)
                    for (int64_t i2 = 0; i2 < g.in[2]; i2++) {
                        accumulator acc = proto;
                        for (int64_t k = grp * g.kg; k < (grp + 1) * g.kg; k++)
                            for (int64_t f0 = 0; f0 < g.flt[0]; f0++) {
                                int64_t t0 = i0 + g.pad[0] - f0 * g.dil[0];
                                if (t0 < 0 || t0 % g.str[0] || t0 / g.str[0] >= g.out[0])
                                    continue;
                                for (int64_t f1 = 0; f1 < g.flt[1]; f1++) {
                                    int64_t t1 = i1 + g.pad[1] - f1 * g.dil[1];
                                    if (t1 < 0 || t1 % g.str[1] || t1 / g.str[1] >= g.out[1])
                                        continue;
                                    for (int64_t f2 = 0; f2 < g.flt[2]; f2++) {
                                        int64_t t2 = i2 + g.pad[2] - f2 * g.dil[2];
                                        if (t2 < 0 || t2 % g.str[2] || t2 / g.str[2] >= g.out[2])
                                            continue;
                                        int64_t w0 = g.flip ? g.flt[0] - 1 - f0 : f0;
                                        int64_t w1 = g.flip ? g.flt[1] - 1 - f1 : f1;
                                        int64_t w2 = g.flip ? g.flt[2] - 1 - f2 : f2;
                                        acc.add(dy[(size_t)at5(yd, n, k, t0 / g.str[0],
                                                               t1 / g.str[1], t2 / g.str[2])] *
                                                w[(size_t)at5(wd, k, c, w0, w1, w2)]);
                                    }
                                }
                            }
                        dx[(size_t)at5(xd, n, ci, i0, i1, i2)] = acc.result();
                    }
        }
}

// dW: each filter tap sums the products of dY and the input it met, over images and outputs.
void backward_filter(const geom &g, const std::vector<float> &x, const std::vector<float> &dy,
                     std::vector<float> &dw, const accumulator &proto)
{
    const int64_t xd[5] = {g.n, g.c, g.in[0], g.in[1], g.in[2]};
    const int64_t wd[5] = {g.k, g.cg, g.flt[0], g.flt[1], g.flt[2]};
    const int64_t yd[5] = {g.n, g.k, g.out[0], g.out[1], g.out[2]};
    for (int64_t k = 0; k < g.k; k++) {
        int64_t grp = k / g.kg;
        for (int64_t c = 0; c < g.cg; c++)
            for (int64_t f0 = 0; f0 < g.flt[0]; f0++)
                for (int64_t f1 = 0; f1 < g.flt[1]; f1++)
                    for (int64_t f2 = 0; f2 < g.flt[2]; f2++) {
                        accumulator acc = proto;
                        for (int64_t n = 0; n < g.n; n++)
                            for (int64_t o0 = 0; o0 < g.out[0]; o0++) {
                                int64_t i0 = o0 * g.str[0] - g.pad[0] + f0 * g.dil[0];
                                if (i0 < 0 || i0 >= g.in[0])
                                    continue;
                                for (int64_t o1 = 0; o1 < g.out[1]; o1++) {
                                    int64_t i1 = o1 * g.str[1] - g.pad[1] + f1 * g.dil[1];
                                    if (i1 < 0 || i1 >= g.in[1])
                                        continue;
                                    for (int64_t o2 = 0; o2 < g.out[2]; o2++) {
                                        int64_t i2 = o2 * g.str[2] - g.pad[2] + f2 * g.dil[2];
                                        if (i2 < 0 || i2 >= g.in[2])
                                            continue;
                                        acc.add(dy[(size_t)at5(yd, n, k, o0, o1, o2)] *
                                                x[(size_t)at5(xd, n, grp * g.cg + c, i0, i1, i2)]);
                                    }
                                }
                            }
                        int64_t w0 = g.flip ? g.flt[0] - 1 - f0 : f0;
                        int64_t w1 = g.flip ? g.flt[1] - 1 - f1 : f1;
                        int64_t w2 = g.flip ? g.flt[2] - 1 - f2 : f2;
                        dw[(size_t)at5(wd, k, c, w0, w1, w2)] = acc.result();
                    }
    }
}

} // namespace

void run_conv(const op_info &op, const void *a, const void *w, void *y, const conv_numerics &num)
{
    if (num.workspace && num.workspace_bytes) // the engine's scratch: overwritten, as on a GPU
        memset(num.workspace, 0xA5, num.workspace_bytes);
    const tensor_info &ta = *op.in[0], &tw = *op.in[1], &ty = *op.out;
    accumulator proto{num.reduce_in, num.reduce_in != elem::f32};
    std::vector<float> da = gather(ta, a, num.tf32_inputs && ta.type == elem::f32);
    std::vector<float> dw = gather(tw, w, num.tf32_inputs && tw.type == elem::f32);
    int64_t total = 1;
    for (int64_t d : ty.dims)
        total *= d;
    std::vector<float> r((size_t)total);
    // fp32 accumulation runs the loops in an order that walks memory (the same order of
    // additions per result); a reduced-precision reduction keeps one accumulator per result
    bool fast = !proto.reduced;
    switch (op.kind) {
    case op_kind::conv_fwd:
        if (fast)
            forward_fp32(geometry(op, ta, tw, ty), da.data(), dw.data(), r.data());
        else
            forward(geometry(op, ta, tw, ty), da, dw, r, proto);
        break;
    case op_kind::conv_bwd_data:
        if (fast)
            backward_data_fp32(geometry(op, ty, tw, ta), da.data(), dw.data(), r.data());
        else
            backward_data(geometry(op, ty, tw, ta), da, dw, r, proto);
        break;
    default:
        if (fast)
            backward_filter_fp32(geometry(op, ta, ty, tw), da.data(), dw.data(), r.data());
        else
            backward_filter(geometry(op, ta, ty, tw), da, dw, r, proto);
        break;
    }
    scatter(ty, y, r, op.alpha, op.beta);
}

} // namespace dnn
} // namespace xpbsi
