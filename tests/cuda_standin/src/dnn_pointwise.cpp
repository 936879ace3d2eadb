// Pointwise operations (cuDNN 9 API Reference: CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR,
// "Y = op(alpha1 * X)" or "Y = op(alpha1 * X, alpha2 * B)" with B (or X) broadcast along its
// dimensions of size 1, and the backward modes "dX = op(dY, X)" with X the forward input;
// cudnnPointwiseMode_t; CUDNN_BACKEND_POINTWISE_DESCRIPTOR: "CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP
// ... if (value < lower_clip) value = lower_clip + lower_clip_slope * (value - lower_clip)" and
// "CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP ... if (value > upper_clip) value = upper_clip"), computed
// in fp32 (CUDNN_ATTR_POINTWISE_MATH_PREC = CUDNN_DATA_FLOAT) and stored in Y's type.
#include <cmath>

#include "dnn_internal.hpp"

namespace xpbsi
{
namespace dnn
{

namespace
{

constexpr float k_sqrt1_2 = 0.70710678118654752f;
constexpr float k_sqrt2_pi = 0.79788456080286536f;

float sigmoid(float x)
{
    return 1.0f / (1.0f + std::exp(-x));
}

float relu(const pw_info &p, float x)
{
    float lo = (float)p.lower_clip, hi = (float)p.upper_clip;
    if (x < lo)
        return lo + (float)p.slope * (x - lo);
    return x > hi ? hi : x;
}

float relu_grad(const pw_info &p, float x)
{
    if (x < (float)p.lower_clip || x == (float)p.lower_clip)
        return (float)p.slope;
    return x > (float)p.upper_clip ? 0.0f : 1.0f;
}

float forward(const pw_info &p, float x, float b)
{
    switch (p.mode) {
    case CUDNN_POINTWISE_ADD:
        return x + b;
    case CUDNN_POINTWISE_SUB:
        return x - b;
    case CUDNN_POINTWISE_MUL:
        return x * b;
    case CUDNN_POINTWISE_DIV:
        return x / b;
    case CUDNN_POINTWISE_MAX:
        return std::fmax(x, b);
    case CUDNN_POINTWISE_MIN:
        return std::fmin(x, b);
    case CUDNN_POINTWISE_ADD_SQUARE:
        return x + b * b;
    case CUDNN_POINTWISE_IDENTITY:
        return x;
    case CUDNN_POINTWISE_NEG:
        return -x;
    case CUDNN_POINTWISE_ABS:
        return std::fabs(x);
    case CUDNN_POINTWISE_EXP:
        return std::exp(x);
    case CUDNN_POINTWISE_LOG:
        return std::log(x);
    case CUDNN_POINTWISE_SQRT:
        return std::sqrt(x);
    case CUDNN_POINTWISE_RSQRT:
        return 1.0f / std::sqrt(x);
    case CUDNN_POINTWISE_RECIPROCAL:
        return 1.0f / x;
    case CUDNN_POINTWISE_RELU_FWD:
        return relu(p, x);
    case CUDNN_POINTWISE_TANH_FWD:
        return std::tanh(x);
    case CUDNN_POINTWISE_SIGMOID_FWD:
        return sigmoid(x);
    case CUDNN_POINTWISE_ELU_FWD:
        return x > 0.0f ? x : (float)p.elu_alpha * (std::exp(x) - 1.0f);
    case CUDNN_POINTWISE_GELU_FWD:
        return 0.5f * x * (1.0f + std::erf(x * k_sqrt1_2));
    case CUDNN_POINTWISE_GELU_APPROX_TANH_FWD:
        return 0.5f * x * (1.0f + std::tanh(k_sqrt2_pi * (x + 0.044715f * x * x * x)));
    default:
        return NAN;
    }
}

// The derivative of the forward mode at the forward input x, times dy.
float backward(const pw_info &p, float x, float dy)
{
    switch (p.mode) {
    case CUDNN_POINTWISE_RELU_BWD:
        return dy * relu_grad(p, x);
    case CUDNN_POINTWISE_TANH_BWD: {
        float t = std::tanh(x);
        return dy * (1.0f - t * t);
    }
    case CUDNN_POINTWISE_SIGMOID_BWD: {
        float s = sigmoid(x);
        return dy * s * (1.0f - s);
    }
    case CUDNN_POINTWISE_ELU_BWD:
        return x > 0.0f ? dy : dy * (float)p.elu_alpha * std::exp(x);
    case CUDNN_POINTWISE_GELU_BWD: {
        float cdf = 0.5f * (1.0f + std::erf(x * k_sqrt1_2));
        float pdf = 0.39894228040143268f * std::exp(-0.5f * x * x);
        return dy * (cdf + x * pdf);
    }
    default:
        return NAN;
    }
}

} // namespace

void run_pointwise(const op_info &op, const std::vector<const void *> &in, void *y)
{
    const tensor_info &out = *op.out;
    size_t nd = out.dims.size();
    int64_t total = 1;
    for (int64_t d : out.dims)
        total *= d;
    bool bwd = op.pw.mode >= 200 && op.pw.mode < 300;
    std::vector<int64_t> idx(nd, 0);
    for (int64_t i = 0; i < total; i++) {
        float v[3] = {0.0f, 0.0f, 0.0f};
        for (size_t k = 0; k < op.in.size() && k < 3; k++) {
            const tensor_info &t = *op.in[k];
            int64_t off = 0;
            for (size_t d = 0; d < nd; d++)
                off += (t.dims[d] == 1 ? 0 : idx[d]) * t.strides[d];
            v[k] = load(t.type, in[k], off);
        }
        float a = (float)op.alpha * v[0], b = (float)op.beta * v[1];
        float r = bwd ? backward(op.pw, a, b) : forward(op.pw, a, b);
        int64_t off = 0;
        for (size_t d = 0; d < nd; d++)
            off += idx[d] * out.strides[d];
        store(out.type, y, off, r);
        for (size_t d = nd; d-- > 0;) {
            if (++idx[d] < out.dims[d])
                break;
            idx[d] = 0;
        }
    }
}

} // namespace dnn
} // namespace xpbsi
