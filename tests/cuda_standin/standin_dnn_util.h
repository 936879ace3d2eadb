/* Helpers of the cuDNN stand-in's tests: descriptors built the way the cuDNN 9 backend API
 * documents (each one finalized), device buffers mirrored by host arrays laid out by a tensor's
 * strides, and a plan for a graph on a chosen engine. Header-only (static inline) for the test
 * executables; asserts through CMocka. */
#ifndef XPBSI_STANDIN_DNN_UTIL_H
#define XPBSI_STANDIN_DNN_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <cudnn.h>

#define DNN_OK(x) assert_int_equal((int)(x), (int)CUDNN_STATUS_SUCCESS)

typedef cudnnBackendDescriptor_t desc_t;

static inline desc_t make_desc(cudnnBackendDescriptorType_t t)
{
    desc_t d = NULL;
    DNN_OK(cudnnBackendCreateDescriptor(t, &d));
    return d;
}

static inline void set_attr(desc_t d, cudnnBackendAttributeName_t a, cudnnBackendAttributeType_t t,
                            int64_t n, const void *v)
{
    DNN_OK(cudnnBackendSetAttribute(d, a, t, n, v));
}

/* Row-major strides of dims (NCHW for a 4-D tensor). */
static inline void packed_strides(int nd, const int64_t *dims, int64_t *strides)
{
    int64_t s = 1;
    for (int i = nd - 1; i >= 0; i--) {
        strides[i] = s;
        s *= dims[i];
    }
}

/* Strides of a 4-D [N, C, H, W] tensor stored as N, H, W, C. */
static inline void nhwc_strides(const int64_t *d, int64_t *s)
{
    s[1] = 1;
    s[3] = d[1];
    s[2] = d[1] * d[3];
    s[0] = d[1] * d[3] * d[2];
}

