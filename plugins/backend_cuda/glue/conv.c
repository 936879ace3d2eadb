/* Convolutions on cuDNN's graph API (cudnn_graph.h, the backend descriptors; the legacy
 * convolution API is deprecated in cuDNN 9 and not used).
 *
 * A conv step becomes an operation graph: one convolution operation (forward, backward-data or
 * backward-filter, by the step's mode) and, for a forward convolution or a transposed one with
 * a fused epilogue, the pointwise operations after it (+ bias, + residual, activation) on
 * virtual fp32 intermediates, so that one kernel writes the final tensor. The engine heuristics
 * (mode A, then the fallback list) propose configurations; those whose numerical notes the
 * policy refuses are dropped (plan/engines.c: engines that down-convert their inputs or reduce
 * in a precision below fp32, and under fp32 the tensor-core (TF32) ones, because fp32 means
 * fp32). Execution plans get the handle (CUDNN_ATTR_EXECUTION_PLAN_HANDLE, accepted by every
 * cuDNN 9 release, deprecated in favour of device properties in later 9.x). Every configuration
 * that finalizes into an execution plan is timed on the real operands (one warm-up, then the best
 * of three), and the fastest is kept and remembered for the process (tune_cache.h), so a shape
 * is tuned once. When no engine takes the fused graph, the convolution alone is planned and
 * the epilogue runs as one own kernel right after it (k_elem.cu), which is exactly the same
 * maths.
 *
 * Every descriptor is created here, at compile, and kept until destroy: run() only calls
 * cudnnBackendExecute with a plan and a variant pack bound at compile. The operation graph is
 * given the handle (CUDNN_ATTR_OPERATIONGRAPH_HANDLE, which cudnn_graph.h 9.19 marks deprecated
 * in favour of device-property descriptors but which is what cudnn-frontend's graph path still
 * sets, so the best-exercised path). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glue/arena.h"
#include "glue/conv.h"
#include "glue/status.h"
#include "glue/tuning.h"
#include "plan/engines.h"
#include "plan/plan_error.h"
#include "plan/tune_cache.h"

/* plan/engines.h restates these so that it needs no cuDNN header. */
_Static_assert(CUX_NOTE_TENSOR_CORE == (int)CUDNN_NUMERICAL_NOTE_TENSOR_CORE, "tensor core");
_Static_assert(CUX_NOTE_DOWN_CONVERT_INPUTS == (int)CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS,
               "down convert inputs");
_Static_assert(CUX_NOTE_REDUCED_PRECISION_REDUCTION ==
                   (int)CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION,
               "reduced precision reduction");

#define CUX_MAX_CANDIDATES 8
#define CUX_TUNE_RUNS 3
#define CUX_TUNE_WS_MAX ((size_t)1 << 30) /* candidates needing more workspace are skipped */

enum { UID_X = 1, UID_W = 2, UID_Y = 3, UID_B = 4, UID_R = 5, UID_VIRTUAL = 100 };

typedef struct builder {
    xpb_executable *exe;
    cux_conv_run *c;
    uint32_t op;
} builder;

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

static xpb_status make(builder *b, cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t *out)
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

