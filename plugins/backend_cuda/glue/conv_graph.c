/* A convolution step as a cuDNN operation graph (cudnn_graph.h, the backend descriptors; the
 * legacy convolution API is deprecated in cuDNN 9 and not used): one convolution operation
 * (forward, backward-data or backward-filter, by the step's mode) and, for a forward
 * convolution or a transposed one with a fused epilogue, the pointwise operations after it
 * (+ bias, + residual, activation) on virtual fp32 intermediates, so that one kernel writes the
 * final tensor. Every descriptor is finalized here and owned by the step (cux_conv_run.descs),
 * and every attribute a descriptor type requires is set (the cuDNN 9 Backend Descriptor Types
 * reference): tensors with type, dims, strides, unique id and alignment; the convolution with
 * compute type, mode, spatial dims, dilations, strides and both paddings; operations with their
 * operands, descriptor, alpha and beta; the graph with its operations and the handle
 * (CUDNN_ATTR_OPERATIONGRAPH_HANDLE, deprecated in 9.x in favour of device-property descriptors
 * but accepted by every 9.x release, and what cudnn-frontend's graph path still sets). A status
 * cuDNN gives while these are built is our error, never "unsupported": the descriptors are ours
 * (glue/status.c maps BAD_PARAM to XPB_INTERNAL). */
#include <stdbool.h>
#include <string.h>

#include "glue/arena.h"
#include "glue/conv_graph.h"
#include "kernels/fault.h"
#include "glue/status.h"

enum { UID_X = 1, UID_W = 2, UID_Y = 3, UID_B = 4, UID_R = 5, UID_VIRTUAL = 100 };

/* The cuDNN roles of a step's operands. */
typedef struct roles {
    int mode;
    const cux_view *x, *w, *y; /* FWD: x, w -> y; BWD_DATA: dy, w -> dx; BWD_FILTER: x, dy -> dw */
} roles;

static cudnnDataType_t data_type(int type)
{
    switch (type) {
    case CUX_F16:
        return CUDNN_DATA_HALF;
    case CUX_BF16:
        return CUDNN_DATA_BFLOAT16;
    case CUX_I32:
        return CUDNN_DATA_INT32;
    default:
        return CUDNN_DATA_FLOAT;
    }
}

/* Strides of a 4-D view in its layout. */
static void strides_of(const int64_t d[4], int layout, int64_t s[4])
{
    if (layout == CUX_NHWC) {
        s[1] = 1;
        s[3] = d[1];
        s[2] = d[3] * d[1];
        s[0] = d[2] * d[3] * d[1];
    } else {
        s[3] = 1;
        s[2] = d[3];
        s[1] = d[2] * d[3];
        s[0] = d[1] * d[2] * d[3];
    }
}

xpb_status cux_conv_make(struct cux_conv_builder *b, cudnnBackendDescriptorType_t type,
                         cudnnBackendDescriptor_t *out)
{
    if (b->c->n_descs == CUX_CONV_MAX_DESCS)
        return cux_error_msg(b->exe->err, XPB_INTERNAL, "conv: too many cuDNN descriptors");
    CUX_CUDNN(b->exe, b->op, cudnnBackendCreateDescriptor(type, out),
              "cudnnBackendCreateDescriptor");
    b->c->descs[b->c->n_descs++] = *out;
    return XPB_OK;
}

#define SET(b, d, attr, type, n, ptr, what)                                                        \
    CUX_CUDNN((b)->exe, (b)->op, cudnnBackendSetAttribute((d), (attr), (type), (n), (ptr)), (what))
#define FIN(b, d, what) CUX_CUDNN((b)->exe, (b)->op, cudnnBackendFinalize(d), (what))

static xpb_status tensor(struct cux_conv_builder *b, int64_t uid, int type, const int64_t dims[4],
                         int layout, bool is_virtual, cudnnBackendDescriptor_t *out)
{
    XPB_TRY(cux_conv_make(b, CUDNN_BACKEND_TENSOR_DESCRIPTOR, out));
    cudnnDataType_t dt = data_type(type);
    int64_t s[4], align = 16;
    strides_of(dims, layout, s);
    SET(b, *out, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt, "tensor data type");
    SET(b, *out, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims, "tensor dimensions");
    SET(b, *out, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, s, "tensor strides");
    SET(b, *out, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid, "tensor id");
    SET(b, *out, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align, "tensor alignment");
    if (is_virtual)
        SET(b, *out, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual,
            "tensor virtual");
    FIN(b, *out, "tensor descriptor");
    return XPB_OK;
}