/* An unfinalized tensor descriptor with every required attribute. */
static inline desc_t tensor_desc(int64_t uid, cudnnDataType_t dt, int nd, const int64_t *dims,
                                 const int64_t *strides, bool is_virtual)
{
    desc_t t = make_desc(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    int64_t align = 16;
    set_attr(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
    set_attr(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, nd, dims);
    set_attr(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, nd, strides);
    set_attr(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    set_attr(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
    if (is_virtual)
        set_attr(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual);
    return t;
}

static inline desc_t tensor(int64_t uid, cudnnDataType_t dt, int nd, const int64_t *dims,
                            const int64_t *strides, bool is_virtual)
{
    desc_t t = tensor_desc(uid, dt, nd, dims, strides, is_virtual);
    DNN_OK(cudnnBackendFinalize(t));
    return t;
}

struct conv_geom {
    int64_t pre[2], post[2], stride[2], dil[2];
    cudnnConvolutionMode_t mode;
};

static inline desc_t conv_desc(const struct conv_geom *g)
{
    desc_t c = make_desc(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    int64_t sp = 2;
    set_attr(c, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
    set_attr(c, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &g->mode);
    set_attr(c, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &sp);
    set_attr(c, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, g->dil);
    set_attr(c, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, g->stride);
    set_attr(c, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, g->pre);
    set_attr(c, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, g->post);
    DNN_OK(cudnnBackendFinalize(c));
    return c;
}

/* A convolution operation of `kind` (forward, backward data, backward filter) on operands a, w
 * and result y in the roles of that kind (forward: X, W, Y; backward data: dY, W, dX; backward
 * filter: X, dY, dW), not finalized. */
static inline desc_t conv_op_desc(cudnnBackendDescriptorType_t kind, desc_t a, desc_t w, desc_t y,
                                  desc_t conv, float alpha, float beta)
{
    cudnnBackendAttributeName_t base, ra, rw, ry;
    if (kind == CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR) {
        base = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA;
        ra = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X;
        rw = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W;
        ry = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y;
    } else if (kind == CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR) {
        base = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA;
        ra = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY;
        rw = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W;
        ry = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX;
    } else {
        base = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA;
        ra = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X;
        rw = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY;
        ry = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW;
    }
    desc_t op = make_desc(kind);
    set_attr(op, base, CUDNN_TYPE_FLOAT, 1, &alpha);
    set_attr(op, (cudnnBackendAttributeName_t)(base + 1), CUDNN_TYPE_FLOAT, 1, &beta);
    set_attr(op, (cudnnBackendAttributeName_t)(base + 2), CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv);
    set_attr(op, ra, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &a);
    set_attr(op, rw, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w);
    set_attr(op, ry, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
    return op;
}

/* A pointwise operation: y = mode(x, b) (b NULL for one input); for the backward modes x is the
 * forward input, b is dY and y is dX. slope: ReLU's lower clip slope. */
static inline desc_t pointwise_op(cudnnPointwiseMode_t mode, desc_t x, desc_t b, desc_t y,
                                  double slope)
{
    desc_t pw = make_desc(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    cudnnDataType_t prec = CUDNN_DATA_FLOAT;
    set_attr(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
    set_attr(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec);
    set_attr(pw, CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE, CUDNN_TYPE_DOUBLE, 1, &slope);
    DNN_OK(cudnnBackendFinalize(pw));
    desc_t op = make_desc(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    bool bwd = mode >= 200 && mode < 300;
    set_attr(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
             &pw);
    set_attr(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
    if (b)
        set_attr(op,
                 bwd ? CUDNN_ATTR_OPERATION_POINTWISE_DYDESC : CUDNN_ATTR_OPERATION_POINTWISE_BDESC,
                 CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b);
    set_attr(op, bwd ? CUDNN_ATTR_OPERATION_POINTWISE_DXDESC : CUDNN_ATTR_OPERATION_POINTWISE_YDESC,
             CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
    DNN_OK(cudnnBackendFinalize(op));
    cudnnBackendDestroyDescriptor(pw);
    return op;
}

static inline desc_t op_graph(int n, desc_t *ops)
{
    desc_t g = make_desc(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    set_attr(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, n, ops);
    DNN_OK(cudnnBackendFinalize(g));
    return g;
}

/* A finalized plan of engine `engine` for graph g; its workspace size in *ws. */
static inline cudnnStatus_t plan_on(desc_t g, int64_t engine, desc_t *plan, int64_t *ws)
{
    desc_t e = make_desc(CUDNN_BACKEND_ENGINE_DESCRIPTOR), cfg;
    set_attr(e, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g);
    set_attr(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &engine);
    cudnnStatus_t s = cudnnBackendFinalize(e);
    if (s != CUDNN_STATUS_SUCCESS) {
        cudnnBackendDestroyDescriptor(e);
        return s;
    }
    cfg = make_desc(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    set_attr(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &e);
    DNN_OK(cudnnBackendFinalize(cfg));
    *plan = make_desc(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    set_attr(*plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
             &cfg);
    DNN_OK(cudnnBackendFinalize(*plan));
    DNN_OK(cudnnBackendGetAttribute(*plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                    CUDNN_TYPE_INT64, 1, NULL, ws));
    cudnnBackendDestroyDescriptor(cfg);
    cudnnBackendDestroyDescriptor(e);
    return CUDNN_STATUS_SUCCESS;
}

static inline cudnnStatus_t run_pack(cudnnHandle_t h, desc_t plan, int n, const int64_t *uids,
                                     void **ptrs, void *ws)
{
    desc_t vp = make_desc(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    set_attr(vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, uids);
    set_attr(vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n, ptrs);
    set_attr(vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws);
    cudnnStatus_t s = cudnnBackendFinalize(vp);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnBackendExecute(h, plan, vp);
    cudnnBackendDestroyDescriptor(vp);
    return s;
}

/* A device buffer holding a strided tensor whose logical elements (row-major over dims) are
 * vals (zeros when NULL); fp32 storage. The caller frees it with cudaFree. */
static inline float *device_tensor(int nd, const int64_t *dims, const int64_t *strides,
                                   const float *vals)
{
    int64_t span = 1, total = 1;
    for (int i = 0; i < nd; i++) {
        span += (dims[i] - 1) * strides[i];
        total *= dims[i];
    }
    float *h = (float *)malloc((size_t)span * sizeof(float)), *d = NULL;
    for (int64_t i = 0; i < span; i++)
        h[i] = -12345.0f; /* gaps between strided elements */
    int64_t idx[8] = {0};
    for (int64_t i = 0; i < total; i++) {
        int64_t off = 0;
        for (int k = 0; k < nd; k++)
            off += idx[k] * strides[k];
        h[off] = vals ? vals[i] : 0.0f;
        for (int k = nd - 1; k >= 0; k--) {
            if (++idx[k] < dims[k])
                break;
            idx[k] = 0;
        }
    }
    cudaMalloc((void **)&d, (size_t)span * sizeof(float));
    cudaMemcpy(d, h, (size_t)span * sizeof(float), cudaMemcpyHostToDevice);
    free(h);
    return d;
}

/* The logical elements (row-major over dims) of a strided fp32 device tensor; the caller frees. */
static inline float *host_tensor(int nd, const int64_t *dims, const int64_t *strides,
                                 const float *d)
{
    int64_t span = 1, total = 1;
    for (int i = 0; i < nd; i++) {
        span += (dims[i] - 1) * strides[i];
        total *= dims[i];
    }
    float *h = (float *)malloc((size_t)span * sizeof(float)),
          *out = (float *)malloc((size_t)total * sizeof(float));
    cudaMemcpy(h, d, (size_t)span * sizeof(float), cudaMemcpyDeviceToHost);
    int64_t idx[8] = {0};
    for (int64_t i = 0; i < total; i++) {
        int64_t off = 0;
        for (int k = 0; k < nd; k++)
            off += idx[k] * strides[k];
        out[i] = h[off];
        for (int k = nd - 1; k >= 0; k--) {
            if (++idx[k] < dims[k])
                break;
            idx[k] = 0;
        }
    }
    free(h);
    return out;
}

static inline float test_rand(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (float)(*s >> 40) * 0x1p-24f * 2.0f - 1.0f;
}

#endif