static xpb_status tensor(builder *b, int64_t uid, int type, const int64_t dims[4], int layout,
                         bool is_virtual, cudnnBackendDescriptor_t *out)
{
    XPB_TRY(make(b, CUDNN_BACKEND_TENSOR_DESCRIPTOR, out));
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

static xpb_status conv_desc(builder *b, const xpb_op_attrs *a, cudnnBackendDescriptor_t *out)
{
    XPB_TRY(make(b, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, out));
    cudnnDataType_t comp = CUDNN_DATA_FLOAT; /* fp32 accumulation under every policy */
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    int64_t dims = 2, dil[2] = {a->dilation[0], a->dilation[1]};
    int64_t str[2] = {a->stride[0], a->stride[1]}, pad[2] = {a->pad[0], a->pad[1]};
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
static xpb_status conv_op(builder *b, int mode, cudnnBackendDescriptor_t a,
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
    XPB_TRY(make(b, type, out));
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
static xpb_status pointwise(builder *b, cudnnPointwiseMode_t mode, double slope,
                            cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t bias,
                            cudnnBackendDescriptor_t y, cudnnBackendDescriptor_t *out)
{
    cudnnBackendDescriptor_t pw;
    cudnnDataType_t prec = CUDNN_DATA_FLOAT;
    XPB_TRY(make(b, CUDNN_BACKEND_POINTWISE_DESCRIPTOR, &pw));
    SET(b, pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode, "pointwise mode");
    SET(b, pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec, "pointwise type");
    if (mode == CUDNN_POINTWISE_RELU_FWD && slope != 0.0)
        SET(b, pw, CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE, CUDNN_TYPE_DOUBLE, 1, &slope,
            "leaky relu slope");
    FIN(b, pw, "pointwise descriptor");
    XPB_TRY(make(b, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, out));
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
static xpb_status build_graph(builder *b, const cux_step *s, int fused,
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
    XPB_TRY(make(b, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, graph));
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
    for (int k = 0; k < 5; k++)
        if (vs[k] && vs[k]->buf != CUX_NONE) {
            c->uids[c->n_uids] = ids[k];
            c->ptrs[c->n_uids++] = cux_ptr(exe, vs[k]->buf);
        }
    c->fused = epi;
    return XPB_OK;
}

/* True when `cfg`'s engine may run under the policy (plan/engines.c: no down-converted inputs,
 * no reduced-precision reductions, no tensor cores under fp32). *global gets the engine's
 * index. */
static int engine_allowed(xpb_executable *exe, cudnnBackendDescriptor_t cfg, int64_t *global)
{
    cudnnBackendDescriptor_t engine;
    if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine) !=
        CUDNN_STATUS_SUCCESS)
        return 0;
    int ok = 0;
    int64_t n = 0;
    cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
    if (cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                 &n, &engine) != CUDNN_STATUS_SUCCESS ||
        cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n,
                                 global) != CUDNN_STATUS_SUCCESS ||
        cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                                 CUDNN_TYPE_NUMERICAL_NOTE, CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &n,
                                 notes) != CUDNN_STATUS_SUCCESS)
        goto destroy_engine;
    int codes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
    for (int64_t i = 0; i < n && i < CUDNN_NUMERICAL_NOTE_TYPE_COUNT; i++)
        codes[i] = (int)notes[i];
    ok = !cux_engine_refusal(
        exe->plan->opt.precision, codes,
        (int)(n < CUDNN_NUMERICAL_NOTE_TYPE_COUNT ? n : CUDNN_NUMERICAL_NOTE_TYPE_COUNT));
destroy_engine:
    cudnnBackendDestroyDescriptor(engine);
    return ok;
}

/* The key of a graph for the tuning cache (padding zeroed by the caller). */
typedef struct conv_key {
    int32_t mode, fused, precision, act, has_bias, has_resid;
    float alpha;
    int32_t types[3], layouts[3];
    int64_t dims[3][4];
    int32_t attrs[6];
} conv_key;

typedef struct conv_choice {
    int32_t index; /* position among the allowed candidates */
    int32_t reserved;
    int64_t engine; /* its engine's global index, checked on reuse */
} conv_choice;

static void make_key(const xpb_executable *exe, const cux_step *s, int fused, conv_key *k)
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

/* Seconds of one execution of `plan` (best of CUX_TUNE_RUNS after a warm-up); < 0 when it
 * fails. */
static double time_plan(xpb_executable *exe, cudnnBackendDescriptor_t plan,
                        cudnnBackendDescriptor_t pack)
{
    cudaStream_t st = exe->be->stream;
    cudaEvent_t e0, e1;
    double best = -1.0;
    if (cudaEventCreate(&e0) != cudaSuccess)
        return -1.0;
    if (cudaEventCreate(&e1) != cudaSuccess)
        goto destroy_e0;
    if (cudnnBackendExecute(exe->be->cudnn, plan, pack) != CUDNN_STATUS_SUCCESS)
        goto destroy_e1;
    for (int i = 0; i < CUX_TUNE_RUNS; i++) {
        float ms = 0.0f;
        if (cudaEventRecord(e0, st) != cudaSuccess ||
            cudnnBackendExecute(exe->be->cudnn, plan, pack) != CUDNN_STATUS_SUCCESS ||
            cudaEventRecord(e1, st) != cudaSuccess || cudaEventSynchronize(e1) != cudaSuccess ||
            cudaEventElapsedTime(&ms, e0, e1) != cudaSuccess) {
            best = -1.0;
            break;
        }
        if (best < 0.0 || ms * 1e-3 < best)
            best = ms * 1e-3;
    }
destroy_e1:
    cux_released(cudaEventDestroy(e1), "tuning event");
destroy_e0:
    cux_released(cudaEventDestroy(e0), "tuning event");
    (void)cudaGetLastError(); /* a candidate that failed to run is just not chosen */
    return best;
}

