// Finalization of operation descriptors (cuDNN 9 API Reference, Backend Descriptor Types:
// CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, ..._BACKWARD_DATA_DESCRIPTOR,
// ..._BACKWARD_FILTER_DESCRIPTOR, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR).
//
// Convolutions: "the tensor dimensions of the tensor X, W, and Y are bound based on the same
// interpretations as the X, W, and Y tensor arguments of the cudnnConvolutionForward() function";
// finalization fails with CUDNN_STATUS_BAD_PARAM when "the X, W, and Y tensors do not constitute
// a valid convolution operation under the attributes of the convolution descriptor": each has
// spatial dims + 2 dimensions, N and K agree, C is a multiple of W's C (the group count), and each
// output size is 1 + (input + pre + post - ((filter - 1) * dilation + 1)) / stride, the rule of
// cudnnGetConvolutionNdForwardOutputDim. Backward data binds X to dX and Y to dY; backward filter
// binds W to dW and Y to dY.
//
// Pointwise: Y = op(alpha1 * X) for one input, Y = op(alpha1 * X, alpha2 * B) for two ("for
// dual-input pointwise operations, broadcasting is assumed when a tensor dimension in one of the
// tensors is 1 while the other tensor's corresponding dimension is not 1"), dX = op(dY, X) for
// the backward modes, and Y = op(X, B, T) for the ternary one, without broadcasting.
#include "dnn_internal.hpp"