static xpb_status conv_desc(struct cux_conv_builder *b, const xpb_op_attrs *a,
                            cudnnBackendDescriptor_t *out)
{
    XPB_TRY(cux_conv_make(b, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, out));
    cudnnDataType_t comp = CUDNN_DATA_FLOAT; /* fp32 accumulation under every policy */
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    int64_t dims = 2, dil[2] = {a->dilation[0], a->dilation[1]};
    int64_t str[2] = {a->stride[0], a->stride[1]}, pad[2] = {a->pad[0], a->pad[1]};
#if defined(XPB_CUDA_STANDIN)
    if (cux_fault("conv_stride")) /* the vertical stride one more than the op's */
        str[0]++;
#endif
    SET(b, *out, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp, "conv type");
    SET(b, *out, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode,
        "conv mode");
    SET(b, *out, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &dims, "conv dims");
    SET(b, *out, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dil, "conv dilations");
    SET(b, *out, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, str, "conv strides");
    SET(b, *out, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad, "conv padding");
    SET(b, *out, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad, "conv padding");
    FIN(b, *out, "convolution descriptor");
    return XPB_OK;
}

/* The convolution operation of `mode` on tensors (a, w, y) as roles() orders them. */
static xpb_status conv_op(struct cux_conv_builder *b, int mode, cudnnBackendDescriptor_t a,
                          cudnnBackendDescriptor_t w, cudnnBackendDescriptor_t y,
                          cudnnBackendDescriptor_t cd, cudnnBackendDescriptor_t *out)
{
    float alpha = 1.0f, beta = 0.0f;
    cudnnBackendDescriptorType_t type;
    cudnnBackendAttributeName_t A, W, Y, D, AL, BE;
    if (mode == CUX_CONV_FWD) {
        type = CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR;
        A = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X;
        W = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W;
        Y = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y;
        D = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC;
        AL = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA;
        BE = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA;
    } else if (mode == CUX_CONV_BWD_DATA) {
        type = CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR;
        A = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY;
        W = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W;
        Y = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX;
        D = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC;
        AL = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA;
        BE = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA;
    } else {
        type = CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR;
        A = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X;
        W = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY;
        Y = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW;
        D = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC;
        AL = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA;
        BE = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA;
    }
    XPB_TRY(cux_conv_make(b, type, out));
    SET(b, *out, A, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &a, "conv operand");
    SET(b, *out, W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w, "conv operand");
    SET(b, *out, Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y, "conv operand");
    SET(b, *out, D, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cd, "conv descriptor");
    SET(b, *out, AL, CUDNN_TYPE_FLOAT, 1, &alpha, "conv alpha");
    SET(b, *out, BE, CUDNN_TYPE_FLOAT, 1, &beta, "conv beta");
    FIN(b, *out, "convolution operation");
    return XPB_OK;
}

/* A pointwise operation y = mode(x[, bias]); `slope` is LeakyReLU's (RELU_FWD only). */
static xpb_status pointwise(struct cux_conv_builder *b, cudnnPointwiseMode_t mode, double slope,
                            cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t bias,
                            cudnnBackendDescriptor_t y, cudnnBackendDescriptor_t *out)
{
    cudnnBackendDescriptor_t pw;
    cudnnDataType_t prec = CUDNN_DATA_FLOAT;
    XPB_TRY(cux_conv_make(b, CUDNN_BACKEND_POINTWISE_DESCRIPTOR, &pw));
    SET(b, pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode, "pointwise mode");
    SET(b, pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec, "pointwise type");
    if (mode == CUDNN_POINTWISE_RELU_FWD && slope != 0.0)
        SET(b, pw, CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE, CUDNN_TYPE_DOUBLE, 1, &slope,
            "leaky relu slope");
    FIN(b, pw, "pointwise descriptor");
    XPB_TRY(cux_conv_make(b, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, out));
    SET(b, *out, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
        &pw, "pointwise");
    SET(b, *out, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x,
        "pointwise x");
    if (bias)
        SET(b, *out, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &bias,
            "pointwise b");
    SET(b, *out, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y,
        "pointwise y");
    FIN(b, *out, "pointwise operation");
    return XPB_OK;
}

static void roles_of(const xpb_executable *exe, const cux_step *s, roles *r)
{
    const xpb_op *op = xpb_program_op(exe->prog, s->op);
    r->mode = s->conv;
    r->x = &s->in[0];
    r->w = &s->in[1];
    r->y = &s->out[0];
    if (op->kind == XPB_OP_CONV2D_BWD_WEIGHTS) { /* in = (dy, x): cuDNN wants (x, dy) */
        r->x = &s->in[1];
        r->w = &s->in[0];
    }
}