/* A variant pack of c's operands with workspace `ws` (owned by the caller). */
static xpb_status make_pack(xpb_executable *exe, uint32_t op, const cux_conv_run *c, void *ws,
                            cudnnBackendDescriptor_t *out)
{
    CUX_CUDNN(exe, op, cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, out),
              "variant pack");
    void *ptrs[5];
    memcpy(ptrs, c->ptrs, sizeof ptrs);
    cudnnStatus_t s = cudnnBackendSetAttribute(*out, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
                                               CUDNN_TYPE_INT64, c->n_uids, c->uids);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnBackendSetAttribute(*out, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                     CUDNN_TYPE_VOID_PTR, c->n_uids, ptrs);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnBackendSetAttribute(*out, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR,
                                     1, &ws);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnBackendFinalize(*out);
    if (s != CUDNN_STATUS_SUCCESS) {
        cudnnBackendDestroyDescriptor(*out);
        *out = NULL;
        return cux_cudnn_error(exe->err, exe->prog, op, s, "variant pack");
    }
    return XPB_OK;
}

/* Asks the heuristics (mode A, then the fallback list) for configurations of `graph`, keeps
 * those the policy allows whose execution plan finalizes, and picks one: the cached choice, the
 * fastest when tuning, else the heuristics' first. On success c->plan is set and the chosen
 * configuration kept in c->descs; 0 candidates is XPB_UNSUPPORTED. */
static xpb_status choose_plan(builder *b, cudnnBackendDescriptor_t graph, const conv_key *key,
                              void **tune_ws, size_t *tune_bytes)
{
    xpb_executable *exe = b->exe;
    cux_conv_run *c = b->c;
    cudnnBackendDescriptor_t cfg[CUX_MAX_CANDIDATES], plans[CUX_MAX_CANDIDATES];
    int64_t engines[CUX_MAX_CANDIDATES], ws[CUX_MAX_CANDIDATES];
    int n = 0;
    static const cudnnBackendHeurMode_t modes[2] = {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK};
    xpb_status st = XPB_OK;
    for (int m = 0; m < 2 && n == 0; m++) {
        cudnnBackendDescriptor_t heur, got[CUX_MAX_CANDIDATES];
        int64_t count = 0;
        CUX_CUDNN(exe, b->op,
                  cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur),
                  "engine heuristics");
        cudnnStatus_t s = cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph);
        if (s == CUDNN_STATUS_SUCCESS)
            s = cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1,
                                         &modes[m]);
        if (s == CUDNN_STATUS_SUCCESS)
            s = cudnnBackendFinalize(heur);
        int made = 0;
        while (s == CUDNN_STATUS_SUCCESS && made < CUX_MAX_CANDIDATES &&
               cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &got[made]) ==
                   CUDNN_STATUS_SUCCESS)
            made++;
        if (s == CUDNN_STATUS_SUCCESS && made > 0)
            s = cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, made, &count, got);
        if (s != CUDNN_STATUS_SUCCESS)
            count = 0; /* this mode has nothing for the graph; try the next */
        for (int64_t i = 0; i < made; i++) {
            int64_t engine = -1, wsz = 0;
            cudnnBackendDescriptor_t plan = NULL;
            if (i >= count || !engine_allowed(exe, got[i], &engine) ||
                cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan) !=
                    CUDNN_STATUS_SUCCESS) {
                cudnnBackendDestroyDescriptor(got[i]);
                continue;
            }
            if (cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                         &got[i]) != CUDNN_STATUS_SUCCESS ||
                cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE,
                                         1, &exe->be->cudnn) != CUDNN_STATUS_SUCCESS ||
                cudnnBackendFinalize(plan) != CUDNN_STATUS_SUCCESS ||
                cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                         CUDNN_TYPE_INT64, 1, NULL, &wsz) != CUDNN_STATUS_SUCCESS ||
                (size_t)wsz > CUX_TUNE_WS_MAX) {
                cudnnBackendDestroyDescriptor(plan);
                cudnnBackendDestroyDescriptor(got[i]);
                continue;
            }
            cfg[n] = got[i];
            plans[n] = plan;
            engines[n] = engine;
            ws[n++] = wsz;
        }
        cudnnBackendDestroyDescriptor(heur);
    }
    if (n == 0)
        return cux_error_msg(exe->err, XPB_UNSUPPORTED,
                             "no cuDNN engine for this convolution%s under this precision policy",
                             key->fused ? " with its epilogue" : "");
    int pick = 0;
    conv_choice choice;
    int device = exe->be->device;
    if (cux_tune_find(CUX_TUNE_CONV, device, key, sizeof *key, &choice, sizeof choice) &&
        choice.index < n && engines[choice.index] == choice.engine) {
        pick = choice.index;
    } else if (n > 1 && cux_tuning_on()) {
        int64_t need = 0;
        for (int i = 0; i < n; i++)
            if (ws[i] > need)
                need = ws[i];
        cudnnBackendDescriptor_t pack = NULL;
        if ((st = cux_tune_scratch(exe, tune_ws, tune_bytes, (size_t)need)) != XPB_OK ||
            (st = make_pack(exe, b->op, c, *tune_ws, &pack)) != XPB_OK)
            goto destroy_candidates;
        double best = -1.0;
        for (int i = 0; i < n; i++) {
            double t = time_plan(exe, plans[i], pack);
            if (t >= 0.0 && (best < 0.0 || t < best)) {
                best = t;
                pick = i;
            }
        }
        cudnnBackendDestroyDescriptor(pack);
        memset(&choice, 0, sizeof choice);
        choice.index = pick;
        choice.engine = engines[pick];
        cux_tune_add(CUX_TUNE_CONV, device, key, sizeof *key, &choice, sizeof choice);
    }
    if (c->n_descs == CUX_CONV_MAX_DESCS) {
        st = cux_error_msg(exe->err, XPB_INTERNAL, "conv: too many cuDNN descriptors");
        goto destroy_candidates;
    }
    c->descs[c->n_descs++] = cfg[pick];
    c->plan = plans[pick];
    c->workspace = ws[pick];
    snprintf(c->engine, sizeof c->engine, "cuDNN engine %lld", (long long)engines[pick]);
    cfg[pick] = plans[pick] = NULL;
