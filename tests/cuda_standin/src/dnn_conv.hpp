// The convolutions' geometry and their fp32-accumulation loops (dnn_conv.cpp, dnn_conv_fp32.cpp).
#ifndef XPBSI_DNN_CONV_HPP
#define XPBSI_DNN_CONV_HPP

#include <cstdint>

namespace xpbsi
{
namespace dnn
{

// The shape of a convolution, its spatial part always 3-D (leading sizes 1). Dense row-major
// arrays: x [n, c, in...], w [k, cg, flt...], y [n, k, out...].
struct geom {
    int64_t n, c, k, cg, kg;
    int64_t in[3], flt[3], out[3], str[3], dil[3], pad[3];
    bool flip;
};

// y = conv(x, w); dx = conv_bwd_data(dy, w); dw = conv_bwd_filter(x, dy): every result is the
// fp32 sum of its products in the order (c or k or n, then the taps or the outputs) that the
// per-result loops of dnn_conv.cpp use, so both give the same bits.
void forward_fp32(const geom &g, const float *x, const float *w, float *y);
void backward_data_fp32(const geom &g, const float *dy, const float *w, float *dx);
void backward_filter_fp32(const geom &g, const float *x, const float *dy, float *dw);

} // namespace dnn
} // namespace xpbsi

#endif