/* Builds the operation graph of step `s` into b->c (fused: with its epilogue). */
xpb_status cux_conv_graph(struct cux_conv_builder *b, const cux_step *s, int fused,
                          cudnnBackendDescriptor_t *graph)
{
    xpb_executable *exe = b->exe;
    const xpb_op *op = xpb_program_op(exe->prog, s->op);
    roles r;
    roles_of(exe, s, &r);
    int epi =
        fused && (s->bias.buf != CUX_NONE || s->resid.buf != CUX_NONE || s->act != CUX_ACT_NONE);
    cudnnBackendDescriptor_t tx, tw, ty, cd, ops[4], cur;
    int n_ops = 0;
    int64_t uid = UID_VIRTUAL;
    XPB_TRY(tensor(b, UID_X, r.x->type, r.x->dims, r.x->layout, false, &tx));
    XPB_TRY(tensor(b, UID_W, r.w->type, r.w->dims, r.w->layout, false, &tw));
    XPB_TRY(tensor(b, UID_Y, r.y->type, r.y->dims, r.y->layout, false, &ty));
    XPB_TRY(conv_desc(b, &op->attrs, &cd));
    if (!epi) {
        XPB_TRY(conv_op(b, r.mode, tx, tw, ty, cd, &ops[n_ops++]));
    } else {
        /* conv -> (+ bias) -> (+ residual) -> (activation) -> y, intermediates virtual fp32 */
        int steps =
            (s->bias.buf != CUX_NONE) + (s->resid.buf != CUX_NONE) + (s->act != CUX_ACT_NONE);
        cudnnBackendDescriptor_t v;
        XPB_TRY(tensor(b, uid++, CUX_F32, r.y->dims, r.y->layout, true, &v));
        XPB_TRY(conv_op(b, r.mode, tx, tw, v, cd, &ops[n_ops++]));
        cur = v;
        if (s->bias.buf != CUX_NONE) {
            int64_t bd[4] = {1, r.y->dims[1], 1, 1};
            cudnnBackendDescriptor_t tb, next = ty;
            XPB_TRY(tensor(b, UID_B, s->bias.type, bd, r.y->layout, false, &tb));
            if (--steps)
                XPB_TRY(tensor(b, uid++, CUX_F32, r.y->dims, r.y->layout, true, &next));
            XPB_TRY(pointwise(b, CUDNN_POINTWISE_ADD, 0.0, cur, tb, next, &ops[n_ops++]));
            cur = next;
        }
        if (s->resid.buf != CUX_NONE) {
            cudnnBackendDescriptor_t tr, next = ty;
            XPB_TRY(tensor(b, UID_R, s->resid.type, s->resid.dims, s->resid.layout, false, &tr));
            if (--steps)
                XPB_TRY(tensor(b, uid++, CUX_F32, r.y->dims, r.y->layout, true, &next));
            XPB_TRY(pointwise(b, CUDNN_POINTWISE_ADD, 0.0, cur, tr, next, &ops[n_ops++]));
            cur = next;
        }
        if (s->act != CUX_ACT_NONE) {
            cudnnPointwiseMode_t m =
                s->act == CUX_ACT_TANH ? CUDNN_POINTWISE_TANH_FWD : CUDNN_POINTWISE_RELU_FWD;
            double slope = s->act == CUX_ACT_LEAKY ? (double)s->act_alpha : 0.0;
            XPB_TRY(pointwise(b, m, slope, cur, NULL, ty, &ops[n_ops++]));
        }
    }
    XPB_TRY(cux_conv_make(b, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, graph));
    SET(b, *graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, n_ops, ops,
        "graph operations");
    SET(b, *graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &exe->be->cudnn,
        "graph handle");
    FIN(b, *graph, "operation graph");
    /* the variant pack's ids and pointers */
    cux_conv_run *c = b->c;
    c->n_uids = 0;
    const cux_view *vs[5] = {r.x, r.w, r.y, epi ? &s->bias : NULL, epi ? &s->resid : NULL};
    const int64_t ids[5] = {UID_X, UID_W, UID_Y, UID_B, UID_R};
#if defined(XPB_CUDA_STANDIN)
    if (cux_fault("conv_operand_swap")) { /* x and y (backward data: dy and dx) swapped */
        vs[0] = r.y;
        vs[2] = r.x;
    }
#endif
    for (int k = 0; k < 5; k++)
        if (vs[k] && vs[k]->buf != CUX_NONE) {
            c->uids[c->n_uids] = ids[k];
            c->ptrs[c->n_uids++] = cux_ptr(exe, vs[k]->buf);
        }
    c->fused = epi;
    return XPB_OK;
}

void cux_conv_key(const xpb_executable *exe, const cux_step *s, int fused, struct cux_conv_key *k)
{
    memset(k, 0, sizeof *k);
    roles r;
    roles_of(exe, s, &r);
    const xpb_op *op = xpb_program_op(exe->prog, s->op);
    const cux_view *v[3] = {r.x, r.w, r.y};
    k->mode = r.mode;
    k->fused = fused;
    k->precision = (int32_t)exe->plan->opt.precision;
    k->act = s->act;
    k->alpha = s->act_alpha;
    k->has_bias = s->bias.buf != CUX_NONE;
    k->has_resid = s->resid.buf != CUX_NONE;
    for (int i = 0; i < 3; i++) {
        k->types[i] = v[i]->type;
        k->layouts[i] = v[i]->layout;
        memcpy(k->dims[i], v[i]->dims, sizeof k->dims[i]);
    }
    k->attrs[0] = op->attrs.stride[0];
    k->attrs[1] = op->attrs.stride[1];
    k->attrs[2] = op->attrs.pad[0];
    k->attrs[3] = op->attrs.pad[1];
    k->attrs[4] = op->attrs.dilation[0];
    k->attrs[5] = op->attrs.dilation[1];
}