destroy_candidates:
    for (int i = 0; i < n; i++) {
        if (plans[i])
            cudnnBackendDestroyDescriptor(plans[i]);
        if (cfg[i])
            cudnnBackendDestroyDescriptor(cfg[i]);
    }
    return st;
}

void cux_conv_free(cux_conv_run *c)
{
    if (c->varpack)
        cux_released_dnn(cudnnBackendDestroyDescriptor(c->varpack), "variant pack");
    if (c->plan)
        cux_released_dnn(cudnnBackendDestroyDescriptor(c->plan), "execution plan");
    for (int i = c->n_descs - 1; i >= 0; i--)
        cux_released_dnn(cudnnBackendDestroyDescriptor(c->descs[i]), "cuDNN descriptor");
    memset(c, 0, sizeof *c);
}

xpb_status cux_conv_prepare(xpb_executable *exe, uint32_t g, void **tune_ws, size_t *tune_bytes)
{
    cux_run_step *rs = &exe->steps[g];
    const cux_step *s = rs->step;
    builder b = {exe, &rs->conv, s->op};
    int wants_epilogue =
        s->bias.buf != CUX_NONE || s->resid.buf != CUX_NONE || s->act != CUX_ACT_NONE;
    xpb_status st = XPB_UNSUPPORTED;
    /* First the graph with the epilogue; when cuDNN refuses it in any way, the convolution
     * alone and the epilogue kernel. */
    for (int fused = wants_epilogue; fused >= 0; fused--) {
        cudnnBackendDescriptor_t graph;
        conv_key key;
        st = build_graph(&b, s, fused, &graph);
        if (st == XPB_OK) {
            make_key(exe, s, fused, &key);
            st = choose_plan(&b, graph, &key, tune_ws, tune_bytes);
        }
        if (st == XPB_OK)
            break;
        cux_conv_free(&rs->conv);
        if (st == XPB_OUT_OF_MEMORY || st == XPB_DEVICE_ERROR)
            return st;
    }
    if (st != XPB_OK) {
        char label[256], msg[CUX_ERR_SIZE];
        cux_op_label(exe->prog, s->op, label, sizeof label);
        snprintf(msg, sizeof msg, "%s", exe->err);
        return cux_error_msg(exe->err, XPB_UNSUPPORTED, "%s: %s", label, msg);
    }
    rs->epilogue = wants_epilogue && !rs->conv.fused;
    rs->epilogue_bias = rs->epilogue;
    return XPB_OK;
}

xpb_status cux_conv_bind(xpb_executable *exe, cux_run_step *rs)
{
    return make_pack(exe, rs->step->op, &rs->conv, exe->workspace, &rs->conv.varpack);
}

xpb_status cux_conv_enqueue(xpb_executable *exe, cux_run_step *rs)
{
    CUX_CUDNN(exe, rs->step->op,
              cudnnBackendExecute(exe->be->cudnn, rs->conv.plan, rs->conv.varpack),
              "cudnnBackendExecute");
    return XPB_OK;
}