namespace xpbsi
{
namespace dnn
{

namespace
{

enum class pw_arity { unary, binary, backward, ternary };

pw_arity arity_of(cudnnPointwiseMode_t m)
{
    if (m >= 200 && m < 300)
        return pw_arity::backward;
    if (m == CUDNN_POINTWISE_BINARY_SELECT)
        return pw_arity::ternary;
    switch (m) {
    case CUDNN_POINTWISE_ADD:
    case CUDNN_POINTWISE_ADD_SQUARE:
    case CUDNN_POINTWISE_DIV:
    case CUDNN_POINTWISE_MAX:
    case CUDNN_POINTWISE_MIN:
    case CUDNN_POINTWISE_MOD:
    case CUDNN_POINTWISE_MUL:
    case CUDNN_POINTWISE_POW:
    case CUDNN_POINTWISE_SUB:
    case CUDNN_POINTWISE_ATAN2:
    case CUDNN_POINTWISE_LOGICAL_AND:
    case CUDNN_POINTWISE_LOGICAL_OR:
        return pw_arity::binary;
    default:
        return m >= 300 && m < 400 ? pw_arity::binary : pw_arity::unary;
    }
}

tensor_ptr tensor_attr(const attr_map &a, int name)
{
    node_ptr n = attr_desc(a, name);
    return n ? n->get<tensor_info>() : nullptr;
}

std::string dims_text(const std::vector<int64_t> &d)
{
    std::string s = "[";
    for (size_t i = 0; i < d.size(); i++)
        s += (i ? "," : "") + std::to_string(d[i]);
    return s + "]";
}

cudnnStatus_t finalize_conv_op(cudnnBackendDescriptorType_t t, const attr_map &a,
                               std::shared_ptr<op_info> &op)
{
    int base, roles[3]; // the attributes of operands X/dY, W/dY and the result
    const char *what;
    if (t == CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR) {
        op->kind = op_kind::conv_fwd;
        base = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA;
        roles[0] = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X;
        roles[1] = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W;
        roles[2] = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y;
        what = "convolution forward";
    } else if (t == CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR) {
        op->kind = op_kind::conv_bwd_data;
        base = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA;
        roles[0] = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY;
        roles[1] = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W;
        roles[2] = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX;
        what = "convolution backward data";
    } else {
        op->kind = op_kind::conv_bwd_filter;
        base = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA;
        roles[0] = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X;
        roles[1] = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY;
        roles[2] = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW;
        what = "convolution backward filter";
    }
    op->alpha = attr_real(a, base, 1.0);
    op->beta = attr_real(a, base + 1, 0.0);
    op->conv = *attr_desc(a, base + 2)->get<conv_info>();
    op->in = {tensor_attr(a, roles[0]), tensor_attr(a, roles[1])};
    op->out = tensor_attr(a, roles[2]);
    // X, W, Y in the roles of cudnnConvolutionForward
    const tensor_info *x, *w, *y;
    if (op->kind == op_kind::conv_fwd) {
        x = op->in[0].get(), w = op->in[1].get(), y = op->out.get();
    } else if (op->kind == op_kind::conv_bwd_data) {
        x = op->out.get(), w = op->in[1].get(), y = op->in[0].get();
    } else {
        x = op->in[0].get(), w = op->out.get(), y = op->in[1].get();
    }
    size_t nd = (size_t)op->conv.spatial + 2;
    if (x->dims.size() != nd || w->dims.size() != nd || y->dims.size() != nd)
        return fail(CUDNN_STATUS_BAD_PARAM,
                    "%s: X %s, W %s, Y %s: each needs %zu dimensions (%d spatial)", what,
                    dims_text(x->dims).c_str(), dims_text(w->dims).c_str(),
                    dims_text(y->dims).c_str(), nd, op->conv.spatial);
    if (x->uid == w->uid || x->uid == y->uid || w->uid == y->uid)
        return fail(CUDNN_STATUS_BAD_PARAM, "%s: two operands have the same unique id", what);
    int64_t n = x->dims[0], c = x->dims[1], k = w->dims[0], cg = w->dims[1];
    bool bad = y->dims[0] != n || y->dims[1] != k || c % cg != 0 || k % (c / cg) != 0;
    std::string why =
        bad ? "N, C or K disagree (X [N,C,...], W [K,C/groups,...], Y [N,K,...])" : "";
    for (size_t i = 0; i < nd - 2 && !bad; i++) {
        int64_t span = (w->dims[2 + i] - 1) * op->conv.dil[i] + 1;
        int64_t num = x->dims[2 + i] + op->conv.pre[i] + op->conv.post[i] - span;
        int64_t want = num < 0 ? 0 : 1 + num / op->conv.str[i];
        if (y->dims[2 + i] != want) {
            bad = true;
            why = "spatial dimension " + std::to_string(i) + " of Y is " +
                  std::to_string(y->dims[2 + i]) + ", the convolution gives " +
                  std::to_string(want);
        }
    }
    if (bad)
        return fail(CUDNN_STATUS_BAD_PARAM,
                    "%s: X %s, W %s and Y %s do not constitute a valid convolution: %s", what,
                    dims_text(x->dims).c_str(), dims_text(w->dims).c_str(),
                    dims_text(y->dims).c_str(), why.c_str());
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t finalize_pointwise_op(const attr_map &a, std::shared_ptr<op_info> &op)
{
    op->kind = op_kind::pointwise;
    op->pw = *attr_desc(a, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR)->get<pw_info>();
    op->alpha = attr_real(a, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, 1.0);
    op->beta = attr_real(a, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, 1.0);
    tensor_ptr x = tensor_attr(a, CUDNN_ATTR_OPERATION_POINTWISE_XDESC);
    tensor_ptr b = tensor_attr(a, CUDNN_ATTR_OPERATION_POINTWISE_BDESC);
    tensor_ptr y = tensor_attr(a, CUDNN_ATTR_OPERATION_POINTWISE_YDESC);
    tensor_ptr dx = tensor_attr(a, CUDNN_ATTR_OPERATION_POINTWISE_DXDESC);
    tensor_ptr dy = tensor_attr(a, CUDNN_ATTR_OPERATION_POINTWISE_DYDESC);
    tensor_ptr tt = tensor_attr(a, CUDNN_ATTR_OPERATION_POINTWISE_TDESC);
    pw_arity ar = arity_of(op->pw.mode);
    bool ok;
    const char *need;
    switch (ar) {
    case pw_arity::unary:
        ok = y && !b && !dx && !dy && !tt;
        need = "X and Y (and no B, T, dX, dY)";
        op->in = {x};
        op->out = y;
        break;
    case pw_arity::binary:
        ok = y && b && !dx && !dy && !tt;
        need = "X, B and Y";
        op->in = {x, b};
        op->out = y;
        break;
    case pw_arity::backward:
        ok = dx && dy && !y && !b && !tt;
        need = "X, dY and dX";
        op->in = {x, dy};
        op->out = dx;
        break;
    default:
        ok = y && b && tt && !dx && !dy;
        need = "X, B, T and Y";
        op->in = {x, b, tt};
        op->out = y;
        break;
    }
    if (!ok)
        return fail(CUDNN_STATUS_BAD_PARAM, "pointwise mode %d takes %s", (int)op->pw.mode, need);
    const std::vector<int64_t> &od = op->out->dims;
    for (const tensor_ptr &in : op->in) {
        if (in->uid == op->out->uid)
            return fail(CUDNN_STATUS_BAD_PARAM,
                        "pointwise mode %d: the output has the unique id %ld of an input",
                        (int)op->pw.mode, (long)in->uid);
        bool fits = in->dims.size() == od.size();
        for (size_t i = 0; fits && i < od.size(); i++)
            fits = in->dims[i] == od[i] || (ar == pw_arity::binary && in->dims[i] == 1);
        if (!fits)
            return fail(CUDNN_STATUS_BAD_PARAM,
                        "pointwise mode %d: input %ld %s does not %s output %ld %s",
                        (int)op->pw.mode, (long)in->uid, dims_text(in->dims).c_str(),
                        ar == pw_arity::binary ? "broadcast to" : "match", (long)op->out->uid,
                        dims_text(od).c_str());
    }
    return CUDNN_STATUS_SUCCESS;
}

} // namespace

cudnnStatus_t finalize_operation(cudnnBackendDescriptorType_t t, const attr_map &a,
                                 std::shared_ptr<const void> &out)
{
    auto op = std::make_shared<op_info>();
    op->dtype = t;
    cudnnStatus_t s = t == CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR
                          ? finalize_pointwise_op(a, op)
                          : finalize_conv_op(t, a, op);
    if (s == CUDNN_STATUS_SUCCESS)
        out = op;
    return s;
}

} // namespace dnn
} // namespace xpbsi
