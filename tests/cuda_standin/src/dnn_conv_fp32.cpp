// The convolutions with fp32 accumulation (dnn_conv.hpp), with loops ordered so that the
// innermost one walks a row of the output or input (the fallback and tensor-core engines): for
// each result the products are added in the same order as one accumulator per result would add
// them, so the bits are those of the straightforward loops, only sooner.
#include <algorithm>
#include <cstring>

#include "dnn_conv.hpp"

namespace xpbsi
{
namespace dnn
{

namespace
{

// The outputs o in [lo, hi) whose input o * str - pad + f * dil lies in [0, in).
void valid_range(int64_t out, int64_t in, int64_t str, int64_t pad, int64_t f, int64_t dil,
                 int64_t *lo, int64_t *hi)
{
    int64_t off = f * dil - pad; // input = o * str + off
    int64_t a = off >= 0 ? 0 : (-off + str - 1) / str;
    int64_t b = in - off <= 0 ? 0 : (in - off + str - 1) / str;
    *lo = std::min(a, out);
    *hi = std::max(*lo, std::min(b, out));
}

int64_t tap(const geom &g, int d, int64_t f)
{
    return g.flip ? g.flt[d] - 1 - f : f;
}

} // namespace

void forward_fp32(const geom &g, const float *x, const float *w, float *y)
{
    int64_t in_sz = g.in[0] * g.in[1] * g.in[2], out_sz = g.out[0] * g.out[1] * g.out[2];
    int64_t flt_sz = g.flt[0] * g.flt[1] * g.flt[2];
    memset(y, 0, (size_t)(g.n * g.k * out_sz) * sizeof(float));
    for (int64_t n = 0; n < g.n; n++)
        for (int64_t k = 0; k < g.k; k++) {
            float *yk = y + (n * g.k + k) * out_sz;
            for (int64_t c = 0; c < g.cg; c++) {
                const float *xc = x + (n * g.c + (k / g.kg) * g.cg + c) * in_sz;
                const float *wc = w + (k * g.cg + c) * flt_sz;
                for (int64_t f0 = 0; f0 < g.flt[0]; f0++)
                    for (int64_t f1 = 0; f1 < g.flt[1]; f1++)
                        for (int64_t f2 = 0; f2 < g.flt[2]; f2++) {
                            float wv = wc[(tap(g, 0, f0) * g.flt[1] + tap(g, 1, f1)) * g.flt[2] +
                                          tap(g, 2, f2)];
                            int64_t l0, h0, l1, h1, l2, h2;
                            valid_range(g.out[0], g.in[0], g.str[0], g.pad[0], f0, g.dil[0], &l0,
                                        &h0);
                            valid_range(g.out[1], g.in[1], g.str[1], g.pad[1], f1, g.dil[1], &l1,
                                        &h1);
                            valid_range(g.out[2], g.in[2], g.str[2], g.pad[2], f2, g.dil[2], &l2,
                                        &h2);
                            for (int64_t o0 = l0; o0 < h0; o0++)
                                for (int64_t o1 = l1; o1 < h1; o1++) {
                                    int64_t i0 = o0 * g.str[0] - g.pad[0] + f0 * g.dil[0];
                                    int64_t i1 = o1 * g.str[1] - g.pad[1] + f1 * g.dil[1];
                                    const float *xr = xc + (i0 * g.in[1] + i1) * g.in[2] +
                                                      f2 * g.dil[2] - g.pad[2];
                                    float *yr = yk + (o0 * g.out[1] + o1) * g.out[2];
                                    for (int64_t o2 = l2; o2 < h2; o2++)
                                        yr[o2] += xr[o2 * g.str[2]] * wv;
                                }
                        }
            }
        }
}

void backward_data_fp32(const geom &g, const float *dy, const float *w, float *dx)
{
    int64_t in_sz = g.in[0] * g.in[1] * g.in[2], out_sz = g.out[0] * g.out[1] * g.out[2];
    int64_t flt_sz = g.flt[0] * g.flt[1] * g.flt[2];
    memset(dx, 0, (size_t)(g.n * g.c * in_sz) * sizeof(float));
    for (int64_t n = 0; n < g.n; n++)
        for (int64_t ci = 0; ci < g.c; ci++) {
            int64_t grp = ci / g.cg, c = ci % g.cg;
            float *xc = dx + (n * g.c + ci) * in_sz;
            for (int64_t k = grp * g.kg; k < (grp + 1) * g.kg; k++) {
                const float *yk = dy + (n * g.k + k) * out_sz;
                const float *wc = w + (k * g.cg + c) * flt_sz;
                for (int64_t f0 = 0; f0 < g.flt[0]; f0++)
                    for (int64_t f1 = 0; f1 < g.flt[1]; f1++)
                        for (int64_t f2 = 0; f2 < g.flt[2]; f2++) {
                            float wv = wc[(tap(g, 0, f0) * g.flt[1] + tap(g, 1, f1)) * g.flt[2] +
                                          tap(g, 2, f2)];
                            int64_t l0, h0, l1, h1, l2, h2;
                            valid_range(g.out[0], g.in[0], g.str[0], g.pad[0], f0, g.dil[0], &l0,
                                        &h0);
                            valid_range(g.out[1], g.in[1], g.str[1], g.pad[1], f1, g.dil[1], &l1,
                                        &h1);
                            valid_range(g.out[2], g.in[2], g.str[2], g.pad[2], f2, g.dil[2], &l2,
                                        &h2);
                            for (int64_t o0 = l0; o0 < h0; o0++)
                                for (int64_t o1 = l1; o1 < h1; o1++) {
                                    int64_t i0 = o0 * g.str[0] - g.pad[0] + f0 * g.dil[0];
                                    int64_t i1 = o1 * g.str[1] - g.pad[1] + f1 * g.dil[1];
                                    float *xr = xc + (i0 * g.in[1] + i1) * g.in[2] + f2 * g.dil[2] -
                                                g.pad[2];
                                    const float *yr = yk + (o0 * g.out[1] + o1) * g.out[2];
                                    for (int64_t o2 = l2; o2 < h2; o2++)
                                        xr[o2 * g.str[2]] += yr[o2] * wv;
                                }
                        }
            }
        }
}

void backward_filter_fp32(const geom &g, const float *x, const float *dy, float *dw)
{
    int64_t in_sz = g.in[0] * g.in[1] * g.in[2], out_sz = g.out[0] * g.out[1] * g.out[2];
    int64_t flt_sz = g.flt[0] * g.flt[1] * g.flt[2];
    for (int64_t k = 0; k < g.k; k++)
        for (int64_t c = 0; c < g.cg; c++) {
            int64_t ci = (k / g.kg) * g.cg + c;
            for (int64_t f0 = 0; f0 < g.flt[0]; f0++)
                for (int64_t f1 = 0; f1 < g.flt[1]; f1++)
                    for (int64_t f2 = 0; f2 < g.flt[2]; f2++) {
                        int64_t l0, h0, l1, h1, l2, h2;
                        valid_range(g.out[0], g.in[0], g.str[0], g.pad[0], f0, g.dil[0], &l0, &h0);
                        valid_range(g.out[1], g.in[1], g.str[1], g.pad[1], f1, g.dil[1], &l1, &h1);
                        valid_range(g.out[2], g.in[2], g.str[2], g.pad[2], f2, g.dil[2], &l2, &h2);
                        float acc = 0.0f;
                        for (int64_t n = 0; n < g.n; n++) {
                            const float *xc = x + (n * g.c + ci) * in_sz;
                            const float *yk = dy + (n * g.k + k) * out_sz;
                            for (int64_t o0 = l0; o0 < h0; o0++)
                                for (int64_t o1 = l1; o1 < h1; o1++) {
                                    int64_t i0 = o0 * g.str[0] - g.pad[0] + f0 * g.dil[0];
                                    int64_t i1 = o1 * g.str[1] - g.pad[1] + f1 * g.dil[1];
                                    const float *xr = xc + (i0 * g.in[1] + i1) * g.in[2] +
                                                      f2 * g.dil[2] - g.pad[2];
                                    const float *yr = yk + (o0 * g.out[1] + o1) * g.out[2];
                                    for (int64_t o2 = l2; o2 < h2; o2++)
                                        acc += yr[o2] * xr[o2 * g.str[2]];
                                }
                        }
                        dw[(k * g.cg + c) * flt_sz +
                           (tap(g, 0, f0) * g.flt[1] + tap(g, 1, f1)) * g.flt[2] + tap(g, 2, f2)] =
                            acc;
                    }
        }
}

} // namespace dnn
} // namespace xpbsi
