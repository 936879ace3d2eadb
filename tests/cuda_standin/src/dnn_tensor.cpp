// Finalization of the descriptors that describe data and parameters (cuDNN 9 API Reference,
// Backend Descriptor Types: CUDNN_BACKEND_TENSOR_DESCRIPTOR, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR,
// CUDNN_BACKEND_POINTWISE_DESCRIPTOR, each with its "Finalization" rules).
#include <algorithm>
#include <cfloat>
#include <numeric>

#include "dnn_internal.hpp"

namespace xpbsi
{
namespace dnn
{

int64_t tensor_info::span() const
{
    int64_t s = 1;
    for (size_t i = 0; i < dims.size(); i++)
        s += (dims[i] - 1) * strides[i];
    return s;
}

bool tensor_info::same_as(const tensor_info &o) const
{
    return uid == o.uid && dtype == o.dtype && dims == o.dims && strides == o.strides &&
           is_virtual == o.is_virtual && align == o.align;
}

// CUDNN_BACKEND_TENSOR_DESCRIPTOR. Finalization fails with CUDNN_STATUS_BAD_PARAM when the
// number of dimensions and of strides differ, a dimension or stride is not positive, or the byte
// alignment is not a power of two; the stand-in also refuses strides that make two elements
// share an address (inconsistent dimensions and strides). Vectorized, by-value and reordered
// tensors are not modelled (CUDNN_STATUS_NOT_SUPPORTED).
cudnnStatus_t finalize_tensor(const attr_map &a, std::shared_ptr<const void> &out)
{
    auto t = std::make_shared<tensor_info>();
    t->dtype = (cudnnDataType_t)attr_int(a, CUDNN_ATTR_TENSOR_DATA_TYPE, 0);
    t->type = elem_of(t->dtype);
    t->dims = attr(a, CUDNN_ATTR_TENSOR_DIMENSIONS)->ints;
    t->strides = attr(a, CUDNN_ATTR_TENSOR_STRIDES)->ints;
    t->uid = attr_int(a, CUDNN_ATTR_TENSOR_UNIQUE_ID, 0);
    t->align = attr_int(a, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, 0);
    t->is_virtual = attr_int(a, CUDNN_ATTR_TENSOR_IS_VIRTUAL, 0) != 0;
    if (t->type == elem::none)
        return fail(CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE,
                    "tensor %ld: data type %d is not modelled by the stand-in", (long)t->uid,
                    (int)t->dtype);
    if (t->dims.size() != t->strides.size())
        return fail(CUDNN_STATUS_BAD_PARAM, "tensor %ld: %zu dimensions but %zu strides",
                    (long)t->uid, t->dims.size(), t->strides.size());
    for (size_t i = 0; i < t->dims.size(); i++)
        if (t->dims[i] <= 0 || t->strides[i] <= 0)
            return fail(CUDNN_STATUS_BAD_PARAM,
                        "tensor %ld: dimension %zu is %ld with stride %ld (both must be positive)",
                        (long)t->uid, i, (long)t->dims[i], (long)t->strides[i]);
    if (t->align <= 0 || (t->align & (t->align - 1)) != 0)
        return fail(CUDNN_STATUS_BAD_PARAM, "tensor %ld: byte alignment %ld is not a power of 2",
                    (long)t->uid, (long)t->align);
    if (attr_int(a, CUDNN_ATTR_TENSOR_VECTOR_COUNT, 1) != 1 ||
        attr_int(a, CUDNN_ATTR_TENSOR_IS_BY_VALUE, 0) != 0 ||
        attr_int(a, CUDNN_ATTR_TENSOR_REORDERING_MODE, CUDNN_TENSOR_REORDERING_NONE) !=
            CUDNN_TENSOR_REORDERING_NONE)
        return fail(CUDNN_STATUS_NOT_SUPPORTED,
                    "tensor %ld: vectorized, by-value and reordered tensors are not modelled",
                    (long)t->uid);
    // No overlap: ordered by stride, each dimension (of more than one element) must start past
    // the end of the ones with smaller strides.
    std::vector<size_t> ord(t->dims.size());
    std::iota(ord.begin(), ord.end(), 0);
    std::sort(ord.begin(), ord.end(),
              [&](size_t x, size_t y) { return t->strides[x] < t->strides[y]; });
    int64_t covered = 1;
    for (size_t i : ord) {
        if (t->dims[i] == 1)
            continue;
        if (t->strides[i] < covered)
            return fail(CUDNN_STATUS_BAD_PARAM,
                        "tensor %ld: stride %ld of dimension %zu makes elements overlap "
                        "(the smaller dimensions span %ld elements)",
                        (long)t->uid, (long)t->strides[i], i, (long)covered);
        covered = t->strides[i] * t->dims[i];
    }
    out = t;
    return CUDNN_STATUS_SUCCESS;
}

// CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR: "CUDNN_STATUS_BAD_PARAM: the elemCount argument for
// setting pre-padding, post-padding, stride, or dilation is not equal to the value of
// CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS"; strides and dilations are positive, paddings not negative.
cudnnStatus_t finalize_conv_desc(const attr_map &a, std::shared_ptr<const void> &out)
{
    auto c = std::make_shared<conv_info>();
    c->comp = (cudnnDataType_t)attr_int(a, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, 0);
    c->mode = (cudnnConvolutionMode_t)attr_int(a, CUDNN_ATTR_CONVOLUTION_CONV_MODE, 0);
    int64_t nd = attr_int(a, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, 0);
    c->dil = attr(a, CUDNN_ATTR_CONVOLUTION_DILATIONS)->ints;
    c->str = attr(a, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES)->ints;
    c->pre = attr(a, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS)->ints;
    c->post = attr(a, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS)->ints;
    if (nd < 1 || nd > CUDNN_DIM_MAX - 2)
        return fail(CUDNN_STATUS_BAD_PARAM, "convolution: %ld spatial dimensions", (long)nd);
    if (nd > 3)
        return fail(CUDNN_STATUS_NOT_SUPPORTED, "convolution: more than 3 spatial dimensions are "
                                                "not modelled");
    c->spatial = (int)nd;
    const std::vector<int64_t> *arrays[] = {&c->dil, &c->str, &c->pre, &c->post};
    const char *names[] = {"dilations", "filter strides", "pre-paddings", "post-paddings"};
    for (int k = 0; k < 4; k++) {
        if ((int64_t)arrays[k]->size() != nd)
            return fail(CUDNN_STATUS_BAD_PARAM, "convolution: %zu %s for %ld spatial dimensions",
                        arrays[k]->size(), names[k], (long)nd);
        for (int64_t v : *arrays[k])
            if (k < 2 ? v < 1 : v < 0)
                return fail(CUDNN_STATUS_BAD_PARAM, "convolution: %s %ld", names[k], (long)v);
    }
    out = c;
    return CUDNN_STATUS_SUCCESS;
}

// CUDNN_BACKEND_POINTWISE_DESCRIPTOR, with the documented defaults: lower clip 0, upper clip the
// largest value of the math precision, lower clip slope 0, ELU alpha 1, softplus beta 1, swish
// beta 1.
cudnnStatus_t finalize_pointwise_desc(const attr_map &a, std::shared_ptr<const void> &out)
{
    auto p = std::make_shared<pw_info>();
    p->mode = (cudnnPointwiseMode_t)attr_int(a, CUDNN_ATTR_POINTWISE_MODE, 0);
    p->prec = (cudnnDataType_t)attr_int(a, CUDNN_ATTR_POINTWISE_MATH_PREC, 0);
    p->lower_clip = attr_real(a, CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP, 0.0);
    p->upper_clip = attr_real(a, CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP, FLT_MAX);
    p->slope = attr_real(a, CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE, 0.0);
    p->elu_alpha = attr_real(a, CUDNN_ATTR_POINTWISE_ELU_ALPHA, 1.0);
    p->softplus_beta = attr_real(a, CUDNN_ATTR_POINTWISE_SOFTPLUS_BETA, 1.0);
    p->swish_beta = attr_real(a, CUDNN_ATTR_POINTWISE_SWISH_BETA, 1.0);
    if (p->lower_clip > p->upper_clip)
        return fail(CUDNN_STATUS_BAD_PARAM, "pointwise: lower clip %g above upper clip %g",
                    p->lower_clip, p->upper_clip);
    out = p;
    return CUDNN_STATUS_SUCCESS;
}

} // namespace dnn
} // namespace xpbsi
